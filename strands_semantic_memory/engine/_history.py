"""History export and import: a memory's archive as JSON Lines, and transcripts loaded into a memory in bulk.

An **export line** (format version 1) is one archived record, ``{"version": 1, "index", "session_id", "role",
"said_at", "archived_at", "message"}``: the message exactly as archived, in Strands' session JSON form (``bytes`` as
``{"__bytes_encoded__": true, "data": "<base64>"}``), times in ISO 8601 UTC to the microsecond (``said_at`` null
when unknown). C1 controls, line separators, bidi overrides and lone surrogates are JSON escapes, as JSON writes C0
controls: a line is valid UTF-8 and shows a terminal nothing but text.

An **import line** holds ``message`` (a ``SemanticStorage`` entry too), or ``text`` and ``role`` (``user`` or
``assistant``), and optionally ``time`` (or ``said_at``: ISO 8601, UTC unless it says otherwise, or epoch seconds),
``archived_at``, ``session_id`` (absent: the import's; null: none), ``id`` (a string or an integer), ``version`` (1)
and ``index`` (checked, not kept).

Import is **idempotent and resumable**: a line's identity is its ``id``, else the message's Strands ``tracking_id``
(keyed as the engine keys it, so an agent's own messages are found again), else its session, the times the line
gives, the message's exact bytes and how many lines before it had those four (a repeated "ok" is two messages);
never its place. A run after a failure adds only what is missing. Each batch is checked whole, then archived in one
archive transaction (``new_records`` and ``_add_records``); a bad line raises ``HistoryLineError`` before anything
of its batch is written, and ``check_history`` reads a whole input first, archiving nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.archives._protocol import Archive, NewRecord, Scope, StoredRecord
from strands_semantic_memory.engine._memory import ROLES, STORAGE_ROLE, SemanticMemory
from strands_semantic_memory.errors import ConfigurationError, HistoryLineError, InvalidMessageError
from strands_semantic_memory.messages._codec import BYTES_MARKER, decode_message, record_key
from strands_semantic_memory.messages._session import session_key
from strands_semantic_memory.messages._time import TimeBound, to_epoch

__all__ = ["HISTORY_VERSION", "ImportReport", "check_history", "export_history", "history_line", "import_history"]

HISTORY_VERSION = 1
DEFAULT_IMPORT_BATCH = 256
"""Lines archived (and embedded) per archive transaction."""
HistoryLine = str | bytes | Mapping[str, Any]
"""One import line: JSON text (blank lines are skipped) or an already parsed object."""

_FIELDS = {"version", "message", "text", "role", "time", "said_at", "archived_at", "session_id", "id", "index"}
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_DIGEST = re.compile("sha256:[0-9a-f]{64}")
_MESSAGE_ROLES = (*ROLES, STORAGE_ROLE)
"""An export holds ``SemanticStorage`` entries too; importing it restores them."""


@dataclass(frozen=True)
class ImportReport:
    """What an import did (or has done so far, as its progress callback receives it).

    Attributes:
        lines: Lines read and archived (blank lines not counted).
        added: Messages archived.
        already_present: Lines whose message the archive already held (an earlier run, or a line repeated).
        forgotten: Lines whose message was forgotten in this archive, so it is not archived again.
        indices: Each line's archive index (None: forgotten); empty in a progress report.
    """

    lines: int
    added: int
    already_present: int
    forgotten: int
    indices: tuple[int | None, ...] = ()


def iso_time(seconds: float) -> str | float:
    """ISO 8601 in UTC to the microsecond (``...Z``); the number itself for a time a datetime cannot hold."""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"
    except (OverflowError, OSError, ValueError):
        return seconds


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from ISO 8601 (UTC unless it says otherwise) or a number; None stays None.

    Raises:
        ValueError: If it is neither (the message says why, after the value's name).
    """
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
            except ValueError:
                raise ValueError(f"is not an ISO 8601 time or a number of seconds: {value!r:.60}") from None
            return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"must be an ISO 8601 time or a finite number of seconds, got {value!r:.40}")
    return float(value)


def _archived_session(value: str | None) -> str | None:
    """The session as archived: a digest an archive wrote (``sha256:<hex>``) stays as it is."""
    return value if value is not None and _DIGEST.fullmatch(value) else session_key(value)


