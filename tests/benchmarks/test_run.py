"""The run: where it writes, which measurements it accepts, and how it goes on when one fails or time runs out."""

from pathlib import Path

import pytest

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sizes import QUICK_SIZES
from benchmarks.report.figures import Part
from benchmarks.run import FULL_OUTPUT, NAMES, QUICK_OUTPUT, Progress, main, measure, output_folder
from benchmarks.sections import Section


def test_a_full_run_writes_the_committed_report():
    assert output_folder(None, quick=False) == FULL_OUTPUT == Path("docs")


def test_a_quick_run_writes_elsewhere_unless_an_output_folder_is_given():
    assert output_folder(None, quick=True) == QUICK_OUTPUT
    assert QUICK_OUTPUT.parts[0] == "build", "a git-ignored folder, not docs/"
    assert output_folder("docs", quick=True) == Path("docs"), "an explicit --output is obeyed"


def test_an_unknown_section_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit):
        main(["--quick", "--only", "locomo,delivery"])
    assert "unknown sections delivery" in capsys.readouterr().err


def test_only_names_the_measurements_in_the_order_a_run_takes_them():
    assert NAMES == (
        "quality",
        "scale",
        "restore",
        "locomo",
        "loop",
        "turns",
        "open",
        "index",
        "engine",
        "locomo_loop",
        "cold_start",
    ), "the slow LoCoMo in the loop and the cold start last, where a deadline skips them first"


class Counts(Measurement):
    name = "counts"
    label = "counting"

    def measure(self, run):
        return [1, 2, 3]


class Fails(Measurement):
    name = "fails"
    label = "failing"
    key = "failed_part"

    def measure(self, run):
        raise ValueError("the measurement broke")


class Skips(Measurement):
    name = "skips"
    label = "skipping"

    def skip(self, run):
        return "skips skipped: nothing to measure"

    def measure(self, run):  # pragma: no cover - never called
        raise AssertionError("a skipped measurement is not measured")


def _sections():
    def build(results):
        return Part([])

    return (
        Section("counted", (Counts(),), build),
        Section("both", (Fails(), Counts()), build, assemble=lambda measured: {"keys": sorted(measured)}),
        Section("skipped", (Skips(),), build),
    )


def test_a_failing_measurement_is_recorded_and_the_others_still_run(capsys):
    progress = Progress(deadline=None)
    run = Run(sizes=QUICK_SIZES, embedder=None)
    results = measure(run, {"counts", "fails", "skips"}, progress, _sections())
    assert results == {"counted": [1, 2, 3], "both": {"keys": ["counts"]}}, "a section holds what ran"
    assert progress.errors == {"fails": "ValueError: the measurement broke"}
    assert set(progress.steps) == {"counting", "failing"}, "a skipped measurement takes no time"
    output = capsys.readouterr().out
    assert "skips skipped: nothing to measure" in output and "] failing" in output


def test_measurements_past_the_deadline_are_skipped_and_named(capsys):
    progress = Progress(deadline=-1.0)
    results = measure(Run(sizes=QUICK_SIZES, embedder=None), {"counts"}, progress, _sections())
    assert results == {} and progress.skipped == ["counting", "counting"]
    assert "counting: skipped (past the -1 s deadline)" in capsys.readouterr().out
