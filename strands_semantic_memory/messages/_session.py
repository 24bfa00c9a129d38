"""The Strands session an agent's messages belong to."""

from __future__ import annotations

import logging
from typing import Any

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.errors import ConfigurationError

__all__ = ["agent_scope", "session_of", "session_scope"]

logger = logging.getLogger(__name__)


def session_of(agent: Any) -> str | None:
    """``agent.session_id`` (its session manager's id, else the one Strands gave the agent), if it is a valid id.

    None for no agent, or an id that is not one (empty, too long, control characters): logged, never raised, so a
    conversation is never broken by its session's name.
    """
    value = getattr(agent, "session_id", None)
    if value is None:
        return None
    try:
        return check_identifier("session_id", value)
    except ConfigurationError as error:
        logger.warning("error=<%s> | the agent's session id is not a valid id; it is treated as no session", error)
        return None


def session_scope(user_id: str | None, session_id: str | None) -> frozenset[str | None] | None:
    """The sessions a turn of ``session_id`` may recall from a memory of ``user_id`` (None: all of them).

    The one rule for users and sessions: naming the user turns on recall across sessions. A memory whose user is
    named recalls every session of that user; one without a user recalls only the agent's session, and records that
    carry no session.
    """
    if user_id is not None or session_id is None:
        return None
    return frozenset({session_id, None})


def agent_scope(user_id: str | None, agent: Any) -> frozenset[str | None] | None:
    """``session_scope`` for a turn of ``agent`` (its session read by ``session_of``)."""
    return session_scope(user_id, session_of(agent))