def export_history(
    memory: SemanticMemory | Archive,
    *,
    start: int | None = None,
    end: int | None = None,
    since: TimeBound = None,
    until: TimeBound = None,
    sessions: Iterable[str | None] | str | None = None,
) -> Iterator[str]:
    """The archived records of a memory (or of its archive) as export lines, oldest first, in bounded memory.

    Args:
        memory: The memory, or its archive.
        start: Only indices at or above this.
        end: Only indices at or below this.
        since: Only records whose time (said, else archived) is at or after this.
        until: Only records whose time is at or before this.
        sessions: Only these sessions (one id, or several; ``None`` among them: records without one).

    Yields:
        One ``history_line`` per record.
    """
    archive = memory.archive if isinstance(memory, SemanticMemory) else memory
    wanted = [sessions] if isinstance(sessions, str) else sessions
    scope = Scope(
        sessions=None if wanted is None else frozenset(_archived_session(s) for s in wanted),
        since=to_epoch(since, "since"),
        until=to_epoch(until, "until"),
    )
    after = -1 if start is None else start - 1
    while batch := archive.records(after, 1000):
        for record in batch:
            if end is not None and record.index > end:
                return
            if scope.hit(record):
                yield history_line(record)
        after = batch[-1].index


def history_line(record: StoredRecord) -> str:
    """One archived record as an export line: compact JSON text, without the newline (see the module docstring)."""
    fields = {
        "version": HISTORY_VERSION,
        "index": record.index,
        "session_id": record.session_id,
        "role": record.role,
        "said_at": None if record.said_at is None else iso_time(record.said_at),
        "archived_at": iso_time(record.archived_at),
        "message": json.loads(record.data),  # the archived JSON as it is: bytes stay in Strands' marker form
    }
    return _UNSAFE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    )


@dataclass(frozen=True)
class _Line:
    message: Message
    session_id: str | None
    said_at: float | None
    archived_at: float | None
    identity: str | None


