"""History export and import (engine.export_history / import_history / check_history) on every archive, with the
real model.

What an operator relies on: an export imports into a new archive byte for byte, with its times, sessions and roles;
an import run again (after a failure halfway, say) adds only what is missing, because a line's identity is its
session, its given times, its bytes and their occurrence (never its place or an archive index); a bad line is named
by its number before anything of its batch is written, and check_history names it before anything is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from strands_semantic_memory.engine import (
    HISTORY_VERSION,
    ImportProgress,
    check_history,
    export_history,
    history_line,
    import_history,
)
from strands_semantic_memory.errors import ConfigurationError, HistoryLineError
from tests.support.conversations import text_message

TRICKY = [
    {"role": "user", "content": [{"text": "My booking reference is KX-4471. Café ☕, naïve, 日本語"}]},
    {"role": "assistant", "content": [{"text": "Noted."}], "tracking_id": "strands-id-1"},
    {"role": "user", "content": [{"text": "a lone surrogate \ud800 and a NUL \x00 inside"}]},
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"__bytes_encoded__": True, "x": 1}}}],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "t1",
                    "status": "success",
                    "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00\xff"}}}],
                }
            }
        ],
    },
    {"role": "assistant", "content": [{"text": "numbers: "}, {"json": {"n": 1.5, "big": 2**70}}]},
]
"""Messages whose bytes are easy to change on the way: non-ASCII, a lone surrogate, NUL, a dict that looks like
Strands' bytes marker, real bytes, numbers."""

SAID = [1714557600.123456, None, 1714557700.5, 1714557800, None, 1.25]


def _lines(memory, **kwargs) -> list[str]:
    return [history_line(record) for record in export_history(memory, **kwargs)]


def _without_index(line: str) -> dict:
    fields = json.loads(line)
    del fields["index"]
    return fields


def test_an_export_imports_into_a_new_archive_byte_for_byte(make_memory):
    source = make_memory(clock=lambda: 1_700_000_000.123457)
    source.add(TRICKY[:4], timestamps=SAID[:4], session_id="chat-1")
    source.add(TRICKY[4:], timestamps=SAID[4:])  # no session
    source.add([text_message("user", "forgotten soon")], session_id="chat-2")
    source.add([text_message("assistant", "after the hole")], timestamps=[1714557900], session_id="chat-2")
    source.forget([len(TRICKY)])  # a hole: the new archive's indices differ, nothing else may
    exported = _lines(source)
    assert len(exported) == len(TRICKY) + 1

    target = make_memory()
    report = import_history(target, exported)

    assert (report.lines, report.added, report.already_present) == (len(exported), len(exported), 0)
    assert [_without_index(line) for line in _lines(target)] == [_without_index(line) for line in exported]
    for old, new in zip(source.indices, target.indices, strict=True):
        before, after = source.record(old), target.record(new)
        assert after.data == before.data
        assert after.message == before.message
        assert after.role == before.role
        assert after.session_id == before.session_id
        if before.said_at is None:
            assert after.said_at is None
        else:
            assert after.said_at == pytest.approx(before.said_at, abs=1e-6)
        assert after.archived_at == pytest.approx(before.archived_at, abs=1e-6)
    assert target.search("booking reference", top_k=1)[0].message == TRICKY[0]


def test_every_export_line_carries_the_format_version(make_memory):
    memory = make_memory()
    memory.add([text_message("user", "hello")], session_id="s")
    (line,) = _lines(memory)
    assert HISTORY_VERSION == 1
    assert list(json.loads(line)) == ["version", "index", "session_id", "role", "said_at", "archived_at", "message"]
    assert json.loads(line)["version"] == 1


def test_an_export_line_is_utf8_unless_it_holds_a_lone_surrogate(make_memory):
    memory = make_memory()
    memory.add(TRICKY[:3])
    plain, _, surrogate = _lines(memory)
    assert "Café ☕" in plain
    assert surrogate.isascii() and "\\ud800" in surrogate
    assert json.loads(surrogate)["message"] == TRICKY[2]


