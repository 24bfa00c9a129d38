"""Tools the agent can call on its archive: ``conversation_search``, ``conversation_read``, ``conversation_forget``.

The hook and the ``MemoryManager`` bring earlier exchanges back on their own; these tools let the model look for
itself (Letta's ``conversation_search``), read the rest of a passage it was shown (the injected lines carry
``[Message N]``), and, where the developer allows it (``allow_forget=True``), delete what the user asks it to
forget. Archived text is untrusted (anything a user or a tool result said), so the destructive tool is never
offered by default.

Example:
    ```python
    from strands import Agent
    from strands_semantic_memory import SemanticSummarizingConversationManager, memory_tools

    manager = SemanticSummarizingConversationManager()
    agent = Agent(conversation_manager=manager, tools=[*memory_tools(manager)])  # search and read
    ```

Every tool output is bounded (``max_output_chars``), whatever the model sends, and says plainly when nothing
matched. Arguments of the wrong type are refused, never coerced (``indices=[true]`` is not index 1). Invalid input
raises ``ValueError`` with a short message addressed to the model; Strands returns it as an error tool result, so
the model can correct the call. Forgetting is bounded: one call deletes at most ``max_forget_per_call`` messages,
and the application can ask to confirm each deletion (``confirm_forget``). A message forgotten while it is still in
the active conversation is deleted as it leaves it (by the conversation manager), never kept in the archive. The
tools are synchronous: Strands runs them in a worker thread, off the agent's event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strands.tools.decorator import tool
from strands.types.content import Message
from strands.types.tools import AgentTool, ToolContext

from strands_semantic_memory import _telemetry
from strands_semantic_memory._validation import check_flag, check_int, check_score
from strands_semantic_memory.engine._memory import SemanticMemory, resolve_memory
from strands_semantic_memory.errors import ConfigurationError, SemanticMemoryError
from strands_semantic_memory.formatting._block import format_passages
from strands_semantic_memory.formatting._tool_output import cut_message, read_passage, render_passages
from strands_semantic_memory.messages._codec import searchable_text
from strands_semantic_memory.messages._session import agent_scope
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.tools._arguments import (
    ModelIndices,
    ModelInt,
    ModelText,
    bounded,
    format_index_ranges,
    format_time,
    index_list_argument,
    int_argument,
    parse_time,
    quoted,
    text_argument,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MAX_FORGET_PER_CALL",
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_SEARCH_LIMIT",
    "MAX_FORGET_INDICES",
    "MAX_QUERY_CHARS",
    "MAX_READ_MESSAGES",
    "MAX_SEARCH_LIMIT",
    "ForgetRequest",
    "format_index_ranges",
    "format_time",
    "memory_tools",
    "parse_time",
    "render_passages",
]

DEFAULT_MAX_OUTPUT_CHARS = 8000
"""Default size bound of one tool output, in characters (about 2,000 tokens)."""

DEFAULT_SEARCH_LIMIT = 5
"""Matching messages ``conversation_search`` returns when the model gives no ``limit``."""
MAX_SEARCH_LIMIT = 20
"""Most hits one ``conversation_search`` call may ask for."""

MAX_READ_MESSAGES = 50
"""Widest index span one ``conversation_read`` call reads."""

MAX_FORGET_INDICES = 1000
"""Most indices one ``conversation_forget`` call may name (more is refused before anything is read)."""

DEFAULT_MAX_FORGET_PER_CALL = 20
"""Default bound of ``max_forget_per_call``: most archived messages one ``conversation_forget`` call deletes."""

MIN_FORGET_QUERY_CHARS = 3
"""Shortest text ``conversation_forget(query=...)`` accepts (a one-letter query would delete nearly everything)."""

MAX_QUERY_CHARS = 2000
"""Longest ``query`` the tools accept (a search query or a text to forget; longer is refused, never echoed)."""

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class ForgetRequest:
    """What one ``conversation_forget`` call would delete, shown to the application's ``confirm_forget``.

    Attributes:
        indices: The archive indices, ascending.
        messages: The archived messages at those indices, same order.
        query: The text the model asked to forget, or None when it named indices.
    """

    indices: tuple[int, ...]
    messages: tuple[Message, ...]
    query: str | None = None


ConfirmForget = Callable[[ForgetRequest], bool]
"""The application's decision on a ``ForgetRequest``: True deletes, False deletes nothing."""


