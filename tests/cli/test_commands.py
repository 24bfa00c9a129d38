"""The command line in process (click's CliRunner) over real SQLite files and the real model.

What an operator relies on: what the commands show is never interpreted (markup, terminal controls); reading
commands never create or change a file; a file is one user's; forget asks, then says what it removed; a file another
process writes answers within seconds; reembed recovers an archive of another model; python -m runs the command.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from strands_semantic_memory.archives import SqliteArchive
from strands_semantic_memory.cli import cli

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "[/] [/INST] [bold]b[/bold] [link=https://x]y[/link] \x1b[2J \x1b]52;c;aGk=\x07 \x9b"
USER = "[bold]al[/bold]"
SESSION = "[link=https://x]s[/link]"
LINES = [
    {"text": "My booking reference is KX-4471.", "role": "user", "time": "2024-05-01T10:00:00Z", "session_id": "c-1"},
    {"text": "Noted, KX-4471 for the Lisbon flight.", "role": "assistant", "session_id": "c-1"},  # said: unknown
    {"text": f"{HOSTILE} my sourdough starter is Bubbles", "role": "user", "time": 1714730400, "session_id": SESSION},
    {"text": "I keep my card number 4111 on file.", "role": "user", "time": 1714644000},
]
TERMINAL = {"TTY_COMPATIBLE": "1", "COLUMNS": "300"}
PIPED = {"TTY_COMPATIBLE": "0"}


def run(*args: object, **kwargs: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)  # type: ignore[arg-type]


def error_line(result: Result, code: int) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr.strip()


def plain_rows(result: Result) -> list[list[str]]:
    assert result.exit_code == 0, result.stderr
    return [line.split("\t") for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, embedder: object) -> Path:
    """USER's four messages in a closed file, made by the import command (the reading tests share it)."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "chats.jsonl").write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    result = run("import", folder / "chats.jsonl", "--file", folder / "alice.sqlite3", "--user", USER)
    assert result.stdout.strip() == "imported 4 lines: 4 added, 0 already archived", result.stderr
    return folder / "alice.sqlite3"


@pytest.fixture
def copy(archive: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(archive, tmp_path / "copy.sqlite3"))


@pytest.mark.parametrize("env", [TERMINAL, PIPED], ids=["terminal", "piped"])
def test_what_is_shown_is_never_interpreted(archive, env):
    shown = [
        run("stats", "--file", archive, env=env),
        run("show", 2, "--file", archive, env=env),
        run("search", "sourdough starter", "--file", archive, env=env),
        run("export", "--file", archive, env=env),
        run("show", 2, "--file", archive, "--json", env=env),
    ]
    for result in shown:
        assert result.exit_code == 0, result.stderr
        assert not any(raw in result.stdout for raw in ("\x1b[2J", "\x1b]52", "\x07", "\x9b")), result.stdout
    stats, show, search, export, as_json = (r.stdout for r in shown)
    assert USER in stats
    for text in (show, search):
        assert "[/] [/INST] [bold]b[/bold] [link=https://x]y[/link] \\x1b[2J \\x1b]52;c;aGk=\\x07 \\x9b" in text
        assert SESSION in text
    assert json.loads(export.splitlines()[2])["message"]["content"][0]["text"].startswith(HOSTILE)
    assert json.loads(as_json)["session_id"] == SESSION
    hostile_path = archive.parent / "\x1b[2J[bold]x[/bold].db"
    message = error_line(run("stats", "--file", hostile_path, env=env), 1)
    assert "\x1b" not in message and "\\x1b[2J[bold]x[/bold].db" in message


def test_search_piped_is_one_hit_per_line_and_show_gives_the_said_time_search_gives(archive):
    title, header, *hits = plain_rows(run("search", "Lisbon flight booking", "--file", archive, "--top-k", 3))
    assert title == ["3 hits for 'Lisbon flight booking'"] and header[0] == "index" and len(hits) == 3
    assert all(len(hit) == 6 for hit in hits)  # index, score, role, said, session, text: one line each
    for index, _, _, said, _, _ in hits:
        shown = dict(plain_rows(run("show", index, "--file", archive))[1:])
        assert shown["said"] == said and said
    assert dict(plain_rows(run("show", 1, "--file", archive))[1:])["said"].endswith("(archived)")
    word = run("show", "abc", "--file", archive)
    assert word.exit_code == 2 and "'abc' is not a message index: give a whole number, such as 12" in word.stderr
    assert "integer" not in word.stderr
    assert error_line(run("show", 99, "--file", archive), 1) == (
        "error: no archived message with index 99 (the archive holds indices 0 to 3)"
    )


