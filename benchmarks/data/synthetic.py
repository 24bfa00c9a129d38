"""The synthetic retrieval set: a long multi-session conversation with planted facts and one question per fact.

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
from dataclasses import dataclass, field
from typing import Any

from .conversations import (
    BLOCKERS,
    BUGS,
    CHANNELS,
    CITIES,
    DAYS,
    EVENTS,
    FOODS,
    ITEMS,
    JOBS,
    MEETINGS,
    NAMES,
    PROJECTS,
    RESTAURANTS,
    SERVICES,
    SYSTEMS,
    TECH,
    TIMES,
    VENUES,
    code,
    filler_turn,
    text_message,
)


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
            code(rng, "QF"), rng.choice(CITIES)
        ),
        lambda: (lambda c, x: ([f"Invoice {c} covers the {x} work."], f"What does invoice {c} cover?"))(
            code(rng, "INV"), rng.choice(SERVICES)
        ),
        lambda: (lambda c, x: ([f"Ticket {c} is about the {x} bug."], f"What is ticket {c} about?"))(
            code(rng, "TCK"), rng.choice(BUGS)
        ),
        lambda: (lambda c, x: ([f"The tracking number for the {x} is {c}."], f"Which item has tracking number {c}?"))(
            code(rng, "ORD"), rng.choice(ITEMS)
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
        lambda: f"Flight {code(rng, 'QF')} leaves for {rng.choice(CITIES)} at {rng.choice(TIMES)}.",
        lambda: f"Invoice {code(rng, 'INV')} covers the {rng.choice(SERVICES)} work.",
        lambda: f"Ticket {code(rng, 'TCK')} is about the {rng.choice(BUGS)} bug.",
        lambda: f"The tracking number for the {rng.choice(ITEMS)} is {code(rng, 'ORD')}.",
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
            messages.extend([text_message("user", user), text_message("assistant", assistant)])
        if number < 0:
            messages.append(text_message("user", lookalikes[-1 - number]))
            messages.append(text_message("assistant", rng.choice(["Noted.", "Got it.", "Okay."])))
            continue
        kind, statements, _ = facts[number]
        position = len(messages)
        messages.append(text_message("user", statements[statement]))
        messages.append(
            text_message(
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
                messages.extend([text_message("user", user), text_message("assistant", assistant)])
            evidence[number].append(len(messages))
            messages.append(text_message("user", statements[1]))
            messages.append(text_message("assistant", rng.choice(["Noted.", "Got it, thanks."])))
    questions = [
        Question(text=question, evidence=tuple(evidence[number]), kind=kind)
        for number, (kind, _, question) in enumerate(facts)
    ]
    return Dataset(messages=messages, questions=questions, seed=seed)
