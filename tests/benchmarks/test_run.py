"""Where a benchmark run writes: a quick run never replaces the committed report unless asked."""

from pathlib import Path

from benchmarks.run import FULL_OUTPUT, QUICK_OUTPUT, output_folder


def test_a_full_run_writes_the_committed_report():
    assert output_folder(None, quick=False) == FULL_OUTPUT == Path("docs")


def test_a_quick_run_writes_elsewhere_unless_an_output_folder_is_given():
    assert output_folder(None, quick=True) == QUICK_OUTPUT
    assert QUICK_OUTPUT.parts[0] == "build", "a git-ignored folder, not docs/"
    assert output_folder("docs", quick=True) == Path("docs"), "an explicit --output is obeyed"
