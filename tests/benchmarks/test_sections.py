"""The table of sections: unique names, declared figures the writer can draw, and each section's data."""

from benchmarks.measure.durable import crossover
from benchmarks.report.plots import DRAW
from benchmarks.sections import SECTIONS, measurements


def test_every_measurement_has_a_unique_name_and_result_key():
    names = [m.name for m in measurements()]
    assert len(names) == len(set(names))
    for section in SECTIONS:
        keys = [m.result_key() for m in section.measurements]
        assert len(keys) == len(set(keys)), section.name


def test_every_declared_figure_can_be_drawn_and_no_file_is_declared_twice():
    declared = [file for section in SECTIONS for file in section.figures]
    assert len(declared) == len(set(declared))
    assert set(declared) == set(DRAW), "every figure the writer can draw belongs to a section"


def test_the_report_opens_with_its_conditions_and_targets_whatever_ran():
    opening = [section for section in SECTIONS if not section.measurements]
    assert [section.name for section in opening] == ["", ""] and SECTIONS[:2] == tuple(opening)


def test_a_section_with_several_measurements_assembles_what_ran():
    large = next(section for section in SECTIONS if section.name == "large")
    turns = [
        {"size": 0, "json_turn_cpu_ms": 1.0, "sqlite_turn_cpu_ms": 1.0},
        {"size": 1000, "json_turn_cpu_ms": 20.0, "sqlite_turn_cpu_ms": 2.0},
    ]
    opens = [{"size": 1000, "json_restore_cpu_seconds": 1.0, "sqlite_open_cpu_seconds": 0.1}]
    data = large.data({"session_turns": turns, "durable_open": opens})
    assert data["crossover"] == crossover(turns, opens) and len(data["caveats"]) == 1
    assert "crossover" not in large.data({"vector_index": []}), "the crossover needs both halves"
    assert large.data({}) is None, "nothing ran: no section"
