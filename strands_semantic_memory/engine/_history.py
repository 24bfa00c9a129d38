"""History import and export: a memory's archive as JSON Lines, and transcripts loaded into a memory in bulk.

The format is versioned (``HISTORY_VERSION``, 1). An **export line** is one archived record::

    {"version": 1, "index": 0, "session_id": "chat-1", "role": "user", "said_at": "2024-05-01T09:30:00.000000Z",
     "archived_at": "2024-05-01T09:30:02.125000Z", "message": {"role": "user", "content": [{"text": "Hi"}]}}

``message`` is the message exactly as archived, in Strands' session JSON form (a ``bytes`` value is written
``{"__bytes_encoded__": true, "data": "<base64>"}``, as Strands' session managers write it). Times are ISO 8601 in
UTC to the microsecond (``said_at`` is null when nobody said when the message was said).

An **import line** holds a message and, optionally, when and where it was said:

- ``message`` (a Strands message), or ``text`` and ``role`` (``"user"`` or ``"assistant"``);
- ``time`` (or ``said_at``): ISO 8601 (``Z`` or an offset; a time without one is read as UTC) or epoch seconds;
- ``session_id``: the Strands session it was said in (a line without one takes the import's ``session_id``; an
  explicit ``null`` means none);
- ``id``: the line's own identity (a string or an integer);
- ``version``: the format's version, 1 (a line without one is read as version 1; another version is refused);
- ``archived_at``, ``index``: as an export line writes them (so an export imports as it is; ``index`` is only
  checked to be an integer: the new archive gives its own indices).

Import is **idempotent and resumable**: each line gets a deterministic identity, and the archive keeps one record
per identity and content, so running an import again after a failure adds only what is missing. The identity is
the line's ``id`` if it has one; else the message's own Strands ``tracking_id``; else a digest of the line's
session, its ``time``/``said_at`` and ``archived_at`` as the line gives them (never the clock's), the message's
exact bytes and the occurrence of that same session, times and bytes among the lines read before it (so a
repeated "ok" is two messages, and re-reading the input gives every line the identity it had). The identity does
not depend on the line's place in the input nor on an archive index: an export of an archive that was itself
imported re-imports into it without duplicates, and lines inserted into a transcript move no other line's identity.

Each batch is read and checked completely before any of it is archived, then archived in one commit: a line that
cannot be read raises ``HistoryLineError`` naming its number, and its batch is not written (earlier batches are).
To refuse a bad input before anything is archived, read it once with ``check_history`` first (the command line
does). Progress is reported to a callback after each batch; the library never prints.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from strands.types.content import Message

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.archives._protocol import NewRecord, StoredRecord
from strands_semantic_memory.engine._intake import ROLES, STORAGE_ROLE, new_records
from strands_semantic_memory.errors import (
    ConfigurationError,
    HistoryLineError,
    InvalidMessageError,
    InvalidMessageTypeError,
)
from strands_semantic_memory.messages._codec import decode_message, encode_json, record_key
from strands_semantic_memory.messages._time import TimeBound, to_epoch

if TYPE_CHECKING:
    from strands_semantic_memory.engine._memory import SemanticMemory

__all__ = [
    "DEFAULT_EXPORT_BATCH",
    "DEFAULT_IMPORT_BATCH",
    "HISTORY_VERSION",
    "HistoryLine",
    "ImportProgress",
    "ImportReport",
    "check_history",
    "export_history",
    "history_line",
    "import_history",
]

HISTORY_VERSION = 1
"""The version of the history format that export lines carry (``"version"``) and import reads."""

DEFAULT_IMPORT_BATCH = 256
"""Lines archived (and embedded) per commit by ``import_history``."""
DEFAULT_EXPORT_BATCH = 1000
"""Archive indices read per archive call by ``export_history``."""

HistoryLine = str | bytes | Mapping[str, Any]
"""One line of an import: JSON text (a trailing newline is fine; a blank line is skipped) or an already parsed
object."""

_IMPORT_FIELDS = frozenset(
    {"version", "message", "text", "role", "time", "said_at", "archived_at", "session_id", "id", "index"}
)
_IMPORT_ROLES = (*ROLES, STORAGE_ROLE)
"""An export holds ``SemanticStorage`` entries too; importing it restores them."""


@dataclass(frozen=True)
class ImportProgress:
    """How far an import has come, reported after each committed batch.

    Attributes:
        lines: Lines read and committed so far (blank lines not counted).
        added: Messages archived by this import so far.
        already_present: Lines whose message the archive already held (an earlier, interrupted run of the same
            import, or a line repeated in the input).
    """

    lines: int
    added: int
    already_present: int


@dataclass(frozen=True)
class ImportReport:
    """What an import did.

    Attributes:
        lines: Lines read (blank lines not counted).
        added: Messages archived.
        already_present: Lines whose message the archive already held.
        indices: The archive index of each line, in order (an existing index for a line already present).
    """

    lines: int
    added: int
    already_present: int
    indices: list[int]


# ------------------------------------------------------------------------------------------- times


def iso_time(seconds: float) -> str | float:
    """ISO 8601 in UTC to the microsecond (``...Z``); the number itself for a time a datetime cannot hold."""
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return seconds
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _epoch(value: Any, name: str, line: int) -> float | None:
    """Seconds since the epoch from an ISO 8601 string (UTC unless it says otherwise) or a number; None stays None."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise HistoryLineError(line, f"'{name}' must be a finite number of seconds, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise HistoryLineError(
            line, f"'{name}' must be an ISO 8601 time or a number of seconds, got {type(value).__name__}"
        )
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat does not read the Z
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise HistoryLineError(line, f"'{name}' is not an ISO 8601 time: {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


# ------------------------------------------------------------------------------------------- export


def export_history(
    memory: SemanticMemory,
    *,
    start: int | None = None,
    end: int | None = None,
    since: TimeBound = None,
    until: TimeBound = None,
    sessions: Collection[str | None] | str | None = None,
    batch_size: int = DEFAULT_EXPORT_BATCH,
) -> Iterator[dict[str, Any]]:
    """The archived records of a memory as export lines (dicts), oldest first.

    Write each with ``history_line`` to get JSON Lines; ``import_history`` reads them back into another memory,
    byte for byte. The archive is read in batches of ``batch_size`` indices, so an export of any size runs in
    bounded memory; messages archived while the export runs may or may not be included.

    Args:
        memory: The memory to export.
        start: Only records with an index at or above this.
        end: Only records with an index at or below this.
        since: Only records whose time (said, else archived) is at or after this (epoch seconds or a datetime).
        until: Only records whose time is at or before this.
        sessions: Only records said in these sessions (a session id, or several; ``None`` among them admits records
            without a session). None (default): every session.
        batch_size: Indices read per archive call.

    Yields:
        One dict per record: ``version``, ``index``, ``session_id``, ``role``, ``said_at``, ``archived_at``,
        ``message``.

    Raises:
        ConfigurationError: If ``batch_size`` is not a positive integer, or a bound is not an integer.
        InvalidMessageTypeError: If ``since`` or ``until`` is not a time.
        ArchiveError: If the archive cannot be read.
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    for name, bound in (("start", start), ("end", end)):
        if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
            raise ConfigurationError(f"{name} must be an archive index (an integer) or None, got {bound!r}")
    low, high = to_epoch(since, "since"), to_epoch(until, "until")
    scope = None if sessions is None else frozenset([sessions] if isinstance(sessions, str) else sessions)
    with memory._archive_lock:
        bounds = memory.archive.bounds()
    if bounds is None:
        return
    first = bounds[0] if start is None else max(start, bounds[0])
    last = bounds[1] if end is None else min(end, bounds[1])
    for lo in range(first, last + 1, batch_size):
        with memory._archive_lock:
            found = memory.archive.get(list(range(lo, min(lo + batch_size - 1, last) + 1)))
        for index in sorted(found):
            record = found[index]
            if (low is not None and record.time < low) or (high is not None and record.time > high):
                continue
            if scope is not None and record.session_id not in scope:
                continue
            yield export_record(record)


def export_record(record: StoredRecord) -> dict[str, Any]:
    """One archived record as an export line (a dict; ``history_line`` writes it)."""
    return {
        "version": HISTORY_VERSION,
        "index": record.index,
        "session_id": record.session_id,
        "role": record.role,
        "said_at": None if record.said_at is None else iso_time(record.said_at),
        "archived_at": iso_time(record.archived_at),
        "message": json.loads(record.data),  # the archived JSON as it is: bytes stay in Strands' marker form
    }


def history_line(record: Mapping[str, Any]) -> str:
    """One export (or import) line as compact JSON text, without the newline.

    Non-ASCII text is written as it is (UTF-8 when written to a file); a line holding a lone surrogate (which UTF-8
    cannot encode) is written with ASCII escapes throughout, so it reads back exactly.
    """
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"))
    return text


# ------------------------------------------------------------------------------------------- import


@dataclass
class _Occurrences:
    """How often each (session, times, bytes) digest was read so far, for the identities of lines without ``id``."""

    seen: dict[bytes, int] = dataclasses.field(default_factory=dict)

    def take(self, digest: bytes) -> int:
        occurrence = self.seen.get(digest, 0)
        self.seen[digest] = occurrence + 1
        return occurrence


def _parse(raw: HistoryLine, line: int) -> Mapping[str, Any] | None:
    """The line as a JSON object; None for a blank line."""
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as error:
            raise HistoryLineError(line, f"is not UTF-8 text ({error.reason} at byte {error.start})") from None
    if not isinstance(raw, str):
        raise HistoryLineError(line, f"must be JSON text or an object, got {type(raw).__name__}")
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except RecursionError:
        raise HistoryLineError(line, "is nested too deeply") from None
    except ValueError as error:
        raise HistoryLineError(line, f"is not JSON ({error})") from None
    if not isinstance(value, dict):
        raise HistoryLineError(line, f"must be a JSON object, got {type(value).__name__}")
    return value


def _message(fields: Mapping[str, Any], line: int) -> Message:
    """The line's message: ``message`` decoded from Strands' session JSON form, or built from ``text`` and ``role``."""
    given = fields.get("message")
    if given is not None:
        if "text" in fields:
            raise HistoryLineError(line, "has both 'message' and 'text'; give one")
        if not isinstance(given, dict):
            raise HistoryLineError(line, f"'message' must be a JSON object, got {type(given).__name__}")
        role = fields.get("role")
        if role is not None and role != given.get("role"):
            raise HistoryLineError(line, f"'role' is {role!r} but the message's role is {given.get('role')!r}")
        try:
            return decode_message(encode_json(given))  # bytes in Strands' marker form come back as bytes
        except (RecursionError, ValueError) as error:
            raise HistoryLineError(line, f"'message' cannot be read ({type(error).__name__})") from None
    text = fields.get("text")
    if text is None:
        raise HistoryLineError(line, "needs 'message' (a Strands message) or 'text' and 'role'")
    if not isinstance(text, str):
        raise HistoryLineError(line, f"'text' must be a string, got {type(text).__name__}")
    role = fields.get("role")
    if role not in ROLES:
        raise HistoryLineError(line, f"'role' must be 'user' or 'assistant' with 'text', got {role!r}")
    return {"role": role, "content": [{"text": text}]}


def _microseconds(seconds: float | None) -> int | float | None:
    """A time as whole microseconds (as export lines write it), so ``Z`` and ``+00:00`` forms agree."""
    if seconds is None:
        return None
    micro = seconds * 1_000_000
    return round(micro) if math.isfinite(micro) else seconds


def _tracking_id(
    fields: Mapping[str, Any],
    message: Message,
    session_id: str | None,
    times: tuple[float | None, float | None],
    data: bytes,
    line: int,
    occurrences: _Occurrences,
) -> str:
    """The line's deterministic identity (see the module docstring)."""
    given = fields.get("id")
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, (str, int)) or (isinstance(given, str) and not given):
            raise HistoryLineError(line, f"'id' must be a non-empty string or an integer, got {given!r}")
        return str(given)
    own = message.get("tracking_id")  # Strands 1.62 stamps the messages of a conversation with one
    if isinstance(own, str) and own:
        return own
    said_at, archived_at = times
    digest = hashlib.blake2b(digest_size=16, person=b"ssm-import-v1")
    digest.update(json.dumps([session_id, _microseconds(said_at), _microseconds(archived_at)]).encode("utf-8"))
    digest.update(data)
    occurrence = occurrences.take(digest.digest())
    digest.update(b"#%d" % occurrence)
    return "import:" + digest.hexdigest()


