"""SemanticStorage: a Strands ``Storage`` whose entries are archived exactly and found by meaning and terms.

Strands' storage protocol (``strands.storage.Storage``) keeps bytes under string keys; Strands' ``ContextManager``
stashes every message block there, its ``ContextOffloader`` offloads large tool results there, and the snapshot
session manager saves sessions there. This backend keeps each entry as one record of a ``SemanticMemory`` (in
process, a durable SQLite file, or PostgreSQL; see ``_entries`` for the record), so its text is indexed by the
hybrid engine and ``search`` ranks by meaning as well as by words, while ``read`` returns the exact bytes written.

Keys, prefixes, namespaced views and errors follow Strands' own backends (``InMemoryStorage`` is the model): keys
are normalized by Strands' rules (runs of ``/`` collapsed, leading and trailing ``/`` dropped, ``..`` segments and
backslashes refused with ``StorageError``); ``list`` returns full keys, sorted; ``namespace`` returns a view that
shares the entries and scopes keys, listing and search to its prefix; a failure raises ``StorageError`` with the
library's error chained.

A write commits the entry (bytes and lexical terms) and returns; the memory a storage builds for itself embeds
the entry's text in its background thread, in batches (``embedding="background"``), so no write embeds inside the
agent's turn. Until its vector lands an entry is found by its words; ``memory.embed_pending()`` waits for the
vectors. ``close`` stops that thread before it closes the archive.

Every call runs in a worker thread (``asyncio.to_thread``): a search embeds the query (the first one loads the
model, seconds), a durable or shared archive does file or network I/O, and a read waits for the key table's lock
while a write runs (and embeds, with ``embedding="inline"``). Measured in process on a loaded 2-core machine (load
average 17): a read took 0.008 ms on the event loop and 0.29 ms through a thread, an inline write 60 ms (one
embedding), a search 4 ms; the hop costs little beside either, and a read on the loop could block it for a whole
embedding (seconds for the first).
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import logging
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from strands.storage.storage import StorageSearchResult
from strands.types.exceptions import StorageError

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.archives import Archive
from strands_semantic_memory.embeddings import Embedder
from strands_semantic_memory.engine import SemanticMemory
from strands_semantic_memory.engine._options import BUILT_MEMORY_EMBEDDING
from strands_semantic_memory.errors import ConfigurationError, SemanticMemoryError
from strands_semantic_memory.messages import render_message, tokenize
from strands_semantic_memory.storage._context import TurnScope
from strands_semantic_memory.storage._entries import entry_bytes, entry_key, entry_message, stash_refs
from strands_semantic_memory.storage._keys import KeyTable
from strands_semantic_memory.storage._strands import (
    EPHEMERAL,
    NAMESPACED,
    STASH_PREFIX,
    normalize_key,
    normalize_prefix,
)

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_MIN_SIMILARITY",
    "DEFAULT_UNINDEXED_PREFIXES",
    "SemanticStorage",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESULTS = 10
"""Results one ``search`` returns at most."""

DEFAULT_MIN_SIMILARITY = 0.3
"""Cosine similarity from which an entry sharing no word with the query still matches it. Measured with the
bundled all-MiniLM-L6-v2: unrelated pairs scored -0.03..0.13 ("dark mode" / "deploy to production": 0.07),
paraphrases 0.33..0.77 ("Which city did I grow up in?" / "I was born and raised in Lisbon": 0.54)."""

DEFAULT_UNINDEXED_PREFIXES = ("session/",)
"""Keys kept but not indexed: Strands' snapshot session manager writes whole-conversation snapshots under
``session/``, rewritten every turn, whose messages the stash holds entry by entry already."""

_CANDIDATE_FACTOR = 3
"""A search asks the engine for this many times ``max_results`` hits, so entries of other namespaces, superseded
records and non-matches left out still leave ``max_results``."""

_SEARCH_ATTEMPTS = 3
"""Searches one ``search`` makes at most when restores keep replacing the archive under it (then it fails)."""

_LIMIT_OPTIONS = ("max_num_archived_messages", "max_memory_archived_messages")


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def _similarity(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigurationError(f"min_similarity must be a number in -1..1, got {value!r}")
    if not -1.0 <= value <= 1.0:
        raise ConfigurationError(f"min_similarity is a cosine similarity and must be in -1..1, got {value!r}")
    return float(value)


def _prefixes(value: Any) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ConfigurationError(f"unindexed_prefixes must be a list of key prefixes, got {value!r}")
    prefixes = []
    for prefix in value:
        if not isinstance(prefix, str) or not prefix.strip("/"):
            raise ConfigurationError(f"unindexed_prefixes holds {prefix!r}; each must be a non-empty key prefix")
        try:
            prefixes.append(normalize_prefix(prefix))
        except StorageError as error:
            raise ConfigurationError(f"unindexed_prefixes holds an invalid prefix: {error}") from error
    return tuple(prefixes)


def _without_limits(options: Mapping[str, Any], memory: SemanticMemory | None) -> None:
    for name in _LIMIT_OPTIONS:
        value = options.get(name) if memory is None else getattr(memory.options, name)
        if value is not None:
            raise ConfigurationError(
                f"{name}={value!r}: a storage keeps every entry until it is deleted, so its memory must not evict "
                f"(leave {name} unset)"
            )


class SemanticStorage:
    """A Strands ``Storage`` over this library's archive: exact bytes, hybrid search, forgetting that erases.

    Example:
        ```python
        from strands import Agent
        from strands.experimental.context_manager import ContextManager
        from strands_semantic_memory import SemanticMemoryHook, SemanticStorage
        from strands_semantic_memory.storage import BudgetSummarization

        storage = SemanticStorage()  # in process; archive_path="stash.sqlite3" for a durable file
        agent = Agent(
            model=scripted_model,
            context_manager=ContextManager(strategies=[BudgetSummarization()]),
            storage=storage,
            plugins=[SemanticMemoryHook(storage=storage)],
        )
        ```

    Each entry is one archived record (see ``_entries``); a write replaces the key's record, a delete forgets it
    (the bytes, the vectors and the lexical entries, on every archive). ``search`` returns at most ``max_results``
    entries, best first, that share a word with the query (stemmed, stopwords ignored) or are at least
    ``min_similarity`` close to it in meaning; ``score`` is the engine's hybrid relevance (higher is better) and
    ``data`` the entry's bytes. A storage that builds its memory embeds in the background: an entry is found by
    its words as soon as its write returns, and by meaning once its vector lands (``memory.embed_pending()``
    waits for it). Call ``close`` when done with it.
    """

    def __init__(
        self,
        memory: SemanticMemory | None = None,
        *,
        archive_path: str | os.PathLike[str] | None = None,
        archive: Archive | None = None,
        embedder: Embedder | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        unindexed_prefixes: Sequence[str] = DEFAULT_UNINDEXED_PREFIXES,
        **memory_options: Any,
    ) -> None:
        """Create the storage over ``memory``, or over a new ``SemanticMemory`` built from the other arguments.

        Args:
            memory: The memory to keep the entries in (it may be shared, e.g. with a conversation manager: its
                other messages are not entries). Not together with the arguments that build one.
            archive_path: A file for a durable archive (``SqliteArchive``).
            archive: Where the messages are kept, e.g. ``PostgresArchive(dsn, user_id)``; default: in process.
            embedder: A ready ``Embedder`` instead of the bundled model.
            max_results: Results one ``search`` returns at most.
            min_similarity: Cosine similarity from which an entry that shares no word with the query matches.
            unindexed_prefixes: Keys under these prefixes are kept exactly but not indexed (default: Strands'
                session snapshots, ``session/``).
            **memory_options: Further ``SemanticMemory`` arguments (``embedding_model``, ``retrieval``,
                ``top_k`` and ``context_radius`` for the hook, ...). ``embedding`` defaults to ``"background"``
                here (``"inline"``: a write embeds its entry before it returns). Eviction limits are refused: a
                storage keeps every entry until it is deleted.

        Raises:
            ConfigurationError: If an option is out of range, ``memory`` comes with arguments that build one, or
                the memory would evict entries (the message names the option).
        """
        if memory is not None:
            if not isinstance(memory, SemanticMemory):
                raise ConfigurationError(f"memory must be a SemanticMemory, got {type(memory).__name__}")
            building = (("archive_path", archive_path), ("archive", archive), ("embedder", embedder))
            given = [name for name, value in building if value is not None]
            if given or memory_options:
                names = ", ".join([*given, *memory_options])
                raise ConfigurationError(
                    f"pass either memory= or the arguments that build one, not both (got memory= and {names})"
                )
        self._max_results = _positive_int("max_results", max_results)
        self._min_similarity = _similarity(min_similarity)
        self._unindexed = _prefixes(unindexed_prefixes)
        _without_limits(memory_options, memory)
        self._owns_memory = memory is None
        if memory is None:
            memory_options.setdefault("embedding", BUILT_MEMORY_EMBEDDING)
            memory = SemanticMemory(embedder=embedder, archive=archive, archive_path=archive_path, **memory_options)
        self._memory = memory
        self._table = KeyTable(memory)
        self._prefix = ""
        self._namespaced: object | None = None  # NAMESPACED on views: Strands uses a scoped view as is
        if not memory.archive.persistent:
            self._ephemeral = EPHEMERAL  # Strands' ContextManager then keeps the stash in session snapshots too

    @property
    def memory(self) -> SemanticMemory:
        """The memory that holds the entries (shared by every namespaced view)."""
        return self._memory

    @property
    def prefix(self) -> str:
        """The key prefix of this view, ending in ``/`` (empty for the whole storage)."""
        return self._prefix

    def namespace(self, prefix: str) -> SemanticStorage:
        """A view scoped to ``prefix``: it shares the entries, and sees only (and relative) keys under the prefix.

        Args:
            prefix: Prefix to prepend to every key (nested under this view's prefix).

        Returns:
            The scoped view, marked as namespaced for Strands (which then does not add its own prefix). Closing
            the view leaves the memory open: the storage it came from owns it.

        Raises:
            StorageError: If the prefix holds a backslash or a ``..`` segment.
        """
        normalized = normalize_prefix(prefix).rstrip("/")
        scoped = copy.copy(self)
        scoped._prefix = f"{self._prefix}{normalized}/" if normalized else self._prefix
        scoped._namespaced = NAMESPACED
        scoped._owns_memory = False
        return scoped

    def _full_key(self, key: str) -> str:
        return f"{self._prefix}{normalize_key(key)}"

    def _indexed(self, key: str) -> bool:
        return not any(key.startswith(prefix) for prefix in self._unindexed)

    async def write(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any earlier value (whose record is forgotten).

        Args:
            key: The key (normalized by Strands' rules).
            data: The bytes (``bytes``, ``bytearray`` or ``memoryview``; copied).

        Raises:
            StorageError: If the key is invalid, ``data`` is not bytes, or the archive fails (the key then keeps
                its previous value).
        """
        full = self._full_key(key)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StorageError(f"SemanticStorage.write takes bytes for '{key}', got {type(data).__name__}")
        payload = bytes(data)
        try:
            index = await asyncio.to_thread(self._write, full, payload, stash_session(normalize_key(key)))
        except Exception as error:
            raise StorageError(f"Failed to write '{key}'") from error
        logger.debug("key=<%s>, bytes=<%d>, index=<%d> | entry archived", full, len(payload), index)

    def _write(self, key: str, data: bytes, session_id: str | None) -> int:
        message = entry_message(key, data, indexed=self._indexed(key))
        return self._table.write(key, message, session_id=session_id)

    async def read(self, key: str) -> bytes | None:
        """The bytes stored under ``key``, exactly as written; None if there are none.

        Raises:
            StorageError: If the key is invalid or the archive cannot be read.
        """
        full = self._full_key(key)
        try:
            return await asyncio.to_thread(self._table.read, full)
        except Exception as error:
            raise StorageError(f"Failed to read '{key}'") from error

    async def delete(self, key: str) -> None:
        """Delete ``key`` for good: its bytes, vectors and lexical entries. A no-op for a missing key.

        Raises:
            StorageError: If the key is invalid or the archive fails (the key then keeps its value).
        """
        full = self._full_key(key)
        try:
            forgotten = await asyncio.to_thread(self._table.delete, full)
        except Exception as error:
            raise StorageError(f"Failed to delete '{key}'") from error
        if forgotten:
            logger.debug("key=<%s>, records=<%d> | entry forgotten", full, forgotten)

    async def list(self, query: str = "") -> builtins.list[str]:
        """The keys starting with ``query`` (relative to this view), sorted; an empty query lists every key.

        Raises:
            StorageError: If the prefix is invalid or the archive cannot be read.
        """
        full = f"{self._prefix}{normalize_prefix(query)}"
        try:
            keys = await asyncio.to_thread(self._table.keys, full)
        except Exception as error:
            raise StorageError(f"Failed to list keys with prefix '{query}'") from error
        return [key[len(self._prefix) :] for key in keys]

    async def search(self, query: str) -> builtins.list[StorageSearchResult]:
        """The entries matching ``query`` by meaning or words, best first (at most ``max_results``).

        A query without a content word (empty, or stopwords only) matches nothing.

        Args:
            query: Natural-language text.

        Returns:
            Results with the key (relative to this view), the hybrid relevance as ``score`` and the bytes as
            ``data``.

        Raises:
            StorageError: If the search fails.
        """
        if not isinstance(query, str):
            raise StorageError(f"SemanticStorage.search takes a string query, got {type(query).__name__}")
        terms = set(tokenize(query))
        if not terms:
            return []
        try:
            return await asyncio.to_thread(self._search, query, terms)
        except Exception as error:
            raise StorageError(f"Failed to search for '{query}'") from error

    def _search(self, query: str, terms: set[str]) -> builtins.list[StorageSearchResult]:
        for _ in range(_SEARCH_ATTEMPTS):
            generation = self._memory.generation
            hits = self._memory.search(query, top_k=self._max_results * _CANDIDATE_FACTOR, min_score=-1.0)
            matches = []
            for hit in hits:
                key = entry_key(hit.message)
                if key is None or not key.startswith(self._prefix):
                    continue
                similar = hit.similarity is not None and hit.similarity >= self._min_similarity
                if similar or not terms.isdisjoint(tokenize(render_message(hit.message))):
                    matches.append((key, hit))
            newest = self._table.newest((key for key, _ in matches), generation)
            if newest is not None:  # else a restore replaced the archive the hits came from: search again
                break
        else:
            raise SemanticMemoryError(f"the memory was restored during each of {_SEARCH_ATTEMPTS} searches")
        results = [
            StorageSearchResult(key=key[len(self._prefix) :], score=float(hit.score), data=entry_bytes(hit.message))
            for key, hit in matches
            if newest.get(key) == hit.index  # else an older record of a key rewritten since
        ]
        results.sort(key=lambda result: result.score, reverse=True)
        return results[: self._max_results]

    def held(self, messages: Iterable[Mapping[str, Any]]) -> frozenset[int]:
        """Archive indices of the stash entries of ``messages``, in this view: a turn's search must not return them.

        Strands' ``ContextManager`` stashes each message as it is added, the current question included, so without
        this the question would be its own best hit (and set the relative cut and the relevance gate by itself).
        Blocking: call it off the event loop.
        """
        return self._table.indices_ending(self._prefix, stash_refs(messages))

    def turn_scope(self, messages: Iterable[Mapping[str, Any]], top_k: int | None = None) -> TurnScope:
        """How ``SemanticMemoryHook`` searches this storage for a turn whose model call sends ``messages``.

        Args:
            messages: The messages of the model call (the active context).
            top_k: Hits the turn keeps (default: the memory's ``top_k``).

        Returns:
            The scope: search ``depth`` hits, then keep the ``passages`` outside the context and in this view.
        """
        keep = self._memory.options.top_k if top_k is None else top_k
        return TurnScope.of(self._prefix, messages, keep)

    def close(self) -> None:
        """Close the memory, if this storage built it (not a ``memory`` given to it): ``SemanticMemory.close``.

        Its embedding thread stops after its batch and never uses the archive again, then the archive's
        connections and files are released. Entries still waiting for their vectors stay archived, found by their
        words; a durable archive embeds them when it is opened again.
        """
        if self._owns_memory:
            self._memory.close()


def stash_session(key: str) -> str | None:
    """The Strands session a key of Strands' stash belongs to (``context/<session id>/...``), else None.

    ``key`` is relative to the storage view Strands writes through. Strands' ``ContextManager`` stashes under
    ``context/<session id>/scopes/agent/<agent id>/`` (``STASH_PREFIX``); an entry archived from there carries that
    session, so a memory without a named user recalls only the agent's session (``messages._session.session_scope``).
    A view Strands uses as the stash root itself (a caller-scoped view) holds no session id: its entries carry none.
    """
    parts = key.split("/")
    if len(parts) < 3 or parts[0] != STASH_PREFIX or not parts[1]:
        return None
    try:
        return check_identifier("session_id", parts[1])
    except ConfigurationError:
        return None
