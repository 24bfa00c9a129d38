"""What a search returns: one ``MemoryEntry`` per passage, and the record of what was returned and left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from strands.memory.types import MemoryEntry, Metadata

from strands_semantic_memory.formatting._block import ENTRY_QUOTE
from strands_semantic_memory.formatting._tool_output import render_passages
from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.retrieval._relevance import Relevance

__all__ = ["LeftOut", "LeftOutReason", "StoreEnrichment", "entry"]

LeftOutReason = Literal["in_context", "max_search_results", "budget", "unrelated", "overflow"]


@dataclass(frozen=True)
class LeftOut:
    """A passage the store found and did not return.

    Attributes:
        passage: The passage as found.
        reason: ``"in_context"``: every hit in it is a message the agent still has in its active context (the
            model sees it already). ``"max_search_results"``: more relevant passages filled the entries asked for.
            ``"budget"``: none of its messages fit the room the model call leaves (or the smaller room of an
            uncertain turn, or after a context overflow). ``"unrelated"``: Strands' injection asked for a turn that
            does not resemble the archive (the relevance gate). ``"overflow"``: a model call of this invocation
            overflowed twice, so nothing more is injected until the next invocation.
    """

    passage: Passage
    reason: LeftOutReason


@dataclass
class StoreEnrichment:
    """What a ``SemanticMemoryStore`` answered for its last search (``last_enrichment``).

    The search may have come from Strands' injection (``source="injection"``: the entries then reach the model
    inside its ``<memory>`` block, XML-escaped) or from a request (``source="request"``: the ``search_memory``
    tool, or the application).

    Attributes:
        query: The text searched for.
        entries: The entries returned, most relevant first.
        passages: The passage behind each entry, same order, as shown (without the messages left out as in context).
        left_out: Passages found and not returned, each with the reason.
        in_context_indices: Archive indices of messages left out because the agent still has them in its
            context (from returned passages and left-out ones alike), ascending.
        budget_tokens: The most tokens the entries could take in this call (the memory's share of the model's
            window, capped by the room the call leaves), or None when no budget applied (the store does not know
            its agent).
        tokens: Estimated tokens of the entries as Strands' default format injects them (escaped, in their
            ``<entry>`` elements, with the ``<memory>`` block); 0 when nothing was returned.
        budget_left_out_indices: Archive indices of messages of returned passages that did not fit the budget
            (neighbours before hits), ascending.
        elapsed_ms: Time spent searching and formatting.
        source: ``"injection"`` (Strands' injection, for a model call of the store's agent) or ``"request"`` (the
            model's ``search_memory`` tool, or the application; also every search of a store that does not know
            its agent, which cannot tell the two apart).
        gated: Whether the relevance gate decided what was returned (injection with ``inject_when="relevant"``).
        relevance: How much the query resembled the archive: ``"relevant"``, ``"uncertain"``, ``"unrelated"`` or
            ``"unknown"`` (no similarity to judge by: a lexical search, or an embedder that is down); measured on
            every search, acted on only when ``gated``.
        best_similarity: The query's cosine similarity to its nearest archived message, when known.
        floor: The archive's relevance floor (how close generic questions get), when known.
        cut: Hits left out because they scored under the relative cut (a share of the best hit's score; gated
            searches only).
        overflows: Model calls of the agent's current invocation that overflowed before this injection (0..2).
    """

    query: str
    entries: list[MemoryEntry] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    in_context_indices: list[int] = field(default_factory=list)
    budget_tokens: int | None = None
    tokens: int = 0
    budget_left_out_indices: list[int] = field(default_factory=list)
    elapsed_ms: float = 0.0
    source: Literal["injection", "request"] = "request"
    gated: bool = False
    relevance: Relevance = "unknown"
    best_similarity: float | None = None
    floor: float | None = None
    cut: int = 0
    overflows: int = 0


def entry(passage: Passage, max_chars: int, *, show_dates: bool) -> MemoryEntry:
    """One passage as a ``MemoryEntry``: its lines quoted with ``"| "``, at most ``max_chars``, and its metadata."""
    text, shown, _ = render_passages(
        [passage], max_chars, show_dates=show_dates, quote_prefix=ENTRY_QUOTE, fenced=False
    )
    metadata: Metadata = {
        "start": passage.start,
        "end": passage.end,
        "indices": list(passage.indices),
        "hit_indices": list(passage.hit_indices),
        "roles": list(passage.roles) or [str(m.get("role", "?")) for m in passage.messages],
        "timestamps": list(passage.timestamps),
        "score": float(passage.score),
    }
    if shown and len(shown[0].indices) < len(passage.indices):
        metadata["shown_indices"] = [i for w in shown for i in w.indices]
    return MemoryEntry(content=text, metadata=metadata)
