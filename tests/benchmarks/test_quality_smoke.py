"""The quality sections at quick size on a tiny LoCoMo-shaped file: their data's shape, and the report renders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import across_sessions, in_session, recall, run
from benchmarks.common import Settings

SAY = [
    ("Ann", "My storage locker code is 4417-PLUM, the one on Harwick Street."),
    ("Bob", "Nice, easy to remember. Are you moving things there this weekend?"),
    ("Ann", "Yes, and I adopted a grey cat called Pixel last Tuesday!"),
    ("Bob", "A cat! Pixel is a great name."),
]
QUESTIONS = [
    {"question": "What is Ann's storage locker code?", "evidence": ["D1:1"], "category": 4},
    {"question": "What is the name of Ann's cat?", "evidence": ["D2:1", "D:2:2"], "category": 1},
    {"question": "Where is the locker?", "evidence": ["D9:9"], "category": 4},  # names no turn: skipped
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    turns = [{"speaker": s, "text": t, "dia_id": f"D{1 + n // 2}:{1 + n % 2}"} for n, (s, t) in enumerate(SAY)]
    dialogue = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": turns[:2], "session_2": turns[2:]}
    dialogue |= {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "9:05 am on 12 May, 2023"}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([{"sample_id": "tiny", "conversation": dialogue, "qa": QUESTIONS}]))
    return path


@pytest.mark.slow
def test_quality_sections_run_and_render(tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(across_sessions, "WINDOWS", (200_000,))
    monkeypatch.setattr(in_session, "WINDOWS", (4_000,))
    settings = Settings(quick=True, locomo=tiny, output=tmp_path)
    data = {}
    for section in (recall.SECTION, across_sessions.SECTION, in_session.SECTION):
        data[section.name] = {
            "machine": {"commit": "x", "date": "d", "cpus": 2, "load": 0.0},
            "data": section.run(settings),
        }

    found = data["recall"]["data"]
    assert found["locomo"]["questions"] == 2 and set(found["locomo"]["all"]) == {"r5", "r10", "r25", "r50"}
    assert found["locomo"]["all"]["r5"] == 100.0  # four turns: every evidence turn is among the first five hits

    rows = data["across_sessions"]["data"]["rows"]
    ours = next(r for r in rows if r["path"] == "manager + hook" and r["archive"] == "SQLite")
    assert ours["status"] == "ok" and set(ours["modes"]) == {"clean", "pile-up"}
    assert ours["modes"]["clean"]["delivered"] == 100.0 and ours["modes"]["clean"]["questions"] == 2
    assert 0 < ours["modes"]["clean"]["tokens"] <= 2_600  # the memory's cap, and the block's own lines
    assert all(r["status"] == "ok" or r["status"].startswith(("not available", "failed")) for r in rows)
    assert {f["variant"] for f in data["across_sessions"]["data"]["formation"]} == {"prefixed", "old", "undated"}

    loop = data["in_session"]["data"]["rows"]
    assert [(r["window"], r["mode"]) for r in loop] == [(4_000, "clean"), (4_000, "pile-up")]
    assert all(r["delivered"] == 100.0 for r in loop)  # the conversation fits: the evidence is in the history

    run.write_report(data, tmp_path)
    report = (tmp_path / "benchmarks.md").read_text()
    assert "## LoCoMo across sessions" in report and "ScriptedModel" in report
    assert (tmp_path / "across-sessions.png").is_file() and (tmp_path / "recall.png").is_file()
