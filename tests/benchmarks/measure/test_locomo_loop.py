"""The LoCoMo-in-the-loop benchmark at a tiny size: its data, its lossy summary, and one row end to end."""

from __future__ import annotations

from benchmarks.data.locomo import LoopConversation, LoopQuestion
from benchmarks.measure.locomo_loop import locomo_loop, lossy_summary, play

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


def test_the_semantic_row_delivers_what_the_summary_lost(embedder):
    result = play(tiny_conversation(), "semantic manager + hook", 2_000, embedder)
    baseline = play(tiny_conversation(), "Strands summarizing", 2_000, embedder)
    assert baseline["delivered"] == 0.0, "the fact was summarized away"
    assert result["delivered"] == 100.0 and result["overflows"] == 0 and result["failed_turns"] == 0
    assert result["input_chars"] <= 2_000


def test_the_section_is_skipped_with_its_reason_without_a_locomo_file(tmp_path):
    assert locomo_loop(None, embedder=None) == {"skipped": "LoCoMo in the loop was not run: `--locomo none`"}
    missing = locomo_loop(tmp_path / "absent.json", embedder=None)
    assert set(missing) == {"skipped"} and "absent.json" in missing["skipped"]
