import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.lexical import LexicalIndex, tokenize
from tests.conftest import distractor_conversation


def test_tokenize_keeps_codes_whole_and_in_parts():
    assert tokenize("My ref is BK-7731-QZ, version v2.3!") == [
        "ref",
        "bk-7731-qz",
        "bk",
        "7731",
        "qz",
        "version",
        "v2.3",
        "v2",
        "3",
    ]


def bm25s_scores(corpus_texts, query):
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index([tokenize(t) for t in corpus_texts], show_progress=False)
    return retriever.get_scores(list(dict.fromkeys(tokenize(query))))


@pytest.mark.parametrize("query", ["budget meeting Thursday", "the cost was 230 euros", "Rust lifetimes chess"])
def test_scores_match_bm25s(query):
    texts = [m["content"][0]["text"] for m in distractor_conversation(300)]
    index = LexicalIndex()
    for i, text in enumerate(texts):
        index.add(i, text)
    scores, ids = index.search(query, 300)
    expected = bm25s_scores(texts, query)
    got = np.zeros(len(texts), dtype=np.float32)
    got[ids] = scores
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert list(scores) == sorted(scores, reverse=True)


@settings(max_examples=25, deadline=None)
@given(evict_to=st.integers(0, 120), query=st.sampled_from(["budget", "chess opening Lisbon", "Alice review"]))
def test_after_eviction_scores_match_bm25s_on_the_remaining_corpus(evict_to, query):
    texts = [m["content"][0]["text"] for m in distractor_conversation(120, seed=2)]
    index = LexicalIndex(compact_ratio=0.1)
    for i, text in enumerate(texts):
        index.add(i, text)
    index.evict_before(evict_to)
    scores, ids = index.search(query, 200)
    assert all(i >= evict_to for i in ids.tolist())
    remaining = texts[evict_to:]
    if not remaining:
        assert len(ids) == 0
        return
    expected = bm25s_scores(remaining, query)
    got = np.zeros(len(remaining), dtype=np.float32)
    got[ids - evict_to] = scores
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_exact_code_ranks_first_among_many_numbers():
    index = LexicalIndex()
    for i, message in enumerate(distractor_conversation(500)):
        index.add(i, message["content"][0]["text"])
    index.add(500, "Your order id is ORD-99812-KX; keep it for returns.")
    _, ids = index.search("what is order ORD-99812-KX about?", 3)
    assert ids[0] == 500


def test_out_of_order_add_is_refused():
    index = LexicalIndex()
    index.add(3, "a b")
    with pytest.raises(ValueError, match="archive order"):
        index.add(2, "c")