# ---------------------------------------------------------------------------------------------- the tools


def _filters_text(role: str | None, since: Any, until: Any) -> str:
    parts = []
    if role:
        parts.append(f"role={role}")
    if since not in (None, ""):
        parts.append(f"since={str(since)[:40]}")
    if until not in (None, ""):
        parts.append(f"until={str(until)[:40]}")
    return f" ({', '.join(parts)})" if parts else ""


def _optional_text(value: Any, name: str) -> str | None:
    return None if value is None else text_argument(value, name, max_chars=MAX_QUERY_CHARS)


def search_text(
    memory: SemanticMemory,
    query: str,
    limit: int = DEFAULT_SEARCH_LIMIT,
    role: str | None = None,
    since: Any = None,
    until: Any = None,
    *,
    context_radius: int | None = None,
    min_score: float | None = None,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
    sessions: frozenset[str | None] | None = None,
) -> str:
    """What ``conversation_search`` returns (see ``memory_tools``); usable without an agent.

    ``sessions``: the sessions the agent may recall (``session_scope``; None: every session).

    Raises:
        ValueError: On invalid arguments (the message is meant for the model).
    """
    query = text_argument(query, "query", max_chars=MAX_QUERY_CHARS)
    if not query.strip():
        raise ValueError("query must be a non-empty string: the words or facts to look for")
    count = int_argument(limit, "limit")
    if not 1 <= count <= MAX_SEARCH_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {count}")
    if role is not None and role != "" and role not in ROLES:
        raise ValueError(f"role must be 'user', 'assistant' or omitted, got {quoted(role)}")
    since, until = _optional_text(since, "since"), _optional_text(until, "until")
    start = parse_time(since, name="since")
    stop = parse_time(until, name="until", end_of_day=True)
    if start is not None and stop is not None and start > stop:
        raise ValueError(f"since ({since}) is after until ({until}); nothing can match")
    if len(memory) == 0:
        return "The conversation archive is empty: nothing has been archived yet."
    passages = memory.retrieve(
        query,
        top_k=count,
        context_radius=context_radius,
        min_score=min_score,
        roles=[role] if role else None,
        since=start,
        until=stop,
        sessions=sessions,
    )
    filters = _filters_text(role or None, since, until)
    if not passages:
        return f"No archived messages match {quoted(query)}{filters}."
    text, shown, left_out = render_passages(passages, max_chars - 400, show_dates=show_dates)
    hits = sum(len(w.hit_indices) for w in shown)
    header = f"Found {hits} matching archived message(s) for {quoted(query)}{filters}, shown with their neighbours:"
    footer = []
    if left_out:
        footer.append(
            f"({left_out} more passage(s) not shown to stay within {max_chars} characters; narrow the query.)"
        )
    footer.append("conversation_read(start, end) shows any range of archived messages in full.")
    return "\n".join([header, text, *footer])


