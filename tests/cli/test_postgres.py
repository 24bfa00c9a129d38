"""The command line against a real PostgreSQL (pgserver, with pgvector), each command in a child process."""

from __future__ import annotations

import json
import subprocess

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from tests.support.archives import new_user_id
from tests.support.cli import run_cli
from tests.support.conversations import text_message
from tests.support.embedders import RenamedEmbedder

pytestmark = pytest.mark.subprocess

TEXTS = [
    "My booking reference is KX-4471.",
    "Noted, KX-4471 for the Lisbon flight.",
    "I keep my card number 4111 1111 on file.",
    "Please do not share card numbers here.",
    "My sourdough starter is called Bubbles.",
]


def _user_with(pg_uri, embedder, texts, prefix="alice"):
    user = new_user_id(prefix)
    memory = SemanticMemory(embedder=embedder, archive=PostgresArchive(pg_uri, user))
    memory.add([text_message("user" if n % 2 == 0 else "assistant", t) for n, t in enumerate(texts)])
    memory.close()
    return user


def _json(result: subprocess.CompletedProcess[str]):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_stats_search_show_and_export_read_one_user(pg_uri, embedder):
    alice = _user_with(pg_uri, embedder, TEXTS)
    bob = _user_with(pg_uri, embedder, ["Bob's secret is the blue door."], "bob")
    where = ["--dsn", pg_uri, "--user", alice]

    assert _json(run_cli("stats", *where, "--json"))["message_count"] == 5
    assert _json(run_cli("stats", "--dsn", pg_uri, "--user", bob, "--json"))["message_count"] == 1
    hits = _json(run_cli("search", "booking reference", *where, "--json", "--top-k", "3"))
    assert hits[0]["index"] == 0 and all("blue door" not in json.dumps(h) for h in hits)
    assert _json(run_cli("show", "4", *where, "--json"))["message"] == text_message("user", TEXTS[4])
    lines = run_cli("export", *where).stdout.splitlines()
    assert [json.loads(line)["message"]["content"][0]["text"] for line in lines] == TEXTS


def test_import_into_a_user_from_the_environment_resumes_and_forget_reports_indices(pg_uri, embedder, tmp_path):
    source = tmp_path / "chats.jsonl"
    source.write_text(
        "\n".join(json.dumps({"text": t, "role": "user", "session_id": "chat-1"}) for t in TEXTS) + "\n",
        encoding="utf-8",
    )
    env = {"STRANDS_SEMANTIC_MEMORY_DSN": pg_uri, "STRANDS_SEMANTIC_MEMORY_USER": new_user_id("carol")}

    first = _json(run_cli("import", source, "--json", "--batch-size", "2", env=env))
    again = _json(run_cli("import", source, "--json", env=env))

    assert (first["added"], again["added"], again["already_present"]) == (5, 0, 5)
    removed = _json(run_cli("forget", "--query", "card", "--yes", "--json", env=env))
    assert removed == {"forgotten": [2, 3]}
    assert _json(run_cli("stats", "--json", env=env))["message_count"] == 3


def test_after_a_change_of_model_reembed_rebinds_the_user(pg_uri, embedder):
    user = new_user_id("old-model")
    memory = SemanticMemory(embedder=RenamedEmbedder(embedder, "old-model"), archive=PostgresArchive(pg_uri, user))
    memory.add([text_message("user", t) for t in TEXTS])
    memory.close()
    where = ["--dsn", pg_uri, "--user", user]

    refused = run_cli("search", "booking", *where)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "embedded with 'old-model'" in refused.stderr and "reembed" in refused.stderr
    assert _json(run_cli("reembed", *where, "--json"))["embedded"] == 5
    assert _json(run_cli("search", "bread starter", *where, "--json", "--top-k", "1"))[0]["index"] == 4


def test_doctor_checks_the_server_and_names_the_fix_when_it_cannot_reach_it(pg_uri, embedder):
    user = _user_with(pg_uri, embedder, TEXTS[:2])
    healthy = run_cli("doctor", "--dsn", pg_uri, "--user", user)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    database = next(line for line in healthy.stdout.splitlines() if line.split()[1] == "database")
    assert "PostgreSQL" in database and "pgvector" in database and "schema version 1" in database
    assert "2 messages" in healthy.stdout

    unreachable = run_cli("doctor", "--dsn", "postgresql://nobody:secret@127.0.0.1:1/none", "--user", "x")
    assert unreachable.returncode == 1
    database = next(line for line in unreachable.stdout.splitlines() if line.split()[1] == "database")
    assert database.startswith("FAILED database   cannot reach postgresql://nobody:***@127.0.0.1:1/none")
    assert "Fix: check the DSN" in database and "secret" not in unreachable.stdout + unreachable.stderr


def test_forget_all_removes_one_user_and_leaves_the_others(pg_uri, embedder):
    alice = _user_with(pg_uri, embedder, TEXTS)
    bob = _user_with(pg_uri, embedder, ["Bob's secret is the blue door."], "bob")

    gone = _json(run_cli("forget", "--all", "--dsn", pg_uri, "--user", alice, "--yes", "--json"))

    assert gone == {"user_id": alice, "forgotten_count": 5}
    assert _json(run_cli("stats", "--dsn", pg_uri, "--user", alice, "--json"))["message_count"] == 0
    assert _json(run_cli("stats", "--dsn", pg_uri, "--user", bob, "--json"))["message_count"] == 1
