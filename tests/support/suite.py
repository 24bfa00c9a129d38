"""A pytest plugin for this suite: it says where it is, and fails a run that leaves a process behind.

Registered by the root ``conftest.py``. A test running longer than 30 s gets a line naming it (``-q`` prints only a
dot per test), SIGTERM becomes an interrupt (so fixtures stop the servers they started when a run is killed), and
at the end of the run a live child of pytest, or a PostgreSQL server under pytest's temporary folder, fails it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

HEARTBEAT_SECONDS = float(os.environ.get("SSM_TEST_HEARTBEAT", "30"))


class _Heartbeat:
    """Every 30 s of one test, a line saying which test runs and for how long (``-q`` prints a dot per test only)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._current: tuple[str, float] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="pytest-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        said: tuple[str, float] | None = None  # the test last named, and when it is due again
        while not self._stop.wait(min(1.0, HEARTBEAT_SECONDS / 5)):
            current = self._current
            reporter = self._config.pluginmanager.get_plugin("terminalreporter")
            if current is None or reporter is None:
                continue
            name, started = current
            due = said[1] if said is not None and said[0] == name else started + HEARTBEAT_SECONDS
            if time.monotonic() < due:
                continue
            said = (name, due + HEARTBEAT_SECONDS)
            capture = self._config.pluginmanager.get_plugin("capturemanager")
            line = f"\n[still running after {time.monotonic() - started:.0f} s] {name}"
            if capture is None:
                reporter.write_line(line)
            else:
                with capture.global_and_fixture_disabled():  # as pytest's live logging writes past the capture
                    reporter.write_line(line)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        self._current = (item.nodeid, time.monotonic())
        yield
        self._current = None

    def stop(self) -> None:
        self._stop.set()


def _children() -> list[tuple[int, str]]:
    """This process's live descendants (Linux ``/proc``): pid and command line."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)], commands[int(entry)] = int(fields[1]), command
    mine, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        grew, mine = bool(found), mine | found
    return [(pid, commands[pid]) for pid in sorted(mine - {os.getpid()})]


def _servers_under(folder: str) -> list[tuple[int, str]]:
    """PostgreSQL servers whose data folder is under ``folder`` (pgserver daemonizes them: they are not children)."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "postgres" in command and f" -D {folder}" in command:
            found.append((int(entry), command.strip()))
    return found


def pytest_configure(config: pytest.Config) -> None:
    """Start the heartbeat; turn SIGTERM into an interrupt, so fixtures stop their servers when a run is killed."""
    if not hasattr(config, "workerinput"):
        config._ssm_heartbeat = _Heartbeat(config)  # type: ignore[attr-defined]
        config.pluginmanager.register(config._ssm_heartbeat, "ssm-heartbeat")  # type: ignore[attr-defined]
    if threading.current_thread() is threading.main_thread():

        def interrupted(signum: int, frame: object) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        signal.signal(signal.SIGTERM, interrupted)


@pytest.hookimpl(trylast=True)  # after pytest's own: an interrupted run's fixtures are torn down first
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test left a process behind: a child of pytest, or a PostgreSQL under pytest's folders."""
    heartbeat = getattr(session.config, "_ssm_heartbeat", None)
    if heartbeat is not None:
        heartbeat.stop()
    basetemp = session.config._tmp_path_factory.getbasetemp() if hasattr(session.config, "_tmp_path_factory") else None
    deadline = time.monotonic() + 10.0
    while True:
        left = [(pid, cmd) for pid, cmd in _children() if "pytest-heartbeat" not in cmd]
        if basetemp is not None:
            left += _servers_under(str(basetemp))
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # a server stopping, a child exiting
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = "\n".join(f"  pid {pid}: {cmd[:200]}" for pid, cmd in left)
        if reporter is not None:
            reporter.write_line(f"\nprocesses left behind by the tests:\n{lines}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
