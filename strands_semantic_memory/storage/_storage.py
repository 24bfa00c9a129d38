"""SemanticStorage: a Strands ``Storage`` whose entries are archived exactly and found by meaning and terms.

Strands' storage protocol (``strands.storage.Storage``) keeps bytes under string keys; its ``ContextManager`` stashes
every message block there as it is added (``context/<session id>/scopes/agent/<agent id>/<ref>``), its snapshot
session manager saves sessions there (``session/...``). Here each entry is one record of a ``SemanticMemory``
(``_entries``), so its text is indexed by the hybrid engine, ``read`` returns the exact bytes, a delete forgets the
record (bytes, vectors and terms), and ``SemanticMemoryHook(storage=...)`` brings back what left the context.

Keys, prefixes, views and errors follow Strands' ``InMemoryStorage``: keys are normalized by Strands' own functions
(runs of ``/`` collapsed, outer ``/`` dropped, ``..`` segments and backslashes refused with ``StorageError``);
``list`` returns full keys, sorted; ``namespace`` returns a view that shares the entries and scopes keys, listing and
search to its prefix. Every method does its work in ``asyncio.to_thread``: a write commits (and, with
``embedding="inline"``, embeds), a search embeds its query, a durable archive does file I/O.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from strands.storage.storage import _EPHEMERAL, _NAMESPACED, StorageSearchResult, _normalize_key, _normalize_prefix
from strands.types.content import Message
from strands.types.exceptions import StorageError
from typing_extensions import Unpack

from strands_semantic_memory.archives import Archive, SqliteArchive, StoredRecord
from strands_semantic_memory.embeddings import Embedder
from strands_semantic_memory.engine._memory import STORAGE_ROLE, SemanticMemory
from strands_semantic_memory.engine._options import OptionArguments
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._terms import tokenize
from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.storage._entries import entry_message, entry_of, stash_refs, stash_session
from strands_semantic_memory.storage._keys import KeyTable

__all__ = ["DEFAULT_MAX_RESULTS", "DEFAULT_MIN_SIMILARITY", "DEFAULT_UNINDEXED_PREFIXES", "SemanticStorage"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

MAX_SPEAKERS = 10_000
"""Messages whose role ``note_speaker`` remembers at most (a few hundred bytes each)."""
DEFAULT_MAX_RESULTS = 10
"""Results one ``search`` returns at most."""
DEFAULT_MIN_SIMILARITY = 0.3
"""Cosine similarity from which an entry sharing no word with the query matches it. With the bundled
all-MiniLM-L6-v2 unrelated pairs scored -0.03..0.13 ("dark mode" / "deploy to production": 0.07), paraphrases
0.33..0.77 ("Which city did I grow up in?" / "I was born and raised in Lisbon": 0.54)."""
DEFAULT_UNINDEXED_PREFIXES = ("session/",)
"""Kept exactly, never indexed: Strands' snapshot session manager rewrites a whole conversation there every turn,
which the stash holds entry by entry already (and a snapshot carries no session a search could scope it by)."""
_CANDIDATES = 3
"""A search asks the engine for this many times ``max_results`` hits: other views' entries and non-matches drop."""


