"""LoCoMo across sessions at a tiny size: each session a new agent over the user's file, dated by the clock."""

import dataclasses

from benchmarks.data.locomo import load_session_conversations
from benchmarks.measure.base import Run
from benchmarks.measure.cross_session import cross_session
from benchmarks.measure.sessions import (
    STORAGE_ROW,
    STORE_ROW,
    STRANDS_ROW,
    UserArchives,
    ask,
    received,
    truncated,
)
from benchmarks.measure.sizes import QUICK_SIZES, CrossSessionSettings
from strands_semantic_memory import SemanticMemory
from tests.support.benchmark_results import tiny_locomo


def _run(path, embedder, **cross):
    settings = CrossSessionSettings(**{"windows": (800_000,), **cross})
    return Run(sizes=dataclasses.replace(QUICK_SIZES, cross=settings), embedder=embedder, locomo=path)


def test_what_an_earlier_session_said_reaches_a_new_session_only_with_a_memory(tmp_path, embedder):
    result = cross_session(_run(tiny_locomo(tmp_path / "locomo.json"), embedder), rows=(STRANDS_ROW, STORE_ROW))
    (window,) = result["windows"].values()
    alone, store = window[STRANDS_ROW]["all"], window[STORE_ROW]["all"]
    assert alone["delivered"] == 0.0 and alone["injected_tokens"] == 0.0, "a new agent without memory knows nothing"
    assert store["delivered"] > 60.0 and store["injected_tokens"] > 0 and store["failed_turns"] == 0
    assert store["sessions"] == 2 and store["exchanges"] == 3 and store["questions"] == 3
    assert store["reported_tokens"] is not None and store["reported_tokens"] > 0, "the store's own count beside"
    cell = window[STORE_ROW]["conversations"]["tiny"]
    assert cell["played"]["archived"] == 6, "every message of both sessions, none of the questions"
    assert result["sessions"] == {"tiny": 2} and result["exchanges"] == {"tiny": 3}


def test_every_session_is_a_new_agent_dated_by_the_clock_and_a_turn_asked_leaves_the_archive_as_it_was(
    tmp_path, embedder
):
    (conversation,) = load_session_conversations(tiny_locomo(tmp_path / "locomo.json"))
    archives = UserArchives(embedder, [conversation])
    try:
        ((_, user),) = archives.users(STORE_ROW, 800_000)
        memory = SemanticMemory(archive_path=user.archive, user_id="tiny", embedder=embedder)
        try:
            records = memory.archive.get(sorted(memory.indices))
            dates = sorted({round(r.archived_at) for r in records.values()})
        finally:
            memory.close()
        first, second = (s.began_at for s in conversation.sessions)
        assert dates == [first, first + 60, second], "the session's date, a minute per exchange"
        asked = ask(STORE_ROW, user, "What is the name of Ann's dog?", 800_000)
        assert "Ann: I adopted a beagle called Pepper last week." in asked.received
        assert archives.played(STORE_ROW, 800_000, "tiny")["archived"] == 6
        memory = SemanticMemory(archive_path=user.archive, user_id="tiny", embedder=embedder)
        try:
            assert len(memory) == 6, "the question and its reply were forgotten again"
        finally:
            memory.close()
    finally:
        archives.close()


def test_a_row_that_cannot_be_built_is_named_and_the_others_still_run(tmp_path, embedder):
    def broken(model, user, tuning):
        raise TypeError("no such keyword")

    from benchmarks.measure import sessions

    sessions.ROWS["broken"] = broken
    try:
        result = cross_session(_run(tiny_locomo(tmp_path / "locomo.json"), embedder), rows=("broken", STRANDS_ROW))
    finally:
        del sessions.ROWS["broken"]
    (window,) = result["windows"].values()
    assert window["broken"] == {"error": "TypeError: no such keyword"}
    assert window[STRANDS_ROW]["all"]["questions"] == 3


def test_a_quick_run_keeps_the_questions_its_sessions_answer(tmp_path):
    (conversation,) = load_session_conversations(tiny_locomo(tmp_path / "locomo.json"))
    first = truncated(conversation, 1)
    assert len(first.sessions) == 1 and [q.text for q in first.questions] == [
        "What is the name of Ann's dog?",
        "Where does Bob's cello teacher live?",
    ]
    assert truncated(conversation, None) is conversation


def test_the_evidence_is_matched_in_what_the_model_read():
    assert received("> Ann: I said &quot;hi&quot; &amp; left\n| Bob: ok") == 'Ann: I said "hi" & left\nBob: ok'


def test_the_storage_row_runs_too(tmp_path, embedder):
    result = cross_session(_run(tiny_locomo(tmp_path / "locomo.json"), embedder, questions=1), rows=(STORAGE_ROW,))
    (window,) = result["windows"].values()
    assert "all" in window[STORAGE_ROW], window[STORAGE_ROW].get("error")
    assert window[STORAGE_ROW]["all"]["questions"] == 1
