"""The PostgreSQL load test with faults: ``python -m benchmarks.load [--quick]`` (or ``benchmarks.run --only load``).

pgserver starts PostgreSQL over ``build/bench-cache/pgdata-load``; the set-up bulk-loads the archived messages once per
size (a database each, kept: a second run starts at once) through the ``Archive`` protocol, each message's vector
its LoCoMo base text's. Then worker processes (``python -m benchmarks.load worker CONFIG``) each run an asyncio
server of many users' sessions at once: a session is a new ``Agent`` with ``SemanticSummarizingConversationManager``
over ``PostgresArchive(dsn, user_id)`` and ``SemanticMemoryHook``, a model that waits 0.2-2 s before it answers, a
few turns with a pause between them. During the run the orchestrator restarts PostgreSQL, ``kill -9``s one worker
(and starts it again) and has every worker saturate its connection pool for a while. Afterwards it checks the
database against the workers' journals: every message a turn reported archived is there, none twice, no user's
mark in another user's archive or model request, and every worker that was not killed served turns again after
each fault.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import collections
import functools
import inspect
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks import _speed
from benchmarks.common import LOCOMO_DEV, Section, Settings, percentile, table

MARK = re.compile(r"LU(\d{4})\.")
"""A user's mark in a text (``LU0042.``): every archived and asked text of user 42 carries it."""


@dataclass(frozen=True)
class Plan:
    """The sizes of one load run."""

    workers: int = 4
    users: int = 1_000
    messages: int = 1_000_000
    seconds: float = 600.0
    pool_size: int = 4
    turns_per_session: int = 5
    think: tuple[float, float] = (1.0, 4.0)
    reply: tuple[float, float] = (0.2, 2.0)


QUICK = Plan(workers=2, users=20, messages=5_000, seconds=30.0)


def uid(user: int) -> str:
    return f"load-{user:04d}"


def archive_options(archive_type: Any, pool_size: int) -> dict[str, Any]:
    """``pool_size=`` when ``PostgresArchive`` takes it."""
    return {"pool_size": pool_size} if "pool_size" in inspect.signature(archive_type).parameters else {}


# ---------------------------------------------------------------------------------------------------------- set-up


def database(plan: Plan) -> str:
    """The database of a plan's archived messages."""
    return f"bench_load_{plan.users}_{plan.messages}"


def prepare(admin_dsn: str, plan: Plan, locomo: Path, archive_type: Any) -> tuple[str, float]:
    """The database holding ``plan.messages`` archived messages of ``plan.users`` users (loaded once); its DSN."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    from strands_semantic_memory import SemanticMemory

    name = database(plan)
    dsn = make_conninfo(admin_dsn, dbname=name)
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            with psycopg.connect(dsn) as connection:
                done = connection.execute("SELECT to_regclass('bench_loaded') IS NOT NULL").fetchone()
            if done and done[0]:
                return dsn, 0.0
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
    started = time.perf_counter()
    embedder = _speed.cached_embedder()
    turns = _speed.locomo_turns(locomo)
    vectors = embedder.embed_documents([text for _, text, *_ in turns])
    embedder.flush()
    encoder = SemanticMemory(embedder=embedder)  # encodes records only; its own archive stays empty
    per_user = plan.messages // plan.users
    for user in range(plan.users):
        archive = archive_type(dsn, uid(user), **archive_options(archive_type, plan.pool_size))
        archive.bind(embedder.model_id, int(vectors.shape[1]))
        for start in range(0, per_user, 500):
            bases = [(user * per_user + n) % len(turns) for n in range(start, min(per_user, start + 500))]
            messages = [{"role": turns[b][0], "content": [{"text": f"LU{user:04d}.b{start + k}: {turns[b][1]}"}]}
                        for k, b in enumerate(bases)]  # fmt: skip
            indices = archive.add(encoder.new_records(messages, session_id=f"bulk-{start}"))  # type: ignore[arg-type]
            archive.set_vectors({i: vectors[b][None] for i, b in zip(indices, bases) if i is not None})
        archive.close()
    encoder.close()
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("ANALYZE")
        connection.execute("CREATE TABLE bench_loaded (users int, messages int)")
    return dsn, time.perf_counter() - started


# ---------------------------------------------------------------------------------------------------------- a worker


def worker(config: dict[str, Any]) -> None:
    """One worker process: every session of its users at once, in one event loop, until the run's end."""
    from strands_semantic_memory.embeddings import resolve_embedder

    resolve_embedder().embed_queries(["warm up"])
    control = Path(config["control"])
    (control / f"ready-{config['worker']}-{os.getpid()}").touch()
    while not (control / "start").exists():
        time.sleep(0.2)
    asyncio.run(_serve(config, json.loads((control / "start").read_text())))


