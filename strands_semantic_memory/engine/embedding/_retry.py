"""The retry policy: when automatic runs may call the embedder again, and which messages they leave out.

Two kinds of failure, each with a bounded retry:

- **A run in which every call failed** (a service outage, the wrong model, or a lone text the embedder rejects):
  automatic runs wait ``retry_interval`` seconds after it (``wait``). The background thread retries such a run on
  its own after ``retry_interval * 2**(n - 1)`` seconds (n: such runs in a row, at most ``MAX_RETRY_DELAY``), and
  stops retrying on its own after ``MAX_AUTOMATIC_ATTEMPTS`` of them in a row; the next archive, or
  ``embed_pending()``, tries again. Any success ends the streak.
- **A text the embedder rejects** while it embeds others: a failing batch is halved until the failing messages
  stand alone (``isolate``, at most ``MAX_CALLS_PER_RUN`` calls per run). A message that failed on its own while
  another call of the run succeeded is left out of automatic runs on a schedule of its own (the same doubling
  delays), and after ``MAX_AUTOMATIC_ATTEMPTS`` failures stays pending until ``embed_pending()``, which tries
  everything. It never holds back the messages archived after it.

A model that is not available (``ConfigurationError``, ``MissingDependencyError``) stops automatic runs until a
run succeeds: retrying cannot help, and each retry would cost the failed load again.

The policy keeps no lock: its owner (``EmbeddingQueue``) calls it under the queue lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ConfigurationError, DimensionMismatchError, MissingDependencyError

logger = logging.getLogger(__name__)

MAX_CALLS_PER_RUN = 16
"""Embedder calls one run may make while isolating failing texts."""
MAX_AUTOMATIC_ATTEMPTS = 6
"""Automatic attempts, in a row, of a run in which every call fails, and of a message the embedder rejects; then
only ``embed_pending()`` (or, for a failing run, the next archive) tries again."""
MAX_RETRY_DELAY = 600.0
"""The longest wait between two automatic attempts, in seconds (the doubling stops there)."""
MIN_RETRY_SECONDS = 1.0
"""Automatic retries happen at most this often, whatever ``embedding_retry_interval`` says."""

EmbedFn = Callable[[Sequence[str]], Vectors]


def permanent(error: BaseException) -> bool:
    """Whether a failure means the model is unavailable (a retry cannot succeed) rather than a passing outage."""
    return isinstance(error, (ConfigurationError, MissingDependencyError))


@dataclass
class Isolated:
    """What one run's embedder calls returned.

    Attributes:
        vectors: Each embedded message's chunk vectors (an empty matrix for a message with nothing to embed).
        errors: The failures, in call order.
        alone: Messages whose own call (a group of one) failed: the texts the embedder rejects, or an outage.
        succeeded: Whether some embedder call returned vectors.
    """

    vectors: dict[int, Vectors] = field(default_factory=dict)
    errors: list[BaseException] = field(default_factory=list)
    alone: list[int] = field(default_factory=list)
    succeeded: bool = False


def isolate(embed: EmbedFn, ids: Sequence[int], chunks: dict[int, list[str]]) -> Isolated:
    """Embed every message's chunks; halve failing groups to isolate the messages the embedder rejects.

    At most ``MAX_CALLS_PER_RUN`` calls: groups left over stay pending for the next run. A missing model or a
    dimension mismatch ends the run at once (the wrong or a missing model, not a bad text: nothing to isolate).
    """
    outcome = Isolated()
    calls = 0
    groups: list[list[int]] = [list(ids)]
    while groups:
        group = groups.pop()
        texts = [t for i in group for t in chunks[i]]
        if not texts:
            outcome.vectors.update({i: np.zeros((0, 0), dtype=np.float32) for i in group})
            continue
        if calls >= MAX_CALLS_PER_RUN:
            continue  # left pending; the next run goes on
        calls += 1
        try:
            matrix = embed(texts)
        except Exception as error:
            outcome.errors.append(error)
            if isinstance(error, DimensionMismatchError) or permanent(error):
                break
            if len(group) > 1:
                half = len(group) // 2
                groups.extend([group[half:], group[:half]])
            else:
                outcome.alone.append(group[0])
            continue
        outcome.succeeded = True
        row = 0
        for index in group:
            count = len(chunks[index])
            outcome.vectors[index] = matrix[row : row + count]
            row += count
    return outcome


@dataclass
class _Rejected:
    """A message the embedder rejected on its own: how often, and when an automatic run may try it again."""

    attempts: int
    not_before: float


@dataclass(frozen=True)
class Verdict:
    """What ``RetryPolicy.record`` concluded about one run, for the queue's log.

    Attributes:
        first_failure: The run's failures start a streak (warn), rather than continue one (debug).
        recovered: The run succeeded after failures.
        gave_up: Messages that reached ``MAX_AUTOMATIC_ATTEMPTS`` in this run.
        stopped: The background thread stops retrying failing runs on its own from now on.
    """

    first_failure: bool = False
    recovered: bool = False
    gave_up: tuple[int, ...] = ()
    stopped: bool = False


class RetryPolicy:
    """The failure clock, the rejected messages' schedules, and the counters ``stats`` reports (see the module)."""

    def __init__(self, interval: float) -> None:
        """Create a policy that knows no failure.

        Args:
            interval: ``embedding_retry_interval``: seconds automatic runs wait after a failing run.
        """
        self.interval = interval
        self.last_error: str | None = None
        self.failures = 0
        self.blocked = False
        self._failed_at: float | None = None
        self._streak = 0
        self._retry_at: float | None = None
        self._rejected: dict[int, _Rejected] = {}
        self._search_failed_at: float | None = None

    def delay(self, attempts: int) -> float:
        """Seconds before automatic attempt ``attempts + 1``: the interval, doubled each time, capped, floored."""
        return max(MIN_RETRY_SECONDS, min(self.interval * 2.0 ** (attempts - 1), MAX_RETRY_DELAY))

    def wait(self, now: float) -> float | None:
        """Seconds until an automatic run may embed: 0 now, None while the model is unavailable."""
        if self.blocked:
            return None
        if self._failed_at is None:
            return 0.0
        return max(0.0, self.interval - (now - self._failed_at))

    def skipped(self, now: float) -> set[int]:
        """The rejected messages an automatic run leaves out now: not due yet, or out of attempts."""
        return {i for i, r in self._rejected.items() if r.attempts >= MAX_AUTOMATIC_ATTEMPTS or r.not_before > now}

    def next_retry(self, now: float) -> float | None:
        """Seconds until the background thread should run without being asked (0: now); None: nothing is due."""
        if self.blocked:
            return None
        times = [r.not_before for r in self._rejected.values() if r.attempts < MAX_AUTOMATIC_ATTEMPTS]
        if self._retry_at is not None:
            times.append(self._retry_at)
        return max(0.0, min(times) - now) if times else None

    def started(self) -> None:
        """An automatic run starts: it is the retry the thread owed."""
        self._retry_at = None

    def settled(self, now: float, claimed: Collection[int], complete: bool) -> None:
        """After a claim: drop the schedules of due rejected messages that a complete claim did not return.

        A claim that returned every claimable pending message and not a due one means it is no longer pending
        (embedded elsewhere, or removed). A message out of attempts keeps its record: it is left out until
        ``embed_pending()`` embeds it.
        """
        if complete:
            due = [i for i, r in self._rejected.items() if r.attempts < MAX_AUTOMATIC_ATTEMPTS and r.not_before <= now]
            for index in due:
                if index not in claimed:
                    del self._rejected[index]

    def record(self, now: float, claimed: Collection[int], outcome: Isolated, *, automatic: bool) -> Verdict:
        """Account for one run: its successes end failures, its failures start or continue a streak.

        Args:
            now: When the run ended (``time.monotonic``).
            claimed: The messages the run claimed.
            outcome: What its calls returned.
            automatic: False for ``embed_pending()``, whose failures count toward no message's attempts.
        """
        for index in outcome.vectors:
            self._rejected.pop(index, None)
        if not outcome.errors:
            recovered = self._failed_at is not None or self.blocked
            self._failed_at, self._streak, self._retry_at = None, 0, None
            self.blocked, self.last_error = False, None
            return Verdict(recovered=recovered)
        first = outcome.errors[0]
        continuing = self._failed_at is not None or self.blocked or self.last_error is not None
        known = {i for i in outcome.alone if i in self._rejected}
        self.failures += 1
        self.last_error = f"{type(first).__name__}: {first}"
        self.blocked = permanent(first)
        gave_up: list[int] = []
        if automatic:
            for index in outcome.alone:
                if outcome.succeeded or index in known:  # evidence that the text, not the service, fails
                    rejected = self._rejected.setdefault(index, _Rejected(0, now))
                    rejected.attempts += 1
                    rejected.not_before = now + self.delay(rejected.attempts)
                    if rejected.attempts == MAX_AUTOMATIC_ATTEMPTS:
                        gave_up.append(index)
        failed = [i for i in claimed if i not in outcome.vectors]
        explained = bool(failed) and all(i in self._rejected for i in failed)
        stopped = False
        if outcome.succeeded or explained:
            self._failed_at, self._streak = None, 0
            left = [i for i in failed if i not in self._rejected]  # groups the run had no calls left for
            self._retry_at = now + MIN_RETRY_SECONDS if left else None
        else:
            self._failed_at = now
            self._streak += 1
            stopped = self._streak == MAX_AUTOMATIC_ATTEMPTS
            retry = self._streak < MAX_AUTOMATIC_ATTEMPTS and not self.blocked
            self._retry_at = now + max(self.interval, self.delay(self._streak)) if retry else None
        return Verdict(first_failure=not continuing, gave_up=tuple(gave_up), stopped=stopped)

    def search_due(self, now: float) -> bool:
        """Whether a search may embed pending messages now.

        Not while a run's failure clock or the model's unavailability stops automatic runs, nor within the interval
        after a search's own embedding failed: a failing embedder is not called again by every search.
        """
        if self.wait(now) != 0.0:
            return False
        failed = self._search_failed_at
        return failed is None or now - failed >= max(self.interval, MIN_RETRY_SECONDS)

    def search_failed(self, now: float) -> bool:
        """Record a failed embedding at query time; returns whether it is the first since one succeeded."""
        first = self._search_failed_at is None
        self._search_failed_at = now
        return first

    def search_succeeded(self) -> None:
        """Record a successful embedding at query time."""
        self._search_failed_at = None

    def forget(self, indices: Collection[int]) -> None:
        """Drop the schedules of removed messages."""
        for index in indices:
            self._rejected.pop(index, None)

    def reset(self) -> None:
        """Forget failures and schedules: the archive was replaced (an unavailable model stays unavailable)."""
        self._failed_at, self._streak, self._retry_at = None, 0, None
        self._rejected.clear()
        self._search_failed_at = None
        self.last_error = None

    def reconfigure(self, interval: float) -> None:
        """Use another interval from now on (the failure clock and the schedules are kept)."""
        self.interval = interval
