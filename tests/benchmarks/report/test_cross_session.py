"""The across-sessions section rendered from handmade results: tables per window, rows that failed or archived
nothing named, the unrelated prompts, the curve, both plots, and the targets of issues 37 and 38 judged."""

from benchmarks.report.figures import CROSS_SESSION, TOKEN_CURVE
from benchmarks.report.sections import cross_session as cross_session_section
from benchmarks.report.targets import (
    CROSS_BASELINE_ROW,
    LOOP_DEFAULT_ROW,
    LOOP_MEMORY_MANAGER_ROW,
    LOOP_STORAGE_ROW,
    judge,
)
from benchmarks.report.writer import write_report
from benchmarks.sections import SECTIONS
from tests.support.benchmark_results import (
    cross_cell,
    cross_row,
    cross_session,
    curve_point,
    meta,
    unrelated_prompts,
)

WINDOWS = (16_000, 32_000, 800_000)


def _rows(delivered):
    return {
        CROSS_BASELINE_ROW: cross_row(cross_cell(0.0, tokens=0.0), cross_cell(0.0, tokens=0.0)),
        LOOP_MEMORY_MANAGER_ROW: cross_row(cross_cell(96.0), cross_cell(94.0)),
        LOOP_DEFAULT_ROW: cross_row(cross_cell(delivered), cross_cell(delivered - 10)),
        LOOP_STORAGE_ROW: cross_row(cross_cell(93.0), cross_cell(91.0)),
    }


def _section(**parts):
    return {"meta": meta(), "cross_session": parts}


def _judged(results):
    return {row.name: (row.measured, row.met) for row in judge(results)}


def test_the_section_shows_every_row_per_window_and_conversation_the_prompts_the_curve_and_both_plots(tmp_path):
    points = [
        curve_point("default", "default", 92.0, 900.0),
        curve_point("always, cap 1,000", "setting", 70.0, 1_000.0),
        curve_point("before this round", "today", 95.0, 7_500.0),
    ]
    results = _section(
        cross_session=cross_session(dict.fromkeys(WINDOWS, _rows(95.0))),
        unrelated_prompts=unrelated_prompts({LOOP_MEMORY_MANAGER_ROW: 120.0, LOOP_DEFAULT_ROW: 0.0}),
        token_curve={"row": LOOP_DEFAULT_ROW, "window": 800_000, "points": points, "seconds": 1.0},
    )
    report = write_report(results, tmp_path, SECTIONS).read_text()
    section = report.split("## LoCoMo across sessions: what an earlier session said, in a new one")[1]
    for window in WINDOWS:
        assert f"### W = {window:,} characters ({window // 4:,} tokens)" in section
    assert f"| {LOOP_DEFAULT_ROW} | 90.0 | 85.0 | 90.0 | 20 | 900.0 | 890.0 | 100.0 | 80.0 | 120.0 | 0 | 0 | 0 |" in (
        section
    ), "overall"
    assert f"| {LOOP_DEFAULT_ROW} | conv-1 | 10 | 85.0 | 900.0 | 60 | 80.0 | 120.0 |" in section, "per conversation"
    assert f"| {CROSS_BASELINE_ROW} | conv-0 | 10 | 0.0 | 0.0 | 60 |" in section
    assert "2 user(s) (conv-0: 3 sessions, 30 exchanges" in section and "the first 10 questions of each" in section
    assert "could not run" not in section and "Rows missing" not in section and "Archived nothing" not in section
    assert f"| {LOOP_MEMORY_MANAGER_ROW} | 120.0 | 120.0 | 25.0 | 480.0 | 120.0 | 0.0 | 30.0 | 0 |" in section
    assert "| **default** | 92.0 | 87.0 | 900.0 | 900.0 | 100.0 |" in section, "the default stands out"
    assert f"]({CROSS_SESSION})" in section and f"]({TOKEN_CURVE})" in section
    assert (tmp_path / CROSS_SESSION).stat().st_size > 1000 and (tmp_path / TOKEN_CURVE).stat().st_size > 1000
    judged = _judged(results)
    assert judged["cross_semantic_delivered_16k_pct"] == ("90.0 (deterministic: same on every run)", "yes")
    assert judged["cross_semantic_lowest_conversation_800k_pct"][1] == "yes", "85 >= 80"
    assert judged["cross_storage_delivered_32k_pct"][1] == "yes"
    assert judged["unrelated_memory_manager_tokens"] == ("120.0 (deterministic: same on every run)", "**no**")
    assert judged["unrelated_semantic_tokens"][1] == "yes"
    assert judged["unrelated_storage_tokens"] == (f"row '{LOOP_STORAGE_ROW}' missing from this run", "n/a")


def test_a_row_that_failed_or_archived_nothing_is_named_and_its_targets_read_n_a_or_no(tmp_path):
    rows = _rows(95.0)
    rows[LOOP_STORAGE_ROW] = {"error": "TypeError: no such keyword"}
    empty = cross_cell(0.0, tokens=0.0)
    empty["played"]["archived"] = 0
    rows[LOOP_DEFAULT_ROW] = cross_row(empty, cross_cell(50.0))
    results = _section(cross_session=cross_session({16_000: rows}))
    report = write_report(results, tmp_path, SECTIONS).read_text()
    assert f"**'{LOOP_STORAGE_ROW}' could not run at W = 16,000**: `TypeError: no such keyword`" in report
    assert f"**Archived nothing at W = 16,000** (for at least one user): '{LOOP_DEFAULT_ROW}'." in report
    judged = _judged(results)
    assert judged["cross_storage_delivered_16k_pct"] == ("row failed: TypeError: no such keyword", "n/a")
    assert judged["cross_semantic_lowest_conversation_16k_pct"][1] == "**no**"
    assert judged["cross_semantic_delivered_32k_pct"] == ("not run at W = 32,000", "n/a")
    assert judged["unrelated_semantic_tokens"] == ("not run", "n/a (not run)")
    assert (tmp_path / CROSS_SESSION).is_file(), "the rows that ran at every window are drawn"
    assert not (tmp_path / TOKEN_CURVE).exists(), "the curve did not run"


def test_a_skipped_section_says_why_and_draws_nothing(tmp_path):
    why = "LoCoMo across sessions was not run: `--locomo none`"
    results = _section(
        cross_session={"skipped": why},
        unrelated_prompts={"skipped": "The unrelated prompts were not run: `--locomo none`"},
        token_curve={"skipped": "The curve was not run at these sizes"},
    )
    report = write_report(results, tmp_path, SECTIONS).read_text()
    assert f"## LoCoMo across sessions: what an earlier session said, in a new one\n\n{why}." in report
    assert "The unrelated prompts were not run: `--locomo none`." in report
    assert "The curve was not run at these sizes." in report
    assert not (tmp_path / CROSS_SESSION).exists() and not (tmp_path / TOKEN_CURVE).exists()
    assert _judged(results)["cross_semantic_delivered_16k_pct"] == (f"not run: {why}", "n/a")
    assert cross_session_section.build({"meta": meta()}) is None, "the section did not run"


def test_the_section_assembles_what_ran_of_its_three_measurements():
    section = next(section for section in SECTIONS if section.name == "cross_session")
    assert [m.name for m in section.measurements] == ["cross_session", "unrelated_prompts", "token_curve"]
    assert section.data({"token_curve": {"skipped": "x"}}) == {"token_curve": {"skipped": "x"}}
    assert section.data({}) is None
