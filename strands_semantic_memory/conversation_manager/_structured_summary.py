"""StructuredSummary: the structured summary kept by the manager when ``summary_format="structured"``.

A prose summary drifts: each reduction summarizes the previous summary again. A structured summary is a small
object of named fields that the next reduction *merges into*: the model receives the previous summary and the
messages leaving the context, and returns the updated one. It reaches the chat model as one compact, delimited
message in place of the prose summary, and the archive still holds every word (each fact names the archive messages
it came from).

This module holds the default schema, how a summary is written into the conversation, how it is kept within a
budget (``trim_state``) and how it is saved with a session; ``_summarizer`` asks the model for it. (The model-facing
delimiters and the session key still say ``session_state``: they are what the model and saved sessions read.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from strands.types.content import Message

from strands_semantic_memory.errors import StateError

__all__ = [
    "STATE_CLOSE",
    "STATE_OPEN",
    "Fact",
    "StructuredSummary",
    "TrimReport",
    "cited_sources",
    "clean_state",
    "dump_structured_summary",
    "load_structured_summary",
    "read_state_block",
    "render_state",
    "state_json",
    "state_message",
    "trim_state",
]

STATE_OPEN = "<session_state>"
"""Opening delimiter of the state in the message the chat model sees."""
STATE_CLOSE = "</session_state>"
r"""Closing delimiter; the state's JSON never contains it (``<`` is written as ``\u003c``)."""

_HEADER = (
    "[Session state kept by the conversation manager: the earlier conversation condensed into facts, decisions, "
    "preferences and open threads. The earlier messages are archived word for word; the numbers in "
    '"sources" are their archive indices.]'
)


