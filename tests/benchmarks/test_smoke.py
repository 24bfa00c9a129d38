"""Every benchmark runs end to end at tiny sizes and writes the report and its plots (no timing is asserted)."""

import json
import re

from benchmarks import run
from benchmarks.dataset import build_dataset


def tiny_locomo(path):
    """A LoCoMo-shaped file (two sessions, three questions, one malformed evidence id): the real data is not needed."""
    turns = [
        ("Ann", "I adopted a beagle called Pepper last week."),
        ("Bob", "Nice! I started learning the cello."),
        ("Ann", "Pepper chewed my running shoes."),
        ("Bob", "My cello teacher lives in Lisbon."),
    ]
    session = [{"speaker": s, "dia_id": f"D1:{n + 1}", "text": t} for n, (s, t) in enumerate(turns)]
    later = [{"speaker": "Ann", "dia_id": "D2:1", "text": "We hiked Mount Tam on Sunday.", "blip_caption": "a trail"}]
    sample = {
        "sample_id": "tiny",
        "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": session, "session_2": later},
        "qa": [
            {"question": "What is the name of Ann's dog?", "evidence": ["D1:1"], "category": 4},
            {"question": "Where does Bob's cello teacher live?", "evidence": ["D:1:4"], "category": 4},
            {"question": "Where did Ann hike?", "evidence": ["D2:1", "D9:9"], "category": 2},
        ],
    }
    path.write_text(json.dumps([sample]))
    return path


def test_suite_runs_at_tiny_sizes_and_writes_report_and_plots(tmp_path):
    locomo = tiny_locomo(tmp_path / "locomo.json")
    out = tmp_path / "out"
    assert run.main(["--quick", "--out", str(out), "--locomo", str(locomo), "--torch-threads", "1"]) == 0
    report = (out / "benchmarks.md").read_text()
    assert "failed in this run" not in report
    for heading in [
        "## Targets",
        "## Retrieval quality",
        "## LoCoMo",
        "## Hook latency",
        "## Durable archive",
        "## Tokens sent per turn",
    ]:
        assert heading in report
    for plot in ["recall.png", "locomo.png", "scale.png", "tokens.png", "durable.png", "index.png"]:
        assert (out / plot).stat().st_size > 1000
        assert f"({plot})" in report
    for mode in ["dense", "lexical", "hybrid"]:
        assert re.search(rf"\| {mode} \| \d\.\d\d \|", report), f"a recall row for {mode}"
        assert re.search(rf"\| this library, {mode} \| \d+\.\d \|", report), f"a LoCoMo row for {mode}"
    assert "| DRAGON (LoCoMo paper, all ten) | 56.7 | 66.2 | 76.7 | 82.7 |" in report
    assert "PostgreSQL hybrid" in report
    assert "What is scripted" in report
    raw = json.loads((out / "benchmarks.json").read_text())
    assert raw["locomo"]["questions"] == 3, "the malformed id is repaired, the missing one dropped"
    assert raw["meta"]["torch_threads"] == 1


def test_locomo_section_is_skipped_with_one_line_when_the_file_is_absent(tmp_path, capsys):
    from benchmarks.suite import locomo

    result = locomo(tmp_path / "absent.json", embedder=None, repeats=2)
    assert set(result) == {"skipped"}
    assert capsys.readouterr().out.count("\n") == 1


def test_dataset_is_reproducible_and_its_evidence_is_where_it_says():
    first, second = build_dataset(21, per_kind=4), build_dataset(21, per_kind=4)
    assert first.messages == second.messages and first.questions == second.questions
    assert build_dataset(22, per_kind=4).messages != first.messages
    for question in first.questions:
        for position in question.evidence:
            assert first.messages[position]["role"] == "user"
        if question.kind == "multi_turn":
            assert question.evidence[1] - question.evidence[0] <= 6, "a few turns apart"