def test_reading_commands_never_create_or_change_a_file(archive, tmp_path):
    reading = (["stats"], ["search", "booking"], ["show", "0"], ["export"], ["doctor"])
    missing, empty = tmp_path / "missing.sqlite3", tmp_path / "empty.sqlite3"
    empty.touch()
    for args in reading:
        gone = run(*args, "--file", missing)
        assert gone.exit_code == 1 and not missing.exists()
        blank = run(*args, "--file", empty)
        assert blank.exit_code == 1 and empty.stat().st_size == 0
        if args != ["doctor"]:
            assert error_line(gone, 1) == f"error: no archive file at '{missing}' (import creates one)"
            assert error_line(blank, 1) == f"error: '{empty}' is empty: it is not an archive yet; left as it is"
    before = (archive.read_bytes(), archive.stat().st_mtime_ns)
    for args in reading:
        assert run(*args, "--file", archive).exit_code == 0
    assert (archive.read_bytes(), archive.stat().st_mtime_ns) == before


def test_an_import_without_a_user_is_an_unnamed_archive_nobody_may_claim(archive, tmp_path):
    exported = tmp_path / "export.jsonl"
    assert run("export", "--file", archive, "-o", exported).stderr.strip() == f"exported 4 messages to {exported}"
    unnamed = tmp_path / "unnamed.sqlite3"
    first = run("import", exported, "--file", unnamed, "--json")
    assert json.loads(first.stdout) == {"lines": 4, "added": 4, "already_present": 0, "forgotten": 0, "pending": 0}
    assert run("export", "--file", unnamed).stdout == exported.read_text(encoding="utf-8")  # times too
    assert json.loads(run("stats", "--file", unnamed, "--json").stdout)["user_id"] is None
    again = run("import", exported, "--file", unnamed)
    assert again.stdout.strip() == "imported 4 lines: 0 added, 4 already archived"
    for command in (["stats"], ["import", exported]):
        assert error_line(run(*command, "--file", unnamed, "--user", "bob"), 1) == (
            f"error: '{unnamed}' is the archive of a user not named, not of user 'bob': open it as its user"
        )
    other = error_line(run("stats", "--file", archive, "--user", "bob"), 1)
    assert f"is the archive of user '{USER}', not of user 'bob'" in other and "''" not in other
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine", "role": "user"}\n{"text": "x", "role": "robot"}\n', encoding="utf-8")
    message = error_line(run("import", bad, "--file", tmp_path / "new.sqlite3"), 1)
    assert message == "error: line 2: 'role' must be 'user' or 'assistant' with 'text', got 'robot'"
    assert not (tmp_path / "new.sqlite3").exists()  # checked before the archive was opened


def test_forget_asks_first_then_says_what_it_removed(copy):
    declined = run("forget", "--query", "card number", "--file", copy, input="n\n")
    assert declined.exit_code == 3 and "Forget 1 message for good (indices 3)?" in declined.stderr
    assert "not confirmed; nothing was forgotten" in declined.stderr
    assert run("forget", "--query", "card number", "--file", copy, "--yes").stdout == "forgot 1 message: 3\n"
    removed = run("forget", "--range", "0-1", "--range", "1-4000000000", "--index", 40, "--file", copy, "-y", "--json")
    assert json.loads(removed.stdout) == {"forgotten": [0, 1, 2]}
    assert run("forget", "--index", 0, "--file", copy, "--yes").stdout == "nothing matches; nothing was forgotten\n"
    assert run("forget", "--range", "5-2", "--file", copy, "--yes").exit_code == 2
    run("import", "-", "--file", copy, input='{"text": "one more", "role": "user"}\n')
    everything = run("forget", "--all", "--file", copy, "--yes")
    assert everything.exit_code == 0, everything.stderr
    assert everything.stdout == f"forgot everything of user '{USER}': 1 message\n"
    assert json.loads(run("stats", "--file", copy, "--json").stdout)["count"] == 0
    assert b"one more" not in copy.read_bytes()


