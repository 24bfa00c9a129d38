"""The cold-start benchmark runs end to end at tiny sizes and reports what it measured (no timing is asserted)."""

import pytest

from benchmarks import cold_start
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
