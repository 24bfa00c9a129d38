"""Generated conversations of shapes LoCoMo lacks, deterministic by seed, in LoCoMo's shape (``locomo.Conversation``).

LoCoMo is social chat between two people in short turns. What an assistant sees in production differs, and a rule
tuned on LoCoMo alone can be fitted to its shape. Each shape here is one conversation between a user and an
assistant (sessions on separate days, dated), with the evidence of every question known by construction:

- ``work``: technical threads, short requests and long answers (paragraphs, a numbered list, a code block), facts
  stated in passing and changed later (ports, timeouts, versions, owners);
- ``life``: a trip, a move, health and money; dated events; facts that change (hotel, address, appointment);
- ``short sessions``: forty sessions of one or two exchanges, the facts spread thin;
- ``repeat asker``: a user who asks again and again what they said once ("what was the port again?"), so the
  archive holds the same question many times beside its one answer.

Questions (``CATEGORIES``): a fact stated once; a fact's current value after changes (evidence: its latest
statement); its previous value; when an event happened; what only the assistant said, inside a long answer; and
what the user has asked before (evidence: the statement, not the earlier askings).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from benchmarks.data.locomo import Conversation, Question, Session, Turn

CATEGORIES = {1: "fact", 2: "current value", 3: "previous value", 4: "temporal", 5: "assistant said", 6: "asked before"}
FACT, CURRENT, PREVIOUS, TEMPORAL, ASSISTANT, ASKED = range(1, 7)
SHAPES = ("work", "life", "short sessions", "repeat asker")
USER, ASSISTANT_NAME = "user", "assistant"


@dataclass(frozen=True)
class Domain:
    """What threads of one kind talk about: facts (noun, values), events (said, asked), advice (topic, said), and
    the words long answers are filled from."""

    facts: tuple[tuple[str, tuple[str, ...]], ...]
    events: tuple[tuple[str, str], ...]
    advice: tuple[tuple[str, str], ...]
    topics: tuple[str, ...]
    things: tuple[str, ...]
    fixes: tuple[str, ...]
    code: str = ""


WORK = Domain(
    facts=(
        ("the staging database port", ("5432", "6432", "7543", "15432")),
        ("the API gateway timeout", ("30 seconds", "45 seconds", "90 seconds", "2 minutes")),
        ("the release we are shipping", ("v2.3.1", "v2.4.0", "v2.5.0-rc1", "v3.0.0")),
        ("the owner of the billing service", ("Priya Natarajan", "Tomasz Wilk", "Amara Okafor", "Lena Hoffmann")),
        ("the build cache bucket", ("ci-cache-eu-1", "ci-cache-us-2", "build-artifacts-7", "cache-blue-04")),
        ("the worker pool size", ("8 workers", "12 workers", "24 workers", "32 workers")),
        ("the feature flag for the new checkout", ("checkout_v2", "new_checkout_flow", "ck-rollout-b", "cx_beta")),
    ),
    events=(
        ("We rolled back the payments deploy this morning.", "When did we roll back the payments deploy?"),
        ("The incident review for the outage happened today.", "When was the incident review for the outage?"),
        ("We finished migrating the search cluster today.", "When did we finish migrating the search cluster?"),
    ),
    advice=(
        ("connection pooling", "put PgBouncer in front of the database in transaction mode"),
        ("flaky integration tests", "quarantine the flaky tests and run them nightly instead of on every merge"),
        ("the slow dashboard", "precompute the daily aggregates in a materialized view refreshed every hour"),
    ),
    topics=("the deploy pipeline", "the retry logic", "our alerting", "the schema migration", "load testing"),
    things=("the queue consumer", "the cache layer", "the health check", "the rate limiter", "the cron job"),
    fixes=("add a circuit breaker", "log the request id", "cap the batch size", "pin the dependency", "add an index"),
    code="```python\nfor attempt in range(5):\n    try:\n        return call()\n    except TimeoutError:\n"
    "        time.sleep(2 ** attempt)\n```",
)
LIFE = Domain(
    facts=(
        ("the hotel in Lisbon", ("Casa do Rio", "Hotel Miradouro", "the Alfama Lofts", "Pensao Azul")),
        ("my new address", ("14 Garden Row", "7 Linden Court", "221 Marsh Lane", "3 Quarry Hill")),
        ("my dentist appointment", ("Tuesday at 9:30", "Thursday at 14:00", "Monday at 11:15", "Friday at 8:45")),
        ("the monthly rent", ("1,450 euros", "1,520 euros", "1,380 euros", "1,600 euros")),
        ("my running goal", ("a 10k in 55 minutes", "a half marathon", "a 5k under 25 minutes", "a trail race")),
        ("the venue for Maya's party", ("the boathouse", "the rooftop bar on Quay Street", "our garden", "Cafe Lune")),
    ),
    events=(
        ("I got the keys to the new flat today!", "When did I get the keys to the new flat?"),
        ("I ran my first half marathon today.", "When did I run my first half marathon?"),
        ("We booked the flights to Lisbon today.", "When did we book the flights to Lisbon?"),
    ),
    advice=(
        ("the moving boxes", "label every box by room on two sides and keep one essentials box in the car"),
        ("the knee pain", "cut the long run by a third for two weeks and add two strength sessions"),
        ("saving for the trip", "set up a separate account with an automatic transfer on payday"),
    ),
    topics=("the budget", "packing", "the training plan", "the move", "sleep"),
    things=("the grocery bill", "the commute", "the weekend plan", "the gym schedule", "the shared calendar"),
    fixes=("write it down the night before", "keep a simple spreadsheet", "set a reminder", "ask for a quote"),
)
FILLER = (
    "{Thing} tends to be where these problems start, so I would look there first.",
    "A simple first step is to {fix}; it is cheap and easy to undo.",
    "When it comes to {topic}, the trade-off is mostly time against certainty.",
    "Keep an eye on {thing} for a week after any change.",
    "If {thing} keeps misbehaving, {fix} and compare before and after.",
    "Many people skip this, but it pays to {fix} early.",
    "I would not change {topic} and {thing} at the same time: you will not know which one helped.",
    "Before touching {topic}, write down what normal looks like for {thing}.",
    "Another option is to {fix}, though it takes a little longer to set up.",
    "In my experience {thing} causes more trouble than {topic} does.",
    "Try to {fix} first and only then rethink {topic}.",
    "It is worth asking whether {thing} is needed at all.",
    "You can revisit {topic} later; for now, {fix}.",
    "The usual mistake with {thing} is waiting too long to {fix}.",
)
REQUESTS = (
    "Can you help me think through {topic}?",
    "What should I do about {thing}?",
    "Any advice on {topic}?",
    "I keep going back and forth on {thing}. Thoughts?",
    "Quick one: is it worth it to {fix}?",
)


@dataclass
class _Builder:
    rng: random.Random
    start: datetime
    sessions: list[Session] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def session(self) -> None:
        if self.turns:
            self.sessions.append(Session(len(self.sessions) + 1, self.start.timestamp(), tuple(self.turns)))
        self.start += timedelta(days=self.rng.randint(1, 4), hours=self.rng.randint(-3, 3))
        self.turns = []

    def say(self, speaker: str, text: str) -> str:
        dia_id = f"D{len(self.sessions) + 1}:{len(self.turns) + 1}"
        self.turns.append(Turn(dia_id, speaker, text))
        return dia_id


def _fill(rng: random.Random, domain: Domain, template: str) -> str:
    """A filler sentence; its subjects include the facts' nouns (mentioned without their values: distractors)."""
    things = domain.things + tuple(noun for noun, _ in domain.facts)
    words = {"topic": rng.choice(domain.topics), "thing": rng.choice(things), "fix": rng.choice(domain.fixes)}
    text = template.replace("{Thing}", words["thing"].capitalize())
    return text.format(**words)