def _record(
    raw: HistoryLine, line: int, occurrences: _Occurrences, default_session: str | None, now: float
) -> NewRecord | None:
    """The checked, keyed record for one line (None for a blank line)."""
    fields = _parse(raw, line)
    if fields is None:
        return None
    unknown = sorted(set(fields) - _IMPORT_FIELDS)
    if unknown:
        raise HistoryLineError(line, f"has unknown field(s) {', '.join(map(repr, unknown))}")
    version = fields.get("version", HISTORY_VERSION)
    if type(version) is not int or version != HISTORY_VERSION:
        raise HistoryLineError(
            line, f"is history format version {version!r}; this version of the library reads version {HISTORY_VERSION}"
        )
    index = fields.get("index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise HistoryLineError(line, f"'index' must be an integer, got {index!r}")
    if "time" in fields and "said_at" in fields:
        raise HistoryLineError(line, "has both 'time' and 'said_at'; give one")
    try:
        session_id = check_identifier("'session_id'", fields.get("session_id", default_session))
    except ConfigurationError as error:
        raise HistoryLineError(line, str(error)) from None
    message = _message(fields, line)
    said_at = _epoch(fields.get("time", fields.get("said_at")), "time" if "time" in fields else "said_at", line)
    archived_at = _epoch(fields.get("archived_at"), "archived_at", line)
    try:
        (record,) = new_records([message], [said_at], _IMPORT_ROLES, session_id=session_id, now=now)
    except (InvalidMessageError, InvalidMessageTypeError) as error:
        raise HistoryLineError(line, str(error).replace("messages[0]", "the message")) from None
    tracking_id = _tracking_id(fields, message, session_id, (said_at, archived_at), record.data, line, occurrences)
    record = dataclasses.replace(record, tracking_id=tracking_id, key=record_key(tracking_id, record.data))
    if archived_at is not None:
        record = dataclasses.replace(record, archived_at=archived_at)
    return record


def import_history(
    memory: SemanticMemory,
    lines: Iterable[HistoryLine],
    *,
    batch_size: int = DEFAULT_IMPORT_BATCH,
    session_id: str | None = None,
    progress: Callable[[ImportProgress], object] | None = None,
) -> ImportReport:
    """Archive a history (JSON Lines, or parsed lines) into a memory in batches; idempotent and resumable.

    The format and the tracking ids: the module docstring. Each batch is checked completely, then archived in one
    commit and embedded (as ``add`` embeds) before the next is read; ``progress`` is called after each.

    Args:
        memory: The memory to archive into.
        lines: The lines, oldest first: JSON text (``str`` or UTF-8 ``bytes``; blank lines are skipped) or parsed
            objects. An open file works as it is.
        batch_size: Lines per commit.
        session_id: The session of lines that name none (a transcript of one conversation, say).
        progress: Called with an ``ImportProgress`` after each committed batch.

    Returns:
        What was archived and what was already there.

    Raises:
        HistoryLineError: If a line cannot be read (its number and the reason in the message); its batch is not
            archived, earlier ones are.
        ConfigurationError: If ``batch_size`` is not a positive integer, or ``session_id`` is not an id.
        ArchiveError: If the archive cannot be written (the batch is not archived).
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    check_identifier("session_id", session_id)
    occurrences = _Occurrences()
    indices: list[int] = []
    added = 0
    batch: list[NewRecord] = []

    def commit() -> None:
        nonlocal added
        with memory._archive_lock:
            bounds = memory.archive.bounds()
        newest = -1 if bounds is None else bounds[1]
        committed = memory._archive_records(batch)
        added += len({i for i in committed if i > newest})  # indices are never reused: a higher one is new
        indices.extend(committed)
        batch.clear()
        if progress is not None:
            progress(ImportProgress(len(indices), added, len(indices) - added))

    for number, raw in enumerate(lines, start=1):
        record = _record(raw, number, occurrences, session_id, memory._now())
        if record is None:
            continue
        batch.append(record)
        if len(batch) >= batch_size:
            commit()
    if batch:
        commit()
    return ImportReport(len(indices), added, len(indices) - added, indices)


def check_history(lines: Iterable[HistoryLine], *, session_id: str | None = None) -> int:
    """Read every line as ``import_history`` would, archiving nothing: a bad input is refused before any change.

    ``import_history`` checks each batch before archiving it, so a bad line stops an import after the batches
    before it; reading the input with this first (the command line does, for a file and for standard input)
    rejects it before anything is archived. Nothing is embedded: a check costs a fraction of the import.

    Args:
        lines: The lines, as ``import_history`` takes them.
        session_id: The session of lines that name none (as ``import_history``'s).

    Returns:
        The number of lines that hold a message (blank lines not counted): ``ImportReport.lines`` of the import.

    Raises:
        HistoryLineError: The first line that cannot be read (its number and the reason in the message).
        ConfigurationError: If ``session_id`` is not an id.
    """
    check_identifier("session_id", session_id)
    occurrences = _Occurrences()
    count = 0
    for number, raw in enumerate(lines, start=1):
        if _record(raw, number, occurrences, session_id, 0.0) is not None:
            count += 1
    return count
