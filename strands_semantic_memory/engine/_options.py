"""MemoryOptions: the engine's tunables in one frozen, validated object.

The engine, the conversation manager and the hook read their retrieval options from here instead of repeating
option lists; the options are saved with the archive state, so a restored memory behaves as the saved one did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, get_args

from typing_extensions import Unpack

from strands_semantic_memory._validation import check_int, check_score
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._codec import MAX_CHUNKS
from strands_semantic_memory.retrieval._ranking_options import RETRIEVAL_MODES, RankingOptions, Retrieval

DEFAULT_TOP_K = 3
"""Hits per search when the caller does not say: ``MemoryOptions.top_k``, and every entry point that builds a
memory or searches one (the manager's ``semantic_search_top_k``, the memory store's ``max_search_results``)."""
DEFAULT_CONTEXT_RADIUS = 2
"""Neighbouring messages added on each side of a hit when the caller does not say (``MemoryOptions.context_radius``,
the manager's ``message_context_radius``)."""
EmbeddingMode = Literal["inline", "background"]
"""When ``add`` embeds: ``"inline"`` before it returns, ``"background"`` in the memory's embedding thread."""
EMBEDDING_MODES: tuple[str, ...] = get_args(EmbeddingMode)
BUILT_MEMORY_EMBEDDING: EmbeddingMode = "background"
"""The ``embedding`` of a memory that an agent-facing entry point builds for itself (the conversation manager,
``SemanticMemoryStore``, ``SemanticStorage``; a ready ``memory=`` keeps its own): what an agent archives during
a turn is committed and searchable lexically at once, and embedded off the turn's path."""


def _positive_int(name: str, value: Any, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _optional_limit(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ConfigurationError(f"{name} must be a positive integer or None, got {value!r}")


class MemoryTunables(TypedDict, total=False):
    """The ``MemoryOptions`` that ``SemanticMemory`` takes as further keywords (its ``**options``).

    Each is documented on ``MemoryOptions``; ``ranking`` may be a dict of ``RankingOptions`` fields.
    """

    retrieval: Retrieval
    ranking: RankingOptions | Mapping[str, Any]
    rerank_candidates: int
    chunk_chars: int
    max_chunks_per_message: int
    query_cache_size: int
    embedding_retry_interval: float
    embedding_batch_size: int
    embedding: EmbeddingMode


class OptionChanges(MemoryTunables, total=False):
    """Any ``MemoryOptions`` by name: what ``SemanticMemory.configure`` and ``MemoryOptions.replace`` take."""

    top_k: int
    context_radius: int
    min_score: float | None
    max_num_archived_messages: int | None
    max_memory_archived_messages: int | None


@dataclass(frozen=True)
class MemoryOptions:
    """How a ``SemanticMemory`` searches, embeds and limits its archive.

    Attributes:
        top_k: Hits returned by ``search`` and widened by ``retrieve`` unless overridden per call.
        context_radius: Neighbouring messages added on each side of a hit by ``retrieve``.
        min_score: Drop hits whose cosine similarity to the query is below this (-1 to 1), in every retrieval
            mode; messages not embedded yet are not filtered. None keeps every hit.
        max_num_archived_messages: Keep at most this many messages (oldest evicted first); None: no limit.
        max_memory_archived_messages: Keep the estimated bytes (see ``_codec``) at
            most this; None: no limit.
        retrieval: ``"hybrid"`` (lexical and dense fused), ``"dense"`` or ``"lexical"``.
        ranking: How candidates are scored and fused (``RankingOptions``;
            a dict of its fields is accepted). The defaults were chosen on the LoCoMo development half.
        rerank_candidates: How many candidates a configured reranker sees.
        chunk_chars: A message's text is embedded in chunks of at most this many characters, cut between
            paragraphs or sentences (see ``chunk_text``). 600 characters of English are about the 128 word pieces
            the bundled model was trained on; with 1000, a fact in the last paragraph of a long message was lost
            among the other sentences of its chunk in dense search.
        max_chunks_per_message: At most this many chunks of one message are embedded (1..256).
        query_cache_size: Query embeddings kept (repeated questions skip the embedder); 0 disables.
        embedding_retry_interval: Seconds between automatic retries of pending embeddings after a failure.
        embedding_batch_size: At most this many messages are embedded in one call of the embedder.
        embedding: ``"inline"`` (default): ``add`` embeds before it returns, so a search right after it
            uses the vectors. ``"background"``: ``add`` returns after the commit and a background thread embeds
            the messages in batches; ``embed_pending()`` waits for it. A search finds them at once, by their words
            and, for the 32 newest pending messages, which it embeds for itself, by their meaning.
            The memory that the conversation manager, ``SemanticMemoryStore`` or ``SemanticStorage`` builds for
            itself embeds in the background unless told otherwise (``BUILT_MEMORY_EMBEDDING``).
    """

    top_k: int = DEFAULT_TOP_K
    context_radius: int = DEFAULT_CONTEXT_RADIUS
    min_score: float | None = None
    max_num_archived_messages: int | None = None
    max_memory_archived_messages: int | None = None
    retrieval: Retrieval = "hybrid"
    ranking: RankingOptions = field(default_factory=RankingOptions)
    rerank_candidates: int = 20
    chunk_chars: int = 600
    max_chunks_per_message: int = 64
    query_cache_size: int = 256
    embedding_retry_interval: float = 30.0
    embedding_batch_size: int = 256
    embedding: EmbeddingMode = "inline"

    def __post_init__(self) -> None:
        """Validate every field; the error names the option and the value."""
        if isinstance(self.ranking, Mapping):
            try:
                object.__setattr__(self, "ranking", RankingOptions(**self.ranking))
            except TypeError as error:
                raise ConfigurationError(f"ranking has an unknown field: {error}") from error
        elif not isinstance(self.ranking, RankingOptions):
            raise ConfigurationError(f"ranking must be a RankingOptions or a dict, got {self.ranking!r}")
        for name in ("top_k", "rerank_candidates", "chunk_chars", "embedding_batch_size"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("context_radius", self.context_radius, minimum=0)
        check_int("query_cache_size", self.query_cache_size, minimum=0)
        object.__setattr__(self, "min_score", check_score("min_score", self.min_score))
        check_int("max_num_archived_messages", self.max_num_archived_messages, minimum=1, optional=True)
        check_int("max_memory_archived_messages", self.max_memory_archived_messages, minimum=1, optional=True)
        chunks = self.max_chunks_per_message
        if not isinstance(chunks, int) or isinstance(chunks, bool) or not 1 <= chunks <= MAX_CHUNKS:
            raise ConfigurationError(f"max_chunks_per_message must be in 1..{MAX_CHUNKS}, got {chunks!r}")
        if self.retrieval not in RETRIEVAL_MODES:
            raise ConfigurationError(f"retrieval must be 'hybrid', 'dense' or 'lexical', got {self.retrieval!r}")
        if self.embedding not in EMBEDDING_MODES:
            raise ConfigurationError(f"embedding must be one of {EMBEDDING_MODES}, got {self.embedding!r}")
        interval = self.embedding_retry_interval
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval >= 0:
            raise ConfigurationError(f"embedding_retry_interval must be a number >= 0, got {interval!r}")

    def replace(self, **changes: Unpack[OptionChanges]) -> MemoryOptions:
        """A copy with some options changed (validated again).

        Raises:
            ConfigurationError: If a name is not an option, or a value is invalid (the message names it).
        """
        return dataclasses.replace(self, **self._known(changes))

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON types (saved with the archive state)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_arguments(cls, **arguments: Unpack[OptionChanges]) -> MemoryOptions:
        """Options from ``SemanticMemory``'s keyword arguments.

        Raises:
            ConfigurationError: If a name is not an option, or a value is invalid (the message names it).
        """
        return cls(**cls._known(arguments))

    @classmethod
    def _known(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as a dict, when every name is an option.

        Raises:
            ConfigurationError: If a name is not an option.
        """
        unknown = set(values) - cls.names()
        if unknown:
            raise ConfigurationError(f"unknown option(s) {sorted(unknown)}; see MemoryOptions")
        return dict(values)

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> MemoryOptions:
        """Options saved by ``to_dict``; unknown keys (from a newer release) are ignored.

        Raises:
            ConfigurationError: If a saved value is invalid.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in names})

    @classmethod
    def names(cls) -> frozenset[str]:
        """The option names (constructor keywords of ``SemanticMemory`` that land here)."""
        return frozenset(f.name for f in dataclasses.fields(cls))