def _session_parts(config: dict[str, Any], user: int, archive_type: Any) -> tuple[Any, Any, _speed.HookTimer]:
    """A new session of ``user``: its agent (blocking: opens the user's archive), its manager, the hook's timer."""
    from strands import Agent

    from strands_semantic_memory import SemanticMemoryHook

    archive = archive_type(config["dsn"], uid(user), **archive_options(archive_type, config["pool_size"]))
    try:
        manager = _journaled()(archive=archive, user_id=uid(user))
    except BaseException:
        archive.close()
        raise
    hook = SemanticMemoryHook()
    timer = _speed.HookTimer(hook)
    model = _slow()(user, tuple(config["reply"]), context_window_limit=8_000)
    agent = Agent(model=model, conversation_manager=manager, plugins=[hook], callback_handler=None)
    return agent, manager, timer


LEAKS = [0]
"""Model requests of this worker that held another user's mark."""


@functools.cache
def _journaled() -> Any:
    from strands_semantic_memory import SemanticSummarizingConversationManager

    class Journaled(SemanticSummarizingConversationManager):
        """Notes the index ``archive`` returned for each message (by tracking id): what a turn reports archived."""

        def __init__(self, **arguments: Any) -> None:
            super().__init__(**arguments)
            self.reported: dict[str, int] = {}

        def archive(self, messages: list[Any], agent: Any) -> list[int | None]:
            indices = super().archive(messages, agent)
            fresh = [m for m in messages if m is not self._summary_message]
            for message, index in zip(fresh, indices):
                if index is not None:
                    self.reported[str(message.get("tracking_id"))] = index
            return indices

    return Journaled


@functools.cache
def _slow() -> Any:
    from strands_semantic_memory.testing import ScriptedModel

    class Slow(ScriptedModel):
        """Answers after 0.2-2 s (asynchronously); counts requests holding another user's mark."""

        def __init__(self, user: int, reply: tuple[float, float], **config: Any) -> None:
            super().__init__(**config)
            self.user, self.reply = user, reply

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            if any(int(found) != self.user for found in MARK.findall(str(messages))):
                LEAKS[0] += 1
            await asyncio.sleep(random.uniform(*self.reply))
            async for event in super().stream(messages, *args, **kwargs):
                yield event
            self.requests.clear()

    return Slow


