"""Many users' agents in one event loop: the loop's largest stall, and each user's model requests hold only their words.

For each path of the across-sessions guide and each archive (a SQLite file per user, or ``PostgresArchive``), N agents
of distinct named users call ``invoke_async`` (or consume ``stream_async``) at once, for a few rounds, while a ticker
coroutine sleeps 10 ms at a time and records how late it wakes (``benchmarks._speed.Ticker``). Each user's archive
holds LoCoMo messages and three messages carrying the user's mark (``MARK0007Q``); each question carries it too, so
any other user's mark in a user's model requests is a leak, and the user's code reaching the model shows the hook
found it. Agents are built before the loop runs (building opens files and databases: do it in ``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import _speed
from benchmarks.common import Section, Settings, percentile, table

MARK = re.compile(r"MARK(\d{4})Q")
PATHS = (
    "Strands alone",
    "manager + hook",
    "MemoryManager + SemanticMemoryStore",
    "ContextManager + SemanticStorage + hook",
)
SEED = 60
"""LoCoMo messages in each user's archive besides the three marked ones."""


def mark(user: int) -> str:
    return f"MARK{user:04d}Q"


def user_facts(user: int) -> list[Any]:
    return [{"role": "user", "content": [{"text": f"{mark(user)}: my storage locker code is {user:04d}-PLUM."}]},
            {"role": "assistant", "content": [{"text": f"Noted, {mark(user)}: locker {user:04d}-PLUM."}]},
            {"role": "user", "content": [{"text": f"{mark(user)}: I moved to Lisbon in spring."}]}]  # fmt: skip


def _archive(backend: str, where: Any, user: int) -> dict[str, Any]:
    """Keywords that give a memory this user's archive."""
    if backend == "SQLite":
        return {"archive_path": Path(where) / f"user-{user:04d}.sqlite3", "user_id": f"user-{user:04d}"}
    return {"archive": where(f"user-{user:04d}"), "user_id": f"user-{user:04d}"}


def seed(backend: str, where: Any, users: int, locomo: Path) -> None:
    """Each user's archive: ``SEED`` LoCoMo messages (vectors cached) and the user's three marked messages."""
    from strands_semantic_memory import SemanticMemory

    shared = _speed.locomo_messages(locomo, SEED)
    embedder = _speed.cached_embedder()
    for user in range(users):
        with SemanticMemory(embedder=embedder, embedding="background", **_archive(backend, where, user)) as memory:
            if memory.stats().count < SEED:
                _speed.fill(memory, shared)
                memory.add(user_facts(user), session_id="facts")
                memory.embed_pending()
    embedder.flush()


def build(path: str, backend: str, where: Any, user: int) -> tuple[Any, Callable[[], None]]:
    """One user's agent on ``path`` and a function that closes its memory."""
    from strands import Agent

    from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
    from strands_semantic_memory.testing import ScriptedModel

    model = ScriptedModel(context_window_limit=8_000)
    if path == PATHS[0]:
        return Agent(model=model, callback_handler=None), lambda: None
    if path == PATHS[1]:
        manager = SemanticSummarizingConversationManager(**_archive(backend, where, user))
        agent = Agent(model=model, conversation_manager=manager, plugins=[SemanticMemoryHook()], callback_handler=None)
        return agent, manager.memory.close
    memory = SemanticMemory(**_archive(backend, where, user))
    if path == PATHS[2]:
        from strands.memory import MemoryManager

        from strands_semantic_memory import SemanticMemoryStore

        store = SemanticMemoryStore(memory=memory)
        return Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None), memory.close
    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    storage = SemanticStorage(memory=memory)
    agent = Agent(model=model, context_manager=ContextManager(strategies=[BudgetSummarization()]), storage=storage,
                  plugins=[SemanticMemoryHook(storage=storage)], callback_handler=None)  # fmt: skip
    return agent, memory.close


async def drive(agents: list[Any], asked: list[str], rounds: int, streaming: bool) -> dict[str, float]:
    """Every agent takes one turn at once, ``rounds`` times, under the ticker."""

    async def turn(user: int, agent: Any, text: str) -> None:
        if streaming:
            async for _ in agent.stream_async(f"{mark(user)} asks: {text}"):
                pass
        else:
            await agent.invoke_async(f"{mark(user)} asks: {text}")

    async with _speed.Ticker() as ticker:
        started = time.perf_counter()
        for round_ in range(rounds):
            text = asked[round_ % len(asked)]
            await asyncio.gather(
                *(turn(user, agent, f"{text} What is my locker code?") for user, agent in enumerate(agents))
            )
        elapsed = time.perf_counter() - started
    return {"stall_ms": ticker.worst, "tick_p99_ms": percentile(ticker.late, 0.99),
            "turns_per_second": len(agents) * rounds / elapsed}  # fmt: skip