def test_importing_again_adds_nothing(make_memory):
    memory = make_memory()
    lines = [json.dumps({"text": f"line {n}", "role": "user", "session_id": "chat-1"}) for n in range(7)]
    first = import_history(memory, lines, batch_size=3)
    again = import_history(memory, lines, batch_size=2)
    assert (first.added, first.already_present) == (7, 0)
    assert (again.added, again.already_present) == (0, 7)
    assert again.indices == first.indices
    assert len(memory) == 7


def test_an_import_whose_commit_failed_resumes_without_duplicates(make_memory, monkeypatch):
    """The archive fails during the third batch's commit (a full disk, a lost connection): that batch is not
    archived, the first two are; the same import run again adds exactly the rest."""
    memory = make_memory()
    lines = [json.dumps({"text": f"note {n % 4}", "role": "user", "session_id": f"s{n % 2}"}) for n in range(17)]
    archive, add, calls = memory._archive, memory._archive.add, []

    def failing_add(records):
        calls.append(len(records))
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return add(records)

    monkeypatch.setattr(archive, "add", failing_add)
    with pytest.raises(OSError, match="No space"):
        import_history(memory, lines, batch_size=4)
    assert len(memory) == 8
    monkeypatch.setattr(archive, "add", add)

    report = import_history(memory, lines, batch_size=4)

    assert (report.lines, report.added, report.already_present) == (17, 9, 8)
    assert [(m["content"][0]["text"], memory.record(i).session_id) for i, m in memory.messages()] == [
        (json.loads(line)["text"], json.loads(line)["session_id"]) for line in lines
    ]


def test_a_line_s_identity_is_its_session_times_bytes_and_occurrence_not_its_place(make_memory):
    memory = make_memory()
    transcript = [{"text": t, "role": "user", "session_id": "s", "time": 100 + n} for n, t in enumerate("abcd")]
    import_history(memory, transcript)
    inserted = [
        *transcript[:2],
        {"text": "new", "role": "assistant", "session_id": "s", "time": 101.5},
        *transcript[2:],
    ]
    report = import_history(memory, inserted)  # a line inserted in the middle moves no other line's identity
    assert (report.added, report.already_present) == (1, 4)
    same_time = [{"text": "x", "role": "user", "time": "1970-01-01T00:01:40Z", "session_id": "s"}]
    assert import_history(memory, same_time).added == 1
    offset = [{"text": "x", "role": "user", "time": "1970-01-01T01:01:40+01:00", "session_id": "s"}]
    assert import_history(memory, offset).added == 0  # the same time, written otherwise: the same line
    elsewhere = [{"text": "x", "role": "user", "time": 100, "session_id": "t"}]
    assert import_history(memory, elsewhere).added == 1  # another session: another message
    twice = [{"text": "ok", "role": "user", "session_id": "s"}] * 2
    assert import_history(memory, twice).added == 2
    assert import_history(memory, twice).added == 0


def test_an_archive_s_own_export_imports_into_it_again_without_duplicates(make_memory):
    """A copy gets new indices (another user's messages before, a hole in the source): its export still re-imports
    into it as already there, because no identity depends on an index."""
    source = make_memory(clock=lambda: 1_700_000_000.5)
    source.add([text_message("user", "ok"), text_message("assistant", "ok"), text_message("user", "ok")])
    source.add([text_message("user", "said"), text_message("user", "said")], timestamps=[5, 5], session_id="c")
    exported = _lines(source)
    target = make_memory()
    target.add([text_message("user", "already here")])
    import_history(target, exported)
    assert len(target) == 6
    for lines in (_lines(target)[1:], exported, _lines(target)[1:]):
        report = import_history(target, lines)
        assert (report.added, report.already_present) == (0, 5)
    assert len(target) == 6


def test_check_history_reads_everything_and_archives_nothing(make_memory):
    memory = make_memory()
    good = [json.dumps({"text": f"fine {n}", "role": "user"}) for n in range(9)]
    assert check_history(["", *good, "  "]) == 9
    with pytest.raises(HistoryLineError) as raised:
        check_history([*good, '{"text": "late", "role": "robot"}'])
    assert raised.value.line == 10 and "'robot'" in str(raised.value)
    with pytest.raises(ConfigurationError, match="session_id"):
        check_history(good, session_id="")
    assert len(memory) == 0
    assert import_history(memory, good).lines == 9