async def _serve(config: dict[str, Any], window: dict[str, float]) -> None:
    archive_type = _speed.postgres_archive()
    questions = _speed.questions(Path(config["locomo"]))
    metrics = open(config["metrics"], "a", buffering=1)  # noqa: SIM115  (open for the whole run)
    journal = open(config["journal"], "a", buffering=1)  # noqa: SIM115
    run, pid, name = config["run"], os.getpid(), config["worker"]

    def note(**line: Any) -> None:
        metrics.write(json.dumps({"t": time.time(), "w": name, "pid": pid, **line}) + "\n")

    async def sessions(user: int) -> None:
        rng = random.Random(f"{run}-{pid}-{user}")
        session = 0
        while time.time() < window["stop"]:
            session += 1
            try:
                agent, manager, timer = await asyncio.to_thread(_session_parts, config, user, archive_type)
            except Exception as trouble:  # PostgreSQL down: try again shortly
                note(kind="build_error", error=type(trouble).__name__)
                await asyncio.sleep(1.0)
                continue
            for turn in range(config["turns_per_session"]):
                if time.time() >= window["stop"]:
                    break
                mark = f"LU{user:04d}.{run}.{pid}.{session}.{turn}"
                started, failed = time.perf_counter(), None
                try:
                    await agent.invoke_async(f"{mark}: {rng.choice(questions)}")
                except Exception as failure:  # the turn failed; it reports nothing archived
                    failed = type(failure).__name__
                wall = (time.perf_counter() - started) * 1000
                said = _turn_ids(agent.messages, mark)
                archived = {tid: manager.reported[tid] for tid in said if tid in manager.reported}
                for tid, index in archived.items():
                    journal.write(json.dumps({"u": user, "tid": tid, "i": index}) + "\n")
                note(kind="turn", ok=failed is None, error=failed, wall=wall, hook=timer.take(), leaks=LEAKS[0],
                     archived=len(said) == 2 and len(archived) == 2)  # fmt: skip
                await asyncio.sleep(rng.uniform(*config["think"]))
            await asyncio.to_thread(manager.memory.close)

    saturation = asyncio.create_task(_saturate(config, archive_type, note, window))
    await asyncio.gather(*(sessions(user) for user in config["users"]))
    saturation.cancel()


def _turn_ids(messages: list[Any], mark: str) -> list[str]:
    """Tracking ids of the user's message that starts with ``mark`` and the reply after it."""
    for n in range(len(messages) - 1, -1, -1):
        content = messages[n].get("content") or [{}]
        if str(content[0].get("text", "")).startswith(mark):
            return [str(m.get("tracking_id")) for m in messages[n : n + 2]]
    return []


async def _saturate(config: dict[str, Any], archive_type: Any, note: Any, window: dict[str, float]) -> None:
    """While the orchestrator's flag is up: 3 x pool_size threads hold the pool with lexical candidate searches."""
    flag = Path(config["control"]) / "saturate"
    while time.time() < window["stop"]:
        await asyncio.sleep(0.5)
        if not flag.exists():
            continue
        archive = archive_type(
            config["dsn"], uid(config["users"][0]), **archive_options(archive_type, config["pool_size"])
        )
        counts = {"calls": 0, "errors": 0}
        threads = [threading.Thread(target=_hammer, args=(archive, flag, counts), daemon=True)
                   for _ in range(3 * config["pool_size"])]  # fmt: skip
        for thread in threads:
            thread.start()
        while flag.exists():
            await asyncio.sleep(0.2)
        for thread in threads:
            await asyncio.to_thread(thread.join)
        archive.close()
        note(kind="saturation", **counts)


def _hammer(archive: Any, flag: Path, counts: dict[str, int]) -> None:
    """Lexical candidate searches in a loop while ``flag`` exists (one thread of the saturation)."""
    from strands_semantic_memory.archives import Scope

    while flag.exists():
        try:
            archive.candidates(["lisbon", "trip", "work"], None, 50, Scope())
            counts["calls"] += 1
        except Exception:  # a pool timeout is what saturation looks like
            counts["errors"] += 1


# ---------------------------------------------------------------------------------------------------------- the run


