"""History export and import (engine.export_history / history_line / import_history / check_history), real model.

What an operator relies on: an export imports into a new archive byte for byte with its times, sessions and roles;
an import run again (after a failure part way) adds only what is missing, because a line's identity is its id, its
tracking id, or its session, given times, bytes and occurrence (never its place); a bad line is named before
anything of its batch is written, and check_history names it before anything is.
"""

from __future__ import annotations

import json

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.engine import (
    HISTORY_VERSION,
    check_history,
    export_history,
    history_line,
    import_history,
)
from strands_semantic_memory.errors import HistoryLineError

TRICKY = [
    {"role": "user", "content": [{"text": "Booking KX-4471. Café ☕, 日本語 [bold]x[/bold]"}]},
    {"role": "assistant", "content": [{"text": "Noted."}], "tracking_id": "strands-id-1"},
    {"role": "user", "content": [{"text": "a lone surrogate \ud800, a NUL \x00, ESC \x1b[2J, CSI \x9b, LS \u2028"}]},
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {"__bytes_encoded__": 1}}}],
    },
    {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00\xff"}}}]},
    {"role": "assistant", "content": [{"json": {"n": 1.5, "big": 2**70}}]},
]
"""Messages whose bytes are easy to change on the way."""


def text(words: str, role: str = "user") -> dict:
    return {"role": role, "content": [{"text": words}]}


@pytest.fixture
def memory(embedder):
    memory = SemanticMemory(embedder=embedder, embedding="background", clock=lambda: 1_700_000_000.25)
    yield memory
    memory.close()


@pytest.fixture
def other(embedder):
    memory = SemanticMemory(embedder=embedder, embedding="background")
    yield memory
    memory.close()


def test_an_export_imports_into_a_new_archive_byte_for_byte(memory, other):
    memory.add(TRICKY[:4], said_at=[1714557600.123456, None, 1714557700.5, 5], session_id="chat-1")
    memory.add(TRICKY[4:])
    memory.add([text("forgotten"), text("after the hole")], session_id="x" * 300)  # kept as its sha256: digest
    memory.forget([6])
    memory._add_records(memory.new_records([{"role": "stored", "content": [{"text": "k"}]}], roles=("stored",)))
    lines = list(export_history(memory))

    report = import_history(other, lines)

    assert (report.lines, report.added, report.already_present, report.forgotten) == (8, 8, 0, 0)
    for before, after in zip(memory.records(), other.records(), strict=True):
        assert after.data == before.data and after.message == before.message
        assert (after.role, after.session_id) == (before.role, before.session_id)
        assert after.archived_at == pytest.approx(before.archived_at, abs=1e-6)
        assert after.said_at == (None if before.said_at is None else pytest.approx(before.said_at, abs=1e-6))
    fields = json.loads(lines[0])
    assert list(fields) == ["version", "index", "session_id", "role", "said_at", "archived_at", "message"]
    assert (fields["version"], HISTORY_VERSION, fields["said_at"]) == (1, 1, "2024-05-01T10:00:00.123456Z")
    unsafe = lines[2]
    assert unsafe.encode("utf-8") and not any(c in unsafe for c in "\x00\x1b\x9b\u2028\ud800")  # shows as text
    assert json.loads(unsafe)["message"] == TRICKY[2]
    assert [json.loads(line)["index"] for line in export_history(memory, start=1, end=3)] == [1, 2, 3]
    assert [json.loads(line)["index"] for line in export_history(memory, since=6, sessions="chat-1")] == [0, 1, 2]


def test_a_line_s_identity_is_its_id_tracking_id_or_session_times_bytes_and_occurrence(memory):
    transcript = [{"text": t, "role": "user", "session_id": "s", "time": 100 + n} for n, t in enumerate("abcd")]
    assert import_history(memory, transcript).added == 4
    inserted = [
        *transcript[:2],
        {"text": "new", "role": "assistant", "session_id": "s", "time": 101.5},
        *transcript[2:],
    ]
    report = import_history(memory, inserted)  # a line inserted in the middle moves no other line's identity
    assert (report.added, report.already_present) == (1, 4)
    same_time = {"text": "a", "role": "user", "session_id": "s", "time": "1970-01-01T00:01:40Z"}
    assert import_history(memory, [same_time]).added == 0  # the same time written otherwise: the same line
    assert import_history(memory, [{**transcript[0], "session_id": "t"}]).added == 1  # another session
    twice = [{"text": "ok", "role": "user"}] * 2
    assert import_history(memory, twice).added == 2  # the same words twice are two messages
    assert import_history(memory, twice).added == 0
    ids = import_history(memory, [{"text": "same", "role": "user", "id": i} for i in ("x-1", "x-1", 7)])
    assert (ids.added, ids.already_present) == (2, 1) and ids.indices[0] == ids.indices[1]
    memory.add([{**text(f"turn {n}"), "tracking_id": f"tid-{n}"} for n in range(3)])  # an agent's own messages
    own = [line for line in export_history(memory) if "tid-" in line]
    assert (import_history(memory, own).added, import_history(memory, own).already_present) == (0, 3)


