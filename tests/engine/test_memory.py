import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import FlakyEmbedder

PLANTED = "For the record: the replacement laptop order reference is ORD-4471-ZK, shipped via DHL."


@pytest.fixture
def planted_memory(make_memory):
    memory = make_memory(top_k=3, context_radius=2)
    messages = distractor_conversation(600)
    messages.insert(311, text_message("assistant", PLANTED))
    memory.add(messages)
    return memory


def test_planted_fact_is_found_among_600_distractors(planted_memory):
    hits = planted_memory.search("What was the order reference for the replacement laptop?", top_k=10)
    assert hits[0].index == 311
    assert hits[0].message["content"][0]["text"] == PLANTED
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_planted_fact_appears_in_retrieved_passage_with_its_neighbours(planted_memory):
    passages = planted_memory.retrieve("What was the order reference for the replacement laptop?")
    passage = next(w for w in passages if 311 in w.hit_indices)
    assert passage.start <= 309 and passage.end >= 313  # radius 2 on both sides
    assert passage.indices == list(range(passage.start, passage.end + 1))
    assert PLANTED in [m["content"][0]["text"] for m in passage.messages]
    assert [w.start for w in passages] == sorted(w.start for w in passages)


def test_exact_message_dict_is_kept(memory):
    message = {
        "role": "assistant",
        "content": [
            {"text": "Calling the tool"},
            {"toolUse": {"toolUseId": "tu-1", "name": "calc", "input": {"expr": "2+2", "nested": [1, {"a": None}]}}},
        ],
        "metadata": {"custom": {"k": "v"}},
    }
    [index] = memory.add([message])
    assert memory.get(index) == message


def test_archive_copies_messages(memory):
    message = text_message("user", "original text")
    [index] = memory.add([message])
    message["content"][0]["text"] = "changed afterwards"
    assert memory.get(index)["content"][0]["text"] == "original text"


def test_indices_are_monotonic_and_returned_in_order(memory):
    first = memory.add([text_message("user", "a"), text_message("assistant", "b")])
    second = memory.add([text_message("user", "c")])
    assert first == [0, 1] and second == [2]


def test_same_tracking_id_is_archived_once(memory):
    message = {"role": "user", "content": [{"text": "hello"}], "tracking_id": "abc"}
    assert memory.add([message]) == [0]
    assert memory.add([message, text_message("assistant", "x")]) == [0, 1]
    assert len(memory) == 2


@pytest.mark.parametrize("retrieval", ["dense", "lexical", "hybrid"])
def test_min_score_means_cosine_similarity_in_every_mode(make_memory, embedder, retrieval):
    memory = make_memory(retrieval=retrieval)
    memory.add(distractor_conversation(40))
    query = "sourdough baking"
    unfiltered = memory.search(query, top_k=10)
    texts = [h.message["content"][0]["text"] for h in unfiltered]
    cosine = (embedder.embed_documents(texts) @ embedder.embed_queries([query])[0]).tolist()  # computed independently
    ordered = sorted(cosine)
    threshold = (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2  # between two messages
    margin = 1e-3  # batch and single embeddings differ in the last digits; ignore messages that close
    filtered = memory.search(query, top_k=10, min_score=threshold)
    assert filtered, "some hits pass"
    assert all(h.similarity is not None and h.similarity >= threshold for h in filtered)
    kept = {h.index for h in memory.search(query, top_k=40, min_score=threshold)}
    assert {h.index for h, c in zip(unfiltered, cosine) if c >= threshold + margin} <= kept
    assert not {h.index for h, c in zip(unfiltered, cosine) if c < threshold - margin} & kept
    strict = make_memory(min_score=0.99, retrieval=retrieval)
    strict.add(distractor_conversation(40))
    assert strict.search(query) == []


def test_empty_query_and_empty_archive(memory):
    assert memory.search("anything") == []
    memory.add([text_message("user", "something")])
    assert memory.search("   ") == []
    assert memory.retrieve("") == []


def test_bad_input_raises_before_archiving_anything(memory):
    with pytest.raises(TypeError, match=r"messages\[1\]"):
        memory.add([text_message("user", "fine"), "not a message"])
    with pytest.raises(ValueError, match="role"):
        memory.add([{"content": [{"text": "x"}]}])
    with pytest.raises(ValueError, match="content"):
        memory.add([{"role": "user", "content": "a bare string"}])
    with pytest.raises(TypeError, match="list of messages"):
        memory.add(text_message("user", "a dict, not a list"))
    assert len(memory) == 0


def test_media_tool_and_empty_messages_are_archived_safely(memory):
    messages = [
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n"}}}]},
        {"role": "user", "content": [{"document": {"format": "pdf", "name": "spec", "source": {"bytes": b"%PDF-1"}}}]},
        {"role": "assistant", "content": []},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "1", "name": "weather", "input": {"city": "Oslo"}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "1", "status": "success", "content": [{"json": {"t": -3}}]}}],
        },
        {"role": "user", "content": [{"text": 12345}]},
    ]
    indices = memory.add(messages)
    assert indices == list(range(6))
    for index, message in zip(indices, messages):
        assert memory.get(index) == message  # bytes survive exactly
    stats = memory.get_memory_usage_stats()
    assert stats["message_count"] == 6
    assert stats["pending_embedding_count"] == 0
    assert memory.search("weather in Oslo", top_k=1)[0].index in (3, 4)