def load_test(plan: Plan, locomo: Path, output: Path) -> dict[str, Any]:
    """Set up, run with faults, check; the figures (the plot is drawn by ``render``)."""
    archive_type = _speed.postgres_archive()
    if archive_type is None:
        return {"plan": asdict(plan), "unavailable": _speed.NO_POSTGRES}
    import psutil
    import psycopg

    with _speed.postgres(_speed.CACHE / "pgdata-load") as server:
        admin = server.get_uri()
        dsn, setup = prepare(admin, plan, locomo, archive_type)
        options = archive_options(archive_type, plan.pool_size)
        first = {}
        for user in range(plan.users):
            archive = archive_type(dsn, uid(user), **options)
            first[user] = archive.stats().next_index
            archive.close()
        folder = Path(tempfile.mkdtemp(prefix="ssm-load-"))
        atexit.register(shutil.rmtree, folder, True)  # the workers' journals and logs, read below, then gone
        control = folder / "control"
        control.mkdir()
        run = time.strftime("%H%M%S")
        configs = [{"worker": w, "users": [u for u in range(plan.users) if u % plan.workers == w], "dsn": dsn,
                    "control": str(control), "metrics": str(folder / f"metrics-{w}.jsonl"), "run": run,
                    "journal": str(folder / f"journal-{w}.jsonl"), "locomo": str(locomo), "pool_size": plan.pool_size,
                    "turns_per_session": plan.turns_per_session, "think": plan.think, "reply": plan.reply}
                   for w in range(plan.workers)]  # fmt: skip

        def spawn(config: dict[str, Any]) -> subprocess.Popen[bytes]:
            path = folder / f"config-{config['worker']}.json"
            path.write_text(json.dumps(config))
            log = open(folder / f"worker-{config['worker']}.log", "ab")  # noqa: SIM115  (the child writes it)
            return subprocess.Popen([sys.executable, "-m", "benchmarks.load", "worker", str(path)], cwd=_speed.ROOT,
                                    stdout=log, stderr=log, env={**os.environ, "PYTHONPATH": str(_speed.ROOT)})  # fmt: skip

        processes = [spawn(config) for config in configs]
        deadline = time.time() + 600
        while len(list(control.glob("ready-*"))) < plan.workers and time.time() < deadline:
            time.sleep(0.5)
        start = time.time() + 1
        window = {"start": start, "stop": start + plan.seconds}
        (control / "start").write_text(json.dumps(window))
        faults = [(0.25, "restart PostgreSQL"), (0.5, "kill -9 worker 0"), (0.7, "saturate the pools")]
        events: list[dict[str, Any]] = []
        samples: list[dict[str, Any]] = []
        while time.time() < window["stop"]:
            now = time.time() - start
            if faults and now >= faults[0][0] * plan.seconds:
                what = faults.pop(0)[1]
                if what.startswith("restart"):
                    _speed.restart_postgres(server)
                elif what.startswith("kill"):
                    processes[0].send_signal(signal.SIGKILL)
                    processes[0].wait()
                    time.sleep(1.0)
                    processes[0] = spawn(configs[0])
                else:
                    (control / "saturate").touch()  # lifted below, while the samples go on
                events.append({"what": what, "start": now, "end": time.time() - start})
            if (control / "saturate").exists() and now >= events[-1]["start"] + max(3.0, 0.1 * plan.seconds):
                (control / "saturate").unlink()
                events[-1]["end"] = now
            sample: dict[str, Any] = {"t": time.time() - start, "rss": []}
            for process in processes:
                try:
                    sample["rss"].append(psutil.Process(process.pid).memory_info().rss)
                except psutil.Error:
                    sample["rss"].append(None)
            try:
                with psycopg.connect(admin, connect_timeout=2) as connection:
                    row = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                                             (database(plan),)).fetchone()  # fmt: skip
                sample["connections"] = int(row[0]) if row else None
            except psycopg.Error:
                sample["connections"] = None
            samples.append(sample)
            time.sleep(1.0)
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        checked = verify(archive_type, dsn, options, first, folder, plan.users)
    return summarize(plan, folder, window, events, samples, checked, setup)


def verify(archive_type: Any, dsn: str, options: dict[str, Any], first: dict[int, int], folder: Path,
           users: int) -> dict[str, Any]:  # fmt: skip
    """The database against the journals: lost, duplicated, and other users' marks in an archive."""
    journaled: dict[int, dict[str, int]] = collections.defaultdict(dict)
    for line in _lines(folder.glob("journal-*.jsonl")):
        journaled[line["u"]][line["tid"]] = line["i"]
    lost = duplicated = foreign = stored = 0
    for user in range(users):
        archive = archive_type(dsn, uid(user), **options)
        seen: collections.Counter[str] = collections.Counter()
        where: dict[str, int] = {}
        after = first[user] - 1
        while batch := archive.records(after, 1000):
            for record in batch:
                tid = str(record.message.get("tracking_id"))
                seen[tid] += 1
                where[tid] = record.index
                foreign += any(int(found) != user for found in MARK.findall(record.text))
            after = batch[-1].index
        archive.close()
        stored += sum(seen.values())
        duplicated += sum(count - 1 for count in seen.values() if count > 1)
        lost += sum(where.get(tid) != index for tid, index in journaled[user].items())
    return {"journaled": sum(len(j) for j in journaled.values()), "stored": stored, "lost": lost,
            "duplicated": duplicated, "foreign_in_archive": foreign}  # fmt: skip


