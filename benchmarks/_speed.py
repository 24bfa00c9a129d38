"""What the speed sections share: LoCoMo-like archives built once and cached, the hook's timer, the event-loop
ticker, process memory, PostgreSQL through pgserver, and the report's small pieces.

Archives repeat the real LoCoMo development text: copy ``r`` of each message has the speakers renamed and ``(r)``
appended, so every message is a distinct text, embedded for real.
Vectors of texts seen before come from a ``DiskCachedEmbedder`` under ``build/bench-cache/vectors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import hashlib
import json
import shutil
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import psutil
from strands.types.content import Message

from benchmarks.common import Settings, percentile, spread

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "bench-cache"
USER = "bench"
"""The user every cached archive belongs to (a named user recalls all their sessions)."""
FORMAT = "1"
"""Bumped when the cached archives' contents change."""
NAMES = ("Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kendall", "Logan", "Morgan",
         "Noel", "Parker", "Quinn", "Reese", "Rowan", "Sawyer", "Taylor")  # fmt: skip


def sized(settings: Settings, full: T, quick: T, tiny: T) -> T:
    """The sizes a run asks for: full, quick (``--quick``) or tiny (``options={"tiny": True}``, the smoke test)."""
    return tiny if settings.options.get("tiny") else quick if settings.quick else full


def locomo_turns(path: Path) -> list[tuple[str, str, str, str]]:
    """Every LoCoMo turn in order: ``(role, text, session, speaker)``; speaker A is the user."""
    turns = []
    for conversation in json.loads(path.read_text()):
        talk = conversation["conversation"]
        first = talk["speaker_a"]
        for key, value in talk.items():
            if key.startswith("session_") and isinstance(value, list):
                for turn in value:
                    role = "user" if turn["speaker"] == first else "assistant"
                    turns.append((role, str(turn["text"]), f"{conversation['sample_id']}-{key}", turn["speaker"]))
    return turns


def questions(path: Path) -> list[str]:
    """LoCoMo's questions, in order."""
    return [str(qa["question"]) for conversation in json.loads(path.read_text()) for qa in conversation["qa"]]


def locomo_messages(path: Path, count: int, tag: str = "") -> list[tuple[Message, str]]:
    """``count`` distinct LoCoMo-like messages with their session ids (see the module docstring)."""
    turns = locomo_turns(path)
    speakers = sorted({speaker for *_, speaker in turns})
    out: list[tuple[Message, str]] = []
    for n in range(count):
        copy, (role, text, session, _) = divmod(n, len(turns))[0], turns[n % len(turns)]
        if copy:
            for k, speaker in enumerate(speakers):
                text = text.replace(speaker, NAMES[(k + copy) % len(NAMES)])
            text = f"{text} ({copy})"
        out.append(({"role": role, "content": [{"text": tag + text}]}, f"c{copy}-{session}"))  # type: ignore[typeddict-item]
    return out


def cached_embedder() -> Any:
    """The default model's vectors, kept on disk: a text embedded once is never embedded again."""
    from strands_semantic_memory.embeddings import resolve_embedder
    from strands_semantic_memory.testing import DiskCachedEmbedder

    return DiskCachedEmbedder(resolve_embedder(), CACHE / "vectors")


def fill(memory: Any, messages: list[tuple[Message, str]]) -> None:
    """Archive ``messages`` session by session (one ``add`` per session), then embed them all."""
    start = 0
    while start < len(messages):
        end = start
        while end < len(messages) and messages[end][1] == messages[start][1]:
            end += 1
        memory.add([m for m, _ in messages[start:end]], session_id=messages[start][1])
        start = end
    memory.embed_pending()


def cached_archive(locomo: Path, size: int) -> Path:
    """A durable archive of ``size`` LoCoMo-like messages of ``USER``, built once (``add`` then ``embed_pending``)."""
    from strands_semantic_memory import SemanticMemory

    key = hashlib.sha256(f"{FORMAT} {size} {locomo.stat().st_size}".encode()).hexdigest()[:10]
    path = CACHE / f"locomo-{size}-{key}.sqlite3"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    for stale in CACHE.glob(partial.name + "*"):
        stale.unlink()
    embedder = cached_embedder()
    with SemanticMemory(embedder=embedder, archive_path=partial, user_id=USER, embedding="background") as memory:
        fill(memory, locomo_messages(locomo, size))
    embedder.flush()
    partial.rename(path)
    return path


def copy_archive(source: Path, folder: Path, name: str = "archive.sqlite3") -> Path:
    """A private copy of a cached archive (the runs write to it)."""
    target = folder / name
    shutil.copyfile(source, target)
    return target


def warm_model() -> None:
    """Load the default model and run one query and one document through it, before anything is timed."""
    from strands_semantic_memory.embeddings import resolve_embedder

    embedder = resolve_embedder()
    embedder.embed_queries(["warm up the model"])
    embedder.embed_documents(["warm up the model"])


