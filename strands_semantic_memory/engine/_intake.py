"""Intake: check what is offered for archiving and turn it into store records, before anything changes.

Every message is validated first (a bad one raises, naming its position, and nothing is archived), then encoded
exactly (``encode_message``), rendered to searchable text, keyed for idempotency
(``record_key``) and stamped with when it was archived (the memory's clock), the session it was said in and, if the
caller says, when it was said.
After the store's ``add``, ``AddedCounter`` tells the new messages from those already archived without asking
the store again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, get_args

from strands.types.content import Message, Role

from strands_semantic_memory.archives._protocol import Archive, NewRecord
from strands_semantic_memory.errors import InvalidMessageError, InvalidMessageTypeError
from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.messages._time import TimeBound, to_epoch

ROLES: tuple[str, ...] = get_args(Role)
"""The roles of a Strands message (``strands.types.content.Role``); anything else is refused before archiving."""

STORAGE_ROLE = "stored"
"""The role of a ``SemanticStorage`` entry: archived by the storage itself, refused from any caller of ``add``
(so no message handed to the library can pass for a storage entry)."""


def said_at(message: Mapping[str, Any], given: TimeBound, position: int) -> float | None:
    """The caller's time for a message: the ``timestamps`` argument, else ``metadata.custom.timestamp``."""
    if given is None:
        custom = (message.get("metadata") or {}).get("custom") if isinstance(message.get("metadata"), Mapping) else None
        given = custom.get("timestamp") if isinstance(custom, Mapping) else None
        if isinstance(given, str):
            try:
                given = datetime.fromisoformat(given)
            except ValueError as error:
                raise InvalidMessageError(f"messages[{position}] has an unreadable timestamp {given!r}") from error
    try:
        return to_epoch(given, f"timestamps[{position}]")
    except InvalidMessageTypeError as error:
        raise InvalidMessageError(str(error)) from error


def validate(
    messages: Sequence[Message], timestamps: Sequence[TimeBound] | None, roles: Sequence[str] = ROLES
) -> list[float | None]:
    """Check every message (and the timestamps) and return when each was said, if known.

    Raises:
        InvalidMessageTypeError: If ``messages`` is not a list of dicts.
        InvalidMessageError: If a message's role is not ``"user"`` or ``"assistant"`` (Strands' ``Role``), its
            content is not a list, or a timestamp is unreadable.
    """
    if isinstance(messages, (Mapping, str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidMessageTypeError(f"add() takes a list of messages, got {type(messages).__name__}")
    if timestamps is not None and len(timestamps) != len(messages):
        raise InvalidMessageError(f"got {len(timestamps)} timestamps for {len(messages)} messages")
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidMessageTypeError(f"messages[{position}] is a {type(message).__name__}, not a message")
        if message.get("role") not in roles:
            raise InvalidMessageError(
                f"messages[{position}] has role {message.get('role')!r}; a Strands message's role is 'user' or "
                "'assistant'"
            )
        if not isinstance(message.get("content"), list):
            raise InvalidMessageError(
                f"messages[{position}] 'content' must be a list of content blocks, "
                f"got {type(message.get('content')).__name__}"
            )
    given = timestamps or [None] * len(messages)
    return [said_at(m, t, p) for p, (m, t) in enumerate(zip(messages, given, strict=True))]


def new_records(
    messages: Sequence[Message],
    timestamps: Sequence[TimeBound] | None = None,
    roles: Sequence[str] = ROLES,
    *,
    session_id: str | None = None,
    now: float | None = None,
) -> list[NewRecord]:
    """Validated, encoded, rendered and keyed records for ``messages`` (see the module docstring).

    Args:
        messages: The messages, oldest first.
        timestamps: When each was said (see ``said_at``).
        roles: The roles accepted.
        session_id: The session every one of them was said in (checked by the caller).
        now: When they are archived (default: ``time.time()``).
    """
    said = validate(messages, timestamps, roles)
    now = time.time() if now is None else now
    records = []
    for message, said_at_ in zip(messages, said, strict=True):
        data = encode_message(message)
        tracking_id = message.get("tracking_id") or None
        records.append(
            NewRecord(
                data=data,
                role=str(message["role"]),
                tracking_id=tracking_id,
                text=searchable_text(render_message(message)),
                key=record_key(tracking_id, data),
                archived_at=now,
                said_at=said_at_,
                session_id=session_id,
            )
        )
    return records


def record_keys(messages: Sequence[Any]) -> list[str | None]:
    """The idempotency key ``add`` would give each message, where one can find it again.

    A message with a tracking id is keyed by it and its exact bytes (``record_key``), as ``new_records`` keys it;
    one without (or one that is not a message that encodes) has no key that repeats: None.
    """
    keys: list[str | None] = []
    for message in messages:
        tracking_id = message.get("tracking_id") if isinstance(message, Mapping) else None
        if not tracking_id or not isinstance(message.get("content"), list):
            keys.append(None)
            continue
        try:
            keys.append(record_key(tracking_id, encode_message(message)))
        except (TypeError, ValueError, RecursionError):
            keys.append(None)
    return keys


class AddedCounter:
    """Tells new messages from those archived before among the indices ``add`` returns, without a store call.

    A store hands out new indices above every index it ever used and returns the existing index of a message
    archived before; so an index at or above the horizon (one past the newest index known to exist) is new, or
    was archived by another process since, which is a change too. The horizon is read from the store once, and
    again after a restore (which may hand out lower indices). Thread-safe.
    """

    def __init__(self) -> None:
        """Create a counter that knows no horizon yet."""
        self._horizon: int | None = None
        self._generation = 0
        self._lock = threading.Lock()

    def horizon(self, store: Archive) -> tuple[int, int]:
        """The horizon to count the next ``add`` against, with its generation (take it just before the add)."""
        with self._lock:
            horizon, generation = self._horizon, self._generation
        if horizon is None:
            bounds = store.bounds()
            horizon = 0 if bounds is None else bounds[1] + 1
        return horizon, generation

    def count(self, indices: Sequence[int], taken: tuple[int, int]) -> int:
        """How many distinct ``indices`` are new, given the ``horizon`` taken before the ``add``."""
        return len(self.new(indices, taken))

    def new(self, indices: Sequence[int], taken: tuple[int, int]) -> set[int]:
        """The distinct ``indices`` that are new, given the ``horizon`` taken before the ``add``."""
        horizon, generation = taken
        fresh = {i for i in indices if i >= horizon}
        with self._lock:
            if generation == self._generation:  # else a restore came in between: its horizon is read again
                self._horizon = max(horizon, self._horizon or 0, max(fresh, default=-1) + 1)
        return fresh

    def reset(self) -> None:
        """Forget the horizon: the archive was replaced."""
        with self._lock:
            self._horizon = None
            self._generation += 1
