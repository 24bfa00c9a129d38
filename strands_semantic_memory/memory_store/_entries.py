"""A search's passages as few full ``MemoryEntry`` objects, fitted to a budget as Strands injects them. Pure.

Strands' ``MemoryManager`` injects at most ``max_entries`` entries (5 unless configured) and asks each store for
that many. One entry per passage would cut a 2,500-token budget to about 750 tokens with Strands' defaults, and
deliver 10 points less evidence than ``max_entries=50``. So the passages that fit are packed into at most ``limit``
entries: the best runs first, several runs to an entry, until the budget is full.

Strands' default format escapes each entry as XML text (``&`` costs 4 more characters, ``<`` and ``>`` 3 each)
inside ``<entry source="...">`` and the whole inside ``<memory>``; the room is counted in those characters, so
what the store returns fits what the model receives (``estimate_tokens``: four characters a token).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from strands.memory.types import MemoryEntry

from strands_semantic_memory.archives._protocol import StoredRecord
from strands_semantic_memory.budget import estimate_tokens
from strands_semantic_memory.formatting._block import GAP, BlockWriter
from strands_semantic_memory.retrieval._passages import Passage, pack_passages

__all__ = ["entries_for", "fit_passages", "injected_tokens"]

BLOCK_OPEN, BLOCK_CLOSE = "\n\n<memory>\n", "\n</memory>"
"""What Strands' default format puts around the entries (the first two characters part them from the user's)."""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _element(name: str, content: str = "") -> str:
    source = _escape(name).replace('"', "&quot;").replace("'", "&#39;")
    return f'<entry source="{source}">{_escape(content)}</entry>'


def injected_tokens(entries: Sequence[MemoryEntry], name: str) -> int:
    """Estimated tokens of ``entries`` as Strands' default format injects them for the store ``name`` (0: none)."""
    if not entries:
        return 0
    return estimate_tokens(BLOCK_OPEN + "\n".join(_element(name, e.content) for e in entries) + BLOCK_CLOSE)


def fit_passages(
    passages: Sequence[Passage],
    tokens: int,
    limit: int,
    name: str,
    writer: BlockWriter,
    skip: Callable[[StoredRecord], bool] | None = None,
) -> list[list[Passage]]:
    """The runs of ``passages`` that fit in ``tokens``, grouped into at most ``limit`` entries, best first.

    Hits come first (best first), then neighbours (nearest first): ``pack_passages``, as the hook packs its block.
    Each entry costs its element; the number of entries is not known before packing, so the room is packed again
    with an element for each entry it filled, until it fills no more (at most ``limit`` rounds; two or three here).
    Within an entry the runs are in conversation order.
    """

    def size(record: StoredRecord) -> tuple[int]:
        text = writer.message(record)  # a line break before it, and an empty line when it has no header line
        return (len(_escape(text)) + (1 if text.startswith("[") else 2),)

    wrapper = len(_element(name)) + 1  # with the line break after it
    count, chosen = 1, list[Passage]()
    while True:
        room = 4 * tokens - len(BLOCK_OPEN) - len(BLOCK_CLOSE) - count * wrapper
        if room <= 0:
            return []
        chosen, _ = pack_passages(passages, size, [room], (len(GAP) + 1,), skip)
        needed = min(limit, len(chosen))
        if needed <= count:
            break
        count = needed
    if not chosen:
        return []
    ranked = sorted(chosen, key=lambda run: (-run.score, run.start))
    groups = min(limit, len(ranked))
    return [
        sorted(ranked[g * len(ranked) // groups : (g + 1) * len(ranked) // groups], key=lambda run: run.start)
        for g in range(groups)
    ]


def entries_for(groups: Sequence[Sequence[Passage]], writer: BlockWriter) -> list[MemoryEntry]:
    """One entry per group: its runs written by ``writer`` (``[...]`` between them), and where they came from."""
    return [
        MemoryEntry(
            content=writer.body(group),
            metadata={
                "indices": [i for run in group for i in run.indices],
                "hit_indices": sorted(i for run in group for i in run.hits),
                "score": max(float(run.score) for run in group),
            },
        )
        for group in groups
    ]