def _failing_after(lines: list[str], count: int) -> Iterator[str]:
    """The lines, then a read error after ``count`` of them (a disk or a network stream failing halfway)."""
    for number, line in enumerate(lines):
        if number == count:
            raise OSError("the input stream broke")
        yield line


def test_an_import_that_failed_halfway_resumes_without_duplicates(make_memory):
    memory = make_memory()
    lines = [
        json.dumps({"text": "ok" if n % 3 == 0 else f"message {n}", "role": "user" if n % 2 else "assistant"})
        for n in range(23)
    ]
    seen: list[ImportProgress] = []
    with pytest.raises(OSError, match="broke"):
        import_history(memory, _failing_after(lines, 13), batch_size=5, progress=seen.append)
    assert len(memory) == 10  # two whole batches; the third was being read when the input failed
    assert [p.lines for p in seen] == [5, 10]

    report = import_history(memory, lines, batch_size=5)

    assert (report.added, report.already_present) == (13, 10)
    assert len(memory) == 23
    assert [m for _, m in memory.messages()] == [
        {"role": json.loads(line)["role"], "content": [{"text": json.loads(line)["text"]}]} for line in lines
    ]  # the repeated "ok" lines are distinct messages: each kept once, in the file's order


def test_the_same_text_twice_in_a_session_is_two_messages_and_ids_identify_lines(make_memory):
    memory = make_memory()
    report = import_history(
        memory,
        [
            {"text": "ok", "role": "user", "session_id": "a"},
            {"text": "ok", "role": "user", "session_id": "a"},
            {"text": "ok", "role": "user", "session_id": "b"},
            {"text": "same id", "role": "user", "id": "x-1"},
            {"text": "same id", "role": "user", "id": "x-1"},
            {"text": "same id", "role": "user", "id": 7},
        ],
    )
    assert (report.added, report.already_present) == (5, 1)
    assert report.indices[3] == report.indices[4]


def test_messages_with_a_strands_tracking_id_are_not_archived_again_from_their_own_export(make_memory):
    memory = make_memory()
    memory.add([{**text_message("user", f"turn {n}"), "tracking_id": f"tid-{n}"} for n in range(4)])
    report = import_history(memory, _lines(memory))
    assert (report.added, report.already_present) == (0, 4)
    assert len(memory) == 4


def test_times_sessions_and_roles_are_read_from_the_line(make_memory):
    memory = make_memory()
    import_history(
        memory,
        [
            '{"text": "utc", "role": "user", "time": "2024-05-01T09:30:00Z"}',
            '{"text": "offset", "role": "assistant", "time": "2024-05-01T11:30:00+02:00"}',
            '{"text": "naive is utc", "role": "user", "time": "2024-05-01T09:30:00"}',
            '{"text": "epoch", "role": "user", "said_at": 1714555800}',
            '{"text": "archived", "role": "user", "archived_at": "2020-01-01T00:00:00Z"}',
            "",
            "   ",
            b'{"text": "bytes line", "role": "assistant"}\n',
        ],
    )
    records = [memory.record(i) for i in memory.indices]
    assert [r.said_at for r in records[:4]] == [1714555800.0] * 4
    assert records[4].said_at is None and records[4].archived_at == 1577836800.0
    assert records[5].message == text_message("assistant", "bytes line")


def test_an_export_can_be_narrowed_by_index_and_time(make_memory):
    memory = make_memory()
    memory.add([text_message("user", f"m{n}") for n in range(6)], timestamps=[100, 200, 300, 400, 500, 600])
    assert [json.loads(line)["index"] for line in _lines(memory, start=2, end=4)] == [2, 3, 4]
    assert [json.loads(line)["index"] for line in _lines(memory, since=250, until=500, batch_size=2)] == [2, 3, 4]
    with pytest.raises(ConfigurationError):
        list(export_history(memory, batch_size=0))