class HookTimer:
    """The hook's added time per model call: from its model-call middleware's entry to the moment it hands the call
    to the model (the held-index lookup and the search, in worker threads, the gate and the block's building).

    Set on the hook before the agent is built (the middleware is registered at the agent's initialization).
    """

    def __init__(self, hook: Any) -> None:
        self.calls: list[float] = []
        inner = hook._invoke_model

        async def timed(context: Any, next_fn: Callable[[Any], AsyncGenerator[Any, None]]) -> AsyncGenerator[Any, None]:
            started = time.perf_counter()
            first = True

            def counted(call: Any) -> AsyncGenerator[Any, None]:
                nonlocal first
                if first:
                    self.calls.append((time.perf_counter() - started) * 1000)
                    first = False
                return next_fn(call)

            async for event in inner(context, counted):
                yield event

        hook._invoke_model = timed

    def take(self) -> float | None:
        """The first call's added time since the last ``take`` (None when no model call ran)."""
        found, self.calls = self.calls, []
        return found[0] if found else None


class Ticker:
    """A coroutine that sleeps 10 ms at a time and records how late it wakes: the event loop's stalls (ms)."""

    def __init__(self, period: float = 0.01) -> None:
        self.period = period
        self.late: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.period)
            self.late.append(max(0.0, (time.perf_counter() - before - self.period) * 1000))

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    @property
    def worst(self) -> float:
        """The largest stall, ms."""
        return max(self.late, default=0.0)


def rss() -> int:
    """This process's resident memory after a collection and giving freed heap back to the system (glibc)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return int(psutil.Process().memory_info().rss)


def postgres_archive() -> Any | None:
    """``strands_semantic_memory.archives.PostgresArchive``, or None while it does not exist on this branch."""
    try:
        from strands_semantic_memory.archives import PostgresArchive
    except (ImportError, AttributeError):
        return None
    return PostgresArchive


NO_POSTGRES = "not available: PostgresArchive is not on this branch yet (branch lean-postgres)"


@contextlib.contextmanager
def postgres(folder: Path) -> Iterator[Any]:
    """A PostgreSQL server with pgvector over ``folder`` (kept: a cached load survives the run), stopped after."""
    import pgserver  # type: ignore[attr-defined,unused-ignore]
    from pgserver import _commands

    folder.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(  # type: ignore[attr-defined]
        str(folder), cleanup_mode="stop"
    )
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    try:
        yield server
    finally:
        server.cleanup()
        if (folder / "postmaster.pid").exists():  # restarted: pgserver knows the old postmaster only
            vars(_commands)["pg_ctl"](["-w", "-m", "fast", "stop"], pgdata=folder, user=server.system_user, timeout=60)


@contextlib.contextmanager
def postgres_users() -> Iterator[Callable[[str], Any] | None]:
    """``user -> PostgresArchive`` over the cached server, or None while the class is missing."""
    archive = postgres_archive()
    if archive is None:
        yield None
        return
    with postgres(CACHE / "pgdata") as server:
        dsn = server.get_uri()
        yield lambda user: archive(dsn, user)


def restart_postgres(server: Any) -> float:
    """Restart the server (``pg_ctl restart -m fast``: every connection is cut); seconds it took."""
    from pgserver import _commands

    pg_ctl: Any = vars(_commands)["pg_ctl"]  # made at import, one function per binary
    started = time.perf_counter()
    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)
    return time.perf_counter() - started


def latency_summary(values: list[float], rounds: int = 1) -> dict[str, Any]:
    """p50 and p99 of ``values`` (ms), and the spread of the per-round p50s."""
    size = max(1, len(values) // max(1, rounds))
    parts = [values[i : i + size] for i in range(0, size * rounds, size) if values[i : i + size]]
    return {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99), "n": len(values),
            "rounds": spread([percentile(p, 0.5) for p in parts])}  # fmt: skip


def ms(value: float | None) -> str:
    """A time in ms as the tables show it."""
    return "-" if value is None else f"{value:,.1f}"


def with_spread(found: dict[str, Any] | None, digits: int = 1) -> str:
    """``median (min to max, n rounds)``."""
    if not found:
        return "-"
    return f"{found['median']:,.{digits}f} ({found['min']:,.{digits}f} to {found['max']:,.{digits}f})"


def plot(output: Path, name: str, draw: Callable[[Any], None], size: tuple[float, float] = (8, 3.5)) -> str:
    """Draw a figure with ``draw(axes)`` into ``output/name.png``; the markdown that shows it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=size)
    draw(axes)
    figure.tight_layout()
    figure.savefig(output / f"{name}.png", dpi=110)
    plt.close(figure)
    return f"![{name}]({name}.png)"
