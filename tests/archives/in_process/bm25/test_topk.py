"""The pruned top-k BM25 search returns exactly the exhaustive top k: same documents, same scores, same order."""

import math
from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.archives.in_process.bm25 import _topk as lexical_topk
from strands_semantic_memory.archives.in_process.bm25._index import LexicalIndex
from strands_semantic_memory.archives.in_process.bm25._topk import Bm25, top_k
from strands_semantic_memory.messages._terms import tokenize

VOCABULARY = [f"w{i}x" for i in range(40)]


def exhaustive_reference(index: LexicalIndex, query: str, k: int) -> tuple[list[float], list[int]]:
    """BM25 of every live document holding a query term, the way the index scored before pruning (every posting
    scored term by term, summed in float64 per document in query-term order), sorted by score then index."""
    live = len(index)
    if live == 0 or k <= 0:
        return [], []
    lengths = np.frombuffer(index._lengths, dtype=np.uint32).astype(np.float32)
    average = index._live_length / live if index._live_length else 1.0
    ids_parts: list[np.ndarray] = []
    score_parts: list[np.ndarray] = []
    for term in dict.fromkeys(tokenize(query)):
        entry = index._postings.get(term)
        if entry is None:
            continue
        offsets = np.frombuffer(entry[0], dtype=np.uint32)
        start = int(np.searchsorted(offsets, index._oldest - index._origin))
        ids = offsets[start:].astype(np.int64) + index._origin
        if not len(ids):
            continue
        tfs = np.frombuffer(entry[1], dtype=np.uint16)[start:].astype(np.float32)
        idf = math.log(1 + (live - len(ids) + 0.5) / (len(ids) + 0.5))
        norm = index.k1 * (1 - index.b + index.b * lengths[ids - index._base] / average)
        ids_parts.append(ids)
        score_parts.append((idf * tfs / (tfs + norm)).astype(np.float32))
    if not ids_parts:
        return [], []
    unique, inverse = np.unique(np.concatenate(ids_parts), return_inverse=True)
    totals = np.bincount(inverse, weights=np.concatenate(score_parts)).astype(np.float32)
    order = np.lexsort((unique, -totals))[:k]
    return totals[order].tolist(), unique[order].tolist()


class CountingBm25(Bm25):
    """Counts the documents scored (to show that the pruned path skips many of them)."""

    scored = 0

    def parts(
        self, documents: lexical_topk.Offsets, terms: Iterable[int], norm: lexical_topk.Scores | None = None
    ) -> lexical_topk.Parts:
        CountingBm25.scored += len(documents)
        return super().parts(documents, terms, norm)

    def scores_in(self, term: int) -> tuple[lexical_topk.Scores, lexical_topk.Scores]:
        CountingBm25.scored += len(self.terms[term].offsets)
        return super().scores_in(term)


def pruned(index: LexicalIndex, query: str, k: int, seed_budget: int) -> tuple[list[float], list[int]]:
    scorer = index._scorer(query)
    if scorer is None:
        return [], []
    scores, offsets = top_k(scorer, k, seed_budget=seed_budget, exhaustive_below=0)
    return scores.tolist(), (offsets + index._origin).tolist()


def test_vocabulary_terms_tokenize_to_themselves() -> None:
    assert [tokenize(w) for w in VOCABULARY] == [[w] for w in VOCABULARY]


