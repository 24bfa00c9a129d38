"""Scope and exclusion: ``sessions`` bounds everything a search reads; ``exclude`` (like roles and times) only hits.

On every archive (in process, SQLite, PostgreSQL), and for an archive that leaves the neighbours to the engine.
"""

from __future__ import annotations

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import InMemoryArchive
from strands_semantic_memory.archives._protocol import ContextRequest, SearchFilter
from strands_semantic_memory.errors import InvalidMessageTypeError
from tests.support.conversations import distractor_conversation, text_message

QUESTION = "Which colour did we choose for the kitchen tiles?"


def interleaved(memory: SemanticMemory) -> dict[str, list[int]]:
    """Two sessions of one user whose messages alternate in the archive (two tabs open at once), and a note
    archived without a session: every hit of one session has the other's messages as neighbours."""
    placed: dict[str, list[int]] = {"home": [], "work": [], "none": []}
    for n in range(6):
        [home] = memory.add(
            [text_message("user", f"For the kitchen tiles, option {n}: we chose sage green, shade {n}.")],
            session_id="home",
        )
        [work] = memory.add(
            [text_message("user", f"The kitchen tiles at the office, option {n}: the team chose grey, shade {n}.")],
            session_id="work",
        )
        placed["home"].append(home)
        placed["work"].append(work)
    placed["none"] = memory.add([text_message("user", "Kitchen tiles note without a session: terracotta.")])
    memory.embed_pending()
    return placed


def tiles_and_chatter(memory: SemanticMemory) -> tuple[list[int], list[int]]:
    """The home session's turns about the tiles alternate with the work session's unrelated turns: the work turns
    are neighbours of the hits, and not candidates themselves."""
    home: list[int] = []
    work: list[int] = []
    for n, chatter in enumerate(distractor_conversation(6, seed=3)):
        tiles = text_message("user", f"For the kitchen tiles we chose sage green, shade {n}.")
        home += memory.add([tiles], session_id="home")
        work += memory.add([chatter], session_id="work")
    memory.embed_pending()
    return home, work


def test_a_session_scope_bounds_hits_and_passages(make_memory):
    memory = make_memory(top_k=3, context_radius=2)
    placed = interleaved(memory)
    hits = memory.search(QUESTION, top_k=20, sessions="home")
    assert hits and {h.index for h in hits} <= set(placed["home"]) and {h.session_id for h in hits} == {"home"}
    passages = memory.retrieve(QUESTION, sessions=["home"])
    assert passages
    for passage in passages:
        assert set(passage.indices) <= set(placed["home"]), "no neighbour of another session is shown"
        assert passage.session_ids == ["home"] * len(passage.indices)
    both = memory.search(QUESTION, top_k=20, sessions=["home", None])
    assert {h.index for h in both} == set(placed["home"]) | set(placed["none"]), "None admits records without one"
    everything = memory.search(QUESTION, top_k=20)
    assert {h.session_id for h in everything} == {"home", "work", None}


def test_the_archive_reads_no_neighbour_outside_the_scope(make_memory, embedder):
    memory = make_memory()
    home, work = tiles_and_chatter(memory)
    scope = SearchFilter(sessions=frozenset({"home"}))
    request = ContextRequest(radius=2, leading=3)
    vector = embedder.embed_queries([QUESTION])
    found = memory.archive.candidates(vector, QUESTION, 3, 3, scope, context=request)
    assert set(found.dense) | set(found.lexical) <= set(home)
    assert found.context is not None and found.context.around
    read = set(found.context.similarity) | set(found.context.live) | set(found.similarity)
    assert read <= set(home), "neither scored nor offered as a neighbour"
    unscoped = memory.archive.candidates(vector, QUESTION, 3, 3, None, context=request)
    assert unscoped.context is not None
    assert set(unscoped.context.similarity) & set(work), "unscoped, the other session's neighbours are read"


class LeavesNeighboursToTheEngine:
    """A real in-process archive that never answers a ``ContextRequest`` and records what the engine asks it."""

    def __init__(self, archive: InMemoryArchive) -> None:
        self._archive = archive
        self.scored: set[int] = set()

    def candidates(self, *args, context=None, **kwargs):
        return self._archive.candidates(*args, context=None, **kwargs)

    def similarities(self, vector, indices):
        self.scored.update(indices)
        return self._archive.similarities(vector, indices)

    def __len__(self):
        return len(self._archive)

    def __getattr__(self, name):
        return getattr(self._archive, name)


