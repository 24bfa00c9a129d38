"""Cold start and the turn that reduces: what a user waits for before the per-search figures matter.

Three measurements, each in its own fresh processes where the process is what is measured:

- ``cold_start``: a new process's first ``retrieve`` (import the package, build a ``SemanticMemory``, archive 10
  messages, one search), with an empty graph cache (``STRANDS_SEMANTIC_MEMORY_CACHE`` pointing at a new folder:
  the first-ever run on a machine exports the model) and with a warm one. Times are taken inside the child (from
  before the import to after the search) and around it (the whole process, interpreter start and exit included).
- ``first_turn``: in a new process that reopens a durable archive, the first user turn through a real ``Agent``
  (scripted chat model, the manager and the hook), with and without ``warm_up=True``, the turn coming at once or
  after a pause (a user typing).
- ``reduction_turns``: in one warm process, every turn of a scripted conversation through a real ``Agent``; the
  turns that reduce the context are reported apart. The manager with background embedding, with inline
  embedding, and Strands' ``SummarizingConversationManager`` (no archive) as the floor.

``python -m benchmarks.measure.cold_start`` prints a table; ``run()`` returns the typed results, and the
:class:`ColdStartAndReduction` measurement the run's data.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from benchmarks.data.conversations import filler_turn
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sizes import ColdStartSettings
from benchmarks.results import ColdStartResult
from benchmarks.results import Spread as SpreadData

__all__ = [
    "ColdStart",
    "ColdStartAndReduction",
    "FirstTurn",
    "Results",
    "Spread",
    "TurnLatency",
    "cold_start",
    "cold_start_result",
    "first_turn",
    "format_results",
    "main",
    "measure_cold_start",
    "reduction_turns",
    "run",
]

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root: the children import the package and the benchmarks from there."""
CACHE_ENV = "STRANDS_SEMANTIC_MEMORY_CACHE"
Manager = Literal["background", "inline", "strands"]


@dataclass(frozen=True)
class Spread:
    """Repeated measurements of one quantity (seconds): min, median, max and every run."""

    runs: tuple[float, ...]

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def max(self) -> float:
        return max(self.runs)

    def milliseconds(self) -> str:
        return f"{self.min * 1e3:.1f} / {self.median * 1e3:.1f} / {self.max * 1e3:.1f}"

    def seconds(self) -> str:
        return f"{self.min:.2f} / {self.median:.2f} / {self.max:.2f}"


@dataclass(frozen=True)
class ColdStart:
    """A new process's first ``retrieve``, in seconds.

    Attributes:
        cache: ``"empty"`` (the first-ever run on a machine) or ``"warm"``.
        first_retrieve: From before ``import strands_semantic_memory`` to after the search, inside the child.
        importing: The import alone.
        process: The whole child process (interpreter start and exit included), from outside.
        exports: Exports each run made (1 with an empty cache, 0 with a warm one).
        torch_imported: Whether any run imported PyTorch.
    """

    cache: str
    first_retrieve: Spread
    importing: Spread
    process: Spread
    exports: tuple[int, ...]
    torch_imported: bool


@dataclass(frozen=True)
class FirstTurn:
    """The first user turn of a new process that reopens a durable archive (seconds, inside the child).

    Attributes:
        warm_up: Whether the manager warmed the model up when the agent was built.
        pause: Seconds between building the agent and the user's first turn.
        first_turn: The first ``agent(...)`` call.
        start_to_answer: From building the agent to the first answer, the pause included.
    """

    warm_up: bool
    pause: float
    first_turn: Spread
    start_to_answer: Spread


@dataclass(frozen=True)
class TurnLatency:
    """Turns of one scripted conversation through a real ``Agent`` in a warm process (seconds per turn).

    Attributes:
        manager: ``"background"`` or ``"inline"`` (this library's manager and hook), or ``"strands"``.
        reducing: The turns during which the context was reduced.
        other: The other turns.
        reductions: How many turns reduced.
    """

    manager: str
    reducing: Spread
    other: Spread
    reductions: int