def read_text(
    memory: SemanticMemory,
    start: Any,
    end: Any = None,
    *,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
    sessions: frozenset[str | None] | None = None,
) -> str:
    """What ``conversation_read`` returns (see ``memory_tools``); usable without an agent.

    ``sessions``: the sessions the agent may recall; a message of another session reads as not in the archive.

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
    found = _in_scope(memory, memory.messages(first, stop), sessions)
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
    # Take whole messages while they fit, then render them as one fenced passage.
    budget = max_chars - 400
    taken: list[int] = []
    used = 0
    for position, (index, message) in enumerate(found):
        single = read_passage([(index, message)], [timestamps[position]])
        size = len(format_passages([single], show_dates=show_dates))
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
    body = format_passages([read_passage(chosen, chosen_times)], show_dates=show_dates)
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


def forget_text(
    memory: SemanticMemory,
    indices: Any = None,
    query: Any = None,
    *,
    max_per_call: int = DEFAULT_MAX_FORGET_PER_CALL,
    confirm: ConfirmForget | None = None,
    active: list[Message] | None = None,
    manager: Any = None,
    sessions: frozenset[str | None] | None = None,
) -> str:
    """What ``conversation_forget`` does and returns (see ``memory_tools``); usable without an agent.

    Args:
        memory: The archive.
        indices: Archive indices to delete (as the model sent them).
        query: Or: delete the archived messages containing this text (as the model sent it).
        max_per_call: Most archived messages one call deletes; a call that would delete more deletes nothing.
        confirm: The application's ``confirm_forget``, if any.
        active: The agent's active conversation, to find the messages still in it that hold ``query``.
        manager: The conversation manager that archives the active conversation (``forget_when_archived``).
        sessions: The sessions the agent may recall: nothing outside them is found or deleted (None: every one).

    Raises:
        ValueError: On invalid arguments (the message is meant for the model).
    """
    if indices is not None and query is not None and query != "" and indices != []:
        raise ValueError(_ONE_OF)
    if indices is not None and indices != []:
        wanted = index_list_argument(indices, "indices", MAX_FORGET_INDICES)
        needle = None
        if len(wanted) > max_per_call:
            return (
                f"Nothing was forgotten: {len(wanted)} indices were given, and at most {max_per_call} archived "
                "messages can be forgotten per call. Ask the user which ones matter, or forget them in smaller calls."
            )
        found = _records(memory, wanted, sessions)
    elif query is not None and query != "":
        needle = text_argument(query, "query", max_chars=MAX_QUERY_CHARS).strip()
        if len(needle) < MIN_FORGET_QUERY_CHARS:
            raise ValueError(
                f"query must be at least {MIN_FORGET_QUERY_CHARS} characters: every message containing it is deleted"
            )
        try:
            matches = memory.find_text(needle)
        except SemanticMemoryError as error:  # the engine's own rules for a query
            raise ValueError(str(error)) from None
        if sessions is not None:
            matches = sorted(_records(memory, matches, sessions))
        if len(matches) > max_per_call:
            return (
                f"Nothing was forgotten: {len(matches)} archived messages contain that text, and at most "
                f"{max_per_call} can be forgotten per call. Use a more specific text (the exact number or name), "
                "or archive indices."
            )
        wanted, found = matches, _records(memory, matches, sessions)
    else:
        raise ValueError(_ONE_OF)
    existing = sorted(found)
    if existing and confirm is not None:
        request = ForgetRequest(tuple(existing), tuple(found[i] for i in existing), needle)
        if not confirm(request):
            return (
                f"Nothing was forgotten: the application did not confirm deleting {len(existing)} archived "
                f"message(s) ({format_index_ranges(existing)}). Tell the user; they can confirm and ask again."
            )
    forgotten = memory.forget(existing) if existing else []
    held = _held_elsewhere(found, forgotten, needle, active, manager)
    parts: list[str] = []
    if forgotten:
        parts.append(
            f"Forgot {len(forgotten)} archived message(s): {format_index_ranges(forgotten)}. They can no longer be "
            "searched or read, and saved state no longer contains them."
        )
    elif needle is not None:
        parts.append("Nothing was forgotten from the archive: no archived message contains that text.")
    else:
        parts.append(f"Nothing was forgotten: no archived message has index {format_index_ranges(wanted)}.")
    missing = sorted(set(wanted) - set(forgotten)) if needle is None else []
    if forgotten and missing:
        parts.append(f"Not in the archive (already gone): {format_index_ranges(missing)}.")
    parts.append(held)
    return " ".join(p for p in parts if p)


_ONE_OF = (
    "give exactly one of: indices (archive indices, as shown in [Message N]) or query (text that the "
    "messages to forget contain, e.g. a phone number)"
)


def _records(
    memory: SemanticMemory, indices: list[int], sessions: frozenset[str | None] | None = None
) -> dict[int, Message]:
    """The archived messages at ``indices`` that exist (and were said in ``sessions``, when given)."""
    found: dict[int, Message] = {}
    for index in indices:
        try:
            if sessions is None:
                found[index] = memory.get(index)
                continue
            record = memory.record(index)
        except KeyError:
            continue
        if record.session_id in sessions:
            found[index] = record.message
    return found


def _in_scope(
    memory: SemanticMemory, found: list[tuple[int, Message]], sessions: frozenset[str | None] | None
) -> list[tuple[int, Message]]:
    """``found`` without the messages of sessions outside ``sessions`` (None: all of them)."""
    if sessions is None:
        return found
    kept = _records(memory, [i for i, _ in found], sessions)
    return [(i, m) for i, m in found if i in kept]


def _sessions(memory: SemanticMemory, tool_context: ToolContext | None) -> frozenset[str | None] | None:
    """The sessions the calling agent may recall (the one rule: a named user recalls all of them)."""
    return agent_scope(memory.user_id, getattr(tool_context, "agent", None))


def _contains(message: Message, needle: str) -> bool:
    """Whether a message's searchable text contains ``needle`` as the archive matches it (``find_text``)."""
    return needle.casefold() in searchable_text(render_message(message)).casefold()