def test_very_large_message_is_chunked_and_its_end_is_searchable(memory):
    filler = " ".join(f"Paragraph {i} talks about cooking pasta and sauces." for i in range(600))
    large = text_message("assistant", filler + " Finally, the vault combination is 31-07-19.")
    memory.add(distractor_conversation(30) + [large])
    stats = memory.get_memory_usage_stats()
    assert stats["vector_count"] > 31  # the large message has several vectors
    hits = memory.search("what is the vault combination?", top_k=3)
    assert hits[0].index == 30
    assert len({h.index for h in hits}) == len(hits), "one message appears once however many chunks match"


def test_failing_embedder_loses_nothing_and_catches_up(make_memory, embedder):
    flaky = FlakyEmbedder(embedder)
    memory = make_memory(embedder=flaky, embedding_retry_interval=0)
    flaky.failing = True
    indices = memory.add([text_message("user", "the wifi password is hunter2-blue")])
    assert indices == [0]
    assert memory.get(0)["content"][0]["text"] == "the wifi password is hunter2-blue"
    stats = memory.get_memory_usage_stats()
    assert stats["pending_embedding_count"] == 1 and "unavailable" in stats["last_embedding_error"]
    flaky.failing = False
    hits = memory.search("what is the wifi password?")
    assert [h.index for h in hits] == [0]
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0


def test_stats_add_up(memory):
    memory.add(distractor_conversation(10))
    stats = memory.get_memory_usage_stats()
    assert stats["message_count"] == 10
    assert stats["embedding_bytes"] == 10 * 384 * 4
    assert stats["total_memory"] == stats["message_bytes"] + stats["embedding_bytes"] + stats["bookkeeping_bytes"]
    assert stats["bookkeeping_bytes"] > 0
    assert (stats["oldest_index"], stats["newest_index"]) == (0, 9)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"top_k": 0},
        {"context_radius": -1},
        {"min_score": float("nan")},
        {"max_num_archived_messages": 0},
        {"max_memory_archived_messages": -5},
        {"max_chunks_per_message": 300},
    ],
)
def test_invalid_options_are_rejected_with_their_name(embedder, kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ConfigurationError, match=name):
        SemanticMemory(embedder=embedder, **kwargs)


def exact_token_conversation():
    """Many order numbers of the same shape; the question names one of them exactly."""
    import random

    rng = random.Random(4)
    messages = distractor_conversation(400)
    codes = [f"ORD-{rng.randint(1000, 9999)}-{rng.choice('ABCDEFGHJK')}{rng.choice('LMNPQRSTUV')}" for _ in range(80)]
    for position, code in zip(range(3, 400, 5), codes):
        messages[position] = text_message("assistant", f"Order {code} is confirmed and will ship next week.")
    target = codes[41]
    messages.insert(250, text_message("assistant", f"Update: order {target} was rerouted to the Rotterdam warehouse."))
    return messages, target


@pytest.mark.parametrize("retrieval", ["lexical", "hybrid"])
def test_exact_token_question_finds_the_message_with_that_token(make_memory, retrieval):
    messages, target = exact_token_conversation()
    memory = make_memory(retrieval=retrieval)
    memory.add(messages)
    hits = memory.search(f"Where did {target} end up?", top_k=3)
    # Exactly the two messages naming the code lead, ahead of 79 others with codes of the same shape.
    assert all(target in h.message["content"][0]["text"] for h in hits[:2])
    assert target not in hits[2].message["content"][0]["text"]


def test_lexical_search_works_while_embeddings_are_pending(make_memory, embedder):
    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = make_memory(embedder=flaky, retrieval="hybrid", embedding_retry_interval=3600)
    messages, target = exact_token_conversation()
    memory.add(messages)
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == len(messages)
    hits = memory.search(f"Where was {target} rerouted to?", top_k=1)
    assert "Rotterdam" in hits[0].message["content"][0]["text"] and hits[0].similarity is None


def test_passages_with_matching_neighbours_outrank_isolated_hits(make_memory):
    messages = distractor_conversation(200)
    # A passage about the pool heater over three consecutive turns, and one isolated mention elsewhere.
    messages[50] = text_message("user", "The pool heater is broken again.")
    messages[51] = text_message("assistant", "For the pool heater, check the pilot light and the thermostat.")
    messages[52] = text_message("user", "The pool heater thermostat reads zero.")
    messages[150] = text_message("assistant", "Someone mentioned a pool heater once.")
    memory = make_memory(top_k=2, context_radius=1)
    memory.add(messages)
    passages = memory.retrieve("What is wrong with the pool heater?")
    ranked = sorted(passages, key=lambda w: -w.score)
    passage = next(w for w in passages if 50 in w.indices)
    assert ranked[0] is passage and passage.start >= 49 and passage.end <= 53
    assert passage.score > max(passage.hit_scores), "matching neighbours raised the passage's score"
    # Every other passage is an isolated mention: nothing around it matches, so its score is its hit's.
    for passage in ranked[1:]:
        assert passage.score == pytest.approx(max(passage.hit_scores))
