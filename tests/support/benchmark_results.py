"""Small handmade benchmark data and results, shaped as a run reads and writes them, for the benchmark tests."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

CATEGORY = "1 multi-hop"


def tiny_locomo(path: Path) -> Path:
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


def loop_cell(
    delivered: float, *, overflows: int = 0, question_overflows: int = 0, ms: float = 2.0, questions: int = 10
) -> dict[str, Any]:
    """One row on one conversation at one window (``benchmarks.measure.locomo_loop.play``'s shape)."""
    return {
        "delivered": delivered,
        "categories": {CATEGORY: delivered},
        "overflows": overflows,
        "question_overflows": question_overflows,
        "input_chars": 12_000,
        "ms_per_exchange": ms,
        "failed_turns": 0,
        "questions": questions,
    }


def loop_row(*cells: dict[str, Any]) -> dict[str, Any]:
    """A row over conversations ``conv-0``, ``conv-1``, ...: the cells and their overall figures."""
    conversations = {f"conv-{n}": cell for n, cell in enumerate(cells)}
    delivered = statistics.fmean(c["delivered"] for c in cells)
    return {
        "conversations": conversations,
        "all": {
            "delivered": delivered,
            "lowest": min(c["delivered"] for c in cells),
            "overflows": sum(c["overflows"] for c in cells),
            "question_overflows": sum(c["question_overflows"] for c in cells),
            "input_chars": 12_000,
            "ms_per_exchange": statistics.fmean(c["ms_per_exchange"] for c in cells),
            "failed_turns": 0,
            "categories": {CATEGORY: delivered},
        },
    }


def locomo_loop(windows: dict[int, dict[str, dict[str, Any]]], conversations: int = 2) -> dict[str, Any]:
    """LoCoMo in the loop's result from ``{window: {row name: loop_row(...)}}``."""
    names = [f"conv-{n}" for n in range(conversations)]
    rows = list(dict.fromkeys(row for per_row in windows.values() for row in per_row))
    return {
        "windows": {str(window): per_row for window, per_row in windows.items()},
        "rows": rows,
        "conversations": names,
        "exchanges": dict.fromkeys(names, 200),
        "questions": 10,
        "seconds": 1.0,
    }


def spread(median: float, low: float, high: float, runs: int = 3) -> dict[str, float]:
    """A run-to-run spread."""
    return {"median": median, "min": low, "max": high, "runs": runs}


def cold_start(warm_median: float, warm_low: float, warm_high: float) -> dict[str, Any]:
    """The cold-start section's result with the warm-cache first retrieve at the given seconds."""
    return {
        "cold": [
            {
                "cache": "empty",
                "first_retrieve": spread(7.3, 7.1, 7.9),
                "importing": spread(0.5, 0.4, 0.6),
                "process": spread(8.0, 7.8, 8.6),
                "exports": [1, 1, 1],
                "torch_imported": True,
            },
            {
                "cache": "warm",
                "first_retrieve": spread(warm_median, warm_low, warm_high, 5),
                "importing": spread(0.5, 0.4, 0.6, 5),
                "process": spread(1.3, 1.2, 1.5, 5),
                "exports": [0, 0, 0, 0, 0],
                "torch_imported": False,
            },
        ],
        "first_turns": [
            {
                "warm_up": True,
                "pause": 1.0,
                "first_turn": spread(0.012, 0.010, 0.015),
                "start_to_answer": spread(1, 1, 1),
            }
        ],
        "turns": [
            {
                "manager": "background",
                "reducing": spread(0.016, 0.014, 0.019, 7),
                "reductions": 7,
                "other": spread(0.001, 0, 0.002, 53),
            },
            {"manager": "strands", "reducing": None, "reductions": 0, "other": spread(0.001, 0, 0.002, 60)},
        ],
        "load_average": [2.0, 2.5, 3.0],
        "turns_per_manager": 60,
    }


def meta() -> dict[str, Any]:
    """A run's ``meta`` (the report's first paragraphs read it)."""
    backend = {"name": "onnx", "short": "ONNX", "long": "ONNX Runtime"}
    return {
        "command": "python -m benchmarks.run --only locomo_loop,cold_start",
        "seconds": 10.0,
        "python": "3.11",
        "cpus": 2,
        "seed": 13,
        "load_before": [1.0, 1.0, 1.0],
        "load_after": [1.0, 1.0, 1.0],
        "steps": {},
        "errors": {},
        "skipped": [],
        "deadline": None,
        "torch_threads": 0,
        "query_threads": None,
        "backend": backend,
        "compare_backend": None,
        "pool_compare": None,
        "locomo_path": "locomo-dev.json",
        "versions": "strands-agents 1.62",
    }
