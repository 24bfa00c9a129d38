"""Tools the agent can call on its archive: ``conversation_search``, ``conversation_read``, ``conversation_forget``.

The hook and the ``MemoryManager`` bring earlier exchanges back on their own; these tools let the model look for
itself (Letta's ``conversation_search``), read the rest of a passage it was shown (the injected lines carry
``[Message N]``), and delete what the user asks it to forget.

Example:
    ```python
    from strands import Agent
    from strands_semantic_memory import SemanticSummarizingConversationManager, memory_tools

    manager = SemanticSummarizingConversationManager()
    agent = Agent(conversation_manager=manager, tools=[*memory_tools(manager)])
    ```

Every tool output is bounded (``max_output_chars``) and says plainly when nothing matched. Invalid input raises
``ValueError`` with a message addressed to the model; Strands returns it as an error tool result, so the model can
correct the call. The tools are synchronous: Strands runs them in a worker thread, off the agent's event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from strands.tools.decorator import tool
from strands.types.tools import AgentTool

from strands_semantic_memory._validation import check_flag, check_int, check_score
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.formatting._block import format_windows
from strands_semantic_memory.formatting._tool_output import cut_message, read_window, render_windows
from strands_semantic_memory.tools._arguments import (
    format_index_ranges,
    format_time,
    int_argument,
    parse_time,
    resolve_memory,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "MAX_FORGET_INDICES",
    "MAX_READ_MESSAGES",
    "MAX_SEARCH_LIMIT",
    "format_index_ranges",
    "format_time",
    "memory_tools",
    "parse_time",
    "render_windows",
    "resolve_memory",
]

DEFAULT_MAX_OUTPUT_CHARS = 8000
"""Default size bound of one tool output, in characters (about 2,000 tokens)."""

MAX_SEARCH_LIMIT = 20
"""Most hits one ``conversation_search`` call may ask for."""

MAX_READ_MESSAGES = 50
"""Widest index span one ``conversation_read`` call reads."""

MAX_FORGET_INDICES = 1000
"""Most indices one ``conversation_forget`` call may name."""

MIN_FORGET_QUERY_CHARS = 3
"""Shortest text ``conversation_forget(query=...)`` accepts (a one-letter query would delete nearly everything)."""

ROLES = ("user", "assistant")


# ---------------------------------------------------------------------------------------------- the tools


def _filters_text(role: str | None, since: Any, until: Any) -> str:
    parts = []
    if role:
        parts.append(f"role={role}")
    if since not in (None, ""):
        parts.append(f"since={since}")
    if until not in (None, ""):
        parts.append(f"until={until}")
    return f" ({', '.join(parts)})" if parts else ""


def search_text(
    memory: SemanticMemory,
    query: str,
    limit: int = 5,
    role: str | None = None,
    since: Any = None,
    until: Any = None,
    *,
    context_radius: int | None = None,
    min_score: float | None = None,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
) -> str:
    """What ``conversation_search`` returns (see ``memory_tools``); usable without an agent.

    Raises:
        ValueError: On invalid arguments (the message is meant for the model).
    """
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string: the words or facts to look for")
    count = int_argument(limit, "limit")
    if not 1 <= count <= MAX_SEARCH_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {count}")
    if role is not None and role != "" and role not in ROLES:
        raise ValueError(f"role must be 'user', 'assistant' or omitted, got {role!r}")
    start = parse_time(since, name="since")
    stop = parse_time(until, name="until", end_of_day=True)
    if start is not None and stop is not None and start > stop:
        raise ValueError(f"since ({since}) is after until ({until}); nothing can match")
    if len(memory) == 0:
        return "The conversation archive is empty: nothing has been archived yet."
    windows = memory.retrieve(
        query,
        top_k=count,
        context_radius=context_radius,
        min_score=min_score,
        roles=[role] if role else None,
        since=start,
        until=stop,
    )
    filters = _filters_text(role or None, since, until)
    if not windows:
        return f"No archived messages match {query!r}{filters}."
    text, shown, left_out = render_windows(windows, max_chars - 300, show_dates=show_dates)
    hits = sum(len(w.hit_indices) for w in shown)
    header = f"Found {hits} matching archived message(s) for {query!r}{filters}, shown with their neighbours:"
    footer = []
    if left_out:
        footer.append(
            f"({left_out} more passage(s) not shown to stay within {max_chars} characters; narrow the query.)"
        )
    footer.append("conversation_read(start, end) shows any range of archived messages in full.")
    return "\n".join([header, text, *footer])


def read_text(
    memory: SemanticMemory,
    start: int,
    end: int | None = None,
    *,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
) -> str:
    """What ``conversation_read`` returns (see ``memory_tools``); usable without an agent.

    Raises:
        ValueError: On invalid arguments (the message is meant for the model).
    """
    first = int_argument(start, "start")
    last = first if end is None else int_argument(end, "end")
    if first < 0:
        raise ValueError(f"start must be an archive index >= 0, got {first}")
    if last < first:
        raise ValueError(f"end ({last}) must be >= start ({first})")
    if len(memory) == 0:
        return "The conversation archive is empty: nothing has been archived yet."
    stop = min(last, first + MAX_READ_MESSAGES - 1)
    found = memory.messages(first, stop)
    notes: list[str] = []
    if stop < last:
        notes.append(
            f"(At most {MAX_READ_MESSAGES} indices per call: call conversation_read({stop + 1}, {last}) next.)"
        )
    if not found:
        holders = memory.indices
        span = f"{holders[0]}-{holders[-1]}" if len(holders) else "none"
        return (
            f"No archived messages with index {first}-{stop}: never archived, forgotten or evicted. "
            f"The archive holds indices {span} ({len(memory)} messages)."
        )
    missing = sorted(set(range(first, stop + 1)) - {i for i, _ in found})
    timestamps: list[float | None] = []
    for index, _ in found:
        moment: float | None = None
        if show_dates:
            try:
                record = memory.record(index)
                moment = record.said_at if record.said_at is not None else record.archived_at
            except KeyError:  # forgotten between the two calls
                moment = None
        timestamps.append(moment)
    # Take whole messages while they fit, then render them as one fenced window.
    budget = max_chars - 400
    taken: list[int] = []
    used = 0
    for position, (index, message) in enumerate(found):
        single = read_window([(index, message)], [timestamps[position]])
        size = len(format_windows([single], show_dates=show_dates))
        if used + size > budget:
            break
        taken.append(position)
        used += size
    chosen = [found[p] for p in taken]
    chosen_times = [timestamps[p] for p in taken]
    if not chosen:  # one message larger than the whole budget: show its beginning
        index, message = found[0]
        chosen = [(index, cut_message(message, budget - 200, index))]
        chosen_times = [timestamps[0]]
    shown_until = chosen[-1][0]
    body = format_windows([read_window(chosen, chosen_times)], show_dates=show_dates)
    if shown_until < found[-1][0]:
        notes.insert(
            0,
            f"(Stopped after index {shown_until} to stay within {max_chars} characters: "
            f"call conversation_read({shown_until + 1}, {last}) for the rest.)",
        )
    missing_shown = [i for i in missing if i <= shown_until]
    header = f"Archived messages {first}-{min(stop, shown_until)}:"
    if missing_shown:
        header += f" (indices {format_index_ranges(missing_shown)} are not in the archive: forgotten or evicted)"
    return "\n".join([header, body, *notes])


def forget_text(memory: SemanticMemory, indices: Sequence[int] | None = None, query: str | None = None) -> str:
    """What ``conversation_forget`` does and returns (see ``memory_tools``); usable without an agent.

    Raises:
        ValueError: On invalid arguments (the message is meant for the model).
    """
    has_indices = indices is not None and len(indices) > 0
    has_query = isinstance(query, str) and bool(query.strip())
    if has_indices == has_query:
        raise ValueError(
            "give exactly one of: indices (archive indices, as shown in [Message N]) or query (text that the "
            "messages to forget contain, e.g. a phone number)"
        )
    if has_indices:
        assert indices is not None
        if isinstance(indices, (str, bytes)) or len(indices) > MAX_FORGET_INDICES:
            raise ValueError(f"indices must be a list of at most {MAX_FORGET_INDICES} archive indices")
        wanted = sorted({int_argument(i, "each index") for i in indices})
        if wanted[0] < 0:
            raise ValueError(f"archive indices are >= 0, got {wanted[0]}")
        forgotten = memory.forget(wanted)
        if not forgotten:
            return f"Nothing was forgotten: no archived message has index {format_index_ranges(wanted)}."
        missing = sorted(set(wanted) - set(forgotten))
        text = (
            f"Forgot {len(forgotten)} archived message(s): {format_index_ranges(forgotten)}. They can no longer be "
            "searched or read, and saved state no longer contains them."
        )
        if missing:
            text += f" Not in the archive (already gone): {format_index_ranges(missing)}."
        return text + " Messages still in the active conversation are not affected."
    assert query is not None
    needle = query.strip()
    if len(needle) < MIN_FORGET_QUERY_CHARS:
        raise ValueError(
            f"query must be at least {MIN_FORGET_QUERY_CHARS} characters: every message containing it is deleted"
        )
    forgotten = memory.forget(query=needle)
    if not forgotten:
        return f"Nothing was forgotten: no archived message contains {needle!r}."
    return (
        f"Forgot {len(forgotten)} archived message(s) containing {needle!r}: {format_index_ranges(forgotten)}. "
        "They can no longer be searched or read, and saved state no longer contains them. Messages still in the "
        "active conversation are not affected."
    )


SEARCH_DESCRIPTION = (
    "Search the archive of this conversation (everything said earlier, word for word, including what is no longer "
    "in your context) by meaning and keywords. Returns the matching messages with their neighbours, labelled "
    "[Message N, role, date]. Filter by role ('user' or 'assistant') and by time (since/until: ISO-8601 such as "
    "2024-05-01 or 2024-05-01T14:30:00Z, UTC unless a zone is given)."
)
READ_DESCRIPTION = (
    "Read archived messages of this conversation exactly as they were said, by archive index (the N of "
    "[Message N]), from start to end inclusive, at most 50 per call. Use it to see the rest of a passage that "
    "search or injected context showed you in part."
)
FORGET_DESCRIPTION = (
    "Permanently delete archived messages of this conversation, for privacy, when the user asks you to forget "
    "something. Give either indices (archive indices N from [Message N]) or query (text the messages contain, "
    "matched exactly, case-insensitively; every archived message containing it is deleted). Deleted messages can "
    "never be searched or read again."
)


def memory_tools(
    source: Any,
    *,
    include_forget: bool = True,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
    context_radius: int | None = None,
    min_score: float | None = None,
) -> list[AgentTool]:
    """The conversation tools for an agent: ``conversation_search``, ``conversation_read``, ``conversation_forget``.

    Example:
        ```python
        agent = Agent(conversation_manager=manager, tools=[*memory_tools(manager)])
        ```

    Args:
        source: A ``SemanticMemory``, a ``SemanticSummarizingConversationManager`` or a ``SemanticMemoryStore``.
        include_forget: Give the model ``conversation_forget`` too (it deletes for good).
        max_output_chars: Size bound of each tool output, in characters (at least 1,000).
        show_dates: Show each message's date (when it was said if known, else when it was archived).
        context_radius: Neighbours shown around each search hit (default: the memory's).
        min_score: Minimum cosine similarity of a search hit (default: the memory's).

    Returns:
        Strands tools, ready for ``Agent(tools=[...])``.

    Raises:
        ConfigurationError: If ``source`` has no ``SemanticMemory``, or an option has the wrong type or is out of
            range (``max_output_chars`` below 1,000, a flag that is not a bool, ...; the message names it).
    """
    memory = resolve_memory(source)
    check_int("max_output_chars", max_output_chars, minimum=1000)
    check_flag("include_forget", include_forget)
    check_flag("show_dates", show_dates)
    check_int("context_radius", context_radius, minimum=0, optional=True)
    min_score = check_score("min_score", min_score)

    def conversation_search(
        query: str, limit: int = 5, role: str | None = None, since: str | None = None, until: str | None = None
    ) -> str:
        """Search the archive of this conversation.

        Args:
            query: What to look for: words, names, numbers or a question.
            limit: How many matching messages to return (1-20); each comes with its neighbours.
            role: Only messages from 'user' or 'assistant'; omit for both.
            since: Only messages from this time on (ISO-8601, e.g. 2024-05-01 or 2024-05-01T14:30:00Z).
            until: Only messages up to this time (ISO-8601; a bare date includes the whole day).
        """
        return search_text(
            memory,
            query,
            limit,
            role,
            since,
            until,
            context_radius=context_radius,
            min_score=min_score,
            max_chars=max_output_chars,
            show_dates=show_dates,
        )

    def conversation_read(start: int, end: int | None = None) -> str:
        """Read archived messages exactly as they were said.

        Args:
            start: Archive index of the first message (the N of [Message N]).
            end: Archive index of the last message, inclusive; omit to read one message.
        """
        return read_text(memory, start, end, max_chars=max_output_chars, show_dates=show_dates)

    def conversation_forget(indices: list[int] | None = None, query: str | None = None) -> str:
        """Permanently delete archived messages.

        Args:
            indices: Archive indices of the messages to delete (the N of [Message N]).
            query: Delete every archived message containing this text (case-insensitive, at least 3 characters).
        """
        return forget_text(memory, indices, query)

    tools: list[AgentTool] = [
        tool(name="conversation_search", description=SEARCH_DESCRIPTION)(conversation_search),
        tool(name="conversation_read", description=READ_DESCRIPTION)(conversation_read),
    ]
    if include_forget:
        tools.append(tool(name="conversation_forget", description=FORGET_DESCRIPTION)(conversation_forget))
    return tools
