"""A second development set, unlike LoCoMo: long assistant-heavy task conversations with facts that change.

LoCoMo is social chat between two people, in short turns. The conversations generated here are what an assistant
sees in production: a user working through several threads over weeks (code reviews, incidents, a project, a trip,
a move, money, training, an event), short requests and long answers (several paragraphs, lists, code), facts
stated in passing and changed later (versions, timeouts, owners, deadlines, prices, addresses, venues), and
dated events. Everything is built from templates with alternations and per-thread vocabularies (``work``,
``life``), seeded, so the evidence of every question is known by construction:

- **fact**: a fact stated once; evidence: the turns that state it;
- **current value**: a fact stated and later changed, asked about now; evidence: the turns that state the latest
  value. The same change is recorded as an ``Update`` (the later and the earlier statements) for the
  knowledge-update test;
- **previous value**: the value before the last change; evidence: the turns that stated it;
- **all values**: every value a fact had (which hotels, which root causes); evidence: all their turns;
- **temporal**: when an event happened, which of two events came first, or how many days apart they were;
  evidence: the event turns;
- **assistant said**: a recommendation made only in one long assistant answer, often in its last paragraph.

Messages carry the time they were said (``timestamps``, one per message, sessions on separate days).
``python -m benchmarks.data.devset`` prints the set's size and a sample.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Literal

from strands.types.content import Message

from ..locomo import Question
from .grammar import PEOPLE, expand, pick, sentence_case
from .life import EVENT, FINANCE, HEALTH, HOME, TRAVEL
from .model import Domain, Slot, ValueContext
from .work import INCIDENT, PROJECT, SOFTWARE

CATEGORIES = {
    1: "fact",
    2: "current value",
    3: "previous value",
    4: "all values",
    5: "temporal",
    6: "assistant said",
}
FACT, CURRENT, PREVIOUS, ALL_VALUES, TEMPORAL, ASSISTANT = range(1, 7)


@dataclass(frozen=True)
class Update:
    """A fact that changed: a question about its value now, the turns stating it, and those stating older values.

    Attributes:
        question: Asks for the current value.
        later: The turns that state the current value (the user's statement, and an assistant echo if any).
        earlier: The turns that state an older value.
        kind: The domain and the fact (``"travel planning: hotel"``).
        value: The current value.
        old_values: The older values, oldest first.
    """

    question: str
    later: tuple[int, ...]
    earlier: tuple[int, ...]
    kind: str
    value: str
    old_values: tuple[str, ...]


@dataclass(frozen=True)
class DevConversation:
    """One generated conversation: messages in order, their times, questions and the knowledge updates in it."""

    name: str
    style: str
    messages: list[Message]
    timestamps: list[float]
    questions: list[Question]
    updates: list[Update]


@dataclass(frozen=True)
class Style:
    """How one conversation reads: its threads, length and the shape of the answers.

    Attributes:
        name: A label.
        threads: The domain of each thread (a domain twice gives two threads of the same kind).
        messages: About how many messages.
        exchanges: Exchanges per session (low, high).
        paragraphs: Paragraphs per assistant answer (low, high).
        lists: Chance that an answer has a bulleted list.
        code: Chance that a technical answer has a code block.
        chatty: Chance that a user message opens with a sentence of small talk.
    """

    name: str
    threads: tuple[Domain, ...]
    messages: int
    exchanges: tuple[int, int] = (3, 8)
    paragraphs: tuple[int, int] = (2, 5)
    lists: float = 0.4
    code: float = 0.3
    chatty: float = 0.2


STYLES = (
    Style("engineering lead", (SOFTWARE, SOFTWARE, INCIDENT, PROJECT), 520, paragraphs=(3, 6), code=0.45),
    Style("household admin", (HOME, FINANCE, HEALTH), 240, exchanges=(2, 6), paragraphs=(2, 4), chatty=0.4),
    Style("product manager", (PROJECT, EVENT, TRAVEL), 380, paragraphs=(2, 5), lists=0.6),
    Style("on-call engineer", (INCIDENT, INCIDENT, SOFTWARE, FINANCE), 420, exchanges=(4, 10), code=0.5),
    Style("traveller", (TRAVEL, TRAVEL, EVENT), 200, exchanges=(2, 6), paragraphs=(2, 4), chatty=0.35),
    Style("work and life", (SOFTWARE, TRAVEL, HOME, HEALTH, PROJECT), 640, paragraphs=(3, 7)),
    Style("consultant", (PROJECT, PROJECT, TRAVEL, FINANCE), 460, paragraphs=(3, 6), lists=0.55),
    Style("short and mixed", (HOME, INCIDENT), 140, exchanges=(2, 5)),
    Style("new home, big party", (HOME, EVENT, FINANCE, HEALTH), 340, chatty=0.3),
    Style("developer on a trip", (SOFTWARE, TRAVEL, EVENT, INCIDENT), 560, paragraphs=(3, 6), code=0.4),
)
"""Ten conversations of different lengths, threads and answer shapes (in ``j % 5`` folds: one long, one short-ish
per fold)."""

_OPENERS = (
    "{Good question|Sure|Happy to help|Okay|Right}. {Here's how I'd approach it|A few thoughts|Let me break it down}.",
    "{This comes up a lot|That's a common situation|You're on the right track}, and there are a few things to weigh.",
    "Short answer: it depends on a couple of details, but here's what I'd do.",
    "Let's take this step by step.",
    "Thanks for the context, that helps.",
)
_CLOSERS = (
    "Let me know if you want me to {draft|sketch|write up} {the next step|a first version|something concrete}.",
    "Happy to go deeper on any of these.",
    "If you share more details, I can make this more specific.",
    "Does that match what you had in mind?",
    "Tell me which of these you want to start with.",
)
_TAILS = (
    "Just noting it here so we both have it.",
    "Mentioning it in case it matters.",
    "Not urgent, just so you know.",
    "FYI.",
    "",
)
_SMALL_TALK = (
    "Long day here.",
    "Morning!",
    "Back again.",
    "Quick one before my next meeting.",
    "I've been thinking about this since yesterday.",
    "Okay, new question.",
)
_FOLLOW_UPS = (
    "Thanks, that helps. Can you expand on the second point?",
    "Makes sense. What would you do first?",
    "Can you make that shorter? I need to paste it somewhere.",
    "Okay. What are the risks with that approach?",
    "Good, and how would I know it worked?",
    "What would you skip if I only had an hour?",
    "Could you turn that into a checklist?",
)


@dataclass
class _Thread:
    domain: Domain
    fields: dict[str, str]
    sessions: list[int] = field(default_factory=list)


@dataclass
class _Item:
    """Something a user turn must carry: a slot value (first or changed) or an event."""

    kind: Literal["state", "update", "event"]
    thread: int
    key: str
    text: str
    echo: str = ""


@dataclass
class _Builder:
    rng: random.Random
    style: Style
    messages: list[Message] = field(default_factory=list)
    timestamps: list[float] = field(default_factory=list)

    def add(self, role: Literal["user", "assistant"], text: str, when: datetime) -> int:
        self.messages.append({"role": role, "content": [{"text": text}]})
        self.timestamps.append(when.timestamp())
        return len(self.messages) - 1


def _distinct_threads(rng: random.Random, style: Style, people: Sequence[str]) -> list[_Thread]:
    threads: list[_Thread] = []
    for domain in style.threads:
        for _ in range(50):
            fields = domain.fields(rng, people)
            same = [t for t in threads if t.domain is domain]
            # Two threads of one domain must not share their main subject (service, city, project, room...).
            if all(set(fields.values()).isdisjoint(set(t.fields.values()) - set(people)) for t in same):
                break
        threads.append(_Thread(domain, fields))
    return threads


_ASSISTANT_FRAMES = (
    "One thing I noticed: {thing} {problem}.",
    "{thing} {problem}, so I'd {fix}.",
    "I'd {fix}; it's a small change and it removes a whole class of surprises.",
    "If {thing} {problem}, the simplest answer is to {fix}.",
    "Keep an eye on {measure} {after the change|over the next couple of weeks|as you go}.",
    "{thing} is fine for now; I wouldn't touch it until {measure} tells you otherwise.",
    "People often {fix} too late, and doing it up front saves a lot of back and forth.",
    "A second option is to {fix}, though it takes more effort.",
    "The trade-off here is mostly about {measure}.",
    "In my experience {thing} {problem} more often than people expect.",
    "Before anything else, {fix}.",
    "It also helps to {fix}, especially if {thing} {problem}.",
    "I wouldn't worry about {measure} yet.",
    "Watch out for {thing}: it {problem}.",
    "{A related point|Separately|On a smaller note}, {thing} {problem}, and {it's worth fixing soon|that can wait}.",
    "To check whether it worked, compare {measure} before and after.",
)
_USER_FRAMES = (
    "I'm worried that {thing} {problem}.",
    "We tried to {fix}, but it didn't really help.",
    "{thing} {problem}, which is annoying.",
    "Not sure whether to {fix} or leave it alone.",
    "{measure} has been on my mind.",
    "Someone suggested we {fix}.",
    "Also, {thing} {problem}.",
    "Context: {thing} {problem} and I'd like to sort it out this week.",
)
_WORD = re.compile(r"[a-z]{4,}")


def _framed(rng: random.Random, frames: Sequence[str], domain: Domain, fields: Mapping[str, str]) -> str:
    """One shared frame filled from the domain's lexicon (fresh words for every sentence)."""
    words = {key: rng.choice(values) for key, values in domain.lexicon.items()}
    return sentence_case(pick(rng, frames, {**fields, **words}))


def _lead_topic(rng: random.Random, domain: Domain, request: str) -> int:
    """The topic whose words overlap the request most (ties at random): what the answer starts with."""
    asked = set(_WORD.findall(request.lower()))
    overlaps = [len(asked & set(_WORD.findall(" ".join(topic).lower()))) for topic in domain.topics]
    best = max(overlaps)
    return rng.choice([n for n, o in enumerate(overlaps) if o == best])


def _snippet(rng: random.Random, domain: Domain, fields: Mapping[str, str]) -> str | None:
    """A code block in the thread's language (or a language-neutral one: SQL, shell, queries)."""
    language = fields.get("language", "").lower()
    fitting = [s for s in domain.snippets if s.split("\n", 1)[0][3:] in {language, "sql", "bash", "promql"}]
    return pick(rng, fitting, fields) if fitting else None


def _answer(rng: random.Random, style: Style, thread: _Thread, request: str, inserts: Sequence[tuple[str, str]]) -> str:
    """A long assistant answer to ``request``; ``inserts`` are ``(sentence, where)`` with ``where`` in ``first``,
    ``middle``, ``last``: the paragraph that receives the sentence."""
    domain, fields = thread.domain, thread.fields
    lead = _lead_topic(rng, domain, request)
    others = [n for n in range(len(domain.topics)) if n != lead]
    count = rng.randint(*style.paragraphs)
    topics = [lead, *rng.sample(others, min(count - 1, len(others)))]
    paragraphs = []
    for number, topic_index in enumerate(topics):
        topic = domain.topics[topic_index]
        size = rng.randint(3, len(topic)) if number == 0 else rng.randint(1, 3)
        chosen = sorted(rng.sample(range(len(topic)), size))
        paragraph = [expand(topic[i], rng, fields) for i in chosen]
        for _ in range(rng.randint(1, 3)):
            paragraph.insert(rng.randint(1, len(paragraph)), _framed(rng, _ASSISTANT_FRAMES, domain, fields))
        paragraphs.append(paragraph)
    for sentence, where in inserts:
        target = 0 if where == "first" else len(paragraphs) - 1 if where == "last" else len(paragraphs) // 2
        paragraph = paragraphs[target]
        position = rng.randint(0, len(paragraph)) if where == "middle" else len(paragraph) if where == "last" else 1
        paragraph.insert(position, sentence)
    blocks = [pick(rng, _OPENERS, fields)] + [" ".join(p) for p in paragraphs]
    if rng.random() < style.lists:
        steps = rng.sample(list(domain.steps), min(len(domain.steps), rng.randint(3, 5)))
        bullets = "\n".join(f"{n}. {sentence_case(expand(s, rng, fields))}" for n, s in enumerate(steps, 1))
        heading = rng.choice(("Next steps:", "A checklist:", "In order:"))
        blocks.insert(rng.randint(2, len(blocks)), f"{heading}\n{bullets}")
    snippet = _snippet(rng, domain, fields) if rng.random() < style.code else None
    if snippet is not None:
        blocks.insert(rng.randint(2, len(blocks)), snippet)
    blocks.append(pick(rng, _CLOSERS, fields))
    return "\n\n".join(blocks)


def _user_turn(
    rng: random.Random, style: Style, thread: _Thread, items: Sequence[_Item], first: bool
) -> tuple[str, str]:
    """A user message carrying ``items`` (stated facts, events), and the request the answer responds to."""
    domain, fields = thread.domain, thread.fields
    parts = []
    if rng.random() < style.chatty:
        parts.append(rng.choice(_SMALL_TALK))
    request = pick(rng, domain.requests, fields)
    if domain.pastes and not items and rng.random() < 0.12:
        request = pick(rng, domain.pastes, fields)
        parts.append(request)
    elif not items and not first and rng.random() < 0.3:
        parts.append(rng.choice(_FOLLOW_UPS))
    else:
        context = [_framed(rng, _USER_FRAMES, domain, fields) for _ in range(rng.choice((0, 0, 1, 1, 2, 3)))]
        facts = [i.text for i in items]
        if items and rng.random() < 0.25:
            parts.extend([*facts, rng.choice(_TAILS)])
        elif rng.random() < 0.5:
            parts.extend([request, *context, *facts])
        else:
            parts.extend([*facts, *context, request])
    return " ".join(p for p in parts if p), request


@dataclass
class _Plan:
    """Where each slot value and event goes, and the turns that ended up stating them."""

    values: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    turns: dict[tuple[int, str], list[list[int]]] = field(default_factory=dict)
    events: dict[tuple[int, int], int] = field(default_factory=dict)
    advice: dict[tuple[int, int], int] = field(default_factory=dict)


def _schedule(rng: random.Random, threads: list[_Thread], sessions: int) -> list[int]:
    """The thread of each session: every thread appears from its start session on, interleaved."""
    starts = sorted(rng.sample(range(max(1, sessions // 2)), len(threads)))
    starts[0] = 0
    order = []
    for s in range(sessions):
        active = [t for t, start in enumerate(starts) if start <= s]
        fresh = [t for t in active if not threads[t].sessions]
        chosen = fresh[0] if fresh else rng.choice(active)
        threads[chosen].sessions.append(s)
        order.append(chosen)
    return order


def build_conversation(style: Style, seed: int, name: str) -> DevConversation:
    """Generate one conversation in ``style`` (deterministic for a seed)."""
    rng = random.Random(seed)
    people = rng.sample(PEOPLE, 8)
    threads = _distinct_threads(rng, style, people)
    mean_exchanges = sum(style.exchanges) / 2
    sessions = max(len(threads) * 3, round(style.messages / (2 * mean_exchanges)))
    order = _schedule(rng, threads, sessions)
    # Plan the items of each session: slot statements early in a thread, changes later, events anywhere.
    planned: dict[int, list[tuple[str, int, str]]] = {s: [] for s in range(sessions)}
    advice_at: dict[int, list[int]] = {s: [] for s in range(sessions)}
    for t, thread in enumerate(threads):
        own = thread.sessions
        for slot in thread.domain.slots:
            if rng.random() < 0.15 and len(thread.domain.slots) > 3:
                continue
            first = rng.choice(own[: max(1, len(own) // 2)])
            planned[first].append(("state", t, slot.key))
            later = [s for s in own if s > first]
            if slot.changes and later and rng.random() < 0.7:
                changes = sorted(rng.sample(later, min(len(later), 2 if rng.random() < 0.25 else 1)))
                planned[changes[0]].append(("update", t, slot.key))
                if len(changes) > 1:
                    planned[changes[1]].append(("update", t, slot.key))
        for e in range(len(thread.domain.events)):
            if rng.random() < 0.75:
                planned[rng.choice(own)].append(("event", t, str(e)))
        for a in range(len(thread.domain.advice)):
            if rng.random() < 0.7:
                advice_at[rng.choice(own)].append(t * 100 + a)
    builder = _Builder(rng, style)
    plan = _Plan()
    day = datetime(2024, 1, 8, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 200))
    slots = {(t, s.key): s for t, th in enumerate(threads) for s in th.domain.slots}
    for session in range(sessions):
        day += timedelta(days=rng.randint(1, 4))
        when = day.replace(hour=rng.randint(7, 21), minute=rng.randint(0, 59))
        thread_number = order[session]
        thread = threads[thread_number]
        items = planned[session]
        exchanges = max(rng.randint(*style.exchanges), len(items))
        carriers = sorted(rng.sample(range(exchanges), len(items))) if items else []
        rng.shuffle(items)
        by_turn = dict(zip(carriers, items, strict=True))
        advice_turns = {rng.randrange(exchanges): a for a in advice_at[session]}
        for exchange in range(exchanges):
            item = by_turn.get(exchange)
            made = _make_item(rng, item, threads, slots, plan, when.date()) if item else None
            text, request = _user_turn(rng, style, thread, [made] if made else [], exchange == 0)
            user = builder.add("user", text, when)
            when += timedelta(minutes=rng.randint(1, 6))
            inserts: list[tuple[str, str]] = []
            echoed = made is not None and made.echo != "" and rng.random() < 0.35
            if echoed and made is not None:
                inserts.append((made.echo, "first"))
            advice = advice_turns.get(exchange)
            if advice is not None:
                entry = threads[advice // 100].domain.advice[advice % 100]
                inserts.append((pick(rng, entry.said, thread.fields), rng.choice(("middle", "last", "last"))))
            reply = builder.add("assistant", _answer(rng, style, thread, request, inserts), when)
            when += timedelta(minutes=rng.randint(2, 9))
            if made is not None:
                turns = [user, reply] if echoed else [user]
                if made.kind == "event":
                    plan.events[(made.thread, int(made.key))] = user
                else:
                    plan.turns.setdefault((made.thread, made.key), []).append(turns)
            if advice is not None:
                plan.advice[(advice // 100, advice % 100)] = reply
    questions, updates = _questions(rng, threads, slots, plan, builder.timestamps)
    return DevConversation(name, style.name, builder.messages, builder.timestamps, questions, updates)


def _make_item(
    rng: random.Random,
    item: tuple[str, int, str],
    threads: list[_Thread],
    slots: Mapping[tuple[int, str], Slot],
    plan: _Plan,
    day: object,
) -> _Item:
    kind, t, key = item
    thread = threads[t]
    if kind == "event":
        event = thread.domain.events[int(key)]
        return _Item("event", t, key, pick(rng, event.said, thread.fields))
    slot = slots[(t, key)]
    values = plan.values.setdefault((t, key), [])
    previous = values[-1] if values else None
    people = [p for p in PEOPLE if p not in thread.fields.values()][:12]
    assert hasattr(day, "year")
    context = ValueContext(thread.fields, previous, day, people)  # type: ignore[arg-type]
    value = slot.value(rng, context)
    for _ in range(50):  # a change brings a value the fact never had
        if value not in values:
            break
        value = slot.value(rng, context)
    values.append(value)
    fields = {**thread.fields, "value": value, "old": previous or ""}
    templates = slot.update if previous is not None else slot.state
    text = sentence_case(pick(rng, templates, fields)).replace("..", ".")
    echo = pick(rng, slot.echo, fields).replace("..", ".") if slot.echo else ""
    return _Item("update" if previous is not None else "state", t, key, text, echo)


def _questions(
    rng: random.Random,
    threads: list[_Thread],
    slots: Mapping[tuple[int, str], Slot],
    plan: _Plan,
    times: Sequence[float],
) -> tuple[list[Question], list[Update]]:
    questions: list[Question] = []
    updates: list[Update] = []
    seen: set[str] = set()

    def ask(template_options: Sequence[str], fields: Mapping[str, str], evidence: Sequence[int], category: int) -> str:
        text = sentence_case(pick(rng, template_options, fields))
        if text not in seen and evidence:
            seen.add(text)
            questions.append(Question(text, tuple(sorted(set(evidence))), category))
        return text

    for (t, key), statements in plan.turns.items():
        slot, fields = slots[(t, key)], threads[t].fields
        latest = statements[-1]
        if len(statements) == 1:
            ask(slot.current, fields, latest, FACT)
            continue
        text = ask(slot.current, fields, latest, CURRENT)
        earlier = [turn for turns in statements[:-1] for turn in turns]
        values = plan.values[(t, key)]
        kind = f"{threads[t].domain.name}: {slot.key}"
        updates.append(Update(text, tuple(latest), tuple(earlier), kind, values[-1], tuple(values[:-1])))
        if slot.previous and rng.random() < 0.4:
            ask(slot.previous, fields, statements[-2], PREVIOUS)
        if slot.history and rng.random() < 0.6:
            ask(slot.history, fields, earlier + latest, ALL_VALUES)
    events = sorted(plan.events.items(), key=lambda item: item[1])
    for (t, e), turn in events:
        event = threads[t].domain.events[e]
        ask(event.when, threads[t].fields, [turn], TEMPORAL)
    pairs = [(a, b) for i, a in enumerate(events) for b in events[i + 1 :]]
    for ((ta, ea), first), ((tb, eb), second) in rng.sample(pairs, min(len(pairs), max(2, len(events) // 2))):
        label_a = expand(threads[ta].domain.events[ea].label, rng, threads[ta].fields)
        label_b = expand(threads[tb].domain.events[eb].label, rng, threads[tb].fields)
        if rng.random() < 0.5:
            text = (
                f"Which came first, {label_a} or {label_b}?"
                if rng.random() < 0.5
                else (f"Which came first, {label_b} or {label_a}?")
            )
        else:
            text = f"How many days were there between {label_a} and {label_b}?"
        ask([text.replace("{", "(").replace("}", ")")], {}, [first, second], TEMPORAL)
    for (t, a), turn in plan.advice.items():
        ask(threads[t].domain.advice[a].asked, threads[t].fields, [turn], ASSISTANT)
    del times
    return questions, updates


def build_devset(seed: int = 0, styles: Sequence[Style] = STYLES) -> list[DevConversation]:
    """The second development set: one conversation per style, seeded from ``seed``."""
    return [build_conversation(style, seed * 1000 + n, f"dev-{n}") for n, style in enumerate(styles)]


UPDATE_STYLES = (
    Style("short task chat", (SOFTWARE, TRAVEL), 60, exchanges=(2, 4), paragraphs=(1, 3)),
    Style("incident night", (INCIDENT, PROJECT), 120, exchanges=(4, 8), paragraphs=(2, 4), code=0.5),
    Style("life admin", (HOME, FINANCE, HEALTH, EVENT), 180, exchanges=(2, 5), paragraphs=(2, 4), chatty=0.4),
    Style("long work history", (SOFTWARE, PROJECT, INCIDENT, TRAVEL), 300, paragraphs=(3, 6)),
)
"""The knowledge-update test set: conversations of different lengths and styles, generated from another seed than
the development set, so the test checks changes the ranking was not chosen on."""


def build_update_set(seed: int = 101) -> list[DevConversation]:
    """The knowledge-update test set (see ``UPDATE_STYLES``)."""
    return [build_conversation(style, seed * 1000 + n, f"updates-{n}") for n, style in enumerate(UPDATE_STYLES)]


def describe(conversations: Sequence[DevConversation]) -> str:
    """Size of a generated set: messages, words per message by role, questions by category."""
    lines = ["| conversation | style | messages | words/assistant msg (median, max) | words/user msg | questions |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for c in conversations:
        words = {
            role: [len(str(m["content"][0].get("text", "")).split()) for m in c.messages if m["role"] == role]
            for role in ("assistant", "user")
        }
        lines.append(
            f"| {c.name} | {c.style} | {len(c.messages)} | {statistics.median(words['assistant']):.0f}, "
            f"{max(words['assistant'])} | {statistics.median(words['user']):.0f} | {len(c.questions)} |"
        )
    counts = {name: 0 for name in CATEGORIES.values()}
    for c in conversations:
        for q in c.questions:
            counts[CATEGORIES[q.category]] += 1
    lines.append("")
    lines.append("Questions by category: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    lines.append(f"Knowledge updates: {sum(len(c.updates) for c in conversations)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.data.devset [--seed N] [--sample N]``: the set's size, and one conversation's start."""
    parser = argparse.ArgumentParser(description="The second development set: size and a sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=0, help="print the first N messages of the first conversation")
    parser.add_argument("--updates", action="store_true", help="describe the knowledge-update test set instead")
    args = parser.parse_args(argv)
    conversations = build_update_set() if args.updates else build_devset(args.seed)
    print(describe(conversations))
    first = conversations[0]
    for message, when in zip(first.messages[: args.sample], first.timestamps, strict=False):
        stamp = datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
        print(f"\n--- {message['role']} ({stamp})\n{message['content'][0].get('text', '')}")
    return 0
