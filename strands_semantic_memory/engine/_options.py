"""MemoryOptions: the engine's tunables in one frozen, validated object (pydantic), one name each.

The engine, the hook and the memory store read their search options from here; the options travel with the saved
state, so a restored memory behaves as the saved one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from strands_semantic_memory.archives._protocol import STATEMENT_CHUNK
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.retrieval._ranking import RankingOptions, Retrieval

__all__ = ["EmbeddingMode", "MemoryOptions", "OptionArguments", "checked_options"]

EmbeddingMode = Literal["inline", "background"]
"""When ``add`` embeds: ``"inline"``, before it returns; ``"background"``, after, on the embedding worker."""


class MemoryOptions(BaseModel):
    """How a ``SemanticMemory`` searches, embeds and bounds its archive.

    Attributes:
        top_k: Hits a search returns unless the call says otherwise.
        context_radius: Neighbouring messages a passage adds on each side of a hit.
        min_score: Drop hits whose cosine similarity to the query is below this (-1..1; messages not embedded yet
            are kept). None keeps every hit.
        max_messages: Keep at most this many messages, evicting the oldest (None: no limit).
        max_bytes: Keep the archived messages and their vectors within this many bytes (None: no limit).
        retrieval: ``"hybrid"`` (lexical and dense fused), ``"dense"`` or ``"lexical"``.
        ranking: The ranking's tunables (``retrieval.RankingOptions``; a dict of its fields is accepted).
        chunk_chars: A long message is embedded in chunks of at most this many characters, cut between paragraphs
            or sentences: 600 characters of English are about the 128 word pieces the bundled model was trained on.
        max_chunks: At most this many chunks of one message are embedded (1..128: the chunks from
            ``archives.STATEMENT_CHUNK`` on hold the message's self-statements).
        embedding: ``"inline"``: ``add`` returns once its messages have vectors (or the embedder stalled for
            ``embed_timeout``), so a search right after it ranks them by meaning. ``"background"``: ``add`` returns
            after the commit; a search finds messages not embedded yet by their words. The conversation manager,
            ``SemanticMemoryStore`` and ``SemanticStorage`` build their memory with ``"background"``.
        embedding_batch_size: Texts per embedding call: a query waits for at most one batch of documents.
        embed_timeout: Seconds a search waits for its query vector before it searches by words alone, and an inline
            ``add`` waits for the embedder to make progress.
        retry_interval: Seconds before messages whose embedding failed are tried again (doubling, at most 10
            minutes; after 6 failures only ``embed_pending`` tries them).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    top_k: int = Field(3, ge=1, le=10_000)
    context_radius: int = Field(2, ge=0, le=100)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    max_messages: int | None = Field(None, ge=1)
    max_bytes: int | None = Field(None, ge=1)
    retrieval: Retrieval = "hybrid"
    ranking: RankingOptions = RankingOptions()
    chunk_chars: int = Field(600, ge=50, le=100_000)
    max_chunks: int = Field(64, ge=1, le=STATEMENT_CHUNK)
    embedding: EmbeddingMode = "inline"
    embedding_batch_size: int = Field(16, ge=1, le=4096)
    embed_timeout: float = Field(2.0, gt=0, le=3600)
    retry_interval: float = Field(30.0, ge=0, le=86_400)

    @field_validator("ranking", mode="before")
    @classmethod
    def _ranking(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and "neighbour_weights" in value:  # JSON gives lists where tuples are kept
            return {**value, "neighbour_weights": tuple(tuple(p) for p in value["neighbour_weights"])}
        return value

    @field_validator("min_score", "embed_timeout", "retry_interval", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON types (saved with the state)."""
        return self.model_dump(mode="json")


class OptionArguments(TypedDict, total=False):
    """``MemoryOptions`` fields as keywords (``SemanticMemory(top_k=5)``, ``memory.configure(...)``)."""

    top_k: int
    context_radius: int
    min_score: float | None
    max_messages: int | None
    max_bytes: int | None
    retrieval: Retrieval
    ranking: RankingOptions | Mapping[str, Any]
    chunk_chars: int
    max_chunks: int
    embedding: EmbeddingMode
    embedding_batch_size: int
    embed_timeout: float
    retry_interval: float


def checked_options(base: MemoryOptions | None = None, **changes: Any) -> MemoryOptions:
    """``base`` (default options) with ``changes``, validated.

    Raises:
        ConfigurationError: If a name is not an option or a value is invalid (the message names both).
    """
    values = {**(dict(base) if base is not None else {}), **changes}
    try:
        return MemoryOptions(**values)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']} (got {e.get('input')!r:.60})"
            for e in error.errors()
        )
        raise ConfigurationError(f"invalid memory option: {problems}") from None
