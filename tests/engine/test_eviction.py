import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from strands_semantic_memory import SemanticMemory
from tests.support.archives import vector_owners
from tests.support.conversations import distractor_conversation, text_message


def assert_consistent(memory: SemanticMemory) -> None:
    """Archive records and index vectors describe exactly the same messages."""
    indices = list(memory.indices)
    stats = memory.get_memory_usage_stats()
    assert stats["message_count"] == len(indices)
    owners, count = vector_owners(memory)
    assert owners <= set(indices)
    assert count == stats["vector_count"]


def test_count_limit_evicts_oldest_first(make_memory):
    memory = make_memory(max_num_archived_messages=10)
    memory.add(distractor_conversation(25))
    assert list(memory.indices) == list(range(15, 25))
    assert memory.get_memory_usage_stats()["evicted_count"] == 15
    with pytest.raises(KeyError):
        memory.get(14)
    assert all(h.index >= 15 for h in memory.search("budget", top_k=10))
    assert_consistent(memory)


def test_byte_limit_evicts_oldest_first_and_holds(make_memory):
    probe = make_memory()
    probe.add(distractor_conversation(10))
    per_message = probe.get_memory_usage_stats()["total_memory"] / 10
    limit = int(per_message * 6.5)
    memory = make_memory(max_memory_archived_messages=limit)
    memory.add(distractor_conversation(30))
    stats = memory.get_memory_usage_stats()
    assert stats["total_memory"] <= limit
    assert 5 <= stats["message_count"] <= 7
    assert stats["newest_index"] == 29
    assert_consistent(memory)


def test_single_message_above_byte_limit_is_kept_with_warning(make_memory, caplog):
    memory = make_memory(max_memory_archived_messages=1000)
    memory.add([text_message("user", "small")])
    with caplog.at_level("WARNING"):
        memory.add([text_message("user", "big " * 2000)])
    assert list(memory.indices) == [1]
    assert "exceeds max_memory_archived_messages" in caplog.text


class ArchiveEvictSearch(RuleBasedStateMachine):
    """Random interleavings of archive, evict and search keep archive and index in step."""

    def __init__(self) -> None:
        super().__init__()
        self.memory = MAKE_MEMORY(max_num_archived_messages=25, max_memory_archived_messages=60_000)
        self.model: dict[int, str] = {}
        self.counter = 0
        self.pool = distractor_conversation(400, seed=11)

    @rule(n=st.integers(1, 8))
    def archive(self, n: int) -> None:
        batch = []
        for _ in range(n):
            message = dict(self.pool[self.counter % len(self.pool)])
            message = text_message(message["role"], f"#{self.counter} " + message["content"][0]["text"])
            batch.append(message)
            self.counter += 1
        indices = self.memory.add(batch)
        for index, message in zip(indices, batch):
            self.model[index] = message["content"][0]["text"]
        for gone in [i for i in self.model if i not in set(self.memory.indices)]:
            del self.model[gone]

    @precondition(lambda self: len(self.model) > 0)
    @rule(n=st.integers(1, 5))
    def evict(self, n: int) -> None:
        evicted = self.memory.evict_oldest(n)
        assert evicted == sorted(self.model)[: len(evicted)]
        for index in evicted:
            del self.model[index]

    @rule(query=st.sampled_from(["budget meeting", "chess", "Rust lifetimes", "birthday", "the cost"]))
    def search(self, query: str) -> None:
        for hit in self.memory.search(query, top_k=5):
            assert hit.index in self.model
            assert hit.message["content"][0]["text"] == self.model[hit.index]
        for passage in self.memory.retrieve(query, top_k=3, context_radius=1):
            for index, message in zip(passage.indices, passage.messages):
                assert message["content"][0]["text"] == self.model[index]

    @invariant()
    def consistent(self) -> None:
        assert list(self.memory.indices) == sorted(self.model)
        stats = self.memory.get_memory_usage_stats()
        assert stats["message_count"] <= 25 and stats["total_memory"] <= 60_000
        assert_consistent(self.memory)


MAKE_MEMORY = None


def test_random_interleavings_keep_archive_and_index_consistent(make_memory, store_kind):
    global MAKE_MEMORY
    MAKE_MEMORY = make_memory
    ArchiveEvictSearch.TestCase.settings = settings(
        max_examples=12 if store_kind == "in_memory" else 6,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    ArchiveEvictSearch.TestCase().runTest()


def test_search_never_returns_evicted_vectors_after_compaction(make_memory):
    memory = make_memory(max_num_archived_messages=300)
    memory.add(distractor_conversation(900))
    owners, count = vector_owners(memory)
    assert count == 300 and owners == set(range(600, 900))
    assert all(h.index >= 600 for h in memory.search("budget", top_k=20))
    assert_consistent(memory)


def test_record_list_is_trimmed_after_many_evictions_and_stays_consistent(embedder):
    memory = SemanticMemory(embedder=embedder, max_num_archived_messages=100, context_radius=2)
    messages = distractor_conversation(2600, seed=5)
    for start in range(0, len(messages), 200):
        memory.add(messages[start : start + 200])
    store = memory.archive
    assert store._base > 0, "the evicted prefix of the record list was trimmed"
    assert list(memory.indices) == list(range(2500, 2600))
    assert memory.get(2550) == messages[2550]
    for passage in memory.retrieve("the chess opening", top_k=3):
        assert [m for m in passage.messages] == [messages[i] for i in passage.indices]
    stats = memory.get_memory_usage_stats()
    assert stats["message_count"] == 100 and stats["evicted_count"] == 2500
    restored = SemanticMemory.from_state(memory.to_state(), embedder=embedder)
    assert restored.messages() == memory.messages()
    assert restored.get_memory_usage_stats()["total_memory"] == stats["total_memory"]
    assert_consistent(memory)
