"""The cold-start benchmark runs end to end at tiny sizes and reports what it measured (no timing is asserted)."""

import json

import pytest

from benchmarks.measure import cold_start
from strands_semantic_memory.embeddings import onnx_available


@pytest.mark.slow
@pytest.mark.skipif(not onnx_available(), reason="the onnx extra is not installed")
def test_cold_start_measures_an_export_then_a_cached_load_in_fresh_processes(tmp_path):
    empty, warm = cold_start.cold_start(tmp_path, empty_runs=1, warm_runs=1)
    assert empty.exports == (1,) and empty.cache == "empty"
    assert warm.exports == (0,) and warm.torch_imported is False
    assert len(warm.first_retrieve.runs) == 1 and warm.process.median >= warm.first_retrieve.median


def test_reduction_turns_separates_the_turns_that_reduce():
    latency = cold_start.reduction_turns("background", turns=12, max_input_chars=1500)
    assert latency.manager == "background" and latency.reductions > 0
    assert len(latency.reducing.runs) == latency.reductions and len(latency.other.runs) == 12 - latency.reductions
    table = cold_start.format_results(
        cold_start.Results(cold=(), first_turns=(), turns=(latency,), load_average=(0.0, 0.0, 0.0))
    )
    assert "| background |" in table


def test_cold_start_results_become_plain_spreads():
    def spread(*runs):
        return cold_start.Spread(tuple(runs))

    measured = cold_start.Results(
        cold=(
            cold_start.ColdStart(
                "warm", spread(1.0, 1.2, 0.9), spread(0.4, 0.5, 0.4), spread(1.3, 1.4, 1.2), (0, 0, 0), False
            ),
        ),
        first_turns=(cold_start.FirstTurn(True, 1.0, spread(0.01), spread(1.02)),),
        turns=(
            cold_start.TurnLatency("background", spread(0.016, 0.02, 0.018), spread(0.001, 0.002, 0.003), 3),
            cold_start.TurnLatency("strands", spread(0.0), spread(0.001), 0),
        ),
        load_average=(1.0, 2.0, 3.0),
    )
    result = cold_start.cold_start_result(measured, turns=60)
    assert result["cold"][0]["first_retrieve"] == {"min": 0.9, "median": 1.0, "max": 1.2, "runs": 3}
    assert result["cold"][0]["exports"] == [0, 0, 0] and result["cold"][0]["torch_imported"] is False
    assert result["first_turns"][0]["first_turn"]["runs"] == 1
    assert result["turns"][0]["reducing"] == {"min": 0.016, "median": 0.018, "max": 0.02, "runs": 3}
    assert result["turns"][1]["reducing"] is None, "no reducing turn: no spread"
    assert result["load_average"] == [1.0, 2.0, 3.0] and result["turns_per_manager"] == 60
    assert json.loads(json.dumps(result)) == result, "plain JSON data"
