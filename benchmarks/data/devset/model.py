"""The shapes the second development set is written in: domains, their facts, events and recommendations.

A *domain* (code review, incident response, travel planning...) gives a thread its fields (the service, the trip,
the project), the facts a user states and later changes (``Slot``), things that happen on a day (``Event``),
recommendations only the assistant makes (``Advice``), and the vocabulary of the long answers around them
(``requests``, ``topics``, ``steps``, ``snippets``, and a ``lexicon`` for the
sentence frames every domain shares). Every text is a template of ``grammar``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date


@dataclass(frozen=True)
class ValueContext:
    """What a value generator may use: the thread's fields, the value it replaces, the day, the people around."""

    fields: Mapping[str, str]
    previous: str | None
    day: date
    people: Sequence[str]


ValueMaker = Callable[[random.Random, ValueContext], str]


@dataclass(frozen=True)
class Slot:
    """A fact of a thread, stated by the user and possibly changed later.

    Attributes:
        key: Its name within the domain.
        noun: What it is, for questions over all its values ("hotel", "reviewer").
        value: Makes a value (a new one differs from ``previous``).
        state: User sentences stating the first value (fields: the thread's and ``value``).
        update: User sentences stating a new value (also ``old``).
        current: Questions about its value now (or its only value).
        previous: Questions about the value before the last change.
        echo: Assistant sentences that repeat the value.
        changes: Whether it may change in a conversation.
        history: Questions over every value it had (the answer lists them all).
    """

    key: str
    noun: str
    value: ValueMaker
    state: tuple[str, ...]
    update: tuple[str, ...]
    current: tuple[str, ...]
    previous: tuple[str, ...] = ()
    echo: tuple[str, ...] = ()
    changes: bool = True
    history: tuple[str, ...] = ()


@dataclass(frozen=True)
class Event:
    """Something that happened on a day, reported by the user.

    Attributes:
        said: User sentences reporting it.
        label: A noun phrase for questions that compare events ("the rollback of the deploy").
        when: Questions asking when it happened.
    """

    said: tuple[str, ...]
    label: str
    when: tuple[str, ...]


@dataclass(frozen=True)
class Advice:
    """A recommendation only the assistant makes, placed inside one of its long answers.

    Attributes:
        said: Assistant sentences giving it.
        asked: Questions about it.
    """

    said: tuple[str, ...]
    asked: tuple[str, ...]


@dataclass(frozen=True)
class Domain:
    """A kind of thread (see the module docstring)."""

    name: str
    fields: Callable[[random.Random, Sequence[str]], dict[str, str]]
    slots: tuple[Slot, ...]
    events: tuple[Event, ...]
    advice: tuple[Advice, ...]
    requests: tuple[str, ...]
    topics: tuple[tuple[str, ...], ...]
    steps: tuple[str, ...]
    snippets: tuple[str, ...] = ()
    pastes: tuple[str, ...] = field(default=())
    """Longer user messages (logs, notes, itineraries) pasted for the assistant to read."""
    lexicon: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Words the shared sentence frames are filled from: ``thing`` (a noun phrase), ``problem`` (what it does
    wrong, a third-person verb phrase), ``fix`` (an imperative verb phrase) and ``measure`` (what to watch)."""
