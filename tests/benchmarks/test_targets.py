"""The target table: what each target reads from a run's results and how it is judged."""

from benchmarks.targets import targets


def test_targets_compare_recall_with_pytorch_and_read_the_spread_of_scale_rows():
    def recall(r5):
        return {"all": {"r5": r5, "r10": 80.0, "r25": 87.0, "r50": 91.0}}

    results = {
        "locomo": {
            "modes": {"hybrid": recall(70.6), "dense": recall(44.0)},
            "compare": {"backend": {"short": "PyTorch"}, "modes": {"hybrid": recall(70.5), "dense": recall(43.3)}},
        },
        "large": {
            "durable_open": [
                {"size": 100_000, "sqlite_open_seconds": 1.5, "sqlite_open_spread": _spread(1.5, 1.4, 2.1)}
            ],
            "session_turns": [{"size": 100_000, "sqlite_overhead_ms": 2.0, "sqlite_overhead_rounds": _spread(2, 1, 3)}],
            "engine": [
                {"size": 1_000_000, "mode": "hybrid", "default": False, "rounds": _spread(40, 30, 50)},
                {"size": 1_000_000, "mode": "hybrid", "default": True, "rounds": _spread(12, 11, 14)},
            ],
        },
    }
    rows = {label: (measured, met) for _, label, measured, met in targets(results)}

    def row(start):
        return next(value for label, value in rows.items() if label.startswith(start))

    assert row("LoCoMo dev recall within 0.5 points") == ("0.1 (deterministic: same on every run)", "yes")
    assert row("the same in dense mode")[1] == "**no**", "0.7 points apart"
    assert row("reopen a durable archive of 100k")[1] == "**no** (target inside the spread)"
    assert row("FileSessionManager turn at 100k") == ("2.0 (1.0 to 3.0, 3 runs)", "yes")
    assert row("retrieve p50 <= 15 ms at 1M") == ("12.00 (11.00 to 14.00, 3 runs)", "yes"), "the default's row"


def _spread(median, low, high):
    return {"median": median, "min": low, "max": high, "runs": 3}
