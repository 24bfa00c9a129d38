"""``import`` and ``export`` in process (click's CliRunner), over real SQLite files and the real model.

What a person loading transcripts relies on: an export imports into a new file for a user with every message's
bytes, times, session and role; an import that failed part way (the archive failing during a batch's commit)
completes when run again, without duplicates; the check and the import show progress on a terminal.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.cli._commands import cli
from tests.support.conversations import text_message

MESSAGES = [
    (text_message("user", "My booking reference is KX-4471. Café ☕, 日本語"), 1714557600.123456, "chat-1"),
    (text_message("assistant", "Noted.\n  Two spaces, a tab\t and a trailing space "), None, "chat-1"),
    (text_message("user", "ok"), 1714557700.5, None),
    (text_message("user", "ok"), 1714557700.5, None),  # the same words at the same time: two messages
    (
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00\xff"}}}]},
        1714557800,
        "chat-2",
    ),
    (text_message("assistant", "a lone surrogate \ud800 and a NUL \x00"), 1714557900, "chat-2"),
]


def invoke(*args: object, **kwargs: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=True, **kwargs)  # type: ignore[arg-type]


def records(path):
    archive = SqliteArchive(path)
    try:
        bounds = archive.bounds()
        assert bounds is not None
        found = archive.get(list(range(bounds[0], bounds[1] + 1)))
        return [found[i] for i in sorted(found)], archive.user_id
    finally:
        archive.close()


@pytest.fixture
def source(tmp_path, embedder):
    """A closed SQLite file of alice's: two sessions and none, said times and none, a hole where one was forgotten."""
    path = tmp_path / "source.sqlite3"
    memory = SemanticMemory(embedder=embedder, archive=SqliteArchive(path, user_id="alice"), clock=lambda: 1.7e9)
    for message, said_at, session in MESSAGES[:2]:
        memory.add([message], timestamps=[said_at], session_id=session)
    memory.add([text_message("user", "forgotten")])
    memory.forget([2])
    for message, said_at, session in MESSAGES[2:]:
        memory.add([message], timestamps=[said_at], session_id=session)
    memory.close()
    return path


def test_an_export_imports_into_a_new_file_with_its_bytes_times_sessions_and_roles(source, tmp_path):
    exported = tmp_path / "alice.jsonl"
    assert invoke("export", "--archive", source, "-o", exported).exit_code == 0
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert {line["version"] for line in lines} == {1}
    assert [(line["session_id"], line["role"]) for line in lines] == [(s, m["role"]) for m, _, s in MESSAGES]

    copy = tmp_path / "copy.sqlite3"
    result = invoke("import", exported, "--archive", copy, "--user", "alice", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == len(MESSAGES)
    (before, _), (after, user) = records(source), records(copy)
    assert user == "alice"
    assert [r.index for r in after] == list(range(len(MESSAGES)))  # the copy numbers them afresh
    for old, new in zip(before, after, strict=True):
        assert new.data == old.data  # byte for byte
        assert (new.role, new.session_id, new.said_at, new.archived_at) == (
            old.role,
            old.session_id,
            old.said_at,
            old.archived_at,
        )
    again = invoke("export", "--archive", copy, "-o", "-")
    assert [{**json.loads(line), "index": 0} for line in again.stdout.splitlines()] == [
        {**line, "index": 0} for line in lines
    ]
    twice = invoke("import", exported, "--archive", copy, "--json")
    assert (json.loads(twice.stdout)["added"], json.loads(twice.stdout)["already_present"]) == (0, len(MESSAGES))


def test_an_import_that_failed_during_a_commit_resumes_without_duplicates(tmp_path, monkeypatch):
    transcript = tmp_path / "transcript.jsonl"
    lines = [
        {"text": "ok" if n % 5 == 0 else f"turn {n}", "role": ("user", "assistant")[n % 2], "time": 1714557600 + n}
        for n in range(23)
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    target = tmp_path / "bob.sqlite3"
    add, calls = SqliteArchive.add, []

    def full_disk(self, batch):
        calls.append(len(batch))
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return add(self, batch)

    monkeypatch.setattr(SqliteArchive, "add", full_disk)
    failed = invoke("import", transcript, "--archive", target, "--user", "bob", "--session", "t-1", "--batch-size", 5)
    assert isinstance(failed.exception, OSError) and calls == [5, 5, 5]
    assert len(records(target)[0]) == 10  # two batches committed; the third's commit failed whole
    monkeypatch.setattr(SqliteArchive, "add", add)

    resumed = invoke("import", transcript, "--archive", target, "--user", "bob", "--session", "t-1", "--json")

    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert (summary["lines"], summary["added"], summary["already_present"]) == (23, 13, 10)
    archived, user = records(target)
    assert user == "bob"
    assert [(json.loads(r.data)["content"][0]["text"], r.role, r.said_at, r.session_id) for r in archived] == [
        (line["text"], line["role"], float(line["time"]), "t-1") for line in lines
    ]


def test_a_bad_line_changes_nothing_and_progress_is_drawn_on_a_terminal(tmp_path):
    transcript = tmp_path / "long.jsonl"
    lines = [json.dumps({"text": f"note {n}", "role": "user", "session_id": f"s{n // 10}"}) for n in range(40)]
    transcript.write_text("\n".join([*lines[:33], '{"text": "x", "role": "user", "time": "soon"}']), encoding="utf-8")
    target = tmp_path / "carol.sqlite3"
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "120"}

    bad = invoke("import", transcript, "--archive", target, "--batch-size", 8, env=terminal)

    assert "line 34: 'time' is not an ISO 8601 time: 'soon'" in str(bad.exception)
    assert "checking" in bad.stderr and "importing" not in bad.stderr
    assert not target.exists()

    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = invoke("import", transcript, "--archive", target, "--batch-size", 8, env=terminal)

    assert done.exit_code == 0, done.output
    assert "checking" in done.stderr and "importing" in done.stderr and "40/40" in done.stderr
    assert done.stdout.strip() == "imported 40 lines: 40 added, 0 already archived"
    quiet = invoke("import", transcript, "--archive", target)
    assert quiet.exit_code == 0 and quiet.stderr == ""  # not a terminal: no bar
