"""Every benchmark runs end to end at tiny sizes and writes the report and its plots (no timing is asserted)."""

import json
import re

import pytest

from benchmarks import run
from benchmarks.measure.locomo_loop import ROWS
from benchmarks.report.__main__ import main as report_main
from strands_semantic_memory.embeddings import onnx_available
from tests.support.benchmark_results import tiny_locomo


@pytest.mark.slow  # every benchmark end to end: a minute or more on 2 cores
def test_suite_runs_at_tiny_sizes_and_writes_report_and_plots(tmp_path):
    locomo = tiny_locomo(tmp_path / "locomo.json")
    out = tmp_path / "out"
    assert run.main(["--quick", "--output", str(out), "--locomo", str(locomo), "--torch-threads", "1"]) == 0
    report = (out / "benchmarks.md").read_text()
    assert "failed in this run" not in report
    for heading in [
        "## Targets",
        "## Retrieval quality",
        "## LoCoMo",
        "## Hook latency",
        "## Durable archive",
        "## Tokens sent per turn",
        "## LoCoMo in the loop",
        "## Cold start and the reducing turn",
        "## LoCoMo across sessions",
        "### Unrelated prompts",
        "### Delivered against injected tokens",
    ]:
        assert heading in report
    plots = ["recall.png", "locomo.png", "scale.png", "tokens.png", "durable.png", "index.png", "locomo-loop.png"]
    for plot in [*plots, "cross-session.png", "token-curve.png"]:
        assert (out / plot).stat().st_size > 1000
        assert f"({plot})" in report
    for mode in ["dense", "lexical", "hybrid"]:
        assert re.search(rf"\| {mode} \| \d\.\d\d \|", report), f"a recall row for {mode}"
        assert re.search(rf"\| this library, {mode}( \(ONNX int8 queries\))? \| \d+\.\d \|", report), mode
    assert "| DRAGON (LoCoMo paper, all ten) | 56.7 | 66.2 | 76.7 | 82.7 |" in report
    assert "PostgreSQL hybrid" in report
    assert "What is scripted" in report
    raw = json.loads((out / "benchmarks.json").read_text())
    assert raw["locomo"]["questions"] == 3, "the malformed id is repaired, the missing one dropped"
    assert raw["meta"]["torch_threads"] == 1
    backend = raw["meta"]["backend"]
    assert backend["name"] == ("onnx" if onnx_available() else "torch"), "the default embedder of SemanticMemory()"
    assert "**Embedder: the library's default**" in report and backend["long"] in report
    assert raw["scale"]["with_embedding"]["embedder"] == backend, "ours and the naive pattern embed alike"
    assert "no worse than round 1 (12 ms" in report and "no worse than round 1 (19 ms" in report
    large = raw["large"]
    assert all(r["sqlite_open_spread"]["runs"] == 2 for r in large["durable_open"])
    assert large["session_turns"][-1]["sqlite_overhead_rounds"]["runs"] == 2
    assert [r["rounds"]["runs"] for r in large["engine"] if r["mode"] == "hybrid" and r["default"]] == [2]
    if backend["name"] == "onnx":  # PyTorch measured beside the default, over the same document vectors
        assert raw["meta"]["pool_compare"]["max_cosine_difference"] < 1e-4
        assert all("latency_compare" in r for r in raw["scale"]["rows"])
        assert set(raw["locomo"]["compare"]["modes"]) == {"hybrid", "dense"}
        assert re.search(r"\| 16 \| LoCoMo dev recall within 0\.5 points of the PyTorch model.*\| \d+\.\d \(", report)
        assert any(r["queries"] == "PyTorch" for r in large["engine"])
        prototype = raw["scale"]["with_embedding"]
        assert prototype["prototype_embedder"]["name"] == "torch" and prototype["prototype"]["runs"] == 2
        assert prototype["prototype_threads"] >= 1, "PyTorch's own default, not the run's pinned count"
        assert "as the prototype shipped it" in report and "against the prototype as it shipped" in report
    assert "lexical without conversation context" in report, "the LoCoMo row that prices the context ranking"
    assert set(raw["locomo"]["lexical_without_context"]) == {"r5", "r10", "r25", "r50"}
    assert all(r["latency_lexical_without_context"]["p50"] > 0 for r in raw["scale"]["rows"])
    assert "lexical-only hook p50 at 10k no worse than release 1" in report
    delivered = raw["locomo_loop"]
    assert delivered["rows"] == list(ROWS) and delivered["conversations"] == ["tiny"]
    assert set(delivered["windows"]) == {"16000", "32000"}
    assert all(set(rows) == set(ROWS) for rows in delivered["windows"].values()), "every row at every window"
    assert "Rows missing" not in report
    assert re.search(
        r"\| 25 \| LoCoMo in the loop, W = 16,000 characters: semantic manager \+ hook delivers .*\| \d", report
    )
    across = raw["cross_session"]
    assert set(across["cross_session"]["windows"]) == {"16000", "32000", "800000"}
    assert across["cross_session"]["sessions"] == {"tiny": 2}
    assert across["unrelated_prompts"]["prompts"] == 12 and len(across["token_curve"]["points"]) == 9
    assert re.search(r"\| 37 \| LoCoMo across sessions, W = 800,000 characters: .*\| \d", report)
    assert re.search(r"\| 38 \| unrelated prompts across sessions: .*\| \d", report)
    cold = raw["cold_start"]
    assert [row["cache"] for row in cold["cold"]] == ["empty", "warm"]
    assert cold["cold"][1]["first_retrieve"]["runs"] == 2 and cold["cold"][1]["exports"] == [0, 0]
    assert [row["manager"] for row in cold["turns"]] == ["background", "inline", "strands"]
    again = tmp_path / "again"
    assert report_main([str(out / "benchmarks.json"), "--output", str(again)]) == 0
    assert (again / "benchmarks.md").read_text() == report, "the run's data renders the same report"
