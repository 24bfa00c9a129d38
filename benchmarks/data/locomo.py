"""LoCoMo's development half: dated sessions of turns, and questions with the ids of their evidence turns.

Data: ``locomo-dev.json``, the first five conversations of ``locomo10.json`` (snap-research/LoCoMo; Maharana et al.,
ACL 2024), CC BY-NC 4.0: kept beside the clone (``benchmarks.common.LOCOMO_DEV``), never shipped. The other five are
held out and never read here.

Two ways of giving a conversation to the library:

- **the paper's retrieval metric** (``recall``): every turn one message, text ``"{speaker}: {text}"`` plus
  ``" [shares a photo: {caption}]"``, role ``user`` for speaker A and ``assistant`` for speaker B (``paper_text``);
- **through an agent** (``exchanges``): speaker A is the user, speaker B the model. How the turns become calls is a
  ``Formation``. ``"turns"`` is what a user's app sends: each turn its own message with the turn's words (a photo as
  its caption), an opening turn of B sent as an assistant message before A's first, a last turn of A answered
  ``"OK."``; evidence is matched on the turn's own text. ``"prefixed"`` adds ``"{speaker}: "`` to every message.
  ``"old"`` is how the old suite formed them (``"{speaker}: "`` on every message, a speaker's consecutive turns
  joined, a user block ``"{A}:"`` made up before a session that opens with B, evidence matched with the prefix and
  the caption).

Evidence ids are read leniently (``"D:11:26"`` is ``D11:26``; ``"D8:6; D9:17"`` is two ids); ids naming no turn are
dropped and a question left without evidence is skipped. A session's date (``session_N_date_time``) is read as UTC.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Literal

CATEGORIES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's question categories, as numbered in the file."""
Formation = Literal["turns", "prefixed", "old"]
FORMATIONS: tuple[Formation, ...] = ("turns", "prefixed", "old")
NO_REPLY = "OK."
"""What the model says after a user turn the conversation does not answer (the session ends on the user)."""
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
"""How LoCoMo writes a session's date: ``"1:56 pm on 8 May, 2023"``."""

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Turn:
    """One turn: its id (``D<session>:<n>``), who said it, the words, and the caption of a photo shared with it."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None = None


@dataclass(frozen=True)
class Session:
    """One session: its number, when it took place (epoch seconds, UTC) and its turns."""

    number: int
    date: float
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """One question: its text, the ids of its evidence turns (unique, in the order given) and its category."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Exchange:
    """One call of the agent: the model's turns said before the user's (a session that opens with the model),
    the user's message, and what the scripted model replies."""

    user: str
    reply: str
    before: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    """A conversation between a user (speaker A) and the model's side (speaker B), and its questions.

    Attributes:
        speaker_prefix: Whether the retrieval metric archives ``"{speaker}: "`` before each turn (LoCoMo's paper
            does; the generated conversations are a user and an assistant, and do not).
    """

    name: str
    user: str
    assistant: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    categories: Mapping[int, str] = field(default_factory=lambda: dict(CATEGORIES))
    speaker_prefix: bool = True

    @property
    def turns(self) -> list[Turn]:
        """Every turn, in order."""
        return [turn for session in self.sessions for turn in session.turns]

    @cached_property
    def by_id(self) -> dict[str, Turn]:
        """Turns by id."""
        return {turn.dia_id: turn for turn in self.turns}

    def category(self, number: int) -> str:
        """``"<n> <name>"`` of a category."""
        return f"{number} {self.categories.get(number, '?')}"

    def sliced(self, sessions: int | None = None, questions: int | None = None) -> Conversation:
        """The first ``sessions`` sessions, with the first ``questions`` questions whose evidence they hold."""
        kept = self.sessions[:sessions]
        ids = {turn.dia_id for session in kept for turn in session.turns}
        asked = tuple(q for q in self.questions if set(q.evidence) <= ids)[:questions]
        return replace(self, sessions=kept, questions=asked)


def paper_text(turn: Turn) -> str:
    """The turn as the LoCoMo paper's retrieval metric archives it."""
    text = f"{turn.speaker}: {turn.text}"
    return f"{text} [shares a photo: {turn.caption}]" if turn.caption else text


