"""The hook's added time per user turn, through a real ``Agent`` over large archives of LoCoMo-like messages.

Two agents per row, each with ``SemanticSummarizingConversationManager`` over its own copy of the same cached archive
(named user, every message archived as it is added) and ``ScriptedModel`` (answers at once), one of them with
``SemanticMemoryHook``; they take the same LoCoMo questions in turn, the order alternating. Two figures:

- **hook**: what ``benchmarks._speed.HookTimer`` counts, from the hook's model-call middleware's entry to the call
  handed to the model (held-index lookup and search in worker threads, the gate, the block's building);
- **turn with - without**: the median turn wall time with the hook minus the median without (both archive).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import _speed
from benchmarks.common import Section, Settings, percentile, table

WINDOWS = (8_000, 200_000)


def _agent(archive: Any, window: int, hooked: bool) -> tuple[Any, Any, Any, _speed.HookTimer | None]:
    from strands import Agent

    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
    from strands_semantic_memory.testing import ScriptedModel

    where = {"archive": archive} if not isinstance(archive, Path) else {"archive_path": archive}
    manager = SemanticSummarizingConversationManager(user_id=None if "archive" in where else _speed.USER, **where)
    hook = SemanticMemoryHook() if hooked else None
    timer = _speed.HookTimer(hook) if hook is not None else None
    agent = Agent(model=ScriptedModel(context_window_limit=window), conversation_manager=manager,
                  plugins=[hook] if hook is not None else [], callback_handler=None)  # fmt: skip
    return agent, manager, hook, timer


def measure(hooked_at: Any, plain_at: Any, window: int, asked: list[str], rounds: int) -> dict[str, Any]:
    """One row: ``len(asked)`` turns each of the agent with the hook (over ``hooked_at``) and the one without."""
    hooked, hooked_manager, hook, timer = _agent(hooked_at, window, True)
    plain, plain_manager, _, _ = _agent(plain_at, window, False)
    assert timer is not None
    for warm in range(3):
        hooked(f"warm up {warm}: {asked[-1 - warm]}")
        plain(f"warm up {warm}: {asked[-1 - warm]}")
        timer.take()
    added: list[float] = []
    walls: dict[bool, list[float]] = {True: [], False: []}
    tokens: list[float] = []
    searches: list[float] = []
    lexical = hooked_manager.memory.stats().lexical_searches
    for n, question in enumerate(asked):
        for with_hook in (n % 2 == 0, n % 2 == 1):
            agent = hooked if with_hook else plain
            started = time.perf_counter()
            agent(question if with_hook else f"{question} (again)")
            walls[with_hook].append((time.perf_counter() - started) * 1000)
        taken = timer.take()
        if taken is not None:
            added.append(taken)
        found = hook.enrichment(hooked)
        tokens.append(found.tokens if found else 0)
        searches.append(found.elapsed_ms if found else 0.0)
    stats = hooked_manager.memory.stats()
    row = {
        "window": window,
        "hook": _speed.latency_summary(added, rounds),
        "turn_with": percentile(walls[True], 0.5),
        "turn_without": percentile(walls[False], 0.5),
        "difference_p50": percentile(walls[True], 0.5) - percentile(walls[False], 0.5),
        "difference_p99": percentile(walls[True], 0.99) - percentile(walls[False], 0.99),
        "tokens_p50": percentile(tokens, 0.5),
        "search_p50": percentile(searches, 0.5),
        "lexical_only": stats.lexical_searches - lexical,
        "archived": stats.count,
    }
    for manager in (hooked_manager, plain_manager):
        manager.memory.close()
    return row


def run(settings: Settings) -> dict[str, Any]:
    sizes, turns, rounds = _speed.sized(settings, ((10_000, 100_000), 150, 3), ((1_000, 2_000), 12, 2), ((200,), 3, 1))
    asked = _speed.questions(settings.locomo)[:turns]
    _speed.warm_model()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ssm-latency-") as folder:  # a first row ran 2-4x slower: warm up
        source = _speed.cached_archive(settings.locomo, sizes[0])
        hooked, plain = (_speed.copy_archive(source, Path(folder), name) for name in ("a.sqlite3", "b.sqlite3"))
        measure(hooked, plain, WINDOWS[0], asked[-8:], 1)
    for size in sizes:
        source = _speed.cached_archive(settings.locomo, size)
        for window in WINDOWS:
            with tempfile.TemporaryDirectory(prefix="ssm-latency-") as folder:
                hooked = _speed.copy_archive(source, Path(folder), "hooked.sqlite3")
                plain = _speed.copy_archive(source, Path(folder), "plain.sqlite3")
                rows.append({"size": size, "archive": "SQLite file", **measure(hooked, plain, window, asked, rounds)})
    rows.append({"size": sizes[-1], "archive": "PostgreSQL", **postgres_row(settings, sizes[-1], asked, rounds)})
    return {"rows": rows, "turns": turns, "rounds": rounds}


def postgres_row(settings: Settings, size: int, asked: list[str], rounds: int) -> dict[str, Any]:
    """The same over ``PostgresArchive`` (loaded once into ``build/bench-cache/pgdata``; one user for both agents)."""
    archive_type = _speed.postgres_archive()
    if archive_type is None:
        return {"window": WINDOWS[0], "unavailable": _speed.NO_POSTGRES}
    from strands_semantic_memory import SemanticMemory

    with _speed.postgres(_speed.CACHE / "pgdata") as server:
        dsn = server.get_uri()
        user = f"{_speed.USER}-{size}"
        archive = archive_type(dsn, user)
        if archive.stats().count < size:
            archive.forget_all()
            with SemanticMemory(embedder=_speed.cached_embedder(), archive=archive, embedding="background") as memory:
                _speed.fill(memory, _speed.locomo_messages(settings.locomo, size))
        archive.close()
        indexed = archive_type(dsn, user)
        indexed.build_index()  # as a deployment builds it once; measured before it, every search scans exactly
        indexed.close()
        row = measure(archive_type(dsn, user), archive_type(dsn, user), WINDOWS[0], asked, rounds)
    return row


HEADER = ["archived", "archive", "window (tokens)", "hook p50 (ms)", "hook p99 (ms)", "p50 over rounds",
          "of it the search, p50 (ms)", "tokens injected p50", "turn with - without, p50 / p99 (ms)", "by words only"]  # fmt: skip


def render(data: dict[str, Any], output: Path) -> str:
    rows = []
    for row in data["rows"]:
        head = [f"{row['size']:,}", row["archive"], f"{row['window']:,}"]
        if "unavailable" in row:
            rows.append([*head, row["unavailable"], *[""] * 6])
            continue
        hook, ms = row["hook"], _speed.ms
        rows.append([*head, ms(hook["p50"]), ms(hook["p99"]), _speed.with_spread(hook["rounds"]), ms(row["search_p50"]),
                     f"{row['tokens_p50']:,.0f}", f"{ms(row['difference_p50'])} / {ms(row['difference_p99'])}",
                     f"{row['lexical_only']} of {hook['n']}"])  # fmt: skip
    text = (
        f"`benchmarks/latency.py`. {data['turns']} LoCoMo questions per row through a real `Agent` (`ScriptedModel`, "
        "which answers at once: no model time), the manager archiving every message as it is added, the bundled model "
        "in this process. **hook**: the hook's model-call middleware from its entry to the call handed to the model "
        "(the held-index lookup and the search in worker threads, the gate, the block); **of it the search**: the "
        "hook's own `enrichment(agent).elapsed_ms` (the lookup and the search); **with - without**: the median (and "
        "p99) turn wall time with the hook minus without, the turns interleaved. Rounds: the per-round p50s of the "
        "hook, median (min to max). A search whose query vector came later than `embed_timeout` (2 s) searched by "
        "words (last column)."
    )
    return f"{text}\n\n{table(HEADER, rows)}"


SECTION = Section("latency", "The hook's added time per user turn", run, render)
