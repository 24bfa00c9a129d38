"""LoCoMo recall: a missing data file is one line and a skipped section, and recall is measured on a tiny file."""

from benchmarks.measure.locomo import locomo, run_locomo
from tests.support.benchmark_results import tiny_locomo


def test_locomo_section_is_skipped_with_one_line_when_the_file_is_absent(tmp_path, capsys):
    result = locomo(tmp_path / "absent.json", embedder=None, repeats=2)
    assert set(result) == {"skipped"}
    assert capsys.readouterr().out.count("\n") == 1


def test_recall_grows_with_k_and_the_tiny_questions_are_found(embedder, tmp_path):
    result = run_locomo(tiny_locomo(tmp_path / "locomo.json"), embedder=embedder, modes=("hybrid",))
    assert result["questions"] == 3 and result["messages"] == 5
    recall = result["modes"]["hybrid"]["all"]
    assert recall["r5"] <= recall["r10"] <= recall["r25"] <= recall["r50"] == 100.0