def message_text(turn: Turn, formation: Formation = "turns") -> str:
    """The text of the message that carries ``turn``: its words, the photo's caption, the speaker's name if asked."""
    if formation != "turns":
        return paper_text(turn)
    return f"{turn.text} [shares a photo: {turn.caption}]" if turn.caption else turn.text


def evidence_texts(conversation: Conversation, question: Question, formation: Formation = "turns") -> tuple[str, ...]:
    """What must reach the answering call for each evidence turn: its own text (``"old"``: the prefixed text)."""
    turns = [conversation.by_id[i] for i in question.evidence]
    return tuple(paper_text(t) if formation == "old" else t.text for t in turns)


def exchanges(conversation: Conversation, session: Session, formation: Formation = "turns") -> list[Exchange]:
    """The calls that play ``session`` (see the module docstring for each formation)."""
    found: list[Exchange] = []
    before: list[str] = []
    user: str | None = None
    replies: list[str] = []
    if formation == "old" and session.turns and session.turns[0].speaker != conversation.user:
        user = f"{conversation.user}:"
    for turn in session.turns:
        text = message_text(turn, formation)
        if turn.speaker == conversation.user:
            if formation == "old" and user is not None and not replies:
                user = f"{user}\n{text}"  # the old suite joined a speaker's consecutive turns
                continue
            if user is not None:
                found.append(Exchange(user, "\n".join(replies) or NO_REPLY, tuple(before)))
                before, replies = [], []
            user = text
        elif user is None:
            before.append(text)
        else:
            replies.append(text)
    if user is not None:
        found.append(Exchange(user, "\n".join(replies) or NO_REPLY, tuple(before)))
    return found


def evidence_ids(raw: object) -> list[str]:
    """Turn ids in one evidence entry, repaired: ``"D:11:26"`` -> ``D11:26``; ``"D8:6; D9:17"`` -> both."""
    return [f"D{int(m.group(1))}:{int(m.group(2))}" for m in _EVIDENCE.finditer(str(raw))]


def session_date(text: str) -> float:
    """A LoCoMo session date in epoch seconds, read as UTC."""
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=timezone.utc).timestamp()


def _questions(qa: Sequence[Mapping[str, object]], ids: set[str]) -> tuple[Question, ...]:
    questions = []
    for item in qa:
        raw = item.get("evidence") or []
        found = [i for entry in (raw if isinstance(raw, list) else [raw]) for i in evidence_ids(entry) if i in ids]
        if found:
            questions.append(Question(str(item["question"]), tuple(dict.fromkeys(found)), int(str(item["category"]))))
    return tuple(questions)


def located(path: Path) -> Path | None:
    """``path`` when it exists; else, from a git worktree, the same place beside the main clone (None: not found)."""
    if path.is_file():
        return path
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    beside = Path(found.stdout.strip()).parent.parent / "shared" / "data" / "locomo" / path.name
    return beside if beside.is_file() else None


def load(path: Path) -> list[Conversation]:
    """Read a LoCoMo file (``locomo10.json`` or a part of it) into conversations."""
    conversations = []
    for number, sample in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))):
        dialogue = sample["conversation"]
        keys = sorted((k for k in dialogue if _SESSION.fullmatch(k)), key=lambda k: int(k.split("_")[1]))
        sessions: list[Session] = []
        for key in keys:
            raw = dialogue[key]
            if not raw:
                continue
            stated = dialogue.get(f"{key}_date_time")
            date = session_date(str(stated)) if stated else (sessions[-1].date + 86_400 if sessions else 0.0)
            turns = tuple(Turn(t["dia_id"], t["speaker"], t["text"], t.get("blip_caption")) for t in raw)
            sessions.append(Session(int(key.split("_")[1]), date, turns))
        ids = {turn.dia_id for session in sessions for turn in session.turns}
        conversations.append(
            Conversation(
                str(sample.get("sample_id", number)),
                dialogue["speaker_a"],
                dialogue["speaker_b"],
                tuple(sessions),
                _questions(sample.get("qa", []), ids),
            )
        )
    return conversations
