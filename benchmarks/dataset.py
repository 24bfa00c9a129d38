"""Reproducible benchmark data: a long multi-session conversation with questions, and filler corpora.

The retrieval set plants facts of four kinds in a long conversation full of look-alike distractors (other codes,
other people, other meetings) and asks one question per fact:

- ``exact``: the question names an exact token (a flight number, invoice id, ticket key) found in one turn;
  distractors carry tokens of the same shape.
- ``paraphrase``: the question rewords the fact and shares only one entity with it.
- ``multi_turn``: the fact is spread over two user turns a few turns apart; both are evidence.
- ``temporal``: the fact was stated and later changed; only the later turn answers "now".

Besides the asked facts, the conversation holds look-alike statements that nobody asks about: the same templates
about other people, projects, meetings and codes (``lookalikes_per_fact`` of them per asked fact), as real
conversations mention many people and projects in the same words.

Everything comes from one ``random.Random(seed)``; the same seed gives the same conversation.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

NAMES = [
    "Alice",
    "Bruno",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jonas",
    "Keiko",
    "Luis",
    "Maya",
    "Nikos",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zara",
    "Amir",
    "Beatriz",
    "Carlos",
    "Dmitri",
    "Elena",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Jamal",
    "Klara",
    "Leon",
    "Mina",
    "Noah",
    "Oskar",
    "Paula",
    "Rafael",
    "Sofia",
    "Theo",
    "Ulla",
    "Vera",
    "Willem",
    "Yara",
    "Zeno",
]
CITIES = [
    "Osaka",
    "Lisbon",
    "Nairobi",
    "Quito",
    "Tallinn",
    "Perth",
    "Montreal",
    "Hanoi",
    "Accra",
    "Bergen",
    "Cusco",
    "Tbilisi",
    "Valencia",
    "Auckland",
    "Krakow",
    "Dakar",
    "Seville",
    "Busan",
    "Porto",
    "Riga",
]
ITEMS = [
    "standing desk",
    "espresso machine",
    "drone",
    "road bike",
    "projector",
    "air purifier",
    "sofa",
    "tent",
    "monitor",
    "keyboard",
    "blender",
    "heater",
    "camera lens",
    "printer",
    "router",
    "lamp",
]
JOBS = [
    "pediatric nurse",
    "structural engineer",
    "pastry chef",
    "court interpreter",
    "marine biologist",
    "tax auditor",
    "violin teacher",
    "air traffic controller",
    "data journalist",
    "landscape architect",
    "paramedic",
    "patent attorney",
    "museum curator",
    "sommelier",
    "locksmith",
    "speech therapist",
]
FOODS = ["peanuts", "shellfish", "sesame", "gluten", "kiwi", "eggs", "soy", "mustard", "celery", "lupin"]
TECH = [
    "PostgreSQL",
    "Elixir",
    "Go",
    "Kafka",
    "Rust",
    "Django",
    "Redis",
    "gRPC",
    "Svelte",
    "FastAPI",
    "Scala",
    "DynamoDB",
    "Flutter",
    "Terraform",
]
PROJECTS = [
    "Atlas",
    "Beacon",
    "Cobalt",
    "Drift",
    "Ember",
    "Falcon",
    "Garnet",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Mosaic",
    "Nimbus",
    "Onyx",
    "Pylon",
    "Quartz",
    "Raven",
    "Sable",
    "Tundra",
    "Umbra",
    "Vertex",
]
EVENTS = [
    "book fair",
    "hackathon",
    "charity run",
    "school concert",
    "team offsite",
    "wine tasting",
    "film night",
    "board game evening",
    "photo walk",
    "quiz night",
    "pottery class",
    "chess tournament",
]
VENUES = [
    "the old library",
    "Pier 9",
    "the rooftop garden",
    "the community hall",
    "the botanical greenhouse",
    "the maritime museum",
    "the east wing atrium",
    "the railway depot",
    "the lakeside pavilion",
]
CHANNELS = ["text message", "a phone call", "Signal", "a handwritten note", "Slack", "a video call"]
MEETINGS = [
    "design review",
    "budget sync",
    "sprint planning",
    "vendor call",
    "safety briefing",
    "hiring panel",
    "roadmap session",
    "security audit",
    "release retro",
    "customer demo",
    "architecture council",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TIMES = ["8:30", "9:00", "9:45", "10:15", "11:00", "13:30", "14:00", "15:15", "16:45"]
SERVICES = [
    "roof repair",
    "tile grouting",
    "window cleaning",
    "boiler inspection",
    "garden clearing",
    "chimney sweep",
    "floor sanding",
    "gutter replacement",
    "fence painting",
]
BUGS = [
    "login timeout",
    "currency rounding",
    "PDF export",
    "dark mode contrast",
    "search pagination",
    "timezone offset",
    "cache invalidation",
    "upload retry",
    "password reset email",
]
SYSTEMS = ["billing", "notifications", "search", "inventory", "payroll", "reporting", "identity", "checkout"]
BLOCKERS = [
    "a missing TLS certificate",
    "a schema conflict",
    "a vendor contract renewal",
    "a quota limit",
    "an unreviewed security exception",
    "a flaky integration test",
    "a licence audit",
]
RESTAURANTS = [
    "Casa Lupita",
    "The Copper Pot",
    "Sakura Garden",
    "Bistro Nord",
    "The Green Fig",
    "Olive & Thyme",
    "Blue Lagoon Grill",
    "Maison Clair",
    "Spice Route",
]
TOPICS = [
    "the quarterly budget",
    "the hiking trip",
    "binary search trees",
    "the kitchen renovation",
    "sourdough baking",
    "the marketing offsite",
    "Rust lifetimes",
    "the garden irrigation",
    "the jazz concert",
    "tax deductions",
    "the database migration",
    "a birthday party",
    "the chess opening",
    "solar panels",
    "the book club",
    "the onboarding plan",
    "photosynthesis",
    "the bicycle repair",
    "a job interview",
    "the weather",
    "the flight booking",
    "the invoice backlog",
    "the support tickets",
    "the team dinner",
    "the conference talk",
]


@dataclass(frozen=True)
class Question:
    """A question and the message positions that answer it."""

    text: str
    evidence: tuple[int, ...]
    kind: str


@dataclass
class Dataset:
    """A conversation (Strands messages) and questions about it."""

    messages: list[dict[str, Any]]
    questions: list[Question] = field(default_factory=list)
    seed: int = 0


def _message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"text": text}]}


def _code(rng: random.Random, prefix: str) -> str:
    letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(2))
    return f"{prefix}-{rng.randint(1000, 9999)}-{letters}"


def filler_turn(rng: random.Random) -> tuple[str, str]:
    """One user turn and the assistant's reply, on a random everyday or technical topic, with look-alike details."""
    topic = rng.choice(TOPICS)
    detail = rng.choice(
        [
            f"{rng.choice(NAMES)} will review it on {rng.choice(DAYS)} at {rng.choice(TIMES)}",
            f"the reference {_code(rng, rng.choice(['QF', 'INV', 'TCK', 'ORD']))} is in the shared folder",
            f"it cost about {rng.randint(20, 900)} euros last time",
            f"we might move it to {rng.choice(CITIES)} next year",
            f"{rng.choice(NAMES)} suggested {rng.choice(TECH)} for it",
            f"the {rng.choice(MEETINGS)} should cover it",
            f"there are {rng.randint(2, 30)} open items left",
            f"the {rng.choice(ITEMS)} arrived damaged again",
        ]
    )
    user = rng.choice(
        [
            f"Quick update on {topic}: {detail}.",
            f"Can we talk about {topic}? {detail.capitalize()}.",
            f"About {topic} - {detail}, does that sound right?",
            f"Reminder for {topic}: {detail}.",
        ]
    )
    assistant = rng.choice(
        [
            f"Understood. For {topic}, I'd keep a short checklist so nothing slips.",
            f"That makes sense; {topic} usually needs a follow-up after that.",
            f"Thanks. I'll keep {topic} in mind and we can revisit it later.",
            f"Good to know. Is there a deadline for {topic}?",
        ]
    )
    return user, assistant


