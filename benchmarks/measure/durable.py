"""The durable SQLite archive against the archive in JSON session state: a turn, a reopen, and where the file pays.

- :func:`session_turn_rows`: wall time of one agent turn with Strands' ``FileSessionManager`` for archives of each
  size, the archive saved in the session state (JSON) or referenced there (``archive_path``, SQLite).
- :func:`durable_open_rows`: reopening a durable archive, against restoring the same archive from JSON state.
- :func:`crossover`: where the durable archive starts to pay, from the two above.
"""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sizes import ScaleSettings
from benchmarks.measure.tools import PrecomputedEmbedder, cyclic_messages, spread
from benchmarks.results import Crossover, DurableOpenRow, Pool, SessionTurnRow
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.messages import render_message


def _fill(memory: SemanticMemory, messages: Sequence[Any]) -> None:
    for start in range(0, len(messages), 2000):
        memory.add(messages[start : start + 2000])


def durable_open_rows(embedder: Any, pool: Pool, settings: ScaleSettings) -> list[DurableOpenRow]:
    """Reopen a durable archive of each size, against saving and restoring the same archive as JSON state."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    rows: list[DurableOpenRow] = []
    folder = Path(tempfile.mkdtemp(prefix="ssm-open-"))
    try:
        for size in settings.open_sizes:
            messages = cyclic_messages(pool, size)
            path = folder / f"archive-{size}.sqlite3"
            durable = SemanticMemory(embedder=pre, archive_path=path)
            started = time.perf_counter()
            _fill(durable, messages)
            fill = time.perf_counter() - started
            durable.archive.close()
            opens, opens_cpu = [], []
            for _ in range(settings.open_repeats):
                gc.collect()
                started, started_cpu = time.perf_counter(), time.process_time()
                archive = SqliteArchive(path)
                opens.append(time.perf_counter() - started)
                opens_cpu.append(time.process_time() - started_cpu)
                assert len(archive) == size and not archive.has_pending()
                archive.close()
            files = sum(f.stat().st_size for f in folder.glob(f"archive-{size}.sqlite3*"))
            in_process = SemanticMemory(embedder=pre)
            _fill(in_process, messages)
            started = time.perf_counter()
            payload = json.dumps(in_process.to_state(), separators=(",", ":"))
            save = time.perf_counter() - started
            del in_process
            restores, restores_cpu = [], []
            for _ in range(settings.restore_repeats):
                gc.collect()
                started, started_cpu = time.perf_counter(), time.process_time()
                restored = SemanticMemory.from_state(json.loads(payload), embedder=pre)
                restores.append(time.perf_counter() - started)
                restores_cpu.append(time.process_time() - started_cpu)
                del restored
            rows.append(
                {
                    "size": size,
                    "sqlite_fill_ms_per_message": fill * 1000 / size,
                    "sqlite_open_seconds": float(np.median(opens)),
                    "sqlite_open_spread": spread(opens),
                    "sqlite_open_cpu_seconds": float(np.median(opens_cpu)),
                    "sqlite_file_bytes": files,
                    "json_state_bytes": len(payload),
                    "json_save_seconds": save,
                    "json_restore_seconds": float(np.median(restores)),
                    "json_restore_cpu_seconds": float(np.median(restores_cpu)),
                }
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def session_turn_rows(embedder: Any, pool: Pool, settings: ScaleSettings) -> list[SessionTurnRow]:
    """Median wall time of one agent turn with Strands' ``FileSessionManager``, JSON state vs durable archive.

    A real ``Agent`` with a scripted model (no model time), the semantic manager holding an archive of the given
    size, and a ``FileSessionManager``. Each turn first archives two messages, as a conversation at its context
    limit does when messages leave the context: Strands then saves the agent state again (it skips the save when
    the manager's state is unchanged), which with JSON state means the whole archive.

    The durable archive runs ``settings.turn_rounds`` rounds of ``settings.turns`` turns (cheap); its overhead
    against the empty archive is also given per round (round ``i`` at this size minus round ``i`` of the empty
    archive: ``sqlite_overhead_rounds``). JSON state runs one round (a turn at 100k takes seconds).
    """
    from strands import Agent
    from strands.session.file_session_manager import FileSessionManager

    from strands_semantic_memory import SemanticSummarizingConversationManager
    from strands_semantic_memory.testing import ScriptedModel

    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    most = settings.turns * max(1, settings.turn_rounds)
    leaving: list[Any] = cyclic_messages(pool, 2 * most + 2)  # known texts: nothing new is embedded
    texts = [render_message(m) for m in leaving]
    pre.embed_queries(["warm up the model"])
    rows: list[SessionTurnRow] = []
    for size in settings.turn_sizes:
        measured: dict[str, _Turns] = {}
        for backend in ("json", "sqlite"):
            folder = Path(tempfile.mkdtemp(prefix="ssm-turn-"))
            try:
                path = folder / "archive.sqlite3" if backend == "sqlite" else None
                memory = SemanticMemory(embedder=pre, archive_path=path)
                _fill(memory, cyclic_messages(pool, size))
                manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=10)
                sessions = FileSessionManager(session_id=f"bench-{backend}-{size}", storage_dir=str(folder))
                agent = Agent(
                    model=ScriptedModel(), conversation_manager=manager, session_manager=sessions, callback_handler=None
                )
                agent(texts[0])  # the first turn creates the session files
                per_turn, per_turn_cpu, per_round = [], [], []
                rounds = max(1, settings.turn_rounds) if backend == "sqlite" else 1
                for round_ in range(rounds):
                    round_turns = []
                    for turn in range(round_ * settings.turns + 1, (round_ + 1) * settings.turns + 1):
                        gc.collect()
                        started, started_cpu = time.perf_counter(), time.process_time()
                        memory.add(leaving[2 * turn : 2 * turn + 2])
                        agent(texts[turn])
                        round_turns.append((time.perf_counter() - started) * 1000)
                        per_turn_cpu.append((time.process_time() - started_cpu) * 1000)
                    per_round.append(float(np.median(round_turns)))
                    per_turn.extend(round_turns)
                measured[backend] = _Turns(
                    turn_ms=float(np.median(per_turn)),
                    round_ms=per_round,
                    cpu_ms=float(np.median(per_turn_cpu)),
                    agent_json_bytes=sum(f.stat().st_size for f in folder.rglob("agent.json")),
                )
                if path is not None:
                    memory.archive.close()
                del agent, manager, memory, sessions
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        as_json, durable = measured["json"], measured["sqlite"]
        rows.append(
            {
                "size": size,
                "json_turn_ms": as_json.turn_ms,
                "json_turn_round_ms": as_json.round_ms,
                "json_turn_cpu_ms": as_json.cpu_ms,
                "json_agent_json_bytes": as_json.agent_json_bytes,
                "sqlite_turn_ms": durable.turn_ms,
                "sqlite_turn_round_ms": durable.round_ms,
                "sqlite_turn_cpu_ms": durable.cpu_ms,
                "sqlite_agent_json_bytes": durable.agent_json_bytes,
                "json_overhead_ms": None,
                "sqlite_overhead_ms": None,
            }
        )
    empty = next((r for r in rows if r["size"] == 0), None)
    if empty is not None:
        for row in rows:
            row["json_overhead_ms"] = row["json_turn_ms"] - empty["json_turn_ms"]
            row["sqlite_overhead_ms"] = row["sqlite_turn_ms"] - empty["sqlite_turn_ms"]
            pairs = zip(row["sqlite_turn_round_ms"], empty["sqlite_turn_round_ms"], strict=False)
            row["sqlite_overhead_rounds"] = spread([mine - base for mine, base in pairs])
    return rows


@dataclass(frozen=True)
class _Turns:
    """One backend's turns at one archive size: median wall and CPU time, per-round medians, saved bytes."""

    turn_ms: float
    round_ms: list[float]
    cpu_ms: float
    agent_json_bytes: int


def crossover(turn_rows: list[SessionTurnRow], open_rows: list[DurableOpenRow], margin_ms: float = 5.0) -> Crossover:
    """Where the durable archive starts to pay, from measured rows (linear interpolation between sizes).

    Returns:
        ``turn_size``: the archive size above which a turn with JSON state costs ``margin_ms`` more CPU than with
        the durable archive (the 5 ms target); ``open_size``: the size above which restoring JSON state takes more
        CPU than reopening the file. Either is the smallest size measured when the file already wins there, and
        None when it never does.
    """

    def first_above(rows: Sequence[tuple[int, float, float]], margin: float) -> float | None:
        """The size where ``left - right`` first exceeds ``margin``, from ``(size, left, right)`` rows."""
        previous: tuple[float, float] | None = None
        for size, left, right in sorted(rows):
            gap = left - right - margin
            if gap > 0:
                if previous is None:
                    return float(size)
                size0, gap0 = previous
                return float(size0 + (size - size0) * (-gap0) / (gap - gap0))
            previous = (float(size), gap)
        return None

    turns = [(r["size"], r["json_turn_cpu_ms"], r["sqlite_turn_cpu_ms"]) for r in turn_rows]
    opens = [(r["size"], r["json_restore_cpu_seconds"], r["sqlite_open_cpu_seconds"]) for r in open_rows]
    return {"turn_size": first_above(turns, margin_ms), "open_size": first_above(opens, 0.0)}


class SessionTurns(Measurement):
    """One ``FileSessionManager`` turn at each of ``run.sizes.scale.turn_sizes``: JSON state against the file."""

    name: ClassVar[str] = "turns"
    label: ClassVar[str] = "FileSessionManager turns: JSON state vs durable"
    key: ClassVar[str] = "session_turns"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> list[SessionTurnRow]:
        """Both archives at every size, on the run's pool."""
        return session_turn_rows(run.embedder, run.require_pool(), run.sizes.scale)


class DurableOpen(Measurement):
    """Reopening a durable archive at each of ``run.sizes.scale.open_sizes``, against a JSON-state restore."""

    name: ClassVar[str] = "open"
    label: ClassVar[str] = "durable open vs JSON restore"
    key: ClassVar[str] = "durable_open"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> list[DurableOpenRow]:
        """Both at every size, on the run's pool."""
        return durable_open_rows(run.embedder, run.require_pool(), run.sizes.scale)