def _held_elsewhere(
    found: dict[int, Message], forgotten: list[int], needle: str | None, active: list[Message] | None, manager: Any
) -> str:
    """Keep forgotten messages forgotten where they still are: the active conversation, soon archived again.

    Messages in the active conversation that hold the forgotten text, and the active copies of forgotten archived
    messages (same tracking id), are handed to the conversation manager, which deletes them as they leave the
    conversation instead of keeping them in the archive.

    Returns:
        What to tell the model about them.
    """
    ids = {str(found[i].get("tracking_id")) for i in forgotten if found[i].get("tracking_id")}
    in_context = [
        m
        for m in active or []
        if (needle is not None and _contains(m, needle)) or (m.get("tracking_id") and m.get("tracking_id") in ids)
    ]
    ids.update(str(m["tracking_id"]) for m in in_context if m.get("tracking_id"))
    keeper = getattr(manager, "forget_when_archived", None)
    if ids and callable(keeper):
        keeper(ids)
    if not in_context:
        return ""
    if callable(keeper):
        return (
            f"{len(in_context)} message(s) still in the active conversation hold it: they are deleted as they "
            "leave it, never kept in the archive."
        )
    return f"{len(in_context)} message(s) still in the active conversation hold it and are not affected."


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
    allow_forget: bool = False,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    show_dates: bool = True,
    context_radius: int | None = None,
    min_score: float | None = None,
    max_forget_per_call: int = DEFAULT_MAX_FORGET_PER_CALL,
    confirm_forget: ConfirmForget | None = None,
) -> list[AgentTool]:
    """The conversation tools: ``conversation_search``, ``conversation_read``; ``conversation_forget`` if allowed.

    Example:
        ```python
        agent = Agent(conversation_manager=manager, tools=[*memory_tools(manager)])  # search and read
        agent = Agent(conversation_manager=manager, tools=[*memory_tools(manager, allow_forget=True)])  # + forget
        ```

    Args:
        source: A ``SemanticMemory``, a ``SemanticSummarizingConversationManager``, a ``SemanticMemoryStore`` or a
            ``SemanticStorage`` (the tools then search everything stored in it, active context included).
        allow_forget: Give the model ``conversation_forget`` too, which deletes archived messages for good. Off by
            default: deletion is something the developer turns on.
        max_output_chars: Size bound of each tool output, in characters (at least 1,000).
        show_dates: Show each message's date (when it was said if known, else when it was archived).
        context_radius: Neighbours shown around each search hit (default: the memory's).
        min_score: Minimum cosine similarity of a search hit (default: the memory's).
        max_forget_per_call: Most archived messages one ``conversation_forget`` call deletes (default 20); a call
            that would delete more deletes nothing and tells the model so. 1 turns bulk forgetting off. Only with
            ``allow_forget=True``.
        confirm_forget: ``confirm_forget(request) -> bool``, called with a ``ForgetRequest`` before each deletion
            (ask the user, apply a policy); False deletes nothing and the model is told so. Only with
            ``allow_forget=True``.

    Returns:
        Strands tools, ready for ``Agent(tools=[...])``.

    Raises:
        ConfigurationError: If ``source`` has no ``SemanticMemory``, or an option has the wrong type or is out of
            range (``max_output_chars`` below 1,000, ``max_forget_per_call`` below 1, a flag that is not a bool,
            ``confirm_forget`` not callable, ...; the message names it), or a forget option is set without
            ``allow_forget=True``.
    """
    memory = resolve_memory(source, pass_as="memory_tools(source)")
    check_int("max_output_chars", max_output_chars, minimum=1000)
    check_int("max_forget_per_call", max_forget_per_call, minimum=1)
    check_flag("allow_forget", allow_forget)
    check_flag("show_dates", show_dates)
    check_int("context_radius", context_radius, minimum=0, optional=True)
    min_score = check_score("min_score", min_score)
    if confirm_forget is not None and not callable(confirm_forget):
        raise ConfigurationError(f"confirm_forget must be callable, got {confirm_forget!r}")
    if not allow_forget and (confirm_forget is not None or max_forget_per_call != DEFAULT_MAX_FORGET_PER_CALL):
        given = "confirm_forget" if confirm_forget is not None else f"max_forget_per_call={max_forget_per_call}"
        raise ConfigurationError(
            f"{given} configures conversation_forget, which is off: pass allow_forget=True to give the model the "
            "tool that deletes archived messages"
        )

    def answer(name: str, make: Callable[[], str]) -> str:
        """The tool's answer, bounded; a refusal's message bounded too (Strands returns it as the result).

        Each call is a ``memory.tool`` span (under Strands' ``execute_tool`` span) naming the tool; a refusal is
        recorded on it as an error.
        """
        with _telemetry.Operation("memory.tool", {"gen_ai.tool.name": name}) as operation:
            try:
                text = bounded(make(), max_output_chars)
            except ValueError as error:
                raise ValueError(bounded(str(error), max_output_chars - 100)) from None
            if operation.recording:
                operation.set({"memory.tool.output_chars": len(text)})
            return text

    def conversation_search(
        query: ModelText,
        limit: ModelInt = DEFAULT_SEARCH_LIMIT,
        role: ModelText | None = None,
        since: ModelText | None = None,
        until: ModelText | None = None,
        tool_context: ToolContext | None = None,
    ) -> str:
        """Search the archive of this conversation.

        Args:
            tool_context: Supplied by Strands (the agent, whose session scopes the search of an unnamed memory).
            query: What to look for: words, names, numbers or a question.
            limit: How many matching messages to return (1-20); each comes with its neighbours.
            role: Only messages from 'user' or 'assistant'; omit for both.
            since: Only messages from this time on (ISO-8601, e.g. 2024-05-01 or 2024-05-01T14:30:00Z).
            until: Only messages up to this time (ISO-8601; a bare date includes the whole day).
        """
        return answer(
            "conversation_search",
            lambda: search_text(
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
                sessions=_sessions(memory, tool_context),
            ),
        )

    def conversation_read(start: ModelInt, end: ModelInt | None = None, tool_context: ToolContext | None = None) -> str:
        """Read archived messages exactly as they were said.

        Args:
            start: Archive index of the first message (the N of [Message N]).
            end: Archive index of the last message, inclusive; omit to read one message.
            tool_context: Supplied by Strands (the agent, whose session scopes an unnamed memory).
        """
        sessions = _sessions(memory, tool_context)
        return answer(
            "conversation_read",
            lambda: read_text(memory, start, end, max_chars=max_output_chars, show_dates=show_dates, sessions=sessions),
        )

    def conversation_forget(
        tool_context: ToolContext | None = None, indices: ModelIndices | None = None, query: ModelText | None = None
    ) -> str:
        """Permanently delete archived messages.

        Args:
            tool_context: Supplied by Strands (None when the tool is called directly: no agent, no active context).
            indices: Archive indices of the messages to delete (the N of [Message N]).
            query: Delete every archived message containing this text (case-insensitive, at least 3 characters).
        """
        agent = getattr(tool_context, "agent", None)
        manager = source if hasattr(source, "forget_when_archived") else getattr(agent, "conversation_manager", None)
        if getattr(manager, "memory", None) is not memory:
            manager = None
        return answer(
            "conversation_forget",
            lambda: forget_text(
                memory,
                indices,
                query,
                max_per_call=max_forget_per_call,
                confirm=confirm_forget,
                active=list(getattr(agent, "messages", None) or []),
                manager=manager,
                sessions=_sessions(memory, tool_context),
            ),
        )

    tools: list[AgentTool] = [
        tool(name="conversation_search", description=SEARCH_DESCRIPTION, context=True)(conversation_search),
        tool(name="conversation_read", description=READ_DESCRIPTION, context=True)(conversation_read),
    ]
    if allow_forget:
        tools.append(
            tool(name="conversation_forget", description=FORGET_DESCRIPTION, context=True)(conversation_forget)
        )
    return tools
