"""docs/operations.md's "Command line" section runs as written: every command example, in order, in a shell.

The page's ``chats.jsonl`` is written to a fresh folder; each ```` ```bash ```` fence of the section then runs
there, command by command, through a ``strands-semantic-memory`` executable on the PATH (the console script as
pip installs it: ``python -m strands_semantic_memory``), and each must succeed. The PostgreSQL fence runs as one
script against the test server: its example DSN is replaced by the server's, its user by a fresh one. What the
prose says a command prints is checked too, and the exit code table against ``EXIT_CODES``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from strands_semantic_memory.cli import EXIT_CODES
from tests.support.archives import new_user_id
from tests.support.cli import ROOT

pytestmark = pytest.mark.subprocess

PAGE = ROOT / "docs" / "operations.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXAMPLE_DSN = "postgresql://app:secret@db.example:5432/agents"


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("\n## Command line\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def fences(language: str) -> list[tuple[str, str]]:
    """``(info after the language, body)`` of each fence of ``language`` in the section."""
    return [(info.strip(), body) for lang, info, body in FENCE.findall(section()) if lang == language]


def commands(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture
def shell(tmp_path):
    """A folder holding the page's chats.jsonl, and how to run a shell command there as an operator would."""
    (chats,) = [body for info, body in fences("json") if info == 'title="chats.jsonl"']
    (tmp_path / "chats.jsonl").write_text(chats, encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "strands-semantic-memory"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m strands_semantic_memory "$@"\n')
    script.chmod(0o755)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("STRANDS_SEMANTIC_MEMORY_")}
    if "STRANDS_SEMANTIC_MEMORY_CACHE" in os.environ:
        environment["STRANDS_SEMANTIC_MEMORY_CACHE"] = os.environ["STRANDS_SEMANTIC_MEMORY_CACHE"]
    environment.update(PYTHONPATH=str(ROOT), PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=600,
        )

    run.folder = tmp_path  # type: ignore[attr-defined]
    return run


def test_every_sqlite_example_runs_as_written(shell):
    examples = [body for _, body in fences("bash") if "STRANDS_SEMANTIC_MEMORY_DSN" not in body]
    assert len(examples) >= 5
    ran = []
    for body in examples:
        for command in commands(body):
            result = shell(command)
            assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
            ran.append((command, result.stdout))
    said = dict(ran)
    names = {c.split()[1] for c, _ in ran}
    assert names == {"stats", "search", "show", "export", "import", "forget", "reembed", "doctor"}
    second_import = json.loads(said["strands-semantic-memory import chats.jsonl --archive alice.sqlite3 --json"])
    assert (second_import["added"], second_import["already_present"]) == (0, 6)  # "0 added, 6 already archived"
    chat_1 = (shell.folder / "chat-1.jsonl").read_text(encoding="utf-8").splitlines()  # type: ignore[attr-defined]
    assert [json.loads(line)["session_id"] for line in chat_1] == ["chat-1", "chat-1"]
    assert "TP1947" in said['strands-semantic-memory search "travel plans" --archive alice.sqlite3 --session chat-2']
    assert said["strands-semantic-memory forget --all --archive copy.sqlite3 --user alice --yes"].strip() == (
        "forgot everything of user 'alice': 3 messages"
    )
    forgot = said['strands-semantic-memory forget --query "card number" --archive alice.sqlite3 --yes']
    assert forgot.strip() == "forgot 2 messages: 4, 5"  # as the forget section quotes it
    assert "TP1947" in said['strands-semantic-memory search "which flight am I on?" --archive alice.sqlite3 --top-k 3']
    march = (shell.folder / "march-9-on.jsonl").read_text(encoding="utf-8").splitlines()  # type: ignore[attr-defined]
    assert [json.loads(line)["index"] for line in march] == [2, 3, 4, 5]


def test_the_postgresql_example_runs_against_a_server(shell, pg_uri):
    (body,) = [body for _, body in fences("bash") if "STRANDS_SEMANTIC_MEMORY_DSN" in body]
    assert EXAMPLE_DSN in body and "--user alice" in body
    script = body.replace(EXAMPLE_DSN, pg_uri).replace("--user alice", f"--user {new_user_id('alice')}")
    result = shell(script)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "forgot 2 messages: 4, 5" in result.stdout
    assert "': 4 messages" in result.stdout.splitlines()[-1]  # forget --all, after the query took two
    assert "FAILED" not in result.stdout


def test_the_exit_codes_table_is_the_command_s():
    rows = re.findall(r"^\| (\d+) \| ", section(), re.MULTILINE)
    assert [int(code) for code in rows] == sorted(EXIT_CODES)


def test_the_readme_points_to_the_command_line():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/operations.md#command-line" in readme
    assert Path(PAGE).is_file()