@dataclass(frozen=True)
class Results:
    """Everything ``run`` measured, with the machine's load average when it started."""

    cold: tuple[ColdStart, ...]
    first_turns: tuple[FirstTurn, ...]
    turns: tuple[TurnLatency, ...]
    load_average: tuple[float, float, float]


_FIRST_RETRIEVE = """
import json, logging, sys, time
class Exports(logging.Handler):  # the library logs each export of the model to ONNX, once, at INFO
    count = 0
    def emit(self, record):
        Exports.count += "exported the embedding model to ONNX" in record.getMessage()
library = logging.getLogger("strands_semantic_memory")
library.addHandler(Exports())
library.setLevel(logging.INFO)
started = time.perf_counter()
import strands_semantic_memory
from strands_semantic_memory import SemanticMemory
imported = time.perf_counter()
memory = SemanticMemory()
memory.add([{"role": "user" if i % 2 == 0 else "assistant",
                 "content": [{"text": f"message {i}: the order number is ORD-{1000 + i}, shipped to Lisbon"}]}
                for i in range(10)])
windows = memory.retrieve("what was the order number?")
done = time.perf_counter()
assert windows, "the search found nothing"
print(json.dumps({"first_retrieve": done - started, "import": imported - started, "exports": Exports.count,
                  "torch": "torch" in sys.modules}))
"""


