"""The in-process archive's record table: one column per field, addressed by archive index.

A record is a slot in parallel columns rather than a Python object per message: the message bytes in a list, the
role and the session as small codes, the idempotency key, counts and times in typed arrays: 36 bytes of columns and
an 8-byte list slot per record, where a slotted record object took 64 bytes, its list slot 8 and its key ``int`` 32
more. With the lexical index's uint32 postings, process memory per message at 100k messages fell by about 100 bytes
(1,787 -> 1,685 bytes of RSS beyond the text, 384-dim vectors, measured on the 2-core test machine, before the
session column's 4 bytes).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives._protocol import StoredRecord
from strands_semantic_memory.messages._codec import (
    IN_PROCESS_RECORD_BYTES,
    POSTING_BYTES,
    decode_message,
    searchable_text,
)
from strands_semantic_memory.messages._text import render_message

TextOf = Callable[[bytes], str]
"""The searchable text of an archived message's bytes."""


def default_text_of(data: bytes) -> str:
    """The searchable text of an archived message (what the engine embeds and indexes)."""
    return searchable_text(render_message(decode_message(data)))


_NO_KEY = 0  # keys are 64-bit digests: 0 marks "no key" (a real key of 0 still works, see RecordTable.remove)


class RecordTable:
    """Live archived records by archive index, oldest first; removed slots are cleared and trimmed in batches.

    Record ``i`` lives at slot ``i - base`` of every column. Not thread-safe: its archive's caller serializes calls.

    Attributes:
        base: Archive index of slot 0.
        oldest: The oldest live index (``next_index`` when empty).
        next_index: The index the next record gets.
        live: Number of live records.
        by_key: Compact idempotency key -> index, for records that have one.
        pending: Indices of records waiting for their vectors.
        message_bytes: Bytes of the live messages.
        vector_count: Vectors of the live records.
        term_entries: Lexical postings entries of the live records.
        evicted_count: Records evicted so far.
        forgotten_count: Records forgotten so far.
    """

    def __init__(self, base: int = 0) -> None:
        """Create an empty table whose first record gets index ``base``."""
        self.data: list[bytes | None] = []  # None: removed (or never archived, after a restore)
        self._roles = array("H")  # code into self._role_names
        self._role_names: list[str] = []
        self._role_codes: dict[str, int] = {}
        self._sessions = array("I")  # code into self._session_names (0: no session)
        self._session_names: list[str | None] = [None]
        self._session_codes: dict[str | None, int] = {None: 0}
        self._keys = array("Q")
        self.vector_counts = array("H")  # at most MAX_CHUNKS (256) per message
        self._terms = array("I")
        self.archived_at = array("d")
        self.said_at = array("d")  # NaN: unknown
        self.base = self.oldest = self.next_index = base
        self.live = 0
        self.by_key: dict[int, int] = {}
        self.pending: set[int] = set()
        self.message_bytes = 0
        self.vector_count = 0
        self.term_entries = 0
        self.evicted_count = 0
        self.forgotten_count = 0

    # ------------------------------------------------------------------ reading

    def __contains__(self, index: object) -> bool:
        """Whether ``index`` is a live record."""
        if not isinstance(index, int) or not self.oldest <= index < self.next_index:
            return False
        return self.data[index - self.base] is not None

    def role(self, index: int) -> str:
        """The role of a live record."""
        return self._role_names[self._roles[index - self.base]]

    def time(self, index: int) -> float:
        """When a live record was said, else when it was archived."""
        said = self.said_at[index - self.base]
        return self.archived_at[index - self.base] if math.isnan(said) else said

    def session(self, index: int) -> str | None:
        """The session a live record was said in (None: unknown)."""
        return self._session_names[self._sessions[index - self.base]]

    def stored(self, index: int) -> StoredRecord:
        """A live record as stores return it."""
        slot = index - self.base
        data = self.data[slot]
        assert data is not None
        said = self.said_at[slot]
        return StoredRecord(
            index=index,
            data=data,
            role=self._role_names[self._roles[slot]],
            archived_at=self.archived_at[slot],
            said_at=None if math.isnan(said) else said,
            session_id=self._session_names[self._sessions[slot]],
        )

    def live_indices(self) -> list[int]:
        """Every live index, ascending."""
        return [self.base + n for n, data in enumerate(self.data) if data is not None and self.base + n >= self.oldest]

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        if not self.live:
            return None
        newest = self.next_index - 1
        while self.data[newest - self.base] is None:
            newest -= 1
        return self.oldest, newest

    def nbytes(self, index: int, vector_bytes: int) -> int:
        """A live record's share of ``total_bytes`` (see ``_codec``)."""
        slot = index - self.base
        data = self.data[slot]
        assert data is not None
        return (
            len(data)
            + self.vector_counts[slot] * vector_bytes
            + self._terms[slot] * POSTING_BYTES
            + IN_PROCESS_RECORD_BYTES
        )

    def total_bytes(self, vector_bytes: int) -> int:
        """The estimated bytes of every live record, given what one stored vector costs in the vector index."""
        return (
            self.message_bytes
            + self.vector_count * vector_bytes
            + self.term_entries * POSTING_BYTES
            + self.live * IN_PROCESS_RECORD_BYTES
        )

    # ------------------------------------------------------------------ writing

    def append(
        self,
        data: bytes,
        role: str,
        key: int | None,
        archived_at: float,
        said_at: float | None,
        session_id: str | None,
        terms: int,
    ) -> int:
        """Add a record at ``next_index`` (not pending; see ``pending``) and return its index."""
        index = self.next_index
        if not self.live:
            self.oldest = index
        code = self._role_codes.get(role)
        if code is None:
            code = self._role_codes[role] = len(self._role_names)
            self._role_names.append(role)
        self.data.append(data)
        self._roles.append(code)
        self._sessions.append(self._session_code(session_id))
        self._keys.append(_NO_KEY if key is None else key)
        self.vector_counts.append(0)
        self._terms.append(terms)
        self.archived_at.append(archived_at)
        self.said_at.append(math.nan if said_at is None else said_at)
        self.next_index += 1
        self.live += 1
        self.message_bytes += len(data)
        self.term_entries += terms
        if key is not None:
            self.by_key[key] = index
        return index

    def _session_code(self, session_id: str | None) -> int:
        code = self._session_codes.get(session_id)
        if code is None:
            code = self._session_codes[session_id] = len(self._session_names)
            self._session_names.append(session_id)
        return code

    def skip(self) -> None:
        """Leave ``next_index`` empty (a forgotten record, when restoring)."""
        self.data.append(None)
        self._roles.append(0)
        self._sessions.append(0)
        self._keys.append(_NO_KEY)
        self.vector_counts.append(0)
        self._terms.append(0)
        self.archived_at.append(0.0)
        self.said_at.append(math.nan)
        self.next_index += 1
        if not self.live:
            self.oldest = self.next_index

    def set_vector_count(self, index: int, count: int) -> None:
        """Record that a live record's vectors are stored (it is no longer pending)."""
        slot = index - self.base
        self.vector_count += count - self.vector_counts[slot]
        self.vector_counts[slot] = count
        self.pending.discard(index)

    def remove(self, index: int) -> int:
        """Drop one live record; returns its vector count (the caller removes its vectors and postings)."""
        slot = index - self.base
        data = self.data[slot]
        assert data is not None
        self.data[slot] = None
        self.live -= 1
        self.message_bytes -= len(data)
        count = self.vector_counts[slot]
        self.vector_count -= count
        self.term_entries -= self._terms[slot]
        self.pending.discard(index)
        key = self._keys[slot]
        if self.by_key.get(key) == index:  # only a record that has this key maps to its own index
            del self.by_key[key]
        return count

    def advance_oldest(self) -> None:
        """Move ``oldest`` past removed slots; trim the columns once the dead prefix is large."""
        while self.oldest < self.next_index and self.data[self.oldest - self.base] is None:
            self.oldest += 1
        dead = self.oldest - self.base
        if dead and dead >= max(1024, self.live):
            for column in (
                self.data,
                self._roles,
                self._sessions,
                self._keys,
                self.vector_counts,
                self._terms,
                self.archived_at,
                self.said_at,
            ):
                del column[:dead]
            self.base = self.oldest

    def load(
        self,
        next_index: int,
        indices: npt.NDArray[np.int64],
        data: Sequence[bytes],
        roles: Sequence[str],
        keys: Sequence[int | None],
        archived_at: Sequence[float],
        said_at: Sequence[float | None],
        session_ids: Sequence[str | None],
        vector_counts: npt.NDArray[np.int64],
        terms: npt.NDArray[np.int64],
    ) -> None:
        """Fill an empty table in bulk: records at ascending ``indices``, the indices between them left empty.

        Pending records are added to ``pending`` by the caller.
        """
        base = int(indices[0]) if len(indices) else next_index
        span = next_index - base
        slots = (indices - base).astype(np.int64)
        if span == len(indices):  # no forgotten index among them: the list as it is
            self.data = list(data)
        else:
            self.data = [None] * span
            for slot, message in zip(slots.tolist(), data, strict=True):
                self.data[slot] = message
        self._role_names = list(dict.fromkeys(roles))
        self._role_codes = {role: code for code, role in enumerate(self._role_names)}
        self._roles = _column("H", span, slots, [self._role_codes[r] for r in roles])
        self._session_names = [None, *dict.fromkeys(s for s in session_ids if s is not None)]
        self._session_codes = {session: code for code, session in enumerate(self._session_names)}
        self._sessions = _column("I", span, slots, [self._session_codes[s] for s in session_ids])
        self._keys = _column("Q", span, slots, [0 if k is None else k for k in keys])
        self.vector_counts = _column("H", span, slots, vector_counts)
        self._terms = _column("I", span, slots, terms)
        self.archived_at = _column("d", span, slots, archived_at)
        self.said_at = _column("d", span, slots, [math.nan if s is None else s for s in said_at], fill=math.nan)
        self.base = self.oldest = base
        self.next_index = next_index
        self.live = len(indices)
        self.by_key = {k: i for k, i in zip(keys, indices.tolist(), strict=True) if k is not None}
        self.message_bytes = sum(map(len, data))
        self.vector_count = int(vector_counts.sum())
        self.term_entries = int(terms.sum())


_DTYPES = {"H": np.uint16, "I": np.uint32, "Q": np.uint64, "d": np.float64}


def _column(code: str, span: int, slots: npt.NDArray[np.int64], values: Any, fill: float = 0) -> array[Any]:
    """A typed column of ``span`` slots holding ``values`` at ``slots`` and ``fill`` elsewhere."""
    column = np.full(span, fill, dtype=_DTYPES[code])
    column[slots] = np.asarray(values, dtype=_DTYPES[code]) if len(slots) else column[slots]
    result: array[Any] = array(code)
    result.frombytes(column.tobytes())
    return result