def leaks(agents: list[Any]) -> tuple[int, int]:
    """Users whose model requests hold another user's mark; users whose locker code reached the model."""
    leaked = found = 0
    for user, agent in enumerate(agents):
        seen = str([r["messages"] for r in agent.model.requests])
        leaked += any(int(other) != user for other in MARK.findall(seen))
        found += f"{user:04d}-PLUM" in seen
    return leaked, found


def unavailable(path: str) -> str | None:
    """Why a path cannot run on this branch (its module is missing), or None."""
    needs = {PATHS[2]: "memory_store", PATHS[3]: "storage"}.get(path)
    if needs is None or importlib.util.find_spec(f"strands_semantic_memory.{needs}") is not None:
        return None
    return f"not available: strands_semantic_memory.{needs} is not on this branch yet"


def measure(
    path: str, backend: str, where: Any, users: int, rounds: int, streaming: bool, asked: list[str]
) -> dict[str, Any]:
    built = [build(path, backend, where, user) for user in range(users)]
    agents = [agent for agent, _ in built]
    asyncio.run(drive(agents, asked[-1:], 1, streaming))  # a warm server: the first turns are not counted
    row: dict[str, Any] = asyncio.run(drive(agents, asked, rounds, streaming))
    row["leaked"], row["found"] = leaks(agents)
    for _, close in built:
        close()
    return row


def run(settings: Settings) -> dict[str, Any]:
    counts, rounds = _speed.sized(settings, ((20, 200), 3), ((5, 10), 2), ((3,), 1))
    asked = _speed.questions(settings.locomo)
    _speed.warm_model()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ssm-loop-") as folder:
        seed("SQLite", folder, max(counts), settings.locomo)
        backends: list[tuple[str, Any]] = [("SQLite", folder)]
        with _speed.postgres_users() as postgres:
            if postgres is not None:
                seed("PostgreSQL", postgres, max(counts), settings.locomo)
            backends.append(("PostgreSQL", postgres))
            for path in PATHS:
                for backend, where in backends[:1] if path == PATHS[0] else backends:
                    base = {"path": path, "backend": "-" if path == PATHS[0] else backend}
                    missing = _speed.NO_POSTGRES if where is None else unavailable(path)
                    if missing:
                        rows.append({**base, "users": "all", "call": "both", "unavailable": missing})
                        continue
                    for users in counts:
                        for streaming in (False, True):
                            call = "stream_async" if streaming else "invoke_async"
                            found = measure(path, backend, where, users, rounds, streaming, asked)
                            rows.append({**base, "users": users, "call": call, **found})
    return {"rows": rows, "rounds": rounds}


def render(data: dict[str, Any], output: Path) -> str:
    rows = []
    for r in data["rows"]:
        head = [r["path"], r["backend"], r["users"], r["call"]]
        if "unavailable" in r:
            rows.append([*head, r["unavailable"], "", "", "", ""])
        else:
            rows.append([*head, f"**{_speed.ms(r['stall_ms'])}**", _speed.ms(r["tick_p99_ms"]),
                         f"{r['turns_per_second']:.1f}", r["leaked"], f"{r['found']} of {r['users']}"])  # fmt: skip
    return "\n\n".join(
        [
            f"`benchmarks/event_loop.py`. N agents of distinct named users in one event loop, each taking "
            f"{data['rounds']} turns, all at once each round; `ScriptedModel` answers at once (no model time, so every "
            "turn's archive and search work competes for the loop and the 2 cores at the same moment: a harsher case "
            "than real models spread over seconds). **Largest stall**: the most a 10 ms ticker coroutine woke late. "
            "On a loaded machine the stall also holds time the process was not scheduled at all.",
            table(
                [
                    "path",
                    "archive",
                    "users",
                    "call",
                    "largest stall (ms)",
                    "tick p99 (ms)",
                    "turns/s",
                    "users with another's words",
                    "own code reached the model",
                ],
                rows,
            ),  # fmt: skip
        ]
    )


SECTION = Section("event_loop", "Many users in one event loop: stalls and isolation", run, render)