def test_an_import_that_failed_part_way_resumes_without_duplicates(memory, monkeypatch):
    """The archive fails during the third batch's transaction (a full disk): that batch is not archived, the first
    two are; the same import run again adds exactly the rest, each line once, in order."""
    lines = [json.dumps({"text": "ok" if n % 3 else f"note {n}", "role": "user", "session_id": "t"}) for n in range(17)]
    add, calls, seen = memory.archive.add, [], []

    def failing(records):
        calls.append(len(records))
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return add(records)

    monkeypatch.setattr(memory.archive, "add", failing)
    with pytest.raises(OSError, match="No space"):
        import_history(memory, lines, batch_size=4, progress=seen.append)
    assert len(memory) == 8 and [p.lines for p in seen] == [4, 8]
    monkeypatch.setattr(memory.archive, "add", add)

    report = import_history(memory, lines, batch_size=4)

    assert (report.lines, report.added, report.already_present) == (17, 9, 8)
    assert [r.message["content"][0]["text"] for r in memory.records()] == [json.loads(x)["text"] for x in lines]


BAD_LINES = [
    ("{not json", "is not JSON"),
    ('{"version": 2, "text": "hi", "role": "user"}', "is history format version 2; this release reads version 1"),
    ('{"text": "hi", "role": "user", "txt": 1}', "unknown field(s) 'txt'"),
    ('{"text": "hi", "role": "robot"}', "'role' must be 'user' or 'assistant' with 'text', got 'robot'"),
    ('{"message": {"role": "user", "content": "x"}}', "the message's 'content' must be a list"),
    ('{"text": "hi", "role": "user", "time": "yesterday"}', "'time' is not an ISO 8601 time"),
    ('{"text": "hi", "role": "user", "session_id": 3}', "'session_id' must be a non-empty string or null"),
    (b'{"text": "\xff", "role": "user"}', "is not UTF-8"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_LINES, ids=[reason for _, reason in BAD_LINES])
def test_a_bad_line_is_named_before_anything_of_its_batch_is_written(memory, bad, reason):
    good = [json.dumps({"text": f"fine {n}", "role": "user"}) for n in range(5)]
    with pytest.raises(HistoryLineError) as raised:
        check_history([*good, bad])
    assert raised.value.line == 6 and len(memory) == 0
    with pytest.raises(HistoryLineError, match="^line 6: ") as raised:
        import_history(memory, [*good, bad, good[0]], batch_size=4)
    assert reason in str(raised.value)
    assert len(memory) == 4  # the first batch; the fifth line shared the bad line's batch


def test_lines_take_the_import_s_session_their_times_and_a_forgotten_message_stays_forgotten(memory):
    lines = [
        {"text": "no session named", "role": "user", "time": "2024-05-01T11:30:00+02:00"},
        {"text": "explicitly none", "role": "user", "session_id": None, "said_at": 1714555800},
        {"text": "kept time", "role": "assistant", "session_id": "chat-1", "archived_at": 5},
        "   ",
    ]
    assert check_history(lines, session_id="transcript-7") == 3
    import_history(memory, lines, session_id="transcript-7")
    records = memory.records()
    assert [(r.session_id, r.said_at, r.archived_at) for r in records] == [
        ("transcript-7", 1714555800.0, 1_700_000_000.25),
        (None, 1714555800.0, 1_700_000_000.25),
        ("chat-1", None, 5.0),
    ]
    memory.forget([0])
    again = import_history(memory, lines, session_id="transcript-7")
    assert (again.added, again.already_present, again.forgotten, again.indices[0]) == (0, 2, 1, None)
    assert history_line(records[2]).startswith('{"version":1,"index":2,"session_id":"chat-1","role":"assistant"')