def filler_messages(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` filler messages (alternating user and assistant), reproducible from ``seed``."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    while len(messages) < count:
        user, assistant = filler_turn(rng)
        messages.extend([_message("user", user), _message("assistant", assistant)])
    return messages[:count]


def _facts(rng: random.Random, per_kind: int) -> list[tuple[str, list[str], str]]:
    """(kind, user statements in order, question) for every planted fact."""
    names = rng.sample(NAMES, len(NAMES))
    projects = rng.sample(PROJECTS, len(PROJECTS))
    events = rng.sample(EVENTS, len(EVENTS))
    meetings = rng.sample(MEETINGS, len(MEETINGS))
    systems = rng.sample(SYSTEMS, len(SYSTEMS))
    facts: list[tuple[str, list[str], str]] = []

    exact_templates = [
        lambda: (lambda c, x: ([f"Flight {c} leaves for {x} at {rng.choice(TIMES)}."], f"Where is flight {c} going?"))(
            _code(rng, "QF"), rng.choice(CITIES)
        ),
        lambda: (lambda c, x: ([f"Invoice {c} covers the {x} work."], f"What does invoice {c} cover?"))(
            _code(rng, "INV"), rng.choice(SERVICES)
        ),
        lambda: (lambda c, x: ([f"Ticket {c} is about the {x} bug."], f"What is ticket {c} about?"))(
            _code(rng, "TCK"), rng.choice(BUGS)
        ),
        lambda: (lambda c, x: ([f"The tracking number for the {x} is {c}."], f"Which item has tracking number {c}?"))(
            _code(rng, "ORD"), rng.choice(ITEMS)
        ),
    ]
    for i in range(per_kind):
        statements, question = exact_templates[i % len(exact_templates)]()
        facts.append(("exact", statements, question))

    for i in range(per_kind):
        name = names[i % len(names)]
        project = projects[i % len(projects)]
        event = events[i % len(events)]
        choice = i % 5
        if choice == 0:
            statements, question = (
                [f"My cousin {name} works as a {rng.choice(JOBS)} in {rng.choice(CITIES)}."],
                (f"What is {name}'s profession?"),
            )
        elif choice == 1:
            statements, question = (
                [f"{name} is allergic to {rng.choice(FOODS)}, so we avoid it at dinners."],
                (f"Which food must {name} never eat?"),
            )
        elif choice == 2:
            statements, question = (
                [f"We decided to use {rng.choice(TECH)} for the {project} backend."],
                (f"What did we pick for the server side of {project}?"),
            )
        elif choice == 3:
            statements, question = (
                [f"The {event} got moved because the venue flooded; it is now at {rng.choice(VENUES)}."],
                (f"Where will the {event} take place?"),
            )
        else:
            statements, question = (
                [f"{name} prefers to be contacted by {rng.choice(CHANNELS)} rather than email."],
                (f"What is the best way to reach {name}?"),
            )
        facts.append(("paraphrase", statements, question))

    for i in range(per_kind):
        name = names[(i + 25) % len(names)]
        system = systems[i % len(systems)]
        if i % 2 == 0:
            statements = [
                f"I'm organizing {name}'s farewell party next month.",
                f"For the farewell, we reserved a table at {rng.choice(RESTAURANTS)}.",
            ]
            question = f"Where is {name}'s farewell party being held?"
        else:
            statements = [
                f"We are migrating the {system} service to the new cluster ({projects[(i + 7) % len(projects)]}).",
                f"That migration is blocked by {rng.choice(BLOCKERS)}.",
            ]
            question = f"What is blocking the {system} migration to {projects[(i + 7) % len(projects)]}?"
        facts.append(("multi_turn", statements, question))

    for i in range(per_kind):
        meeting = f"{meetings[i % len(meetings)]} for {projects[(i + 3) % len(projects)]}"
        first = f"The {meeting} is on {rng.choice(DAYS)} at {rng.choice(TIMES)}."
        later = f"Change of plan: the {meeting} moved to {rng.choice(DAYS)} at {rng.choice(TIMES)}."
        facts.append(("temporal", [first, later], f"When is the {meeting} now?"))
    return facts


def _lookalikes(rng: random.Random, facts: list[tuple[str, list[str], str]], count: int) -> list[str]:
    """Statements shaped like the asked facts, about entities no question asks about (so no answer is ambiguous)."""
    asked = " ".join(" ".join(statements) + " " + question for _, statements, question in facts)
    names = [n for n in NAMES if f"{n}'s" not in asked and f"{n} " not in asked]
    projects = [p for p in PROJECTS if p not in asked]
    events = [e for e in EVENTS if e not in asked]
    makers = [
        lambda: f"Flight {_code(rng, 'QF')} leaves for {rng.choice(CITIES)} at {rng.choice(TIMES)}.",
        lambda: f"Invoice {_code(rng, 'INV')} covers the {rng.choice(SERVICES)} work.",
        lambda: f"Ticket {_code(rng, 'TCK')} is about the {rng.choice(BUGS)} bug.",
        lambda: f"The tracking number for the {rng.choice(ITEMS)} is {_code(rng, 'ORD')}.",
    ]
    if names:
        makers += [
            lambda: f"My cousin {rng.choice(names)} works as a {rng.choice(JOBS)} in {rng.choice(CITIES)}.",
            lambda: f"{rng.choice(names)} is allergic to {rng.choice(FOODS)}, so we avoid it at dinners.",
            lambda: f"{rng.choice(names)} prefers to be contacted by {rng.choice(CHANNELS)} rather than email.",
            lambda: f"I'm organizing {rng.choice(names)}'s farewell party next month.",
        ]
    if projects:
        makers += [
            lambda: f"We decided to use {rng.choice(TECH)} for the {rng.choice(projects)} backend.",
            lambda: (
                f"The {rng.choice(MEETINGS)} for {rng.choice(projects)} is on {rng.choice(DAYS)} at {rng.choice(TIMES)}."
            ),
            lambda: (
                f"Change of plan: the {rng.choice(MEETINGS)} for {rng.choice(projects)} moved to "
                f"{rng.choice(DAYS)} at {rng.choice(TIMES)}."
            ),
        ]
    if events:
        makers.append(
            lambda: f"The {rng.choice(events)} got moved because the venue flooded; it is now at {rng.choice(VENUES)}."
        )
    makers.append(lambda: f"For the farewell, we reserved a table at {rng.choice(RESTAURANTS)}.")
    return [rng.choice(makers)() for _ in range(count)]


def build_dataset(seed: int = 13, per_kind: int = 25, filler_between: int = 8, lookalikes_per_fact: int = 2) -> Dataset:
    """Build the retrieval set.

    Args:
        seed: Seed of the one random generator everything comes from.
        per_kind: Facts (and questions) per question kind.
        filler_between: Average filler exchanges (user + assistant) between planted statements.
        lookalikes_per_fact: Look-alike statements (never asked about) per asked fact.

    Returns:
        The conversation and its questions (``per_kind * 4`` of them).
    """
    rng = random.Random(seed)
    facts = _facts(rng, per_kind)
    lookalikes = _lookalikes(rng, facts, lookalikes_per_fact * len(facts))
    # Schedule every statement: the first ones spread over the conversation, follow-ups a few to many turns later.
    pending: list[tuple[float, int, int]] = []  # (position key, fact number, statement number)
    for number, (kind, statements, _) in enumerate(facts):
        start = rng.random()
        pending.append((start, number, 0))
        if len(statements) > 1 and kind != "multi_turn":  # multi-turn follow-ups come right after (below)
            pending.append((min(start + rng.uniform(0.1, 0.4), 0.9999), number, 1))
    pending.extend((rng.random(), -1 - n, 0) for n in range(len(lookalikes)))  # negative: a look-alike
    pending.sort()
    messages: list[dict[str, Any]] = []
    evidence: dict[int, list[int]] = {}
    for _, number, statement in pending:
        for _ in range(max(0, int(rng.gauss(filler_between, filler_between / 3)))):
            user, assistant = filler_turn(rng)
            messages.extend([_message("user", user), _message("assistant", assistant)])
        if number < 0:
            messages.append(_message("user", lookalikes[-1 - number]))
            messages.append(_message("assistant", rng.choice(["Noted.", "Got it.", "Okay."])))
            continue
        kind, statements, _ = facts[number]
        position = len(messages)
        messages.append(_message("user", statements[statement]))
        messages.append(
            _message(
                "assistant",
                rng.choice(["Noted.", "Got it, thanks.", "Okay, I'll remember that.", "Thanks for letting me know."]),
            )
        )
        if kind == "temporal":
            if statement == 1:
                evidence[number] = [position]
        else:
            evidence.setdefault(number, []).append(position)
        if kind == "multi_turn":  # the follow-up: one to three exchanges later ("a few turns apart")
            for _ in range(rng.randint(0, 2)):
                user, assistant = filler_turn(rng)
                messages.extend([_message("user", user), _message("assistant", assistant)])
            evidence[number].append(len(messages))
            messages.append(_message("user", statements[1]))
            messages.append(_message("assistant", rng.choice(["Noted.", "Got it, thanks."])))
    questions = [
        Question(text=question, evidence=tuple(evidence[number]), kind=kind)
        for number, (kind, _, question) in enumerate(facts)
    ]
    return Dataset(messages=messages, questions=questions, seed=seed)