class SemanticStorage:
    """A Strands ``Storage`` over this library's archive: exact bytes, search by meaning and terms, true deletes.

    Example:
        ```python
        from strands import Agent
        from strands.experimental.context_manager import ContextManager
        from strands_semantic_memory import SemanticMemoryHook, SemanticStorage
        from strands_semantic_memory.storage import BudgetSummarization
        from strands_semantic_memory.testing import ScriptedModel

        storage = SemanticStorage()  # archive_path="stash.db" for a durable file, user_id= for recall across sessions
        agent = Agent(
            model=ScriptedModel(context_window_limit=8000),
            context_manager=ContextManager(strategies=[BudgetSummarization()]),
            storage=storage,
            plugins=[SemanticMemoryHook(storage=storage)],
        )
        agent("My grandmother grew up in Lisbon.")
        storage.close()
        ```

    ``search`` returns at most ``max_results`` entries, best first, that share a term with the query (stemmed,
    stopwords ignored) or are at least ``min_similarity`` close to it in meaning; ``score`` is the engine's relevance
    and ``data`` the entry's bytes. The memory a storage builds embeds in the background: an entry is found by its
    words once its write returns, by meaning once its vector lands (``storage.memory.embed_pending()`` waits).
    """

    def __init__(
        self,
        memory: SemanticMemory | None = None,
        *,
        archive_path: str | os.PathLike[str] | None = None,
        archive: Archive | None = None,
        user_id: str | None = None,
        embedder: Embedder | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        unindexed_prefixes: Sequence[str] = DEFAULT_UNINDEXED_PREFIXES,
        **options: Unpack[OptionArguments],
    ) -> None:
        """Create the storage over ``memory``, or over a new ``SemanticMemory`` built from the other arguments.

        Args:
            memory: The memory to keep the entries in (shared with others, its other messages are not entries).
            archive_path: A durable SQLite file (its folder must exist).
            archive: A ready ``Archive``; default: in process.
            user_id: Whose entries these are; naming the user lets the hook recall every session of theirs.
            embedder: A ready ``Embedder`` instead of the bundled model.
            max_results: Results one ``search`` returns at most.
            min_similarity: Cosine similarity from which an entry sharing no term with the query matches it.
            unindexed_prefixes: Keys under these are kept exactly but never indexed (default: Strands' sessions).
            **options: ``MemoryOptions`` for the memory built (``embedding`` defaults to ``"background"`` here).

        Raises:
            ConfigurationError: If an option is invalid, ``memory`` comes with arguments that build one, or the memory
                would evict entries (``max_messages``, ``max_bytes``): a storage keeps every entry until it is deleted.
        """
        building = {"archive_path": archive_path, "archive": archive, "user_id": user_id, "embedder": embedder}
        given = [name for name, value in building.items() if value is not None] + list(options)
        if memory is not None and (given or not isinstance(memory, SemanticMemory)):
            raise ConfigurationError(f"pass memory= (a SemanticMemory) or the arguments that build one, not {given}")
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise ConfigurationError(f"max_results must be an integer >= 1, got {max_results!r}")
        similarity = min_similarity
        if isinstance(similarity, bool) or not isinstance(similarity, (int, float)) or not -1 <= similarity <= 1:
            raise ConfigurationError(f"min_similarity must be a cosine similarity in -1..1, got {similarity!r}")
        prefixes = unindexed_prefixes
        if isinstance(prefixes, str) or not all(isinstance(p, str) and p.strip("/") for p in prefixes):
            raise ConfigurationError(f"unindexed_prefixes must be a list of key prefixes, got {unindexed_prefixes!r}")
        for name in ("max_messages", "max_bytes"):
            value = options.get(name) if memory is None else getattr(memory.options, name)
            if value is not None:
                raise ConfigurationError(f"{name}={value!r}: a storage keeps every entry until it is deleted")
        options.setdefault("embedding", "background")
        self._owns_memory = memory is None
        if memory is None:  # not "memory or ...": an empty memory is falsy (it has a length)
            memory = SemanticMemory(embedder=embedder, archive=archive, archive_path=archive_path, user_id=user_id,
                                    **options)  # fmt: skip
        self._memory = memory
        self._keys = KeyTable(self._memory)
        self._speakers: dict[str, str] = {}  # a message's tracking id -> its role (note_speaker), shared by views
        self._max_results, self._min_similarity = max_results, float(min_similarity)
        self._unindexed = tuple(_normalize_prefix(p) for p in unindexed_prefixes)
        self._prefix = ""
        self._namespaced: object | None = None  # Strands uses a view marked _NAMESPACED as it is
        if isinstance(self._memory.archive, SqliteArchive) and self._memory.archive.path is None:
            self._ephemeral = _EPHEMERAL  # Strands then keeps the stash in session snapshots too

    @property
    def memory(self) -> SemanticMemory:
        """The memory that holds the entries (shared by every view)."""
        return self._memory

    @property
    def prefix(self) -> str:
        """The key prefix of this view, ending in ``/`` (empty for the whole storage)."""
        return self._prefix

    def namespace(self, prefix: str) -> SemanticStorage:
        """A view that shares the entries and sees only (and relative) keys under ``prefix``; views nest.

        Raises:
            StorageError: If the prefix holds a backslash or a ``..`` segment.
        """
        normalized = _normalize_prefix(prefix).rstrip("/")
        view = copy.copy(self)
        view._prefix = f"{self._prefix}{normalized}/" if normalized else self._prefix
        view._namespaced, view._owns_memory = _NAMESPACED, False
        return view

    # ------------------------------------------------------------------ Strands' Storage

    async def _run(self, failure: str, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker thread; any failure a ``StorageError`` with the cause chained."""
        try:
            return await asyncio.to_thread(function, *args)
        except Exception as error:
            raise StorageError(failure) from error

    async def write(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any earlier value (whose record is forgotten).

        Raises:
            StorageError: If the key is invalid, ``data`` is not bytes, or the archive fails (the key keeps its value).
        """
        relative = _normalize_key(key)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StorageError(f"SemanticStorage.write takes bytes for '{key}', got {type(data).__name__}")
        said = self._speakers.get(relative.rsplit("/", 1)[-1].rsplit("_", 1)[0])
        index = await self._run(f"Failed to write '{key}'", self._write, relative, bytes(data), said)
        logger.debug("key=<%s>, bytes=<%d>, index=<%d> | entry archived", self._prefix + relative, len(data), index)

    def _write(self, relative: str, data: bytes, said: str | None = None) -> int:
        """Archive one entry; ``relative`` is the key as Strands wrote it through this view (its session is there)."""
        key = self._prefix + relative
        message = entry_message(key, data, indexed=not relative.startswith(self._unindexed), speaker=said)
        [record] = self._memory.new_records([message], session_id=stash_session(relative), roles=(STORAGE_ROLE,))
        return self._keys.write(key, record)

    def note_speaker(self, message: Message) -> None:
        """Note who said ``message``; ``SemanticMemoryHook`` calls it as each message is added, before the stash.

        Strands' stash writes a message's blocks under ``<tracking id>_<n>`` without their role; an entry written
        for a noted message keeps its role (``speaker``), so what the user said about themselves is found as on
        the other paths (personal context). At most ``MAX_SPEAKERS`` messages are remembered, the oldest dropped.
        """
        tracking, role = message.get("tracking_id"), message.get("role")
        if isinstance(tracking, str) and role in ("user", "assistant"):
            if len(self._speakers) >= MAX_SPEAKERS:
                self._speakers.pop(next(iter(self._speakers)), None)
            self._speakers[tracking] = str(role)

    async def read(self, key: str) -> bytes | None:
        """The bytes stored under ``key``, exactly as written; None if there are none.

        Raises:
            StorageError: If the key is invalid or the archive cannot be read.
        """
        return await self._run(f"Failed to read '{key}'", self._keys.read, self._prefix + _normalize_key(key))

    async def delete(self, key: str) -> None:
        """Delete ``key`` for good (its bytes, vectors and terms); a no-op for a missing key.

        Raises:
            StorageError: If the key is invalid or the archive fails (the key keeps its value).
        """
        full = self._prefix + _normalize_key(key)
        if await self._run(f"Failed to delete '{key}'", self._keys.delete, full):
            logger.debug("key=<%s> | entry forgotten", full)

    async def list(self, query: str = "") -> builtins.list[str]:
        """The keys starting with ``query`` (relative to this view), sorted; an empty query lists every key.

        Raises:
            StorageError: If the prefix is invalid or the archive cannot be read.
        """
        full = self._prefix + _normalize_prefix(query)
        keys = await self._run(f"Failed to list keys with prefix '{query}'", self._keys.keys, full)
        return [key[len(self._prefix) :] for key in keys]

    async def search(self, query: str) -> builtins.list[StorageSearchResult]:
        """The entries of this view that match ``query`` by meaning or terms, best first (at most ``max_results``).

        A query without a content word (empty, or stopwords only) matches nothing.

        Raises:
            StorageError: If the query is not a string or the search fails.
        """
        if not isinstance(query, str):
            raise StorageError(f"SemanticStorage.search takes a string query, got {type(query).__name__}")
        terms = set(tokenize(query))
        return await self._run(f"Failed to search for '{query}'", self._search, query, terms) if terms else []

    def _search(self, query: str, terms: set[str]) -> builtins.list[StorageSearchResult]:
        hits = self._memory.search(query, top_k=self._max_results * _CANDIDATES, context_radius=0, min_score=-1.0)
        found: dict[str, tuple[int, float, bytes]] = {}
        for hit in hits:
            entry = entry_of(hit.record)
            if entry is None or not entry[0].startswith(self._prefix) or entry[0] in found:
                continue
            similar = hit.similarity is not None and hit.similarity >= self._min_similarity
            if similar or not terms.isdisjoint(tokenize(hit.record.text)):
                found[entry[0]] = (hit.index, hit.score, entry[1])
        current = self._keys.current(found)
        results = [
            StorageSearchResult(key=key[len(self._prefix) :], score=float(score), data=data)
            for key, (index, score, data) in found.items()
            if current.get(key) == index  # else an older record of a key written again since
        ]
        return results[: self._max_results]

    # ------------------------------------------------------------------ what SemanticMemoryHook asks

    def held(self, messages: Iterable[Mapping[str, Any]]) -> frozenset[int]:
        """The archive indices of this view's stash entries that ``messages`` still hold (found by their keys).

        Strands' ``ContextManager`` stashes every message as it is added, the current question included: without
        this the question is its own best hit (on LoCoMo it cost 10 to 20 points of delivery). Blocking.
        """
        return self._keys.ending(self._prefix, stash_refs(messages))

    def visible(self, passages: Iterable[Passage]) -> builtins.list[Passage]:
        """The passages narrowed to this view's entries (the whole storage also shows a shared memory's messages).

        Entries with nothing indexed (binary data, sessions) are left out; a passage without a hit left is dropped.
        """
        kept = []
        for passage in passages:
            positions = [p for p, record in enumerate(passage.records) if self._shows(record)]
            narrowed = passage if len(positions) == len(passage.records) else passage.subset(positions)
            if narrowed.records and narrowed.hits:
                kept.append(narrowed)
        return kept

    def _shows(self, record: StoredRecord) -> bool:
        if record.role != STORAGE_ROLE:
            return not self._prefix
        entry = entry_of(record)
        return entry is not None and entry[0].startswith(self._prefix) and bool(record.text.strip())

    def close(self) -> None:
        """Close the memory if this storage built it (a view, or a storage given a memory, leaves it open)."""
        if self._owns_memory:
            self._memory.close()

    def __repr__(self) -> str:
        return f"SemanticStorage(prefix={self._prefix!r}, memory={self._memory!r})"