def _lines(paths: Any) -> list[dict[str, Any]]:
    """JSON lines of the workers' files (a line cut by ``kill -9`` is skipped)."""
    found = []
    for path in paths:
        for text in Path(path).read_text().splitlines():
            try:
                found.append(json.loads(text))
            except json.JSONDecodeError:
                continue
    return found


def summarize(plan: Plan, folder: Path, window: dict[str, float], events: list[dict[str, Any]],
              samples: list[dict[str, Any]], checked: dict[str, Any], setup: float) -> dict[str, Any]:  # fmt: skip
    lines = _lines(folder.glob("metrics-*.jsonl"))
    turns = [line for line in lines if line.get("kind") == "turn" and window["start"] <= line["t"] <= window["stop"]]
    good = [line for line in turns if line["ok"]]
    seconds = int(plan.seconds)
    per_second = [0] * (seconds + 1)
    for line in good:
        per_second[min(seconds, int(line["t"] - window["start"]))] += 1
    p99 = []
    for start in range(0, seconds, 5):
        hooks = [line["hook"] for line in good if line.get("hook") is not None
                 and start <= line["t"] - window["start"] < start + 5]  # fmt: skip
        p99.append(percentile(hooks, 0.99) if hooks else None)
    steady = [line for line in good if line["t"] - window["start"] >= 0.1 * plan.seconds]
    recovered = {}
    for event in events:
        for w in range(plan.workers):
            after = [line["t"] - window["start"] for line in good if line["w"] == w
                     and line["t"] - window["start"] > event["end"]]  # fmt: skip
            recovered[f"{event['what']} / worker {w}"] = min(after) - event["end"] if after else None
    rss = [[s["rss"][w] for s in samples if s["rss"][w]] for w in range(plan.workers)]
    connections = [s["connections"] for s in samples if s.get("connections") is not None]
    hooks = [line["hook"] for line in steady if line.get("hook") is not None]
    return {
        "plan": asdict(plan), "setup_seconds": setup, "turns": len(turns), "failed": len(turns) - len(good),
        "not_archived": sum(not line["archived"] for line in turns),
        "turns_per_second": len(steady) / (0.9 * plan.seconds), "hook_p50": percentile(hooks, 0.5),
        "hook_p99": percentile(hooks, 0.99), "turn_p50": percentile([line["wall"] for line in good], 0.5),
        "connections_max": max(connections, default=None), "connections_median": percentile(connections, 0.5),
        "rss_max_mb": [max(r, default=0) / 2**20 for r in rss],
        "leaked_requests": sum(max((line.get("leaks", 0) for line in lines if line.get("pid") == pid), default=0)
                               for pid in {line.get("pid") for line in lines}),
        "build_errors": sum(line.get("kind") == "build_error" for line in lines),
        "saturation": [line for line in lines if line.get("kind") == "saturation"],
        "events": events, "recovered_after": recovered, "per_second": per_second, "p99_per_5s": p99,
        "executor_threads": min(32, (os.cpu_count() or 1) + 4), **checked,
    }  # fmt: skip


def run(settings: Settings) -> dict[str, Any]:
    plan = _speed.sized(settings, Plan(), QUICK, replace(QUICK, users=4, messages=200, seconds=12.0))
    return load_test(plan, settings.locomo, settings.output)