def test_the_engine_scores_no_neighbour_outside_the_scope_when_the_archive_leaves_them(embedder):
    """The home session's turns about the tiles alternate with the work session's unrelated turns, after 200 other
    messages: the work turns are neighbours of the hits, not candidates, so the engine must ask for them."""
    archive = LeavesNeighboursToTheEngine(InMemoryArchive())
    memory = SemanticMemory(embedder=embedder, archive=archive, context_radius=2, ranking={"min_depth": 3})
    memory.add(distractor_conversation(200), session_id="earlier")
    home, work = tiles_and_chatter(memory)
    passages = memory.retrieve(QUESTION, top_k=2, sessions="home")
    assert passages and all(set(p.indices) <= set(home) for p in passages)
    assert not archive.scored & set(work), "the other session's neighbours were never scored"
    archive.scored.clear()
    memory.retrieve(QUESTION, top_k=2)
    assert archive.scored & set(work), "unscoped, the same search scores the other session's neighbours"


def test_excluded_indices_are_never_hits_but_stay_neighbours(make_memory):
    memory = make_memory(context_radius=20)
    placed = interleaved(memory)
    held = {h.index for h in memory.search(QUESTION, top_k=3)}
    again = memory.search(QUESTION, top_k=3, exclude=held)
    assert again and not held & {h.index for h in again}
    passages = memory.retrieve(QUESTION, top_k=3, exclude=held)
    hits = {i for p in passages for i in p.hit_indices}
    shown = {i for p in passages for i in p.indices}
    assert hits and not hits & held, "never a hit"
    assert held <= shown, "still shown beside the hits, as the conversation they belong to"
    everything = set(placed["home"]) | set(placed["work"]) | set(placed["none"])
    assert memory.search(QUESTION, top_k=20, exclude=everything) == []


@pytest.mark.parametrize("bad", [{"sessions": [1]}, {"exclude": ["3"]}, {"exclude": [True]}])
def test_scope_and_exclusion_arguments_are_checked(make_memory, bad):
    memory = make_memory()
    with pytest.raises(InvalidMessageTypeError):
        memory.search("anything", **bad)


def test_find_keys_and_indices_of_find_exactly_what_add_archived(make_memory):
    memory = make_memory()
    tracked = [{**text_message("user", f"tracked message {n}"), "tracking_id": f"t-{n}"} for n in range(4)]
    indices = memory.add(tracked[:3])
    memory.forget([indices[1]])
    changed = {**tracked[0], "content": [{"text": "tracked message 0, edited after it was archived"}]}
    untracked = text_message("user", "tracked message 2")  # same text, no tracking id: nothing repeats
    asked = [tracked[2], tracked[1], tracked[3], changed, untracked, tracked[0], {"not": "a message"}]
    assert memory.indices_of(asked) == {0: indices[2], 5: indices[0]}
    assert memory.indices_of([]) == {}
    from strands_semantic_memory.engine._intake import record_keys

    keys = record_keys(tracked)
    assert memory.archive.find_keys([k for k in keys if k]) == {keys[0]: indices[0], keys[2]: indices[2]}
    assert memory.archive.find_keys(["t:" + "0" * 32]) == {}


def test_pending_messages_a_search_embeds_for_itself_stay_inside_the_scope(embedder):
    """In background mode a search scores the newest pending messages itself (``PendingView``): one outside the
    scope is neither a candidate nor a scored neighbour."""
    from strands_semantic_memory.engine.embedding import PendingView, SearchVectors

    archive = InMemoryArchive()
    memory = SemanticMemory(embedder=embedder, archive=archive)
    home, work = tiles_and_chatter(memory)
    assert not archive.has_pending(), "everything embedded: the view's vectors below stand in for pending ones"
    pending = {i: embedder.embed_documents([f"kitchen tiles, pending note {i}"]) for i in (*home[:2], *work[:2])}
    view = PendingView(archive, SearchVectors(pending, lambda: True))
    vector = embedder.embed_queries([QUESTION])
    scope = SearchFilter(sessions=frozenset({"home"}))
    found = view.candidates(vector, QUESTION, 3, 3, scope, context=ContextRequest(radius=2, leading=3))
    read = set(found.dense) | set(found.similarity)
    assert found.context is not None
    read |= set(found.context.similarity) | set(found.context.live)
    assert read and read <= set(home)
    unscoped = view.candidates(vector, QUESTION, 3, 3, None, context=ContextRequest(radius=2, leading=3))
    assert unscoped.context is not None and set(unscoped.context.similarity) & set(work[:2])