def _child(script: str, cache: Path | str, *args: str) -> tuple[dict[str, Any], float]:
    """Run ``script`` in a new interpreter with the cache at ``cache``; its last output line is JSON."""
    environment = {**os.environ, CACHE_ENV: str(cache), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=environment, check=False
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"the benchmark child failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1]), elapsed


def cold_start(folder: Path, *, empty_runs: int = 3, warm_runs: int = 5) -> tuple[ColdStart, ColdStart]:
    """The first ``retrieve`` of new processes, with an empty cache (a new folder per run) and a warm one.

    Args:
        folder: A scratch folder for the caches.
        empty_runs: Runs with an empty cache (each exports the model: seconds each).
        warm_runs: Runs with a warm cache (filled by one uncounted run first).

    Returns:
        ``(empty, warm)``.
    """

    def measure(kind: str, caches: Sequence[Path]) -> ColdStart:
        reports = [_child(_FIRST_RETRIEVE, cache) for cache in caches]
        return ColdStart(
            cache=kind,
            first_retrieve=Spread(tuple(r["first_retrieve"] for r, _ in reports)),
            importing=Spread(tuple(r["import"] for r, _ in reports)),
            process=Spread(tuple(elapsed for _, elapsed in reports)),
            exports=tuple(int(r["exports"]) for r, _ in reports),
            torch_imported=any(bool(r["torch"]) for r, _ in reports),
        )

    empty = measure("empty", [folder / f"empty-{i}" for i in range(empty_runs)])
    warm_cache = folder / "warm"
    _child(_FIRST_RETRIEVE, warm_cache)  # fills the cache; not counted
    warm = measure("warm", [warm_cache] * warm_runs)
    return empty, warm


_FIRST_TURN = """
import json, sys, time
archive, warm_up, pause = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
from strands import Agent
from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.testing import ScriptedModel
started = time.perf_counter()
manager = SemanticSummarizingConversationManager(archive_path=archive, warm_up=warm_up)
agent = Agent(model=ScriptedModel(), conversation_manager=manager, hooks=[SemanticMemoryHook()],
              callback_handler=None)
built = time.perf_counter()
time.sleep(pause)
asked = time.perf_counter()
agent("What did we decide about the shared folder reference?")
answered = time.perf_counter()
print(json.dumps({"first_turn": answered - asked, "start_to_answer": answered - started,
                  "building": built - started}))
"""

_FILL_ARCHIVE = """
import sys
from strands_semantic_memory import SemanticMemory
from benchmarks.data.conversations import filler_messages
memory = SemanticMemory(archive_path=sys.argv[1])
memory.add(filler_messages(200, seed=3))
memory.close()
print("{}")
"""


def first_turn(
    folder: Path, cache: Path, *, runs: int = 3, pauses: Sequence[float] = (0.0, 1.0)
) -> tuple[FirstTurn, ...]:
    """The first turn of new processes over a reopened durable archive, with and without ``warm_up``.

    Args:
        folder: A scratch folder (for the archive).
        cache: The graph cache the processes use (filled by the archive's process if empty).
        runs: Processes per setting.
        pauses: Seconds between building the agent and the first turn.

    Returns:
        One row per (``warm_up``, pause).
    """
    archive = folder / "archive.sqlite3"
    _child(_FILL_ARCHIVE, cache, str(archive))
    rows: list[FirstTurn] = []
    for pause in pauses:
        for warm_up in (False, True):
            reports = [
                _child(_FIRST_TURN, cache, str(archive), "1" if warm_up else "0", str(pause)) for _ in range(runs)
            ]
            rows.append(
                FirstTurn(
                    warm_up=warm_up,
                    pause=pause,
                    first_turn=Spread(tuple(r["first_turn"] for r, _ in reports)),
                    start_to_answer=Spread(tuple(r["start_to_answer"] for r, _ in reports)),
                )
            )
    return tuple(rows)


def reduction_turns(manager: Manager, *, turns: int = 60, max_input_chars: int = 2000, seed: int = 5) -> TurnLatency:
    """Time every turn of a scripted conversation through a real ``Agent`` (the model warmed up first).

    Args:
        manager: Which manager runs the conversation.
        turns: User turns.
        max_input_chars: The scripted model's context: above it, it overflows and the manager reduces.
        seed: The conversation's seed.

    Returns:
        The per-turn times, reducing turns apart.
    """
    from strands import Agent
    from strands.agent.conversation_manager import SummarizingConversationManager

    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
    from strands_semantic_memory.testing import ScriptedModel

    rng = random.Random(seed)
    texts = [filler_turn(rng)[0] for _ in range(turns)]
    hooks: list[Any] = []
    ours: SemanticSummarizingConversationManager | None = None
    chosen: Any
    if manager == "strands":
        chosen = SummarizingConversationManager(preserve_recent_messages=4)
    else:
        ours = SemanticSummarizingConversationManager(preserve_recent_messages=4, embedding=manager)
        ours.memory.warm_up()
        chosen = ours
        hooks.append(SemanticMemoryHook())
    agent = Agent(
        model=ScriptedModel(max_input_chars=max_input_chars),
        conversation_manager=chosen,
        hooks=hooks,
        callback_handler=None,
    )
    reducing: list[float] = []
    other: list[float] = []
    for text in texts:
        before = chosen.removed_message_count
        started = time.perf_counter()
        agent(text)
        elapsed = time.perf_counter() - started
        (reducing if chosen.removed_message_count > before else other).append(elapsed)
    if ours is not None:
        ours.memory.embed_pending()
        ours.memory.close()
    return TurnLatency(manager, Spread(tuple(reducing) or (0.0,)), Spread(tuple(other) or (0.0,)), len(reducing))


def run(
    *, empty_runs: int = 3, warm_runs: int = 5, first_turn_runs: int = 3, turns: int = 60, folder: Path | None = None
) -> Results:
    """Every measurement of this module.

    Args:
        empty_runs: Fresh processes with an empty cache.
        warm_runs: Fresh processes with a warm cache.
        first_turn_runs: Fresh processes per first-turn setting.
        turns: Turns of the scripted conversation per manager.
        folder: Scratch folder (default: a temporary one, removed afterwards).

    Returns:
        The results.
    """
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        base = folder or Path(scratch)
        cold = cold_start(base, empty_runs=empty_runs, warm_runs=warm_runs)
        first = first_turn(base, base / "warm", runs=first_turn_runs)
        previous = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = str(base / "warm")  # this process loads the graphs the cold runs cached
        try:
            latencies = tuple(reduction_turns(m, turns=turns) for m in ("background", "inline", "strands"))
        finally:
            if previous is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = previous
    return Results(cold, first, latencies, (load[0], load[1], load[2]))


def format_results(results: Results) -> str:
    """The results as Markdown tables (min / median / max)."""
    lines = [
        f"Load average at start: {' '.join(f'{v:.1f}' for v in results.load_average)}",
        "",
        "| first retrieve in a new process | runs | in the process (s) | import (s) | whole process (s) | exports |"
        " PyTorch |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results.cold:
        lines.append(
            f"| {row.cache} cache | {len(row.first_retrieve.runs)} | {row.first_retrieve.seconds()} |"
            f" {row.importing.seconds()} | {row.process.seconds()} | {', '.join(map(str, row.exports))} |"
            f" {'imported' if row.torch_imported else 'not imported'} |"
        )
    lines += [
        "",
        "| first turn, reopened archive | pause (s) | runs | first turn (ms) | start to answer (s) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for turn in results.first_turns:
        lines.append(
            f"| {'warm_up=True' if turn.warm_up else 'no warm-up'} | {turn.pause:.1f} |"
            f" {len(turn.first_turn.runs)} | {turn.first_turn.milliseconds()} | {turn.start_to_answer.seconds()} |"
        )
    lines += [
        "",
        "| manager (warm process) | reducing turns | reducing turn (ms) | other turns (ms) |",
        "| --- | --- | --- | --- |",
    ]
    for latency in results.turns:
        lines.append(
            f"| {latency.manager} | {latency.reductions} | {latency.reducing.milliseconds()} |"
            f" {latency.other.milliseconds()} |"
        )
    return "\n".join(lines)


def cold_start_result(measured: Results, turns: int) -> ColdStartResult:
    """:class:`Results` as plain data: each repeated measurement as min, median, max and runs.

    Args:
        measured: What :func:`run` returned.
        turns: Turns per manager of the reducing-turn measurement.

    Returns:
        The same measurements, JSON-ready.
    """

    def spread(runs: Spread) -> SpreadData:
        return {"min": runs.min, "median": runs.median, "max": runs.max, "runs": len(runs.runs)}

    return {
        "cold": [
            {
                "cache": row.cache,
                "first_retrieve": spread(row.first_retrieve),
                "importing": spread(row.importing),
                "process": spread(row.process),
                "exports": list(row.exports),
                "torch_imported": row.torch_imported,
            }
            for row in measured.cold
        ],
        "first_turns": [
            {
                "warm_up": row.warm_up,
                "pause": row.pause,
                "first_turn": spread(row.first_turn),
                "start_to_answer": spread(row.start_to_answer),
            }
            for row in measured.first_turns
        ],
        "turns": [
            {
                "manager": row.manager,
                "reducing": spread(row.reducing) if row.reductions else None,
                "other": spread(row.other),
                "reductions": row.reductions,
            }
            for row in measured.turns
        ],
        "load_average": list(measured.load_average),
        "turns_per_manager": turns,
    }


class ColdStartAndReduction(Measurement):
    """Cold start in fresh processes, the first turn over a reopened archive, and the reducing turn."""

    name: ClassVar[str] = "cold_start"
    label: ClassVar[str] = "cold start and the reducing turn"

    def measure(self, run: Run) -> ColdStartResult:
        """Every measurement of :func:`run`, repeated as ``run.sizes.cold_start`` says."""
        return measure_cold_start(run.sizes.cold_start)


def measure_cold_start(settings: ColdStartSettings) -> ColdStartResult:
    """:func:`run` with ``settings``, as the run's data."""
    measured = run(
        empty_runs=settings.empty_runs,
        warm_runs=settings.warm_runs,
        first_turn_runs=settings.first_turn_runs,
        turns=settings.turns,
    )
    return cold_start_result(measured, settings.turns)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--empty-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--first-turn-runs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=60)
    arguments = parser.parse_args(argv)
    results = run(
        empty_runs=arguments.empty_runs,
        warm_runs=arguments.warm_runs,
        first_turn_runs=arguments.first_turn_runs,
        turns=arguments.turns,
    )
    print(format_results(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
