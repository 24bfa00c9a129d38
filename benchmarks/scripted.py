"""A scripted chat model for the benchmarks: a real ``strands.models.Model`` whose replies are fixed.

No chat model runs offline at benchmark speed, so the benchmarks that drive a real Strands ``Agent`` use this
model: it replies with a short fixed sentence, records every request, and raises
``ContextWindowOverflowException`` above ``max_input_chars`` characters of input, as real providers do, so
Strands' own overflow and summarization paths run. The benchmarks keep their own copy (they never import from
``tests/``).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.messages._text import render_message

__all__ = ["SUMMARY", "ScriptedModel"]

SUMMARY = "## Conversation Summary\n* The user and the assistant discussed everyday topics."
"""The fixed summary the model returns when Strands asks for one (a summary never carries a fact)."""


def _text(message: Any) -> str:
    return render_message(message)


class ScriptedModel(Model):
    """Replies ``Noted. (reply to: ...)``; overflows above ``max_input_chars``; returns :data:`SUMMARY` when asked.

    Attributes:
        requests: Every request, oldest first: ``{"messages", "system_prompt", "is_summary"}`` (deep copies).
        overflows: Chat requests refused as too long.
    """

    def __init__(self, *, max_input_chars: int | None = None) -> None:
        """Create the model.

        Args:
            max_input_chars: Refuse chat requests longer than this many characters (None: never).
        """
        self.max_input_chars = max_input_chars
        self.config: dict[str, Any] = {"model_id": "scripted"}
        self.requests: list[dict[str, Any]] = []
        self.overflows = 0

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The configuration."""
        return self.config

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any) -> Any:
        """Not supported: the benchmark managers that need structured output use their own model."""
        raise NotImplementedError("the scripted benchmark model does not produce structured output")

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Requests that were not summary requests."""
        return [r for r in self.requests if not r["is_summary"]]

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Reply to ``messages`` (see the class docstring)."""
        is_summary = bool(messages) and _text(messages[-1]) == "Please summarize this conversation."
        self.requests.append(
            {"messages": copy.deepcopy(messages), "system_prompt": system_prompt, "is_summary": is_summary}
        )
        size = sum(len(_text(m)) for m in messages)
        if not is_summary and self.max_input_chars is not None and size > self.max_input_chars:
            self.overflows += 1
            raise ContextWindowOverflowException(f"input of {size} characters exceeds {self.max_input_chars}")
        last_user = next((_text(m) for m in reversed(messages) if m["role"] == "user"), "")
        reply = SUMMARY if is_summary else f"Noted. (reply to: {last_user[:60]})"
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": size // 4, "outputTokens": 10, "totalTokens": size // 4 + 10},
                "metrics": {"latencyMs": 1},
            }
        }