class Fact(BaseModel):
    """One fact or decision, with the archived messages it came from."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(
        description="The fact, with every name, number, date, identifier, amount, path and code exactly as written "
        "in the messages (copy values verbatim; never round or paraphrase them)."
    )
    sources: list[int] = Field(
        default_factory=list,
        description="Archive indices (the #N numbers given with the messages) of the messages this comes from.",
    )


class StructuredSummary(BaseModel):
    """What the conversation has established so far: the default schema of ``summary_format="structured"``."""

    model_config = ConfigDict(extra="ignore")

    facts: list[Fact] = Field(
        default_factory=list,
        description="Hard facts, zero loss: names, numbers, dates, identifiers, amounts, code, file paths, results.",
    )
    decisions: list[Fact] = Field(
        default_factory=list, description="Decisions made and agreements reached, each with its reason if given."
    )
    user_preferences: list[str] = Field(
        default_factory=list, description="The user's stated preferences, constraints and goals."
    )
    tone: str = Field(default="", description="The user's tone and preferred communication style, in a few words.")
    shared_concepts: list[str] = Field(
        default_factory=list,
        description="Concepts already explained to or known by the user, so they are not explained again.",
    )
    open_threads: list[str] = Field(
        default_factory=list, description="Unanswered questions and pending tasks; remove those that were resolved."
    )
    narrative: str = Field(
        default="", description="Two or three sentences bridging to the current point of the conversation."
    )


def _without_empty(value: Any) -> Any:
    """Drop empty strings, lists, dicts and None (nothing to say costs no tokens)."""
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ("", [], {}, None)}
    if isinstance(value, list):
        items = [_without_empty(v) for v in value]
        return [v for v in items if v not in ("", [], {}, None)]
    return value


def _json_of(data: Any) -> str:
    return json.dumps(_without_empty(data), ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def state_json(state: BaseModel) -> str:
    r"""The state as compact JSON without empty fields, safe to place between the delimiters.

    ``<`` is escaped as ``\u003c`` (still valid JSON), so text inside the state can never close the block.
    """
    return _json_of(state.model_dump(mode="json"))


def render_state(state: BaseModel, note: str = "") -> str:
    """The text of the message that carries the state: a one-line header, an optional note, the delimited JSON."""
    header = f"{_HEADER}\n{note}" if note else _HEADER
    return f"{header}\n{STATE_OPEN}\n{state_json(state)}\n{STATE_CLOSE}"


def state_message(state: BaseModel, note: str = "") -> Message:
    """The user-role message that replaces the prose summary (same shape as Strands' summary message)."""
    return {"role": "user", "content": [{"text": render_state(state, note)}]}


# ------------------------------------------------------------------ keeping the state within a budget


@dataclass(frozen=True)
class TrimReport:
    """What ``trim_state`` left out of a state.

    Attributes:
        items: List items left out (the oldest first) and texts shortened.
        sources: The archive indices the items left out cited, ascending (their messages stay archived).
    """

    items: int = 0
    sources: list[int] = field(default_factory=list)

    def note(self) -> str:
        """One line for the model saying what was left out and where it still is (empty when nothing was)."""
        if not self.items:
            return ""
        ranges = _ranges(self.sources).split(", ")
        shown = ", ".join(ranges[:8]) + (f" and {len(ranges) - 8} more ranges" if len(ranges) > 8 else "")
        where = f" (archive indices {shown})" if self.sources else ""
        return (
            f"[{self.items} older items of the state were left out to keep it within its budget; the messages they "
            f"came from are archived{where}: search the archive for them.]"
        )


def _ranges(indices: list[int]) -> str:
    parts: list[str] = []
    for index in indices:
        if parts and parts[-1].split("-")[-1] == str(index - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{index}"
        else:
            parts.append(str(index))
    return ", ".join(parts)


def _cited(item: Any) -> list[int]:
    sources = item.get("sources") if isinstance(item, dict) else None
    return [s for s in sources if isinstance(s, int) and not isinstance(s, bool)] if isinstance(sources, list) else []


def _accepts(schema: type[BaseModel], data: dict[str, Any], key: str, value: Any) -> bool:
    """Whether ``schema`` validates ``data`` with ``key`` set to ``value`` (``data`` is left as it was)."""
    try:
        schema.model_validate({**data, key: value})
    except ValidationError:
        return False
    return True


def trim_state(state: BaseModel, max_chars: int) -> tuple[BaseModel, TrimReport]:
    """The state within ``max_chars`` characters of ``state_json``: its largest parts give way first.

    While the state is too large, the largest field gives way: a list loses its oldest item (the first: merges
    append), a text is cut in half. Facts and decisions cite archive indices, so what they said stays findable in
    the archive; the report lists those indices. Works on any pydantic schema: a field the schema does not accept
    trimmed is left as it is, and if the result does not validate, the state is returned whole.

    Args:
        state: The state.
        max_chars: The budget for ``state_json(state)``.

    Returns:
        The trimmed state (``state`` itself when it fits) and what was left out.
    """
    if len(state_json(state)) <= max_chars:
        return state, TrimReport()
    schema = type(state)
    data = state.model_dump(mode="json")
    items, sources = 0, set()
    fixed: set[str] = set()
    for _ in range(16):  # each round removes at least the excess it measured; a few rounds absorb escaping
        excess = len(_json_of(data)) - max_chars
        sizes = {
            k: len(json.dumps(v, ensure_ascii=False))
            for k, v in data.items()
            if k not in fixed and isinstance(v, (list, str)) and v
        }
        if excess <= 0 or not sizes:
            break
        dropped = dict.fromkeys(sizes, 0)  # list items dropped from the front this round, per field
        while excess > 0 and sizes:
            key = max(sizes, key=lambda k: sizes[k])
            value = data[key]
            if isinstance(value, list):
                item = value[dropped[key]]
                if not dropped[key] and not _accepts(schema, data, key, value[1:]):
                    fixed.add(key)
                    del sizes[key]
                    continue
                dropped[key] += 1
                cost = len(json.dumps(item, ensure_ascii=False)) + 1
                sources.update(_cited(item))
                left = len(value) - dropped[key]
            else:
                keep = max(0, min(len(value) // 2, len(value) - excess - 1))
                cut = value[:keep] + "\u2026" if keep else ""
                if not _accepts(schema, data, key, cut):
                    fixed.add(key)
                    del sizes[key]
                    continue
                data[key], cost, left = cut, len(value) - keep, keep
            items += 1
            excess -= cost
            sizes[key] -= cost
            if not left:
                del sizes[key]
        for key, count in dropped.items():
            if count:
                data[key] = data[key][count:]
    try:
        return schema.model_validate(data), TrimReport(items, sorted(sources))
    except ValidationError:
        return state, TrimReport()


def read_state_block(text: str) -> dict[str, Any] | None:
    """The JSON object between the delimiters of ``text``, or None if there is none (or it is not JSON)."""
    start = text.find(STATE_OPEN)
    end = text.find(STATE_CLOSE, start + len(STATE_OPEN))
    if start < 0 or end < 0:
        return None
    try:
        value = json.loads(text[start + len(STATE_OPEN) : end])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _unique_texts(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for item in items:
        text = item.strip()
        key = " ".join(text.casefold().split())
        if text and key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def _merge_facts(facts: Iterable[Fact], allowed_sources: set[int]) -> list[Fact]:
    merged: dict[str, Fact] = {}
    for fact in facts:
        text = fact.text.strip()
        if not text:
            continue
        key = " ".join(text.casefold().split())
        sources = [s for s in fact.sources if isinstance(s, int) and s in allowed_sources]
        if key in merged:
            sources = merged[key].sources + sources
            text = merged[key].text
        merged[key] = Fact(text=text, sources=sorted(set(sources)))
    return list(merged.values())


def clean_state(state: StructuredSummary, allowed_sources: set[int]) -> StructuredSummary:
    """Tidy a state the model returned: no duplicates, no empty items, no source the model made up.

    Args:
        state: The model's state.
        allowed_sources: Archive indices the model was shown (this reduction's) or that earlier states cited.

    Returns:
        A new state: facts and decisions deduplicated by text (case and spacing ignored; their sources merged),
        sources restricted to ``allowed_sources``, list items stripped and deduplicated.
    """
    return state.model_copy(
        update={
            "facts": _merge_facts(state.facts, allowed_sources),
            "decisions": _merge_facts(state.decisions, allowed_sources),
            "user_preferences": _unique_texts(state.user_preferences),
            "shared_concepts": _unique_texts(state.shared_concepts),
            "open_threads": _unique_texts(state.open_threads),
            "tone": state.tone.strip(),
            "narrative": state.narrative.strip(),
        }
    )


def cited_sources(state: BaseModel) -> set[int]:
    """Every archive index a ``StructuredSummary`` cites (empty for other schemas)."""
    if not isinstance(state, StructuredSummary):
        return set()
    return {s for fact in [*state.facts, *state.decisions] for s in fact.sources}


# ------------------------------------------------------------------ saved with the session


def dump_structured_summary(state: BaseModel) -> dict[str, Any]:
    """The state as saved in the manager's session state: ``{"schema": class name, "data": JSON object}``."""
    return {"schema": type(state).__name__, "data": state.model_dump(mode="json")}


def load_structured_summary(payload: Any, schema: type[BaseModel]) -> BaseModel:
    """A state saved by ``dump_structured_summary``, validated against ``schema``.

    Raises:
        StateError: If the payload is malformed, was produced with another schema (by class name), or does not
            validate; the message names the schema to restore with.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), dict):
        raise StateError("the session's session_state must be an object with 'schema' and 'data'")
    saved, ours = payload.get("schema"), schema.__name__
    if saved != ours:
        raise StateError(
            f"the session's state was produced with the summary schema {saved!r}, but this manager uses {ours!r}: "
            f"restore with summary_schema={saved}"
        )
    try:
        return schema.model_validate(payload["data"])
    except ValidationError as error:
        raise StateError(f"the session's {ours} does not validate: {error}") from error