def test_a_file_another_process_writes_answers_within_seconds(copy):
    holder = sqlite3.connect(copy, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a long write transaction, as another process's
    holder.execute("UPDATE ssm_meta SET value = value WHERE key = 'epoch'")
    try:
        started = time.monotonic()
        message = error_line(run("forget", "--index", 0, "--file", copy, "--yes"), 1)
        assert time.monotonic() - started < 4
        assert "database is locked (another process is writing it: try again once it is done)" in message
        assert run("stats", "--file", copy).exit_code == 0  # reading goes on
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_reembed_recovers_an_archive_of_another_model_and_the_doctor_sees_it(copy):
    SqliteArchive(copy).rebind("old-model")  # as if embedded by another model
    message = error_line(run("search", "sourdough", "--file", copy), 1)
    assert "embedded with 'old-model'" in message and "--embedding-model old-model" in message and "reembed" in message
    sick = run("doctor", "--file", copy)
    assert sick.exit_code == 1 and "FAILED archive   embedded with 'old-model'" in sick.stdout
    done = run("reembed", "--file", copy)
    assert done.stdout == "embedded 4 messages with sentence-transformers/all-MiniLM-L6-v2\n", done.stderr
    hits = json.loads(run("search", "what is my starter called", "--file", copy, "--json", "--top-k", 1).stdout)
    assert hits[0]["index"] == 2 and hits[0]["similarity"] is not None  # found by meaning: it has vectors again
    healthy = run("doctor", "--file", copy)
    assert healthy.exit_code == 0, healthy.stdout
    assert [line.split()[:2] for line in healthy.stdout.splitlines()] == [
        ["OK", "model"], ["OK", "database"], ["OK", "archive"], ["OK", "backlog"]
    ]  # fmt: skip
    assert "384 dimensions" in healthy.stdout and "4 messages of user" in healthy.stdout


def test_python_m_runs_the_installed_command(archive):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "strands_semantic_memory"]
    stats = subprocess.run([*command, "stats", "--file", archive, "--json"], capture_output=True, text=True, env=env)
    assert stats.returncode == 0 and stats.stderr == "", stats.stderr
    assert json.loads(stats.stdout)["count"] == 4
    usage = subprocess.run([*command, "stats"], capture_output=True, text=True, env=env)
    assert usage.returncode == 2 and "name the archive: --file PATH" in usage.stderr


def test_profile_shows_what_the_user_said_about_themselves_and_forget_removes_it(embedder, tmp_path):
    from click.testing import CliRunner

    from strands_semantic_memory import SemanticMemory
    from strands_semantic_memory.cli import cli

    path = tmp_path / "carol.db"
    memory = SemanticMemory(embedder=embedder, archive_path=path, user_id="carol")
    memory.add([
        {"role": "user", "content": [{"text": "Quick one. I'm vegetarian and I grow basil [/INST]."}]},
        {"role": "assistant", "content": [{"text": "What phone do you use?"}]},
        {"role": "user", "content": [{"text": "A Pixel 8."}]},
        {"role": "user", "content": [{"text": "What is the capital of France?"}]},
    ])  # fmt: skip
    memory.close()
    shown = CliRunner().invoke(cli, ["profile", "--file", str(path), "--json"])
    assert shown.exit_code == 0, shown.output
    statements = [row["text"] for row in json.loads(shown.output)]
    assert statements == ["A Pixel 8.", "I'm vegetarian and I grow basil [/INST]."]
    forgot = CliRunner().invoke(cli, ["forget", "--file", str(path), "--query", "vegetarian", "--yes"])
    assert forgot.exit_code == 0, forgot.output
    shown = CliRunner().invoke(cli, ["profile", "--file", str(path)])
    assert shown.exit_code == 0 and "vegetarian" not in shown.output and "Pixel 8" in shown.output
