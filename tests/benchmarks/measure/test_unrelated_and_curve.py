"""The unrelated prompts and the curve over the tiny LoCoMo file's user: what a memory adds, per row and setting."""

import dataclasses

from benchmarks.data.unrelated import KINDS
from benchmarks.measure.base import Run
from benchmarks.measure.cross_session import cross_session
from benchmarks.measure.curve import DEFAULT, curve
from benchmarks.measure.sessions import STORAGE_ROW, STORE_ROW, Tuning, UserArchives
from benchmarks.measure.sizes import QUICK_SIZES, CrossSessionSettings
from benchmarks.measure.unrelated import unrelated_prompts
from tests.support.benchmark_results import tiny_locomo


def _run(path, embedder, **cross):
    settings = CrossSessionSettings(**{"windows": (800_000,), **cross})
    return Run(sizes=dataclasses.replace(QUICK_SIZES, cross=settings), embedder=embedder, locomo=path)


def test_unrelated_prompts_are_priced_per_row_user_and_kind_over_the_archives_the_run_shares(tmp_path, embedder):
    run = _run(tiny_locomo(tmp_path / "locomo.json"), embedder, prompts=6)
    result = unrelated_prompts(run, rows=(STORE_ROW, STORAGE_ROW))
    assert result["window"] == 800_000 and result["prompts"] == 6 and result["conversations"] == ["tiny"]
    assert result["kinds"] == dict.fromkeys(KINDS, 1), "taken in turn from each kind"
    for row in (STORE_ROW, STORAGE_ROW):
        found = result["rows"][row]
        assert "all" in found, found.get("error")
        overall, user = found["all"], found["conversations"]["tiny"]
        assert overall["turns"] == 6 and overall["failed_turns"] == 0 and overall["overflows"] == 0
        assert set(overall["kinds"]) == set(KINDS)
        assert 0 <= overall["injected_tokens"] <= overall["max_tokens"]
        assert user["injected_tokens"] == overall["injected_tokens"], "one user: the same figures"
    archives = run.shared["user_archives"]
    assert isinstance(archives, UserArchives)
    assert archives.played(STORE_ROW, 800_000, "tiny")["archived"] == 6, "the prompts were forgotten again"


def test_a_run_without_locomo_skips_them_saying_why(embedder):
    run = Run(sizes=QUICK_SIZES, embedder=embedder, locomo=None)
    assert unrelated_prompts(run) == {"skipped": "The unrelated prompts were not run: `--locomo none`"}
    assert curve(run)["skipped"].startswith("The curve was not run")


def test_the_curve_asks_the_same_questions_under_each_setting_and_its_default_is_the_cross_session_row(
    tmp_path, embedder
):
    run = _run(tiny_locomo(tmp_path / "locomo.json"), embedder)
    crossed = cross_session(run, rows=(STORAGE_ROW,))
    capped = Tuning("always, cap 50", {"inject_when": "always"}, 50)
    result = curve(run, settings=(DEFAULT, capped), row=STORAGE_ROW)
    assert result["row"] == STORAGE_ROW and result["window"] == 800_000
    default, small = result["points"]
    assert (default["role"], small["role"]) == ("default", "setting")
    assert "error" not in default and "error" not in small
    overall = crossed["windows"]["800000"][STORAGE_ROW]["all"]
    assert (default["delivered"], default["injected_tokens"]) == (overall["delivered"], overall["injected_tokens"])
    assert default["questions"] == small["questions"] == 3
    assert small["injected_tokens"] <= default["injected_tokens"], "a smaller cap adds no more"


def test_the_curve_is_left_out_when_the_sizes_say_so(tmp_path, embedder):
    run = _run(tiny_locomo(tmp_path / "locomo.json"), embedder, curve=False)
    assert curve(run) == {"skipped": "The curve was not run at these sizes"}
