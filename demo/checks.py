"""The demo's checks, kept apart from its output so the tests can state exactly what each one decides.

Two jobs are judged separately, because they belong to different parties:

- retrieval (the library's job): did the planted reference number reach the model in the context the hook
  injected for the final question?
- the answer (the model's job): did the model's reply contain the planted number?

A summary is judged on what it says, not on its being there: it passes only when it names at least one of the
topics of the turns it replaced, so a reply such as "I'm ready to help" fails. A summary that could not be made at
all (the model's call failed, or its structured output was cut short and does not parse) is a failed run: it is
reported on its own RESULT line and the exit status says so (``EXIT_SUMMARY_FAILED``).

Exit status of one run (``Outcome.exit_status``) and of several (``seeds_exit_status``): 0 when everything held;
1 when retrieval failed; 4 when retrieval held and the summary failed; 3 when only the model's answer missed the
number (2 is main.py's: the demo could not run).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

EXIT_OK = 0
EXIT_RETRIEVAL_FAILED = 1
EXIT_ANSWER_WRONG = 3
EXIT_SUMMARY_FAILED = 4

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
        error: Why no summary was made, when the summarization failed (then there is nothing else to judge).
    """

    replaced: list[Topic] = field(default_factory=list)
    named: list[Topic] = field(default_factory=list)
    has_reference: bool = False
    error: str | None = None

    @property
    def failed(self) -> bool:
        """True when no summary was made: the summarization raised."""
        return self.error is not None

    @property
    def passed(self) -> bool:
        """True when the summary names at least one replaced topic (or nothing was replaced to name)."""
        return not self.failed and (bool(self.named) or not self.replaced)

    @property
    def label(self) -> str:
        """``ok``, ``empty`` (it names none of the topics it replaced) or ``FAILED`` (none was made)."""
        return "FAILED" if self.failed else "ok" if self.passed else "empty"


def summary_to_dict(check: SummaryCheck | None) -> dict[str, object] | None:
    """A summary check as JSON-ready data (topics by name), for the session that runs in another process."""
    if check is None:
        return None
    return {
        "replaced": [t.name for t in check.replaced],
        "named": [t.name for t in check.named],
        "has_reference": check.has_reference,
        "error": check.error,
    }


def summary_from_dict(data: Mapping[str, Any] | None) -> SummaryCheck | None:
    """The summary check ``summary_to_dict`` wrote."""
    if data is None:
        return None
    by_name = {t.name: t for t in TOPICS}
    return SummaryCheck(
        replaced=[by_name[n] for n in data["replaced"]],
        named=[by_name[n] for n in data["named"]],
        has_reference=bool(data["has_reference"]),
        error=data["error"],
    )


def failed_summary(error: BaseException) -> SummaryCheck:
    """The check of a summary that could not be made, with the error's first line as the reason."""
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return SummaryCheck(error=reason)


def summary_result(check: SummaryCheck | None) -> str | None:
    """The RESULT line about the summary, or None when no summary was attempted."""
    prefix = "RESULT summary (the model):     "
    if check is None:
        return None
    if check.failed:
        return f"{prefix}FAILED, no summary was made ({check.error}); the messages stayed in context, archived"
    if check.passed:
        return f"{prefix}ok, it names {len(check.named)} of the {len(check.replaced)} topics it replaced"
    return f"{prefix}empty, it names none of the {len(check.replaced)} topics it replaced"


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
        summary: The summary check (``summary.failed`` when no summary could be made), or None when no
            summary was attempted.
    """

    reference: str
    searched: bool
    injected: bool
    still_in_context: bool
    answer: str
    summary: SummaryCheck | None = None

    @property
    def retrieved(self) -> bool:
        """The library's job: the planted number reached the model, through the hook or still in the context."""
        return self.injected or self.still_in_context

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
    def summary_failed(self) -> bool:
        """No summary could be made in this run."""
        return self.summary is not None and self.summary.failed

    @property
    def exit_status(self) -> int:
        """1: retrieval failed; 4: retrieved, the summary failed; 3: the model missed the number; 0: all held."""
        if not self.retrieved:
            return EXIT_RETRIEVAL_FAILED
        if self.summary_failed:
            return EXIT_SUMMARY_FAILED
        return EXIT_OK if self.answered else EXIT_ANSWER_WRONG


def seeds_exit_status(outcomes: Sequence[Outcome]) -> int:
    """The exit status of several runs: 1 if any run's retrieval failed, else 4 if any summary failed, else 0.

    The model's answers are reported as a rate and do not change the status (a 135M model misses some).
    """
    if not all(o.retrieved for o in outcomes):
        return EXIT_RETRIEVAL_FAILED
    if any(o.summary_failed for o in outcomes):
        return EXIT_SUMMARY_FAILED
    return EXIT_OK


def contains_reference(texts: Sequence[str], reference: str) -> bool:
    """True when any of ``texts`` contains ``reference``."""
    return any(reference in text for text in texts)
