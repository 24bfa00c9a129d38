"""``ScriptedModel``: a real ``strands.models.Model`` whose replies, summaries and structured output are scripted.

No chat model runs offline at test speed, so tests, examples and benchmarks drive a real Strands ``Agent`` with this
model. Everything around the model is real: Strands' agent loop and overflow recovery, the managers, the hook, the
archive. The model records every request, and refuses a call above a declared input size with Strands'
``ContextWindowOverflowException``, as providers do, so the reduction paths run as they do in production.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.messages import render_message

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

SUMMARY_REQUEST = "Please summarize this conversation."
"""The last message of Strands' summarizing managers' summary call: how the model tells a summary call apart."""
DEFAULT_SUMMARY = "## Conversation Summary\n* The user and the assistant discussed everyday topics."
"""What the model writes when asked for a summary, unless told otherwise (it carries no fact)."""


@dataclass(frozen=True)
class ToolCall:
    """A reply that calls a tool instead of answering in text.

    Attributes:
        name: The tool's name.
        input: The tool's arguments.
        tool_use_id: The id of the call (the tool's result carries it back).
    """

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str = "tool-1"


Reply = str | ToolCall | Exception
"""One scripted reply: text, a tool call, or an exception the call raises (a provider's failure)."""
Responder = Callable[[Messages, str | None, bool], Reply]
"""Decides a reply from ``(messages, system_prompt, is_summary)``; ``is_summary`` marks Strands' summary calls."""
StructuredReply = BaseModel | dict[str, Any] | Exception
"""One structured reply: the output model, plain data it validates, or an exception the call raises."""
StructuredResponder = Callable[[type[BaseModel], Messages, str | None], StructuredReply]
"""Decides a structured reply from ``(output_model, prompt, system_prompt)``."""


class ScriptedRequest(TypedDict):
    """One chat or summary call the model received (deep copies: later changes to the agent do not show)."""

    messages: Messages
    system_prompt: str | None
    tool_specs: list[Any] | None
    is_summary: bool


class StructuredRequest(TypedDict):
    """One structured-output call the model received."""

    messages: Messages
    system_prompt: str | None
    schema: type[BaseModel]


def last_user_text(messages: Sequence[Any]) -> str:
    """The text of the last user message of ``messages`` ("" when there is none)."""
    for message in reversed(messages):
        if message["role"] == "user":
            return render_message(message)
    return ""


def noted_reply(messages: Messages, system_prompt: str | None, is_summary: bool) -> Reply:
    """The default responder: ``Noted. (reply to: <the first 60 characters of the last user turn>)``.

    A summary call gets :data:`DEFAULT_SUMMARY`.
    """
    if is_summary:
        return DEFAULT_SUMMARY
    return f"Noted. (reply to: {last_user_text(messages)[:60]})"


_FACT = re.compile(r"^FACT ([\w-]+): (.+)$", re.MULTILINE)
_INDEX_RANGE = re.compile(r"#(\d+)(?:-#(\d+))?")


def _fits(value: dict[str, Any], schema: type[BaseModel]) -> bool:
    """Whether ``value`` names a field of ``schema`` and validates against it."""
    if not set(value) & set(schema.model_fields):
        return False
    try:
        schema.model_validate(value)
    except ValueError:  # pydantic's ValidationError
        return False
    return True


def previous_summary(text: str, schema: type[BaseModel] | None = None) -> dict[str, Any] | None:
    """The structured summary a merge prompt carries: the first JSON object in ``text`` that fits ``schema``.

    The conversation manager's merge prompt opens with the summary so far as JSON; a scripted summarizer reads it
    from there, as a model does, without knowing how the prompt delimits it.

    Args:
        text: The prompt's text (its first message, rendered).
        schema: The output model the object must name a field of and validate against (None: any JSON object).

    Returns:
        The object as plain data, or None when ``text`` holds no such object.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and (schema is None or _fits(value, schema)):
            return value
        start = text.find("{", start + 1)
    return None


def archive_indices(text: str) -> list[int]:
    """The archive indices a merge prompt gives for the messages leaving the context (``#3-#5, #9``), in order."""
    line = text[text.find("archived as") :] if "archived as" in text else ""
    line = line[: line.find("(in order)")] if "(in order)" in line else line
    indices: list[int] = []
    for start, end in _INDEX_RANGE.findall(line):
        indices.extend(range(int(start), int(end or start) + 1))
    return indices


def merge_facts(output_model: type[BaseModel], prompt: Messages, system_prompt: str | None) -> StructuredReply:
    """The default structured responder: a scripted merge into the structured summary.

    What a model would do when the conversation manager merges leaving messages into its structured summary,
    done by a rule: the summary so far is read from the prompt's first message (:func:`previous_summary`); a line
    ``FACT <key>: <value>`` in a leaving message is a fact, sourced to that message's archive index, and a later
    fact with the same key replaces the earlier one; leaving user or assistant turns that end with ``?`` become
    open threads (the last three kept).

    Args:
        output_model: The schema asked for (the manager's ``StructuredSummary`` or one with the same fields).
        prompt: The merge prompt: the summary so far, the leaving messages, the instruction.
        system_prompt: The summarizer's system prompt (unused).

    Returns:
        ``{"facts", "open_threads", "narrative"}``, which the model validates against ``output_model``.
    """
    head = render_message(prompt[0]) if prompt else ""
    previous = previous_summary(head, output_model) or {}
    facts = {str(fact["text"]).split(":", 1)[0]: fact for fact in previous.get("facts", [])}
    indices = archive_indices(head)
    leaving = prompt[1:-1]
    for position, message in enumerate(leaving):
        for key, value in _FACT.findall(render_message(message)):
            source = [indices[position]] if position < len(indices) else []
            facts[key] = {"text": f"{key}: {value}", "sources": source}
    questions = [text[:80] for text in map(render_message, leaving) if text.rstrip().endswith("?")]
    threads = [*previous.get("open_threads", []), *questions]
    return {
        "facts": list(facts.values()),
        "open_threads": threads[-3:],
        "narrative": f"{len(leaving)} more messages merged.",
    }


class ScriptedModel(Model):
    """A chat model whose replies come from a script: for tests, examples and offline trials of an agent.

    Put it where your model goes (``Agent(model=ScriptedModel(), ...)``); everything else runs for real.

    - **Chat calls** are answered from ``script``: one text for every call, a list of replies taken in order, or a
      responder function that sees each call. A reply is text, a :class:`ToolCall`, or an exception the call
      raises. By default the model answers ``Noted. (reply to: ...)``.
    - **Summary calls** (Strands' summarizing managers end them with ``"Please summarize this conversation."``)
      are answered with ``summary``, or by the responder, which is told the call is one.
    - **Structured output** (what ``summary_format="structured"`` asks for) is answered by ``structured``,
      validated against the output model as providers do (pydantic's ``ValidationError`` on a mismatch). The
      default, :func:`merge_facts`, merges ``FACT <key>: <value>`` lines into the summary so far. ``None``: the
      model has no structured output (``NotImplementedError``).
    - **The window**: a chat call whose messages hold more than ``max_input_chars`` characters raises Strands'
      ``ContextWindowOverflowException``, as a provider refuses an input beyond its window, so Strands' reduction
      runs. ``context_window_limit`` (tokens) is declared in the config, as providers declare it, so the
      managers and the hook can plan for the window.

    Attributes:
        requests: Every chat and summary call, oldest first (:class:`ScriptedRequest`).
        structured_requests: Every structured-output call, oldest first (:class:`StructuredRequest`).
        overflows: Chat calls refused as longer than ``max_input_chars``.

    Example:
        ```python
        from strands import Agent
        from strands_semantic_memory.testing import ScriptedModel

        model = ScriptedModel(["Hello!", "Noted."])
        agent = Agent(model=model, callback_handler=None)
        agent("Hi")
        assert str(agent("Remember the code 42.")).strip() == "Noted."
        assert len(model.requests) == 2
        ```
    """

    def __init__(
        self,
        script: str | Sequence[Reply] | Responder | None = None,
        *,
        summary: str = DEFAULT_SUMMARY,
        structured: StructuredResponder | None = merge_facts,
        max_input_chars: int | None = None,
        context_window_limit: int | None = None,
        model_id: str = "scripted",
    ) -> None:
        """Create the model.

        Args:
            script: The chat replies: one text for every call, a list of replies taken in order (a call after the
                last raises ``RuntimeError``), or a :data:`Responder` that decides every reply, summaries
                included. None: :func:`noted_reply`.
            summary: What a summary call is answered with (a responder decides instead).
            structured: Answers structured-output calls (None: the model has no structured output).
            max_input_chars: Refuse chat calls whose messages hold more characters than this (None: never).
                Summary calls are never refused.
            context_window_limit: The window, in tokens, declared in the config (None: not declared).
            model_id: The model's id in its config.
        """
        self.script = script
        self.summary = summary
        self.structured = structured
        self.max_input_chars = max_input_chars
        self.config: dict[str, Any] = {"model_id": model_id}
        if context_window_limit is not None:
            self.config["context_window_limit"] = context_window_limit
        self.requests: list[ScriptedRequest] = []
        self.structured_requests: list[StructuredRequest] = []
        self.overflows = 0
        self._replies = 0

    @property
    def responder(self) -> Responder | None:
        """The responder function, when the script is one; setting it replaces the script."""
        return self.script if callable(self.script) else None

    @responder.setter
    def responder(self, responder: Responder | None) -> None:
        self.script = responder

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration (``context_window_limit=...`` declares a window)."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The configuration: ``model_id``, and ``context_window_limit`` when declared."""
        return self.config

    @staticmethod
    def is_summary_request(messages: Sequence[Any], system_prompt: str | None = None) -> bool:
        """Whether a call is Strands' summary call (its last message asks for the summary)."""
        return bool(messages) and render_message(messages[-1]) == SUMMARY_REQUEST

    @property
    def chat_requests(self) -> list[ScriptedRequest]:
        """The calls that were not summary calls."""
        return [request for request in self.requests if not request["is_summary"]]

    @property
    def summary_requests(self) -> list[ScriptedRequest]:
        """The summary calls."""
        return [request for request in self.requests if request["is_summary"]]

    def _reply(self, messages: Messages, system_prompt: str | None, is_summary: bool) -> Reply:
        script = self.script
        if callable(script):
            return script(messages, system_prompt, is_summary)
        if is_summary:
            return self.summary
        if script is None:
            return noted_reply(messages, system_prompt, is_summary)
        if isinstance(script, str):
            return script
        if self._replies >= len(script):
            raise RuntimeError(f"the script has no reply left: it has {len(script)}, this is call {self._replies + 1}")
        reply = script[self._replies]
        self._replies += 1
        return reply

    async def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Answer a structured-output call with ``structured`` (see the class docstring).

        Raises:
            NotImplementedError: The model was made with ``structured=None``.
            pydantic.ValidationError: The scripted reply does not validate against ``output_model``.
        """
        self.structured_requests.append(
            {"messages": copy.deepcopy(prompt), "system_prompt": system_prompt, "schema": output_model}
        )
        if self.structured is None:
            raise NotImplementedError("this ScriptedModel has no structured output (structured=None)")
        reply = self.structured(output_model, prompt, system_prompt)
        if isinstance(reply, Exception):
            raise reply
        yield {"output": reply if isinstance(reply, output_model) else output_model.model_validate(reply)}

    async def stream(  # type: ignore[override]
        self, messages: Messages, tool_specs: list[Any] | None = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Answer one chat or summary call (see the class docstring).

        Raises:
            ContextWindowOverflowException: A chat call's messages hold more than ``max_input_chars`` characters.
        """
        is_summary = self.is_summary_request(messages, system_prompt)
        self.requests.append(
            {
                "messages": copy.deepcopy(messages),
                "system_prompt": system_prompt,
                "tool_specs": copy.deepcopy(tool_specs),
                "is_summary": is_summary,
            }
        )
        size = sum(len(render_message(message)) for message in messages)
        if not is_summary and self.max_input_chars is not None and size > self.max_input_chars:
            self.overflows += 1
            logger.debug("size=<%d>, limit=<%d> | scripted model refused the call", size, self.max_input_chars)
            raise ContextWindowOverflowException(f"input of {size} characters exceeds {self.max_input_chars}")
        reply = self._reply(messages, system_prompt, is_summary)
        if isinstance(reply, Exception):
            raise reply
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, ToolCall):
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": reply.tool_use_id, "name": reply.name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(reply.input)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": reply}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": size // 4, "outputTokens": 10, "totalTokens": size // 4 + 10},
                "metrics": {"latencyMs": 1},
            }
        }
