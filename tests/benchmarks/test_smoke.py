"""Every benchmark runs end to end at tiny sizes and writes the report and its plots (no timing is asserted)."""

import re

from benchmarks import run
from benchmarks.dataset import build_dataset


def test_suite_runs_at_tiny_sizes_and_writes_report_and_plots(tmp_path):
    assert run.main(["--quick", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "benchmarks.md").read_text()
    for heading in ["## Retrieval quality", "## Enrichment latency", "## Targets", "## Tokens sent per turn"]:
        assert heading in report
    for plot in ["recall.png", "scale.png", "tokens.png"]:
        assert (tmp_path / plot).stat().st_size > 1000
        assert f"({plot})" in report
    for mode in ["dense", "lexical", "hybrid"]:
        assert re.search(rf"\| {mode} \| \d\.\d\d \|", report), f"a recall row for {mode}"
    assert "pgvector hybrid" in report


def test_dataset_is_reproducible_and_its_evidence_is_where_it_says():
    first, second = build_dataset(21, per_kind=4), build_dataset(21, per_kind=4)
    assert first.messages == second.messages and first.questions == second.questions
    assert build_dataset(22, per_kind=4).messages != first.messages
    for question in first.questions:
        for position in question.evidence:
            assert first.messages[position]["role"] == "user"
        if question.kind == "multi_turn":
            assert question.evidence[1] - question.evidence[0] <= 6, "a few turns apart"
