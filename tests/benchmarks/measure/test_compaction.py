"""The Strands-loop benchmark with a model writing the summaries instead of the script (plumbing only)."""

from benchmarks.measure.compaction import FACTS, compaction_rows
from strands_semantic_memory.testing import ScriptedModel


def test_a_given_summarizer_writes_every_summary_and_the_rows_say_so(embedder):
    written = "## Conversation Summary\n* Topics only: nothing worth keeping."
    summarizer = ScriptedModel(
        lambda messages, system_prompt, is_summary: written,
        structured=lambda output_model, prompt, system_prompt: {"facts": []},
    )
    rows = compaction_rows(embedder, turns=60, summarizer=summarizer, summarizer_name="Stand-in")

    names = [r["manager"] for r in rows]
    assert names == [
        "Structured (ours), Stand-in summaries",
        "Text (ours), Stand-in summaries",
        "Summarizing (Strands), Stand-in summaries",
        "Structured + hook (ours), Stand-in summaries",
        "Text + hook (ours), Stand-in summaries",
    ], "the summarizing managers only: the sliding window writes no summary, the prose bound is the script's"
    assert all(r["summarizer"] == "Stand-in" and r["summaries"] > 0 and r["failed_turns"] == 0 for r in rows)
    prose_summaries = sum(r["summaries"] for r in rows if "Structured" not in r["manager"])
    assert len(summarizer.summary_requests) == prose_summaries, "each one asked"
    assert len(summarizer.structured_requests) == sum(r["summaries"] for r in rows if "Structured" in r["manager"])
    by_name = {r["manager"]: r for r in rows}
    # The stand-in keeps no fact, so a summary row reaches only what is still in the window; the script would
    # have kept four. The hook rows reach more: retrieval from the verbatim archive does not depend on the summary.
    assert by_name["Text (ours), Stand-in summaries"]["facts_reached"] < 4
    assert (
        by_name["Text + hook (ours), Stand-in summaries"]["facts_reached"]
        > by_name["Text (ours), Stand-in summaries"]["facts_reached"]
    )
    assert all(r["facts"] == len(FACTS) and r["scripted"].startswith("chat replies") for r in rows)
    assert all("summarizer" not in r["scripted"] for r in rows), "the summaries are not scripted in these rows"


def test_a_summary_that_fails_is_a_failed_turn_and_the_run_goes_on(embedder):
    def responder(messages, system_prompt, is_summary):
        return RuntimeError("the model wrote no summary") if is_summary else "unused: chat replies are scripted"

    (row,) = [
        r
        for r in compaction_rows(embedder, turns=60, summarizer=ScriptedModel(responder), structured=False)
        if r["manager"].startswith("Text + hook")
    ]

    assert row["failed_turns"] > 0 and row["first_failure"].startswith("RuntimeError: the model wrote no summary")
    assert row["summaries"] >= row["failed_turns"], "each failed turn asked for a summary"
    assert row["facts"] == len(FACTS), "a recall turn that fails still counts, as not reached"
    assert 0 <= row["found_not_sent"] <= row["facts"] and 0 <= row["retried_recalls"] <= row["facts"]
    assert row["mean_tokens"] > 0, "the turns that reached the model are counted"
