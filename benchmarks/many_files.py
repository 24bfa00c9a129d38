"""Many users' SQLite files in one process, and one user's file written by two worker processes at once.

- N users' durable archives (``SemanticMemory(archive_path=..., user_id=...)``) opened at once in one process, each
  searched once: the process's resident growth and open file descriptors per user, and after closing them.
- Two child processes archive into one user's file at the same moment, one message per ``add`` (as a manager archives
  each message as it is added), each under its own session; afterwards the file must hold every message of both,
  each once, and their vectors.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks import _speed
from benchmarks.common import Section, Settings, table
from benchmarks.event_loop import SEED, seed


def open_at_once(folder: Path, users: int) -> dict[str, Any]:
    """Resident memory and descriptors before, with every user's archive open and searched, and after closing."""
    from strands_semantic_memory import SemanticMemory

    process = psutil.Process()
    before, fds = _speed.rss(), process.num_fds()
    memories = [SemanticMemory(archive_path=folder / f"user-{u:04d}.sqlite3", user_id=f"user-{u:04d}")
                for u in range(users)]  # fmt: skip
    for memory in memories:
        memory.search("where did I move in spring?")
    opened, open_fds = _speed.rss(), process.num_fds()
    for memory in memories:
        memory.close()
    return {"users": users, "bytes_per_user": (opened - before) / users, "fds_per_user": (open_fds - fds) / users,
            "fds_after_close": process.num_fds() - fds, "bytes_after_close": _speed.rss() - before,
            "fd_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0], "messages_per_user": SEED + 3}  # fmt: skip


def writer(path: str, name: str, offset: int, count: int, locomo: Path) -> dict[str, Any]:
    """In a child: archive ``count`` LoCoMo messages one ``add`` each under session ``name``, then embed them."""
    from strands_semantic_memory import SemanticMemory

    messages = _speed.locomo_messages(locomo, offset + count)
    failures = 0
    with SemanticMemory(archive_path=path, user_id="shared", embedding="background") as memory:
        started = time.perf_counter()
        for message, _ in messages[offset:]:
            try:
                memory.add([message], session_id=name)
            except Exception:  # an ArchiveError (a lock held too long) is counted: the message was not archived
                failures += 1
        seconds = time.perf_counter() - started
        memory.embed_pending(timeout=600)
    return {"failures": failures, "seconds": seconds}


def two_writers(locomo: Path, count: int) -> dict[str, Any]:
    """Two processes write one user's file at once; what the file holds afterwards."""
    from strands_semantic_memory.archives import SqliteArchive

    with tempfile.TemporaryDirectory(prefix="ssm-writers-") as folder:
        path = str(Path(folder) / "shared.sqlite3")
        SqliteArchive(path, user_id="shared").close()
        children = [subprocess.Popen([sys.executable, "-m", "benchmarks.many_files", path, name, str(n * count),
                                      str(count), str(locomo)], stdout=subprocess.PIPE, text=True, cwd=_speed.ROOT)
                    for n, name in enumerate(("worker-a", "worker-b"))]  # fmt: skip
        reports = [json.loads((child.communicate()[0] or "{}").strip().splitlines()[-1]) for child in children]
        archive = SqliteArchive(path, user_id="shared")
        records, after = [], -1
        while batch := archive.records(after, 1000):
            records.extend(batch)
            after = batch[-1].index
        stats = archive.stats()
        archive.close()
    kept = {name: sum(r.session_id == name for r in records) for name in ("worker-a", "worker-b")}
    return {"count": count, "kept": kept, "duplicates": len(records) - len({r.text for r in records}),
            "pending": stats.pending, "failures": sum(r.get("failures", 0) for r in reports),
            "seconds": max(r.get("seconds", 0.0) for r in reports)}  # fmt: skip


def run(settings: Settings) -> dict[str, Any]:
    users, count = _speed.sized(settings, (200, 500), (20, 40), (3, 10))
    _speed.warm_model()
    with tempfile.TemporaryDirectory(prefix="ssm-files-") as folder:
        seed("SQLite", folder, users, settings.locomo)
        opened = open_at_once(Path(folder), users)
    return {"open": opened, "writers": two_writers(settings.locomo, count)}


def render(data: dict[str, Any], output: Path) -> str:
    o, w = data["open"], data["writers"]
    lost = {name: w["count"] - kept for name, kept in w["kept"].items()}
    return "\n\n".join([
        f"`benchmarks/many_files.py`. {o['users']} users' SQLite archives ({o['messages_per_user']} messages each) "
        "open at once in one process, each searched once. What bounds them: each open archive holds one SQLite "
        "connection (the file, its WAL and its shared-memory index: the descriptors below) and its vectors in "
        "process (4 bytes x 384 per chunk) beside SQLite's page cache (at most 2 MB per connection by default); "
        "nothing closes an idle archive, so both grow with the users held open, and the process's descriptor limit "
        f"({o['fd_limit']:,}) caps the users open at once at about that limit over the descriptors per user.",
        table(["users open", "memory per user", "descriptors per user", "after closing all"],
              [[o["users"], f"{o['bytes_per_user'] / 1024:,.0f} KiB", f"{o['fds_per_user']:.1f}",
                f"{o['fds_after_close']} descriptors, {o['bytes_after_close'] / 1024:,.0f} KiB held"]]),
        f"Two worker processes archiving {w['count']:,} messages each into one user's file at once, one `add` per "
        f"message ({w['seconds']:.1f} s for the slower):",
        table(["lost (worker a / b)", "duplicated", "failed adds", "still without vectors"],
              [[f"{lost['worker-a']} / {lost['worker-b']}", w["duplicates"], w["failures"], w["pending"]]]),
    ])  # fmt: skip


SECTION = Section("many_files", "Many users' files in one process, one file written by two processes", run, render)

if __name__ == "__main__":
    print(json.dumps(writer(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))))
