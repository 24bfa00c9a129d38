"""The speed sections at a tiny size: each measures, renders its markdown, and the figures that are behaviours hold.

Slow (the sections start child processes and load the model in them): outside the fast lane.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import event_loop, latency, load, many_files, per_exchange, scale
from benchmarks.common import LOCOMO_DEV, Settings

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

LOCOMO = LOCOMO_DEV if LOCOMO_DEV.exists() else Path("/work/shared/data/locomo/locomo-dev.json")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    if not LOCOMO.exists():
        pytest.skip("the LoCoMo development file is not beside the clone")
    return Settings(quick=True, locomo=LOCOMO, output=tmp_path_factory.mktemp("report"), options={"tiny": True})


def test_latency_and_per_exchange_measure_the_hook_through_an_agent(settings: Settings) -> None:
    found = latency.run(settings)
    sqlite = [row for row in found["rows"] if row["archive"] == "SQLite file"]
    assert len(sqlite) == 2 and all(row["hook"]["n"] == found["turns"] and row["hook"]["p50"] > 0 for row in sqlite)
    assert "hook p50" in latency.render(found, settings.output)
    exchanges = per_exchange.run(settings)
    assert len(exchanges["rounds"]) == 1 and "Strands p50" in per_exchange.render(exchanges, settings.output)


def test_event_loop_and_many_files_keep_users_apart_and_lose_nothing(settings: Settings) -> None:
    found = event_loop.run(settings)
    measured = [row for row in found["rows"] if "stall_ms" in row and row["path"] != "Strands alone"]
    assert measured and all(row["leaked"] == 0 and row["found"] == row["users"] for row in measured)
    assert "largest stall" in event_loop.render(found, settings.output)
    files = many_files.run(settings)
    assert files["writers"]["kept"] == {"worker-a": 10, "worker-b": 10} and files["writers"]["duplicates"] == 0
    assert files["open"]["fds_after_close"] <= 0
    assert "descriptors per user" in many_files.render(files, settings.output)


def test_scale_crosses_into_the_approximate_index_and_keeps_recall(settings: Settings) -> None:
    found = scale.run(settings)
    assert found["vector_index"]["approximate"] and found["vector_index"]["recall_at_10"] >= 0.9
    assert found["restore"]["embedding_calls"] == 0 and found["reopen"]["count"] == 200
    assert "recall@10" in scale.render(found, settings.output)


def test_load_runs_or_says_it_cannot(settings: Settings) -> None:
    found = load.run(settings)
    if "unavailable" not in found:
        assert found["lost"] == found["duplicated"] == found["leaked_requests"] == found["foreign_in_archive"] == 0
        assert (settings.output / "load.png").exists() or "load.png" in load.render(found, settings.output)
    assert "worker processes" in load.render(found, settings.output)
