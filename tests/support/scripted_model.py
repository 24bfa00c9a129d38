"""A scripted chat model: a real ``strands.models.Model`` subclass whose replies come from a script.

No chat model runs offline at test speed, so agent-loop tests drive a real ``Agent`` with this model. It records
every request and can enforce a context limit (raising ``ContextWindowOverflowException`` as real providers do),
so overflow and summarization go through Strands' own code paths.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.messages._text import render_message


@dataclass
class ToolCall:
    """Reply with a tool call instead of text."""

    name: str
    input: dict[str, Any]
    tool_use_id: str = "tool-1"


Reply = str | ToolCall | Exception
Responder = Callable[[list[dict], str | None, bool], Reply]


def last_user_text(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return render_message(message)
    return ""


def default_responder(messages: list[dict], system_prompt: str | None, is_summary: bool) -> Reply:
    if is_summary:
        return "## Conversation Summary\n* The user and the assistant discussed data structures and algorithms."
    return f"Noted. (reply to: {last_user_text(messages)[:60]})"


class ScriptedModel(Model):
    """Replies from ``responder``; raises ``ContextWindowOverflowException`` above ``max_input_chars``."""

    def __init__(
        self,
        responder: Responder = default_responder,
        *,
        max_input_chars: int | None = None,
        context_window_limit: int | None = None,
    ) -> None:
        self.responder = responder
        self.max_input_chars = max_input_chars
        self.config: dict[str, Any] = {"model_id": "scripted"}
        if context_window_limit is not None:
            self.config["context_window_limit"] = context_window_limit
        self.requests: list[dict[str, Any]] = []
        self.overflows = 0

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):  # pragma: no cover
        raise NotImplementedError("the scripted model does not produce structured output")

    @staticmethod
    def is_summary_request(messages: list[dict], system_prompt: str | None) -> bool:
        return bool(messages) and render_message(messages[-1]) == "Please summarize this conversation."

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if not r["is_summary"]]

    @property
    def summary_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["is_summary"]]

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs) -> AsyncGenerator[dict, None]:
        is_summary = self.is_summary_request(messages, system_prompt)
        self.requests.append(
            {"messages": copy.deepcopy(messages), "system_prompt": system_prompt, "is_summary": is_summary}
        )
        size = sum(len(render_message(m)) for m in messages)
        if not is_summary and self.max_input_chars is not None and size > self.max_input_chars:
            self.overflows += 1
            raise ContextWindowOverflowException(f"input of {size} characters exceeds {self.max_input_chars}")
        reply = self.responder(messages, system_prompt, is_summary)
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