def _bytes_marker(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {BYTES_MARKER: True, "data": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _message(fields: Mapping[str, Any], fail: Callable[[str], HistoryLineError]) -> Message:
    """The line's message: ``message`` in Strands' session JSON form, or built from ``text`` and ``role``."""
    given, role = fields.get("message"), fields.get("role")
    if given is None:
        if not isinstance(fields.get("text"), str):
            raise fail("needs 'message' (a Strands message), or 'text' (a string) and 'role'")
        if role not in ROLES:
            raise fail(f"'role' must be 'user' or 'assistant' with 'text', got {role!r:.40}")
        return {"role": role, "content": [{"text": fields["text"]}]}
    if "text" in fields or not isinstance(given, Mapping):
        raise fail("'message' must be a JSON object, and 'text' not given with it")
    if given.get("role") not in _MESSAGE_ROLES:
        raise fail(f"the message's role must be 'user', 'assistant' or 'stored', got {given.get('role')!r:.40}")
    if role is not None and role != given["role"]:
        raise fail(f"'role' is {role!r:.40} but the message's role is {given['role']!r}")
    if not isinstance(given.get("content"), list):
        raise fail("the message's 'content' must be a list")
    try:  # bytes in Strands' marker form come back as bytes
        return decode_message(json.dumps(given, default=_bytes_marker))
    except (RecursionError, TypeError, ValueError) as error:
        raise fail(f"'message' cannot be read ({error})") from None


def _read_line(raw: HistoryLine, line: int, default_session: str | None) -> _Line | None:
    """One line, checked whole (None: a blank line)."""

    def fail(reason: str) -> HistoryLineError:
        return HistoryLineError(line, reason)

    try:
        text = bytes(raw).decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
        fields = (json.loads(text) if text.strip() else None) if isinstance(text, str) else text
    except UnicodeDecodeError as error:
        raise fail(f"is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except (RecursionError, ValueError) as error:
        raise fail(f"is not JSON ({error})") from None
    if fields is None:
        return None
    if not isinstance(fields, Mapping):
        raise fail(f"must be a JSON object, got {type(fields).__name__}")
    if unknown := sorted(set(fields) - _FIELDS):
        raise fail(f"has unknown field(s) {', '.join(repr(name)[:40] for name in unknown[:5])}")
    if (version := fields.get("version", HISTORY_VERSION)) != HISTORY_VERSION or type(version) is not int:
        raise fail(f"is history format version {version!r:.20}; this release reads version {HISTORY_VERSION}")
    if fields.get("index") is not None and type(fields["index"]) is not int:
        raise fail(f"'index' must be an integer, got {fields['index']!r:.40}")
    if "time" in fields and "said_at" in fields:
        raise fail("has both 'time' and 'said_at'; give one")
    session = fields.get("session_id", default_session)
    if session is not None and (not isinstance(session, str) or not session):
        raise fail(f"'session_id' must be a non-empty string or null, got {session!r:.40}")
    identity = fields.get("id")
    if identity is not None and (type(identity) not in (str, int) or identity == ""):
        raise fail(f"'id' must be a non-empty string or an integer, got {identity!r:.40}")
    times = []
    for name in ("time" if "time" in fields else "said_at", "archived_at"):
        try:
            times.append(parse_time(fields.get(name)))
        except ValueError as error:
            raise fail(f"'{name}' {error}") from None
    message = _message(fields, fail)
    return _Line(message, session, times[0], times[1], None if identity is None else json.dumps(identity))


def _digest(parts: list[Any], data: bytes = b"") -> str:
    digest = hashlib.blake2b(json.dumps(parts).encode("utf-8"), digest_size=16, person=b"ssm-import-v1")
    digest.update(data)
    return digest.hexdigest()


def _keyed(line: _Line, record: NewRecord, occurrences: dict[str, int]) -> NewRecord:
    """The line's record with its session, times and identity key (see the module docstring)."""
    session = _archived_session(line.session_id)
    archived = record.archived_at if line.archived_at is None else line.archived_at
    tracking = line.message.get("tracking_id")
    if line.identity is not None:
        key = "h:" + _digest(["id", line.identity], record.data)
    elif isinstance(tracking, str) and tracking:
        key = record_key(record.data, tracking)
    else:  # whole microseconds, as export lines write times, so the Z, offset and epoch forms agree
        micros = [None if t is None else round(t * 1_000_000) for t in (line.said_at, line.archived_at)]
        base = _digest([session, *micros], record.data)
        occurrences[base] = occurrence = occurrences.get(base, -1) + 1
        key = "h:" + _digest([base, occurrence])
    return dataclasses.replace(record, key=key, session_id=session, archived_at=archived)


def _check_arguments(batch_size: int, session_id: str | None) -> None:
    if type(batch_size) is not int or batch_size < 1:
        raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ConfigurationError(f"session_id must be a non-empty string or None, got {session_id!r}")


def import_history(
    memory: SemanticMemory,
    lines: Iterable[HistoryLine],
    *,
    batch_size: int = DEFAULT_IMPORT_BATCH,
    session_id: str | None = None,
    progress: Callable[[ImportReport], object] | None = None,
) -> ImportReport:
    """Archive a history into a memory in batches, idempotently (see the module docstring).

    Args:
        memory: The memory to archive into (its clock stamps lines without ``archived_at``).
        lines: The lines, oldest first: JSON text (``str`` or UTF-8 ``bytes``; an open file works) or parsed objects.
        batch_size: Lines per archive transaction; each batch is embedded as ``add`` embeds before the next is read.
        session_id: The session of lines that name none.
        progress: Called with the report so far after each batch.

    Raises:
        HistoryLineError: If a line cannot be read (its number and why); its batch is not archived, earlier ones are.
        ConfigurationError: If ``batch_size`` or ``session_id`` is invalid.
        ArchiveError: If the archive cannot be written (the batch is not archived).
    """
    _check_arguments(batch_size, session_id)
    occurrences: dict[str, int] = {}
    indices: list[int | None] = []
    batch: list[NewRecord] = []
    added = forgotten = 0

    def report(done: tuple[int | None, ...] = ()) -> ImportReport:
        return ImportReport(len(indices), added, len(indices) - added - forgotten, forgotten, done)

    def commit() -> None:
        nonlocal added, forgotten
        before = memory.archive.stats().next_index
        committed = memory._add_records(batch)
        added += len({i for i in committed if i is not None and i >= before})  # indices are never reused
        forgotten += committed.count(None)
        indices.extend(committed)
        batch.clear()
        if progress is not None:
            progress(report())

    for number, raw in enumerate(lines, start=1):
        if (line := _read_line(raw, number, session_id)) is None:
            continue
        try:
            (record,) = memory.new_records([line.message], said_at=line.said_at, roles=_MESSAGE_ROLES)
        except InvalidMessageError as error:
            raise HistoryLineError(number, str(error)) from None
        batch.append(_keyed(line, record, occurrences))
        if len(batch) >= batch_size:
            commit()
    if batch:
        commit()
    return report(tuple(indices))


def check_history(lines: Iterable[HistoryLine], *, session_id: str | None = None) -> int:
    """Read every line as ``import_history`` would, archiving nothing: the number of lines that hold a message.

    Raises:
        HistoryLineError: The first line that cannot be read.
        ConfigurationError: If ``session_id`` is invalid.
    """
    _check_arguments(1, session_id)
    return sum(1 for number, raw in enumerate(lines, start=1) if _read_line(raw, number, session_id) is not None)