def render(data: dict[str, Any], output: Path) -> str:
    plan = data["plan"]
    head = (f"`benchmarks/load.py` (`python -m benchmarks.load`): {plan['workers']} worker processes, {plan['users']:,} "
            f"users, {plan['messages']:,} archived messages in one PostgreSQL (pgserver), {plan['seconds']:.0f} s; each "
            f"session {plan['turns_per_session']} turns with {plan['think'][0]:g}-{plan['think'][1]:g} s between them, "
            f"the model answering after {plan['reply'][0]:g}-{plan['reply'][1]:g} s (scripted: no model CPU).")  # fmt: skip
    if "unavailable" in data:
        return f"{head}\n\n{data['unavailable']}."

    def draw(axes: Any) -> None:
        counts = data["per_second"]
        smooth = [sum(counts[max(0, n - 4) : n + 1]) / len(counts[max(0, n - 4) : n + 1]) for n in range(len(counts))]
        axes.plot(range(len(counts)), smooth, lw=1, label="turns/s (5 s mean)")
        axes.set_xlabel("seconds")
        axes.set_ylabel("turns/s")
        right = axes.twinx()
        right.plot([5 * n + 2.5 for n in range(len(data["p99_per_5s"]))], data["p99_per_5s"], color="C3", lw=1,
                   label="hook p99 (ms, 5 s windows)")  # fmt: skip
        right.set_ylabel("hook p99 (ms)")
        figure_legend = axes.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        axes.legend(handles=figure_legend, loc="upper left", fontsize=7)
        for event in data["events"]:
            axes.axvspan(event["start"], max(event["end"], event["start"] + 0.5), color="grey", alpha=0.3)
            axes.text(event["start"], axes.get_ylim()[1] * 0.95, event["what"], fontsize=7, rotation=90, va="top")

    figure = _speed.plot(output, "load", draw)
    late = [f"{k}: {'-' if v is None else f'{v:.1f} s'}" for k, v in data["recovered_after"].items()]
    rows = [
        ["sustained turns/s (after the first 10 %)", f"{data['turns_per_second']:.1f}"],
        ["hook's added time p50 / p99 (ms, after the first 10 %)",
         f"{_speed.ms(data['hook_p50'])} / {_speed.ms(data['hook_p99'])}"],
        ["turn p50 (ms, model wait included)", _speed.ms(data["turn_p50"])],
        ["PostgreSQL connections, max / median", f"{data['connections_max']} / {data['connections_median']:.0f}"],
        ["memory per worker, max (MB)", ", ".join(f"{m:,.0f}" for m in data["rss_max_mb"])],
        ["turns / failed / not reported archived", f"{data['turns']:,} / {data['failed']} / {data['not_archived']}"],
        ["messages reported archived / lost / duplicated", f"{data['journaled']:,} / **{data['lost']}** / "
                                                           f"**{data['duplicated']}**"],
        ["requests with another user's mark / archive rows with another user's mark",
         f"**{data['leaked_requests']}** / **{data['foreign_in_archive']}**"],
        ["first turn served after each fault's end", "; ".join(late)],
        ["set-up (bulk load) seconds (0: cached)", f"{data['setup_seconds']:.0f}"],
    ]  # fmt: skip
    return "\n\n".join([
        head, table(["figure", "measured"], rows), figure,
        "The plot depends on the scripted model's waits (no model CPU: a real model's client is I/O as well) and on "
        "the machine's load; grey bands are the faults. Each worker's `asyncio.to_thread` work runs on Python's "
        f"default executor ({data['executor_threads']} threads here).",
    ])  # fmt: skip


SECTION = Section("load", "PostgreSQL load test with faults", run, render)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["worker"]:
        worker(json.loads(Path(arguments[1]).read_text()))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 workers, 20 users, 5,000 messages, 30 s")
    for name in ("workers", "users", "messages", "seconds", "pool_size"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=float if name == "seconds" else int)
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--output", type=Path, default=Path("build") / "load")
    args = parser.parse_args(arguments)
    plan = QUICK if args.quick else Plan()
    plan = replace(plan, **{k: v for k, v in vars(args).items() if k in Plan.__dataclass_fields__ and v is not None})
    args.output.mkdir(parents=True, exist_ok=True)
    data = load_test(plan, args.locomo, args.output)
    (args.output / "load.json").write_text(json.dumps(data, indent=1))
    (args.output / "load.md").write_text(render(data, args.output) + "\n")
    print(render(data, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