BAD_LINES = [
    ("{not json", "is not JSON"),
    ('{"version": 2, "text": "hi", "role": "user"}', "is history format version 2; this version of the library reads"),
    ('{"version": "1", "text": "hi", "role": "user"}', "is history format version '1'"),
    ('{"version": true, "text": "hi", "role": "user"}', "is history format version True"),
    ('{"index": "3", "text": "hi", "role": "user"}', "'index' must be an integer"),
    ("[1, 2]", "must be a JSON object"),
    ('{"text": "hi", "role": "user", "txt": 1}', "unknown field(s) 'txt'"),
    ('{"role": "user"}', "needs 'message'"),
    ('{"text": "hi", "role": "system"}', "'role' must be 'user' or 'assistant'"),
    ('{"text": 5, "role": "user"}', "'text' must be a string"),
    ('{"message": {"role": "user", "content": "not a list"}}', "'content' must be a list"),
    ('{"message": {"role": "tool", "content": []}}', "has role 'tool'"),
    ('{"message": {"role": "user", "content": []}, "text": "x"}', "both 'message' and 'text'"),
    ('{"message": {"role": "user", "content": []}, "role": "assistant"}', "'role' is 'assistant'"),
    ('{"text": "hi", "role": "user", "time": "yesterday"}', "'time' is not an ISO 8601 time"),
    ('{"text": "hi", "role": "user", "time": true}', "'time' must be an ISO 8601 time or a number"),
    ('{"text": "hi", "role": "user", "time": 1, "said_at": 2}', "both 'time' and 'said_at'"),
    ('{"text": "hi", "role": "user", "id": ""}', "'id' must be a non-empty string"),
    ('{"text": "hi", "role": "user", "session_id": 3}', "'session_id' must be a non-empty string"),
    ('{"text": "hi", "role": "user", "session_id": "a\\u0000b"}', "'session_id' must not contain control characters"),
    (b'{"text": "\xff", "role": "user"}', "is not UTF-8"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_LINES, ids=[reason for _, reason in BAD_LINES])
def test_a_bad_line_is_named_before_anything_of_its_batch_is_written(make_memory, bad, reason):
    memory = make_memory()
    good = [json.dumps({"text": f"fine {n}", "role": "user"}) for n in range(5)]
    with pytest.raises(HistoryLineError) as raised:
        import_history(memory, [*good, bad, good[0]], batch_size=4)
    assert raised.value.line == 6
    assert str(raised.value).startswith("line 6: ")
    assert reason in str(raised.value)
    assert len(memory) == 4  # the first batch; the fifth line shared the bad line's batch


def test_batch_size_is_checked(make_memory):
    with pytest.raises(ConfigurationError, match="batch_size"):
        import_history(make_memory(), [], batch_size=0)


def test_lines_without_a_session_take_the_import_s_and_the_clock_stamps_them(make_memory):
    memory = make_memory(clock=lambda: 1_000_000.5)
    import_history(
        memory,
        [
            {"text": "no session named", "role": "user"},
            {"text": "explicitly none", "role": "user", "session_id": None},
            {"text": "its own", "role": "user", "session_id": "chat-1"},
            {"text": "kept time", "role": "user", "archived_at": 5},
        ],
        session_id="transcript-7",
    )
    records = [memory.record(i) for i in memory.indices]
    assert [r.session_id for r in records] == ["transcript-7", None, "chat-1", "transcript-7"]
    assert [r.archived_at for r in records] == [1_000_000.5, 1_000_000.5, 1_000_000.5, 5.0]
    assert [json.loads(line)["index"] for line in _lines(memory, sessions="transcript-7")] == [0, 3]
    assert [json.loads(line)["index"] for line in _lines(memory, sessions=[None, "chat-1"])] == [1, 2]
    with pytest.raises(ConfigurationError, match="session_id"):
        import_history(memory, [], session_id="")


def test_a_forgotten_user_is_imported_again_in_full(make_memory):
    memory = make_memory(user_id="alice")
    lines = [json.dumps({"text": f"line {n}", "role": "user", "session_id": "s"}) for n in range(4)]
    import_history(memory, lines)
    assert memory.forget_all() == 4
    report = import_history(memory, lines)
    assert (report.added, report.already_present, len(memory)) == (4, 0, 4)
