"""The embedding queue's retry policy: a text the embedder rejects waits on its own schedule, bounded, and never
holds back the messages archived after it. Real model throughout (a stand-in rejects one marked text)."""

from __future__ import annotations

import numpy as np

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.engine.embedding._retry import (
    MAX_AUTOMATIC_ATTEMPTS,
    MAX_RETRY_DELAY,
    Isolated,
    RetryPolicy,
)
from tests.support.conversations import text_message
from tests.support.embedders import RejectingEmbedder

POISON = "this one carries POISON for the embedding service"


def test_a_rejected_text_does_not_hold_back_the_messages_archived_after_it(embedder):
    rejecting = RejectingEmbedder(embedder)
    memory = SemanticMemory(embedder=rejecting, embedding_retry_interval=3600)
    memory.add([text_message("user", POISON), text_message("user", "the garden needs water")])
    assert memory.stats().pending_embedding_count == 1 and memory.stats().vector_count == 1
    calls = rejecting.rejections
    memory.add([text_message("user", "the ferry leaves at 7:40 from pier 3")])
    assert memory.stats().pending_embedding_count == 1, "the new message was embedded; only the rejected one waits"
    assert memory.search("when does the ferry leave?", top_k=1)[0].similarity is not None
    assert rejecting.rejections == calls, "the rejected text waits for its own retry time"


def _alone(index: int, *, others: bool) -> Isolated:
    """A run in which ``index`` failed on its own, and (``others``) another call succeeded."""
    outcome = Isolated(errors=[ValueError("rejected")], alone=[index], succeeded=others)
    if others:
        outcome.vectors[index + 1] = np.zeros((1, 4), dtype=np.float32)
    return outcome


def test_a_rejected_text_waits_twice_as_long_each_time_up_to_a_cap_then_only_embed_pending_tries_it():
    policy = RetryPolicy(interval=30.0)
    now = 1000.0
    waits = []
    for _ in range(MAX_AUTOMATIC_ATTEMPTS):
        assert 7 not in policy.skipped(now), "due: an automatic run may try it"
        policy.record(now, [7, 8], _alone(7, others=True), automatic=True)
        assert 7 in policy.skipped(now) and policy.wait(now) == 0.0, "it waits alone; other messages do not"
        waits.append(policy.next_retry(now))
        now += waits[-1] or 0.0
    assert waits[:-1] == [30.0, 60.0, 120.0, 240.0, 480.0]
    assert waits[-1] is None, "out of automatic attempts: nothing is scheduled"
    assert 7 in policy.skipped(now + 10 * MAX_RETRY_DELAY), "left out of automatic runs for good"
    policy.settled(now + 10 * MAX_RETRY_DELAY, claimed=[], complete=True)
    assert 7 in policy.skipped(now + 10 * MAX_RETRY_DELAY), "a complete claim does not bring it back"
    policy.record(now, [7], Isolated(vectors={7: np.zeros((1, 4), dtype=np.float32)}, succeeded=True), automatic=False)
    assert 7 not in policy.skipped(now), "embed_pending() embedded it: its schedule is gone"


def test_a_run_in_which_every_call_fails_is_retried_a_bounded_number_of_times_in_a_row():
    policy = RetryPolicy(interval=30.0)
    now = 1000.0
    delays = []
    for _ in range(MAX_AUTOMATIC_ATTEMPTS):
        policy.started()
        policy.record(now, [1, 2], Isolated(errors=[ConnectionError("down")]), automatic=True)
        assert policy.wait(now) == 30.0, "automatic runs wait the interval after a failing run"
        delays.append(policy.next_retry(now))
        now += delays[-1] or 0.0
    assert delays == [30.0, 60.0, 120.0, 240.0, 480.0, None], "doubling, then the thread stops retrying"
    assert min(policy.delay(n) for n in range(1, 40)) >= 30.0 and policy.delay(40) == MAX_RETRY_DELAY
    embedded = Isolated(vectors={1: np.zeros((1, 4), dtype=np.float32)}, succeeded=True)
    policy.record(now, [1, 2], embedded, automatic=True)
    assert policy.wait(now) == 0.0 and policy.last_error is None, "a success ends the streak"
