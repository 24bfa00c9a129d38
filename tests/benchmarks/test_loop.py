"""The LoCoMo-in-the-loop benchmark at a tiny size: its data, its lossy summary, and one row end to end."""

from __future__ import annotations

import pytest

from benchmarks.loop import (
    LOCOMO_DEV,
    LoopConversation,
    LoopQuestion,
    load_loop_conversations,
    lossy_summary,
    play,
)

FACT = "Caroline: My locker code is LK-4417-QV, written on the blue card."


def tiny_conversation() -> LoopConversation:
    filler = [
        (f"Caroline: Let me tell you about the hiking trip, day {i}, with the long ridge walk.", f"Melanie: Day {i}!")
        for i in range(40)
    ]
    exchanges = ((FACT, "Melanie: Noted, the blue card."), *filler)
    question = LoopQuestion("What is Caroline's locker code?", (FACT,), 4)
    return LoopConversation("tiny", tuple(exchanges), (question,))


def test_the_summary_keeps_frequent_long_words_only():
    messages = [{"role": "user", "content": [{"text": "LK-4417-QV locker locker hiking hiking hiking trip"}]}]
    summary = lossy_summary(messages)
    assert summary.startswith("Summary: the speakers talked about hiking, locker")
    assert "4417" not in summary and "trip" not in summary


@pytest.mark.skipif(not LOCOMO_DEV.is_file(), reason="the LoCoMo development half is not beside the clone")
def test_locomo_becomes_alternating_exchanges_with_evidence_texts():
    conversations = load_loop_conversations()
    assert len(conversations) == 5
    first = conversations[0]
    assert first.exchanges[0][0].startswith("Caroline: ") and first.exchanges[0][1].startswith("Melanie: ")
    texts = "\n".join(u + "\n" + r for u, r in first.exchanges)
    assert all(e in texts for q in first.questions for e in q.evidence)


def test_the_semantic_row_delivers_what_the_summary_lost(embedder):
    result = play(tiny_conversation(), "semantic manager + hook", 2_000, embedder)
    baseline = play(tiny_conversation(), "Strands summarizing", 2_000, embedder)
    assert baseline["delivered"] == 0.0, "the fact was summarized away"
    assert result["delivered"] == 100.0 and result["overflows"] == 0 and result["failed_turns"] == 0
    assert result["input_chars"] <= 2_000
