"""The command line over one user's memory in PostgreSQL (pgserver); skipped until PostgresArchive exists."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner, Result

from strands_semantic_memory.cli import cli

pytest.importorskip("strands_semantic_memory.archives.postgres")


def run(*args: object, **kwargs: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)  # type: ignore[arg-type]


def test_import_search_forget_one_user_and_leave_the_others(pg_uri, embedder, tmp_path):
    source = tmp_path / "chats.jsonl"
    texts = ["My booking reference is KX-4471.", "Noted, KX-4471 for Lisbon.", "My card number is 4111 1111."]
    source.write_text("".join(json.dumps({"text": t, "role": "user", "session_id": "c"}) + "\n" for t in texts))
    alice, bob = ({"STRANDS_SEMANTIC_MEMORY_DSN": pg_uri, "STRANDS_SEMANTIC_MEMORY_USER": f"{name}-{uuid.uuid4().hex}"}
                  for name in ("alice", "bob"))  # fmt: skip

    assert json.loads(run("import", source, "--json", env=alice).stdout)["added"] == 3
    assert json.loads(run("import", source, "--json", "--batch-size", 2, env=alice).stdout)["already_present"] == 3
    assert json.loads(run("import", source, "--json", env=bob).stdout)["added"] == 3
    hits = json.loads(run("search", "booking reference", "--json", "--top-k", 1, env=alice).stdout)
    assert hits[0]["message"]["content"][0]["text"] == texts[0]
    assert json.loads(run("forget", "--query", "card number", "--yes", "--json", env=alice).stdout) == {
        "forgotten": [2]
    }
    doctor = run("doctor", env=alice)
    assert doctor.exit_code == 0 and "OK     database  PostgreSQL" in doctor.stdout, doctor.stdout
    assert run("forget", "--all", "--yes", env=alice).stdout.endswith(": 2 messages\n")
    assert json.loads(run("stats", "--json", env=alice).stdout)["count"] == 0
    assert json.loads(run("stats", "--json", env=bob).stdout)["count"] == 3
