"""A scripted chat model that also answers Strands' structured output, for the structured-compaction tests.

The *merge* a real model would do (read the previous state, extract facts from the leaving messages, replace what
they contradict) is scripted here by a rule: a line ``FACT <key>: <value>`` in a message is a fact, and a later fact
with the same key replaces the earlier one. Everything around it is real: Strands' agent loop, overflow recovery,
the manager's archive and merge prompt, pydantic validation of the output.
"""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncGenerator, Callable
from typing import Any

from pydantic import BaseModel

from strands_semantic_memory.conversation_manager._structured_summary import read_state_block
from strands_semantic_memory.messages._text import render_message
from tests.support.scripted_model import ScriptedModel

StateReply = BaseModel | dict[str, Any] | Exception
StateResponder = Callable[[type[BaseModel], list[dict], str | None], StateReply]

_FACT = re.compile(r"^FACT ([\w-]+): (.+)$", re.MULTILINE)
_RANGE = re.compile(r"#(\d+)(?:-#(\d+))?")


def archive_indices(head: str) -> list[int]:
    """The archive indices the manager's merge prompt gives for the leaving messages (``#3-#5, #9``)."""
    line = head[head.find("They are archived as") :]
    line = line[: line.find("(in order)")]
    indices: list[int] = []
    for start, end in _RANGE.findall(line):
        indices.extend(range(int(start), int(end or start) + 1))
    return indices


def merging_responder(output_model: type[BaseModel], prompt: list[dict], system_prompt: str | None) -> StateReply:
    """The scripted merge: previous state from the prompt's head, ``FACT key: value`` lines from the messages."""
    head = render_message(prompt[0])
    previous = read_state_block(head) or {}
    facts = {fact["text"].split(":", 1)[0]: fact for fact in previous.get("facts", [])}
    indices = archive_indices(head)
    leaving = prompt[1:-1]
    for position, message in enumerate(leaving):
        for key, value in _FACT.findall(render_message(message)):
            facts[key] = {"text": f"{key}: {value}", "sources": [indices[position]] if indices else []}
    threads = [t for t in previous.get("open_threads", [])] + [
        render_message(m)[:80] for m in leaving if render_message(m).rstrip().endswith("?")
    ]
    return {
        "facts": list(facts.values()),
        "open_threads": threads[-3:],
        "narrative": f"{len(leaving)} more messages merged.",
    }


class StructuredScriptedModel(ScriptedModel):
    """A :class:`ScriptedModel` whose ``structured_output`` answers from ``state_responder``, validated."""

    def __init__(self, *args: Any, state_responder: StateResponder = merging_responder, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state_responder = state_responder
        self.state_requests: list[dict[str, Any]] = []

    async def structured_output(  # type: ignore[override]
        self, output_model: type[BaseModel], prompt: list[dict], system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.state_requests.append(
            {"messages": copy.deepcopy(prompt), "system_prompt": system_prompt, "schema": output_model}
        )
        reply = self.state_responder(output_model, prompt, system_prompt)
        if isinstance(reply, Exception):
            raise reply
        # Providers build the output model from the tool input and raise pydantic's ValidationError on a mismatch.
        output = reply if isinstance(reply, output_model) else output_model.model_validate(reply)
        yield {"output": output}
