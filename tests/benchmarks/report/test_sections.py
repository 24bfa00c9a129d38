"""The report's sections rendered from small handmade results: builders give text and figures, the writer draws."""

import json

import pytest

from benchmarks.report.__main__ import main as report_main
from benchmarks.report.figures import LOCOMO_LOOP as LOOP_PLOT
from benchmarks.report.figures import Figure, Part
from benchmarks.report.sections import locomo_loop as locomo_loop_section
from benchmarks.report.targets import LOOP_BASELINE_ROW, LOOP_DEFAULT_ROW, LOOP_MEMORY_MANAGER_ROW, LOOP_STORAGE_ROW
from benchmarks.report.writer import write_report
from benchmarks.sections import SECTIONS, Section
from tests.support.benchmark_results import CATEGORY, cold_start, locomo_loop, loop_cell, loop_row, meta


def _every_row(delivered):
    return {
        LOOP_BASELINE_ROW: loop_row(loop_cell(0.0, overflows=13, ms=2.0), loop_cell(28.0, overflows=8, ms=2.0)),
        LOOP_MEMORY_MANAGER_ROW: loop_row(loop_cell(77.0, overflows=40), loop_cell(84.0, overflows=30)),
        LOOP_DEFAULT_ROW: loop_row(loop_cell(delivered, ms=9.9), loop_cell(delivered + 2, ms=10.1)),
        LOOP_STORAGE_ROW: loop_row(loop_cell(75.0), loop_cell(82.0)),
        "a row another branch added": loop_row(loop_cell(50.0), loop_cell(50.0)),
    }


def test_the_loop_and_cold_start_sections_show_every_row_each_conversation_the_plot_and_the_spreads(tmp_path):
    results = {
        "meta": meta(),
        "locomo_loop": locomo_loop({16_000: _every_row(86.0), 32_000: _every_row(92.0)}),
        "cold_start": cold_start(1.03, 0.99, 1.09),
    }
    report = write_report(results, tmp_path, SECTIONS).read_text()
    assert "## LoCoMo in the loop: what reaches the model" in report
    assert "### W = 16,000 characters (4,000 tokens)" in report and "### W = 32,000 characters (8,000 tokens)" in report
    assert f"| {CATEGORY} |" in report.split("### W = 16,000")[1].splitlines()[2], "a column per category"
    assert f"| {LOOP_DEFAULT_ROW} | 87.0 | 86.0 | 87.0 | 0 | 0 | 12,000 | 10.0 | 0 |" in report, "overall"
    assert f"| {LOOP_DEFAULT_ROW} | conv-1 | 10 | 88.0 | 88.0 | 0 | 0 | 12,000 | 10.1 |" in report, "per conversation"
    assert "| a row another branch added | 50.0 |" in report, "rows the targets do not name are shown too"
    assert "Rows missing" not in report
    assert "deterministic" in report and "one run (no repeats)" in report
    assert (tmp_path / LOOP_PLOT).stat().st_size > 1000 and f"]({LOOP_PLOT})" in report
    assert "## Cold start and the reducing turn" in report
    assert "| warm | 1.03 (0.99 to 1.09, 5 runs) |" in report
    assert "| background | 7 | 16.0 (14.0 to 19.0, 7 runs) |" in report, "seconds shown in milliseconds"
    assert "| strands | 0 | none |" in report, "no reducing turn: no spread"
    assert (
        "| 26 | first retrieve of a new process <= 1.5 s" in report
        and "| 1.03 (0.99 to 1.09, 5 runs) | yes |" in report
    )
    saved = tmp_path / "benchmarks.json"
    saved.write_text(json.dumps(results))
    again = tmp_path / "again"
    assert report_main([str(saved), "--output", str(again)]) == 0
    assert (again / "benchmarks.md").read_text() == report, "the run's data renders the same report"


def test_a_row_missing_from_the_run_is_named_in_its_section_and_its_targets_read_n_a(tmp_path):
    rows = _every_row(86.0)
    del rows[LOOP_STORAGE_ROW]
    results = {"meta": meta(), "locomo_loop": locomo_loop({16_000: rows})}
    report = write_report(results, tmp_path, SECTIONS).read_text()
    assert f"**Rows missing at W = 16,000**: '{LOOP_STORAGE_ROW}'" in report
    assert f"rows played: '{LOOP_BASELINE_ROW}'" in report
    assert (
        f"{LOOP_STORAGE_ROW} delivers >= 85 % of the evidence | row '{LOOP_STORAGE_ROW}' missing from this run | n/a |"
        in (report)
    )
    assert (
        "W = 32,000 characters: semantic manager + hook delivers >= 90 % of the evidence | not run at W = 32,000"
        in (report)
    )
    assert (tmp_path / LOOP_PLOT).is_file(), "the rows that were played are still drawn"


def test_a_skipped_loop_section_says_why(tmp_path):
    results = {"meta": meta(), "locomo_loop": {"skipped": "LoCoMo in the loop was not run: `--locomo none`"}}
    report = write_report(results, tmp_path, SECTIONS).read_text()
    assert "## LoCoMo in the loop: what reaches the model\n\nLoCoMo in the loop was not run: `--locomo none`." in report
    assert not (tmp_path / LOOP_PLOT).exists()


def test_a_builder_gives_its_figure_as_data_and_draws_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = _every_row(86.0)
    del rows["a row another branch added"]
    windows = {16_000: rows, 32_000: {LOOP_DEFAULT_ROW: rows[LOOP_DEFAULT_ROW]}}
    results = {"meta": meta(), "locomo_loop": locomo_loop(windows)}
    part = locomo_loop_section.build(results)
    assert f"![locomo-loop]({LOOP_PLOT})" in part.lines
    (figure,) = part.figures
    assert figure.file == LOOP_PLOT and list(figure.data["windows"]["16000"]) == [LOOP_DEFAULT_ROW], (
        "only the rows played at every window are drawn"
    )
    assert not list(tmp_path.iterdir()), "nothing was written"
    assert locomo_loop_section.build({"meta": meta()}) is None, "the section did not run"


def test_the_writer_refuses_a_figure_its_section_does_not_declare(tmp_path):
    stray = Section("stray", (), lambda results: Part(["text"], (Figure("other.png", {}),)), figures=("mine.png",))
    with pytest.raises(ValueError, match="other.png is not one of its section's"):
        write_report({"meta": meta()}, tmp_path, (stray,))