def _answer(rng: random.Random, domain: Domain, long: bool, insert: str | None = None) -> str:
    """An assistant answer: one paragraph, or several with a list or code block; ``insert`` goes in a late one."""
    count = rng.randint(3, 6) if long else 1
    paragraphs = [
        " ".join(_fill(rng, domain, rng.choice(FILLER)) for _ in range(rng.randint(2, 4))) for _ in range(count)
    ]
    if long and rng.random() < 0.5:
        steps = rng.sample(domain.fixes, 3)
        paragraphs.insert(rng.randint(1, count), "\n".join(f"{n}. {s.capitalize()}." for n, s in enumerate(steps, 1)))
    if long and domain.code and rng.random() < 0.4:
        paragraphs.insert(rng.randint(1, len(paragraphs)), domain.code)
    if insert is not None:
        where = rng.randint(max(0, len(paragraphs) - 2), len(paragraphs) - 1)
        paragraphs[where] += f" {insert}"
    return "\n\n".join(paragraphs)


def _conversation(shape: str, seed: int) -> Conversation:
    rng = random.Random(f"{shape}:{seed}")
    domains = {"work": (WORK,), "life": (LIFE,), "short sessions": (WORK, LIFE), "repeat asker": (WORK, LIFE)}[shape]
    sessions = {"work": 12, "life": 10, "short sessions": 40, "repeat asker": 16}[shape]
    exchanges = (1, 2) if shape == "short sessions" else (3, 6)
    long = shape == "work"
    # what each session carries: ("fact", domain, index), ("event", ...), ("advice", ...), ("ask", ...)
    plan: list[list[tuple[str, Domain, int]]] = [[] for _ in range(sessions)]
    for domain in domains:
        for number in range(len(domain.facts)):
            first = rng.randrange(sessions // 2)
            plan[first].append(("fact", domain, number))
            for later in sorted(rng.sample(range(first + 1, sessions), rng.choice((0, 1, 1, 2)))):
                plan[later].append(("fact", domain, number))
            if shape == "repeat asker":
                for later in rng.sample(range(first + 1, sessions), 3):
                    plan[later].append(("ask", domain, number))
        for kind, listed in (("event", domain.events), ("advice", domain.advice)):
            for number in range(len(listed)):
                plan[rng.randrange(sessions)].append((kind, domain, number))
    built = _Builder(rng, datetime(2024, 1, 8, 9, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 300)))
    stated: dict[tuple[int, int], list[tuple[str, str]]] = {}  # (domain, fact) -> [(dia id, value)]
    for items in plan:
        built.session()
        rng.shuffle(items)
        for exchange in range(max(rng.randint(*exchanges), len(items))):
            domain = domains[exchange % len(domains)]
            request = _fill(rng, domain, rng.choice(REQUESTS))
            kind, item_domain, number = items[exchange] if exchange < len(items) else ("", domain, 0)
            key = (domains.index(item_domain), number)
            insert, question = None, None
            if kind == "fact":
                noun, values = item_domain.facts[number]
                history = stated.setdefault(key, [])
                value = rng.choice([v for v in values if v not in {old for _, old in history}] or list(values))
                said = f"Also, {noun} is {value}." if not history else f"Update: {noun} is now {value}."
                history.append(
                    (built.say(USER, f"{request} {said}" if rng.random() < 0.5 else f"{said} {request}"), value)
                )
            elif kind == "event":
                said, asked = item_domain.events[number]
                built.questions.append(Question(asked, (built.say(USER, f"{said} {request}"),), TEMPORAL))
            elif kind == "ask" and key in stated:
                built.say(USER, f"What was {item_domain.facts[number][0]} again?")
                insert = f"As you told me, it is {stated[key][-1][1]}."
            else:
                built.say(USER, request)
                if kind == "advice":
                    topic, advice = item_domain.advice[number]
                    insert, question = (
                        f"On {topic}, my recommendation is to {advice}.",
                        f"What did you recommend for {topic}?",
                    )
            dia_id = built.say(ASSISTANT_NAME, _answer(rng, item_domain, long, insert))
            if question is not None:
                built.questions.append(Question(question, (dia_id,), ASSISTANT))
    built.session()
    for (index, number), history in stated.items():
        noun = domains[index].facts[number][0]
        repeat = shape == "repeat asker"
        category = ASKED if repeat else CURRENT if len(history) > 1 else FACT
        built.questions.append(Question(f"What is {noun}?", (history[-1][0],), category))
        if len(history) > 1 and not repeat:
            built.questions.append(Question(f"What was {noun} before the last change?", (history[-2][0],), PREVIOUS))
    return Conversation(
        f"{shape} {seed}", USER, ASSISTANT_NAME, tuple(built.sessions), tuple(built.questions), CATEGORIES, False
    )


def build(seed: int = 0, shapes: Sequence[str] = SHAPES) -> list[Conversation]:
    """One conversation of each shape, generated from ``seed`` (the same seed gives the same conversations)."""
    return [_conversation(shape, seed) for shape in shapes]
