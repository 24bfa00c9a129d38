"""What the hook brings back from a storage: entries outside the active context, within the storage's namespace.

Strands' ``ContextManager`` stashes every message as it is added, long before anything is summarized away, so a
search of the stash would also find what the model still sees (the user's current question first of all). The
hook's search excludes the stash entries of the call's messages by their keys (``SemanticStorage.held``); as a
second line, for the same text stashed under another key, ``TurnScope`` asks the search for as many more hits as the
context holds stashable texts, then keeps, in each
passage, only the entries of the storage's namespace whose text the context no longer holds, and of the hits left the
turn's ``top_k`` best (by each hit's own score, as the hook's packing ranks them; a passage keeps the others as
neighbours): the hits a search of an archive holding only what left the context would have found. A pure function of
the passages and the context: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from strands_semantic_memory.messages import render_message
from strands_semantic_memory.retrieval import Passage
from strands_semantic_memory.retrieval._passages import passage_score
from strands_semantic_memory.storage._entries import entry_key, texts_in

__all__ = ["MAX_EXTRA_HITS", "TurnScope"]

MAX_EXTRA_HITS = 100
"""Most hits a turn's search asks for beyond its ``top_k``, to make room for those the context still holds."""


def _keep(message: Any, prefix: str, present: frozenset[str]) -> bool:
    if not isinstance(message, Mapping):
        return False
    key = entry_key(message)
    if key is None:
        return not prefix  # another archived message (a memory shared with a conversation manager): root view only
    if not key.startswith(prefix):
        return False
    text = render_message(message)
    return bool(text) and text not in present


def _narrowed(passage: Passage, prefix: str, present: frozenset[str]) -> Passage | None:
    """``passage`` without the entries to leave out; None when none of its hits remain."""
    kept = [p for p, message in enumerate(passage.messages) if _keep(message, prefix, present)]
    if len(kept) == len(passage.messages):
        return passage
    indices = [passage.indices[p] for p in kept]
    live = set(indices)
    hits = [(i, s) for i, s in _hits(passage) if i in live]
    if not hits:
        return None
    return dataclasses.replace(
        _with_hits(passage, hits),
        start=indices[0],
        end=indices[-1],
        messages=[passage.messages[p] for p in kept],
        indices=indices,
        roles=[passage.roles[p] for p in kept] if passage.roles else [],
        timestamps=[passage.timestamps[p] for p in kept] if passage.timestamps else [],
        session_ids=[passage.session_ids[p] for p in kept] if passage.session_ids else [],
    )


def _hits(passage: Passage) -> list[tuple[int, float]]:
    """``(archive index, score)`` of each hit of ``passage``."""
    scores = passage.hit_scores or [passage.score] * len(passage.hit_indices)
    return list(zip(passage.hit_indices, scores, strict=True))


def _with_hits(passage: Passage, hits: list[tuple[int, float]]) -> Passage:
    """``passage`` with only ``hits`` as hits (the others stay as neighbours), scored by them."""
    if len(hits) == len(passage.hit_indices):
        return passage
    # A passage that lost hits is worth what its remaining hits are worth (its old score may be a dropped hit's).
    return dataclasses.replace(
        passage,
        hit_indices=[i for i, _ in hits],
        hit_scores=[s for _, s in hits],
        score=passage_score([s for _, s in hits]),
    )


@dataclass(frozen=True)
class TurnScope:
    """One turn's search of a storage: how deep to search, and which of the passages found to keep.

    Attributes:
        prefix: The storage view's key prefix (empty: the whole storage).
        present: The texts the active context holds (see ``texts_in``).
        top_k: Hits the turn keeps.
    """

    prefix: str
    present: frozenset[str]
    top_k: int

    @classmethod
    def of(cls, prefix: str, messages: Iterable[Mapping[str, Any]], top_k: int) -> TurnScope:
        """The scope of a turn whose model call sends ``messages``."""
        return cls(prefix=prefix, present=frozenset(texts_in(messages)), top_k=top_k)

    @property
    def depth(self) -> int:
        """Hits to ask the search for: ``top_k`` plus one per text the context holds (at most ``MAX_EXTRA_HITS``)."""
        return self.top_k + min(len(self.present), MAX_EXTRA_HITS)

    def passages(self, passages: Iterable[Passage]) -> list[Passage]:
        """The passages to bring back, in conversation order, with the turn's ``top_k`` best hits among them.

        A passage keeps only those of its hits that are among the ``top_k`` best (ties: the earlier entry first);
        its other entries stay as neighbours. A passage without one of them is left out.
        """
        narrowed = [w for w in (_narrowed(w, self.prefix, self.present) for w in passages) if w is not None]
        ranked = sorted(((s, i) for w in narrowed for i, s in _hits(w)), key=lambda hit: (-hit[0], hit[1]))
        best = {i for _, i in ranked[: self.top_k]}
        chosen = []
        for passage in narrowed:
            hits = [(i, s) for i, s in _hits(passage) if i in best]
            if hits:
                chosen.append(_with_hits(passage, hits))
        return sorted(chosen, key=lambda w: w.start)
