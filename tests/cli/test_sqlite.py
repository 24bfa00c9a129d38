"""The command line against real SQLite archives, each command in a child process as an operator runs it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from tests.support.cli import ROOT, run_cli
from tests.support.conversations import text_message
from tests.support.embedders import RenamedEmbedder

pytestmark = pytest.mark.subprocess

FACTS = [
    ("user", "My booking reference is KX-4471.", 1714557600),
    ("assistant", "Noted, KX-4471 for the Lisbon flight.", 1714557660),
    ("user", "I keep my card number 4111 1111 on file.", 1714644000),
    ("assistant", "Please do not share card numbers here.", 1714644060),
    ("user", "My sourdough starter is called Bubbles.", 1714730400),
]


@pytest.fixture
def archive(tmp_path, embedder):
    """A closed SQLite archive of five messages said on three days (the CLI opens it exclusively)."""
    path = tmp_path / "alice.sqlite3"
    memory = SemanticMemory(embedder=embedder, archive=SqliteArchive(path))
    memory.add([text_message(role, text) for role, text, _ in FACTS], timestamps=[t for *_, t in FACTS])
    memory.close()
    return path


def _json(result: subprocess.CompletedProcess[str]):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _one_error_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    """The error a failed command printed: one line, no traceback, with the expected exit code."""
    assert result.returncode == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_stats_as_a_table_and_as_json(archive):
    table = run_cli("stats", "--archive", archive, env={"COLUMNS": "400"})  # wide enough that no cell wraps
    assert table.returncode == 0, table.stderr
    assert "messages" in table.stdout and "5" in table.stdout and str(archive) in table.stdout
    narrow = run_cli("stats", "--archive", archive, env={"COLUMNS": "60"})  # a narrow terminal folds, never fails
    assert narrow.returncode == 0 and "messages" in narrow.stdout
    figures = _json(run_cli("stats", "--archive", archive, "--json"))
    assert (figures["message_count"], figures["pending_embedding_count"], figures["newest_index"]) == (5, 0, 4)
    assert (figures["location"], figures["archive"]) == (str(archive), "SqliteArchive")


def test_search_finds_the_fact_and_narrows_by_time(archive):
    hits = _json(run_cli("search", "what was my booking reference?", "--archive", archive, "--json", "--top-k", "2"))
    assert [h["index"] for h in hits][0] == 0 and len(hits) == 2
    assert hits[0]["message"] == text_message("user", FACTS[0][1])
    assert hits[0]["said_at"] == "2024-05-01T10:00:00.000000Z"
    later = _json(run_cli("search", "booking", "--archive", archive, "--json", "--since", "2024-05-02T00:00:00Z"))
    assert later and all(h["index"] >= 2 for h in later)
    until = _json(run_cli("search", "starter", "--archive", archive, "--json", "--until", "1714557700"))
    assert {h["index"] for h in until} <= {0, 1}
    table = run_cli("search", "sourdough", "--archive", archive)
    assert table.returncode == 0 and "Bubbles" in table.stdout and "2024-05-03" in table.stdout


def test_show_prints_one_message_exactly_as_archived(archive):
    line = _json(run_cli("show", "4", "--archive", archive, "--json"))
    assert line["message"] == text_message("user", FACTS[4][1])
    assert (line["index"], line["role"], line["said_at"]) == (4, "user", "2024-05-03T10:00:00.000000Z")
    table = run_cli("show", "4", "--archive", archive)
    assert "Bubbles" in table.stdout and "2024-05-03 10:00:00Z" in table.stdout
    missing = run_cli("show", "99", "--archive", archive)
    assert _one_error_line(missing, 1) == "error: no archived message with index 99"


def test_export_then_import_gives_a_new_archive_the_same_messages(archive, tmp_path):
    exported = tmp_path / "alice.jsonl"
    result = run_cli("export", "--archive", archive, "-o", exported)
    assert result.returncode == 0, result.stderr
    assert "exported 5 messages" in result.stderr
    to_stdout = run_cli("export", "--archive", archive)
    assert to_stdout.stdout == exported.read_text(encoding="utf-8")
    refused = run_cli("export", "--archive", archive, "-o", exported)
    assert _one_error_line(refused, 3).endswith("exists; pass --overwrite to replace it")

    copy = tmp_path / "copy.sqlite3"
    report = _json(run_cli("import", exported, "--archive", copy, "--json"))
    assert (report["lines"], report["added"], report["already_present"]) == (5, 5, 0)
    assert run_cli("export", "--archive", copy).stdout == exported.read_text(encoding="utf-8")  # times too
    again = _json(run_cli("import", exported, "--archive", copy, "--json"))
    assert (again["added"], again["already_present"]) == (0, 5)


def test_a_bad_line_is_named_and_nothing_is_archived(tmp_path, archive):
    lines = [json.dumps({"text": f"note {n}", "role": "user", "time": 1714557600 + n}) for n in range(30)]
    broken = [*lines[:16], '{"text": "note 16", "role": "robot"}', *lines[17:]]
    source = tmp_path / "notes.jsonl"
    source.write_text("\n".join(broken) + "\n", encoding="utf-8")
    target = tmp_path / "notes.sqlite3"

    failed = run_cli("import", source, "--archive", target, "--batch-size", "5")

    message = _one_error_line(failed, 1)
    assert message.startswith("error: line 17: ") and "'robot'" in message
    assert not target.exists()  # checked before the archive was even opened
    into_existing = run_cli("import", source, "--archive", archive, "--batch-size", "5")
    assert _one_error_line(into_existing, 1) == message
    assert _json(run_cli("stats", "--archive", archive, "--json"))["message_count"] == 5
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fixed = run_cli("import", source, "--archive", target, "--batch-size", "5")
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.strip() == "imported 30 lines: 30 added, 0 already archived"
    from_stdin = run_cli("import", "-", "--archive", target, stdin=source.read_text(encoding="utf-8"))
    assert from_stdin.stdout.strip() == "imported 30 lines: 0 added, 30 already archived"
    exported = [json.loads(line) for line in run_cli("export", "--archive", target).stdout.splitlines()]
    assert [e["message"]["content"][0]["text"] for e in exported] == [f"note {n}" for n in range(30)]


def test_forget_asks_first_and_reports_exactly_what_it_removed(archive):
    declined = run_cli("forget", "--query", "card number", "--archive", archive, stdin="n\n")
    assert declined.returncode == 3
    assert "Forget 2 messages for good (indices 2, 3)?" in declined.stderr
    assert "not confirmed; nothing was forgotten" in declined.stderr
    no_answer = run_cli("forget", "--query", "card number", "--archive", archive)
    assert no_answer.returncode == 3
    assert _json(run_cli("stats", "--archive", archive, "--json"))["message_count"] == 5

    confirmed = run_cli("forget", "--query", "card number", "--archive", archive, stdin="y\n")
    assert confirmed.returncode == 0, confirmed.stderr
    assert confirmed.stdout.strip() == "forgot 2 messages: 2, 3"
    wide = ["--range", "0-1", "--range", "4-4000000000", "--index", "40"]  # beyond the archive: nothing there
    removed = _json(run_cli("forget", *wide, "--archive", archive, "--yes", "--json"))
    assert removed == {"forgotten": [0, 1, 4]}
    nothing = run_cli("forget", "--index", "0", "--archive", archive, "--yes")
    assert nothing.returncode == 0 and "nothing was forgotten" in nothing.stdout
    assert _json(run_cli("stats", "--archive", archive, "--json"))["message_count"] == 0


def test_forget_needs_to_be_told_what(archive):
    for args in ([], ["--all", "--query", "x"], ["--range", "5-2"]):
        result = run_cli("forget", "--archive", archive, "--yes", *args)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr


def test_reembed_embeds_every_message_again(archive):
    result = _json(run_cli("reembed", "--archive", archive, "--json"))
    assert result == {"embedded": 5, "embedding_model": "sentence-transformers/all-MiniLM-L6-v2"}
    assert _json(run_cli("reembed", "--pending-only", "--archive", archive, "--json"))["embedded"] == 0
    hits = _json(run_cli("search", "bread starter", "--archive", archive, "--json", "--top-k", "1"))
    assert hits[0]["index"] == 4


def test_after_a_change_of_model_commands_say_what_to_do_and_reembed_does_it(tmp_path, embedder):
    path = tmp_path / "old.sqlite3"
    memory = SemanticMemory(embedder=RenamedEmbedder(embedder, "old-model"), archive=SqliteArchive(path))
    memory.add([text_message("user", text) for _, text, _ in FACTS])
    memory.close()

    refused = run_cli("stats", "--archive", path)
    message = _one_error_line(refused, 1)
    assert "embedded with 'old-model'" in message and "--embedding-model old-model" in message
    assert "reembed" in message
    doctor = run_cli("doctor", "--archive", path)
    assert doctor.returncode == 1 and "FAILED archive" in doctor.stdout
    done = run_cli("reembed", "--archive", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "embedded 5 messages with sentence-transformers/all-MiniLM-L6-v2"
    assert _json(run_cli("stats", "--archive", path, "--json"))["vector_count"] >= 5


def test_doctor_reports_each_part_in_one_line(archive, tmp_path):
    healthy = run_cli("doctor", "--archive", archive)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    lines = healthy.stdout.strip().splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["OK", "model"],
        ["OK", "onnx"],
        ["OK", "database"],
        ["OK", "archive"],
        ["OK", "backlog"],
    ]
    assert "384 dimensions" in lines[0] and "schema version 1" in lines[2] and "5 messages" in lines[3]
    checks = _json(run_cli("doctor", "--archive", archive, "--json"))
    assert [c["name"] for c in checks] == ["model", "onnx cache", "database", "archive", "backlog"]

    missing = run_cli("doctor", "--archive", tmp_path / "nope.sqlite3")
    assert missing.returncode == 1
    assert "FAILED database   no file at" in missing.stdout and "Fix: check the path" in missing.stdout
    no_model = run_cli("doctor", "--embedding-model", str(tmp_path / "no-such-model"))
    assert no_model.returncode == 1
    assert no_model.stdout.startswith("FAILED model") and "Fix:" in no_model.stdout


def test_doctor_finds_damaged_rows(archive):
    connection = sqlite3.connect(archive)
    connection.execute("UPDATE ssm_messages SET data = CAST('{not json' AS BLOB) WHERE idx = 3")
    connection.commit()
    connection.close()
    result = run_cli("doctor", "--archive", archive)
    assert result.returncode == 1
    line = next(line for line in result.stdout.splitlines() if "archive" in line.split()[:2])
    assert line.startswith("FAILED archive") and "1 damaged row" in line and "indices 3" in line
    assert "forget --index N" in line


HOLDER = """
import sys, time
from strands_semantic_memory.archives.sqlite import SqliteArchive
archive = SqliteArchive(sys.argv[1])
print("open", flush=True)
time.sleep(120)
"""


def test_an_archive_open_in_another_process_is_one_clear_error(archive):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(archive)],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        result = run_cli("stats", "--archive", archive)
        assert "open in another process" in _one_error_line(result, 1)
        doctor = run_cli("doctor", "--archive", archive)
        assert doctor.returncode == 1
        assert "FAILED database" in doctor.stdout and "open in another process" in doctor.stdout
    finally:
        holder.kill()
        holder.wait()


def test_errors_are_one_line_unless_debug_and_usage_errors_exit_2(archive, tmp_path):
    debug = run_cli("show", "99", "--archive", archive, "--debug")
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr and debug.stderr.strip().endswith("error: no archived message with index 99")
    both = run_cli("stats", "--archive", archive, "--dsn", "postgresql://x/y", "--user", "u")
    assert both.returncode == 2 and "not both" in both.stderr
    none = run_cli("stats")
    assert none.returncode == 2 and "name the archive" in none.stderr
    unknown = run_cli("stats", "--archive", archive, "--colour")
    assert unknown.returncode == 2
    absent = run_cli("stats", "--archive", tmp_path / "absent.sqlite3")
    assert (
        _one_error_line(absent, 1) == f"error: no archive file at '{tmp_path / 'absent.sqlite3'}' (import creates one)"
    )
    assert not (tmp_path / "absent.sqlite3").exists()
    from_env = run_cli("stats", "--json", env={"STRANDS_SEMANTIC_MEMORY_ARCHIVE": str(archive)})
    assert _json(from_env)["message_count"] == 5


def test_the_console_script_and_python_m_run_the_same_command():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.scripts]\nstrands-semantic-memory = "strands_semantic_memory.cli:main"\n' in pyproject
    assert '    "click>=8.1",\n    "rich>=13",\n]' in pyproject  # the end of the main dependencies
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("strands-semantic-memory, version ")
    script = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from strands_semantic_memory.cli import main; sys.argv[0] = 'x'; main()",
            "--help",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )
    assert script.returncode == 0 and "Commands:" in script.stdout
    for command in ("stats", "search", "show", "export", "import", "forget", "reembed", "doctor"):
        assert command in script.stdout


def test_long_operations_draw_a_progress_bar_on_a_terminal_and_nothing_otherwise(tmp_path):
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({"text": f"note {n}", "role": "user"}) + "\n" for n in range(120)))
    target = tmp_path / "many.sqlite3"
    quiet = run_cli("import", source, "--archive", target, "--batch-size", "40")
    assert quiet.returncode == 0 and quiet.stderr == ""  # not a terminal: no bar, no noise
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "120"}  # rich draws as on a terminal
    size = f"{source.stat().st_size / 1000:.1f}/{source.stat().st_size / 1000:.1f} kB"
    drawn = run_cli("reembed", "--archive", target, env=terminal)
    assert drawn.returncode == 0 and "embedding" in drawn.stderr and "120/120" in drawn.stderr
    resumed = run_cli("import", source, "--archive", target, env=terminal)
    assert "checking" in resumed.stderr and size in resumed.stderr  # the check: by bytes
    assert "importing" in resumed.stderr and "120/120" in resumed.stderr  # the import: by lines
    exported = run_cli("export", "--archive", target, "-o", tmp_path / "out.jsonl", env=terminal)
    assert "exporting" in exported.stderr and "120/120" in exported.stderr


def test_a_reader_that_goes_away_ends_an_export_quietly(archive):
    """``export | head``: the pipe's reader is gone; no traceback, no error line, exit code 1."""
    child = subprocess.Popen(
        [sys.executable, "-m", "strands_semantic_memory", "export", "--archive", str(archive)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # before the child writes anything
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 1
    assert stderr == ""


def test_a_file_is_one_user_s_and_forget_all_empties_it(tmp_path):
    source = tmp_path / "chats.jsonl"
    source.write_text(
        "".join(
            json.dumps({"text": text, "role": "user", "session_id": session}) + "\n"
            for text, session in [("the blue door", "chat-1"), ("the red door", "chat-2"), ("no session", None)]
        ),
        encoding="utf-8",
    )
    path = tmp_path / "alice.sqlite3"
    imported = _json(run_cli("import", source, "--archive", path, "--user", "alice", "--json"))
    assert imported["added"] == 3
    assert _json(run_cli("stats", "--archive", path, "--json"))["user_id"] == "alice"  # the file records its user
    other = run_cli("stats", "--archive", path, "--user", "bob")
    message = _one_error_line(other, 1)
    assert "'alice'" in message and "'bob'" in message

    scoped = _json(run_cli("search", "door", "--archive", path, "--session", "chat-2", "--json"))
    assert [(h["index"], h["session_id"]) for h in scoped] == [(1, "chat-2")]
    exported = run_cli("export", "--archive", path, "--session", "chat-1", "--session", "chat-2").stdout
    assert [json.loads(line)["session_id"] for line in exported.splitlines()] == ["chat-1", "chat-2"]
    lines = tmp_path / "plain.jsonl"
    lines.write_text('{"text": "from a transcript", "role": "user"}\n', encoding="utf-8")
    run_cli("import", lines, "--archive", path, "--session", "transcript-1")
    assert _json(run_cli("show", "3", "--archive", path, "--json"))["session_id"] == "transcript-1"

    declined = run_cli("forget", "--all", "--archive", path, stdin="no\n")
    assert declined.returncode == 3
    assert "Forget everything of user 'alice': 4 messages" in declined.stderr
    gone = run_cli("forget", "--all", "--archive", path, "--user", "alice", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.strip() == "forgot everything of user 'alice': 4 messages"
    assert _json(run_cli("stats", "--archive", path, "--json"))["message_count"] == 0
    assert b"blue door" not in path.read_bytes()


@pytest.mark.slow
def test_doctor_reports_a_damaged_onnx_cache_entry_and_its_repair(tmp_path):
    """A damaged graph cache entry is found before the model loads; the load exports it again (takes seconds)."""
    from pathlib import Path

    from strands_semantic_memory.embeddings._local import locate_model
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    load_target, model_id = locate_model("all-MiniLM-L6-v2")
    entry = GraphCache(tmp_path / "cache" / "onnx", Path(load_target), model_id).path
    entry.mkdir(parents=True)
    (entry / "entry.json").write_text("{truncated", encoding="utf-8")
    env = {"STRANDS_SEMANTIC_MEMORY_CACHE": str(tmp_path / "cache")}

    result = run_cli("doctor", env=env, timeout=600)

    assert result.returncode == 0, result.stdout + result.stderr
    cache = next(line for line in result.stdout.splitlines() if line.split()[1] == "onnx")
    assert cache.startswith(f"OK     onnx cache {entry} (was entry.json is unreadable")
    assert cache.endswith("exported again by this load)")
    again = run_cli("doctor", env=env)
    assert f"OK     onnx cache {entry} (valid)" in again.stdout