DOCUMENT = st.lists(st.sampled_from(VOCABULARY[:8] * 6 + VOCABULARY), min_size=0, max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    pool=st.lists(DOCUMENT, min_size=1, max_size=12),
    copies=st.integers(2, 40),
    query=st.lists(st.sampled_from(VOCABULARY[:8] * 3 + VOCABULARY + ["absentx"]), min_size=1, max_size=6),
    k=st.integers(1, 20),
    seed_budget=st.integers(0, 60),
    evict=st.integers(0, 40),
    doomed=st.lists(st.integers(0, 400), max_size=30),
    k1=st.sampled_from([0.9, 1.5, 0.0]),
    b=st.sampled_from([0.4, 0.75, 1.0, 0.0]),
)
def test_pruned_top_k_is_the_exhaustive_top_k(
    pool: list[list[str]],
    copies: int,
    query: list[str],
    k: int,
    seed_budget: int,
    evict: int,
    doomed: list[int],
    k1: float,
    b: float,
) -> None:
    """Repeated texts (many equal scores), evictions and removals; a small seed budget forces the pruning."""
    index = LexicalIndex(k1=k1, b=b, compact_ratio=0.1)
    texts = [" ".join(pool[n % len(pool)]) for n in range(len(pool) * copies)]
    for n, text in enumerate(texts):
        index.add(n, text)
    index.evict_before(evict)
    index.remove(doomed)
    text = " ".join(query)
    assert pruned(index, text, k, seed_budget) == exhaustive_reference(index, text, k)
    scores, ids = index.search(text, k)
    assert (scores.tolist(), ids.tolist()) == exhaustive_reference(index, text, k)


def zipf_index(documents: int, seed: int) -> LexicalIndex:
    """Documents of Zipf-distributed terms (a few very common ones), loaded in bulk."""
    rng = np.random.default_rng(seed)
    words = np.array(VOCABULARY)
    weights = 1 / np.arange(1, len(words) + 1)
    sizes: list[int] = []
    terms: list[str] = []
    counts: list[int] = []
    lengths: list[int] = []
    for _ in range(documents):
        drawn = rng.choice(len(words), size=int(rng.integers(1, 15)), p=weights / weights.sum())
        distinct, tally = np.unique(drawn, return_counts=True)
        sizes.append(len(distinct))
        terms.extend(words[distinct].tolist())
        counts.extend(tally.tolist())
        lengths.append(len(drawn))
    index = LexicalIndex()
    index.add_terms(
        np.arange(documents, dtype=np.int64),
        np.array(lengths, dtype=np.uint32),
        np.array(sizes, dtype=np.int64),
        terms,
        np.array(counts, dtype=np.uint32),
    )
    return index


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_search_on_long_posting_lists_prunes_and_matches_the_exhaustive_top_k(seed: int) -> None:
    index = zipf_index(30_000, seed)
    rng = np.random.default_rng(seed)
    index.remove(rng.choice(30_000, size=500, replace=False).tolist())
    index.evict_before(1000)
    work: list[tuple[int, int]] = []
    for _ in range(20):
        query = " ".join(rng.choice(VOCABULARY, size=int(rng.integers(2, 6)), replace=False).tolist())
        expected = exhaustive_reference(index, query, 150)
        scorer = index._scorer(query)
        assert scorer is not None
        holding = len(np.unique(np.concatenate([t.offsets for t in scorer.terms])))
        counting = CountingBm25(scorer.terms, scorer.lengths, scorer.shift, scorer.k1, scorer.b, scorer.average)
        CountingBm25.scored = 0
        scores, offsets = top_k(counting, 150)
        assert (scores.tolist(), (offsets + index._origin).tolist()) == expected
        scores, ids = index.search(query, 150)
        assert (scores.tolist(), ids.tolist()) == expected
        if sum(len(t.offsets) for t in scorer.terms) >= lexical_topk.EXHAUSTIVE_BELOW:
            work.append((CountingBm25.scored, holding))
    scored, holding = np.sum(work, axis=0)
    assert len(work) >= 3 and scored < 0.8 * holding  # the pruned path scores fewer documents than hold a term


def test_ties_at_the_cut_go_to_the_smaller_index() -> None:
    index = LexicalIndex()
    for n in range(50):
        index.add(n, "alpha beta" if n % 2 else "alpha gamma")
    scores, ids = index.search("alpha", 5)
    assert ids.tolist() == [0, 1, 2, 3, 4]  # every document scores the same
    assert len(set(scores.tolist())) == 1
