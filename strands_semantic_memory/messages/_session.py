"""Users and sessions: the ids the library keeps, and the one rule of who recalls what.

Naming the user turns on recall across sessions: a memory whose user is named recalls every session of that user;
one without a user recalls only the agent's session (and records that carry no session). Users are kept apart
physically (a file or a PostgreSQL partition each), so a user id is checked strictly; a session id is any string,
kept as it is when short and printable, else mapped to a digest of it, so no id is ever dropped or confused with
another.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from strands_semantic_memory.errors import ConfigurationError

__all__ = ["MAX_ID_CHARS", "agent_scope", "check_user_id", "session_key", "session_of", "session_scope"]

MAX_ID_CHARS = 256
"""The longest user id, and the longest session id kept as written (a longer session id is kept as its digest)."""
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _printable(value: str) -> bool:
    return value.isprintable() and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)


def check_user_id(value: Any, name: str = "user_id") -> str | None:
    """A user id as given (None: no named user).

    Raises:
        ConfigurationError: If it is not a non-empty printable string of at most ``MAX_ID_CHARS`` characters.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS or not _printable(value):
        raise ConfigurationError(
            f"{name} must be a non-empty printable string of at most {MAX_ID_CHARS} characters, got {value!r:.80}"
        )
    return value


def session_key(value: Any) -> str | None:
    """The id a session is archived under: the id itself when short and printable, else ``"sha256:<hex>"`` of it.

    Distinct ids stay distinct (a digest never equals a printable id of 256 characters or less that does not start
    with ``sha256:``, and an id that does is mapped too), so two chats never share a scope by accident. A key this
    function made is its own key (``session_of`` keys an agent's id, and the engine keys what it is given again).
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    if _DIGEST.fullmatch(text) or (
        text and len(text) <= MAX_ID_CHARS and _printable(text) and not text.startswith("sha256:")
    ):
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def session_of(agent: Any) -> str | None:
    """The session an agent's messages are archived under: ``agent.session_id`` (its session manager's id)."""
    return session_key(getattr(agent, "session_id", None))


def session_scope(user_id: str | None, session_id: str | None) -> frozenset[str | None] | None:
    """The sessions a turn of ``session_id`` may recall from a memory of ``user_id`` (None: every session)."""
    if user_id is not None or session_id is None:
        return None
    return frozenset({session_id, None})


def agent_scope(user_id: str | None, agent: Any) -> frozenset[str | None] | None:
    """``session_scope`` for a turn of ``agent``."""
    return session_scope(user_id, session_of(agent))
