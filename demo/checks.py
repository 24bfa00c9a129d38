"""The demo's checks, kept apart from its output so the tests can state exactly what each one decides.

Two jobs are judged separately, because they belong to different parties:

- retrieval (the library's job): did the planted reference number reach the model in the context the hook
  injected for the final question?
- the answer (the model's job): did the model's reply contain the planted number?

A summary is judged on what it says, not on its being there: it passes only when it names at least one of the
topics of the turns it replaced, so a reply such as "I'm ready to help" fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

REFERENCE_PATTERN = re.compile(r"REF-\d{3,7}-[A-Z]\d{1,3}")  # also near misses: a digit dropped or added
CONTEXT_LABEL_PATTERN = re.compile(r"\[Message \d+")


@dataclass(frozen=True)
class Topic:
    """One topic question of the demo and the words that show a summary mentions it."""

    question: str
    name: str
    keywords: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic("What is a hash table and when should I use one?", "hash tables", ("hash",)),
    Topic("How does a binary search tree keep its keys ordered?", "binary search trees", ("tree", "bst")),
    Topic("What is the difference between a stack and a queue?", "stacks and queues", ("stack", "queue")),
    Topic("How does quicksort choose a pivot, and what is its worst case?", "quicksort", ("quicksort", "pivot")),
    Topic("Why is mergesort stable?", "mergesort", ("mergesort", "merge sort", "stable")),
    Topic("What is a heap and how does a priority queue use it?", "heaps", ("heap", "priority queue")),
    Topic("How does breadth-first search differ from depth-first search?", "graph search", ("breadth", "depth", "bfs")),
    Topic("What problem does Dijkstra's algorithm solve?", "Dijkstra's algorithm", ("dijkstra", "shortest path")),
    Topic("When is a linked list better than an array?", "linked lists", ("linked list",)),
    Topic("What is dynamic programming, in one example?", "dynamic programming", ("dynamic programming",)),
    Topic("What is a trie good for?", "tries", ("trie", "prefix")),
    Topic("How does a union-find structure work?", "union-find", ("union", "disjoint")),
)


@dataclass
class SummaryCheck:
    """Whether a summary says something about the turns it replaced.

    Attributes:
        replaced: Topics whose question left the active context in the reduction.
        named: The replaced topics the summary mentions.
        has_reference: The summary repeats the planted reference number.
    """

    replaced: list[Topic] = field(default_factory=list)
    named: list[Topic] = field(default_factory=list)
    has_reference: bool = False

    @property
    def passed(self) -> bool:
        """True when the summary names at least one replaced topic (or nothing was replaced to name)."""
        return bool(self.named) or not self.replaced


def check_summary(summary: str, replaced_texts: Iterable[str], reference: str) -> SummaryCheck:
    """Judge a summary against the texts of the messages it replaced.

    Args:
        summary: The summary's text.
        replaced_texts: Texts of the messages that left the active context.
        reference: The planted reference number.

    Returns:
        The check's findings.
    """
    texts = list(replaced_texts)
    replaced = [t for t in TOPICS if any(t.question in text for text in texts)]
    lowered = summary.lower()
    named = [t for t in replaced if names_topic(lowered, t)]
    return SummaryCheck(replaced=replaced, named=named, has_reference=reference in summary)


def names_topic(lowered: str, topic: Topic) -> bool:
    """Whether a lower-cased text names the topic; a phrase of another topic counts for that one only.

    ("priority queue" names heaps, not stacks and queues, although it contains "queue".)
    """
    text = lowered
    for other in TOPICS:
        if other is not topic:
            for phrase in other.keywords:
                if any(own != phrase and own in phrase for own in topic.keywords):
                    text = text.replace(phrase, " ")
    return any(k in text for k in topic.keywords)


@dataclass
class Outcome:
    """The verdict of one demo run: retrieval and answer judged separately.

    Attributes:
        reference: The planted reference number.
        searched: The reference number was among the archive's search hits for the question.
        injected: The reference number was in the context the hook injected for the final question.
        still_in_context: The reference number was still in the active conversation (nothing to retrieve).
        answer: The model's final reply, in full.
        summary: The summary check, or None when the summary failed.
    """

    reference: str
    searched: bool
    injected: bool
    still_in_context: bool
    answer: str
    summary: SummaryCheck | None = None

    @property
    def retrieved(self) -> bool:
        """The library's job: the planted number reached the model through the hook."""
        return self.injected

    @property
    def answered(self) -> bool:
        """The model's job: its reply contains the planted number, verbatim."""
        return self.reference in self.answer

    @property
    def other_references(self) -> list[str]:
        """Reference-shaped strings in the answer that are not the planted one (a misread or invented number)."""
        return sorted({r for r in REFERENCE_PATTERN.findall(self.answer) if r != self.reference})

    @property
    def echoed_labels(self) -> bool:
        """The answer copies ``[Message N`` labels of the injected context."""
        return bool(CONTEXT_LABEL_PATTERN.search(self.answer))

    @property
    def copied_quote(self) -> bool:
        """The answer copies a quoted (``"> "``) line of the injected context instead of answering in its own words."""
        return any(line.lstrip().startswith(">") for line in self.answer.splitlines())

    @property
    def exit_status(self) -> int:
        """0: retrieved and answered; 3: retrieved, the model missed it; 1: retrieval failed."""
        if not self.retrieved:
            return 1
        return 0 if self.answered else 3


def contains_reference(texts: Sequence[str], reference: str) -> bool:
    """True when any of ``texts`` contains ``reference``."""
    return any(reference in text for text in texts)
