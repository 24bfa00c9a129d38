"""LoCoMo, read two ways: as archived turns with evidence positions, and as exchanges played through an agent.

Data: ``locomo10.json`` of the public repository snap-research/LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024), licensed CC BY-NC 4.0 and therefore not shipped with this
project; the project keeps its development half beside the clone (:data:`LOCOMO_DEV`).

- :func:`load_conversations` (the retrieval metric, ``benchmarks.measure.locomo``): every turn is one message, in
  order, text ``"{speaker}: {text}"`` plus ``" [shares a photo: {blip_caption}]"`` when the turn has a caption;
  role ``user`` for ``speaker_a`` and ``assistant`` for ``speaker_b``; nothing else (no dates, no ids, no sessions).
- :func:`load_loop_conversations` (LoCoMo in the loop, ``benchmarks.measure.locomo_loop``): speaker A's turns are
  the user's messages (consecutive turns of one speaker joined with a newline) and speaker B's the replies.

Evidence ids are read leniently (``"D:11:26"`` is ``D11:26``; ``"D8:6; D9:17"`` is two ids); ids that name no turn
are dropped, and a question left without evidence is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from strands.types.content import Message

LOCOMO_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""The development half of LoCoMo, where the project keeps it: beside the clone (not shipped: CC BY-NC 4.0)."""
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's question categories by number."""

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Question:
    """One question with the archive positions of its evidence turns."""

    text: str
    evidence: tuple[int, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation as the library sees it: messages in order, and its questions."""

    name: str
    messages: list[Message]
    questions: list[Question]


@dataclass(frozen=True)
class LoopQuestion:
    """One question: its text, the texts of its evidence turns, and its LoCoMo category."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class LoopConversation:
    """A conversation as exchanges: each user message and the reply the scripted model gives to it."""

    name: str
    exchanges: tuple[tuple[str, str], ...]
    questions: tuple[LoopQuestion, ...]


def turn_text(turn: Mapping[str, Any]) -> str:
    """The archived text of one turn: ``"{speaker}: {text}"`` plus the photo caption when there is one."""
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def turn_text_of(message: Message) -> str:
    """The text of a message built by :func:`load_conversations`."""
    return str(message["content"][0].get("text", ""))


def evidence_ids(raw: object) -> list[str]:
    """Turn ids in one evidence entry, repaired: ``"D:11:26"`` -> ``D11:26``; ``"D8:6; D9:17"`` -> both ids."""
    return [f"D{int(m.group(1))}:{int(m.group(2))}" for m in _EVIDENCE.finditer(str(raw))]


def _sessions(dialogue: Mapping[str, Any]) -> list[str]:
    """The session keys of a dialogue, in order."""
    return sorted(
        (key for key in dialogue if _SESSION.fullmatch(key) and isinstance(dialogue[key], list)),
        key=lambda key: int(key.split("_")[1]),
    )


def load_conversations(path: Path) -> list[Conversation]:
    """Read LoCoMo samples into conversations (see the module docstring for the rules)."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = []
    for number, sample in enumerate(samples):
        dialogue = sample["conversation"]
        messages: list[Message] = []
        position: dict[str, int] = {}
        for key in _sessions(dialogue):
            for turn in dialogue[key]:
                position[turn["dia_id"]] = len(messages)
                role: Literal["user", "assistant"] = "user" if turn["speaker"] == dialogue["speaker_a"] else "assistant"
                messages.append({"role": role, "content": [{"text": turn_text(turn)}]})
        questions = []
        for qa in sample.get("qa", []):
            found = {position[i] for raw in qa.get("evidence", []) for i in evidence_ids(raw) if i in position}
            if found:
                questions.append(Question(str(qa["question"]), tuple(sorted(found)), int(qa["category"])))
        conversations.append(Conversation(str(sample.get("sample_id", number)), messages, questions))
    return conversations


def load_loop_conversations(path: Path = LOCOMO_DEV) -> list[LoopConversation]:
    """Read LoCoMo samples into exchanges (speaker A: the user; speaker B: the model's replies).

    A conversation that opens with speaker B gets an empty first user block (``"{speaker A}:"``), the only text this
    benchmark adds to the data.
    """
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = []
    for number, sample in enumerate(samples):
        dialogue = sample["conversation"]
        turns = [turn for key in _sessions(dialogue) for turn in dialogue[key]]
        speaker_a = dialogue["speaker_a"]
        blocks: list[tuple[bool, list[str]]] = []
        for turn in turns:
            is_a = turn["speaker"] == speaker_a
            if blocks and blocks[-1][0] == is_a:
                blocks[-1][1].append(turn_text(turn))
            else:
                blocks.append((is_a, [turn_text(turn)]))
        if blocks and not blocks[0][0]:
            blocks.insert(0, (True, [f"{speaker_a}:"]))
        exchanges = []
        for position in range(0, len(blocks), 2):
            user = "\n".join(blocks[position][1])
            reply = "\n".join(blocks[position + 1][1]) if position + 1 < len(blocks) else "OK."
            exchanges.append((user, reply))
        by_id = {turn["dia_id"]: turn_text(turn) for turn in turns}
        questions = []
        for qa in sample.get("qa", []):
            evidence = tuple(
                dict.fromkeys(by_id[i] for raw in qa.get("evidence", []) for i in evidence_ids(raw) if i in by_id)
            )
            if evidence:
                questions.append(LoopQuestion(str(qa["question"]), evidence, int(qa["category"])))
        conversations.append(LoopConversation(str(sample.get("sample_id", number)), tuple(exchanges), tuple(questions)))
    return conversations
