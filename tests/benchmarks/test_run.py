"""The run: where it writes, which sections it accepts, and the data it keeps of the loop and cold-start sections."""

import json
from pathlib import Path

import pytest

from benchmarks import cold_start as cold
from benchmarks.run import FULL_OUTPUT, QUICK_OUTPUT, cold_start_result, locomo_loop, main, output_folder


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


def test_the_loop_section_is_skipped_with_its_reason_without_a_locomo_file(tmp_path):
    assert locomo_loop(None, embedder=None) == {"skipped": "LoCoMo in the loop was not run: `--locomo none`"}
    missing = locomo_loop(tmp_path / "absent.json", embedder=None)
    assert set(missing) == {"skipped"} and "absent.json" in missing["skipped"]


def test_cold_start_results_become_plain_spreads():
    def spread(*runs):
        return cold.Spread(tuple(runs))

    measured = cold.Results(
        cold=(
            cold.ColdStart(
                "warm", spread(1.0, 1.2, 0.9), spread(0.4, 0.5, 0.4), spread(1.3, 1.4, 1.2), (0, 0, 0), False
            ),
        ),
        first_turns=(cold.FirstTurn(True, 1.0, spread(0.01), spread(1.02)),),
        turns=(
            cold.TurnLatency("background", spread(0.016, 0.02, 0.018), spread(0.001, 0.002, 0.003), 3),
            cold.TurnLatency("strands", spread(0.0), spread(0.001), 0),
        ),
        load_average=(1.0, 2.0, 3.0),
    )
    result = cold_start_result(measured, turns=60)
    assert result["cold"][0]["first_retrieve"] == {"min": 0.9, "median": 1.0, "max": 1.2, "runs": 3}
    assert result["cold"][0]["exports"] == [0, 0, 0] and result["cold"][0]["torch_imported"] is False
    assert result["first_turns"][0]["first_turn"]["runs"] == 1
    assert result["turns"][0]["reducing"] == {"min": 0.016, "median": 0.018, "max": 0.02, "runs": 3}
    assert result["turns"][1]["reducing"] is None, "no reducing turn: no spread"
    assert result["load_average"] == [1.0, 2.0, 3.0] and result["turns_per_manager"] == 60
    assert json.loads(json.dumps(result)) == result, "plain JSON data"
