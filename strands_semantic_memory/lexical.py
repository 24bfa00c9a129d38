"""A BM25 index beside the vectors, maintained incrementally and evicted oldest-first with the archive.

Why not index with bm25s directly: bm25s builds its index for a fixed corpus; an archive grows message by message
and loses its oldest messages, and rebuilding per archived message is the very cost this library avoids. This
index keeps, for each term, the archive indices that contain it (ascending, because messages arrive in archive
order) and their term frequencies. Eviction is oldest-first, so the evicted part of every posting list is a
prefix: it is skipped with a binary search and trimmed in batches. Scores follow bm25s's default ("lucene")
BM25 variant with the same ``k1``/``b`` and are checked against bm25s in the tests; the English stopword list is
bm25s's extended one (STOPWORDS_EN_PLUS).

Tokens: lowercase word runs; a run joined by ``- _ . / : #`` (``BK-7731-QZ``, ``v2.3.1``, ``user_id``) is indexed
whole *and* by its parts, so an exact code matches strongly and its pieces still match.
"""

from __future__ import annotations

import math
import re
from array import array

import numpy as np
import numpy.typing as npt
from bm25s.stopwords import STOPWORDS_EN_PLUS

_WORD = re.compile(r"\w+(?:[-./:#]\w+)*")
_SPLIT = re.compile(r"[-_./:#]")
_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)


def tokenize(text: str) -> list[str]:
    """Split text into BM25 terms (see the module docstring).

    Args:
        text: Any text.

    Returns:
        Terms in order, stopwords removed, compounds followed by their parts.
    """
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        token = match.group(0)
        parts = [p for p in _SPLIT.split(token) if p]
        if len(parts) > 1:
            terms.append(token)
        terms.extend(p for p in parts if p not in _STOPWORDS)
    return terms


class LexicalIndex:
    """Incremental BM25 over archive indices. Not thread-safe: the engine calls it under its lock."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, compact_ratio: float = 0.25) -> None:
        """Create an empty index.

        Args:
            k1: BM25 term-frequency saturation.
            b: BM25 length normalization.
            compact_ratio: Trim evicted postings once evicted documents exceed this share of live ones.
        """
        self.k1 = k1
        self.b = b
        self._compact_ratio = compact_ratio
        self._postings: dict[str, tuple[array[int], array[int]]] = {}  # term -> (archive indices, counts)
        self._lengths = array("I")  # document length by (index - self._base)
        self._base = 0  # archive index of self._lengths[0]
        self._oldest = 0  # smallest live archive index
        self._next = 0  # the next index accepted
        self._live_length = 0

    def __len__(self) -> int:
        """Number of live documents."""
        return self._next - self._oldest

    @property
    def nbytes(self) -> int:
        """Approximate bytes held by postings (10 per entry) and document lengths."""
        return sum(len(ids) * 10 for ids, _ in self._postings.values()) + len(self._lengths) * 4

    def add(self, index: int, text: str) -> int:
        """Index one document.

        Args:
            index: Its archive index; larger than every index added before.
            text: Its rendered text.

        Returns:
            The number of postings entries added (distinct terms).

        Raises:
            ValueError: If ``index`` is not larger than the previous one.
        """
        if index < self._next:
            raise ValueError(f"documents must arrive in archive order: got {index} after {self._next - 1}")
        if not len(self):
            self._base = self._oldest = index
            self._lengths = array("I")
        while self._base + len(self._lengths) < index:  # an index never added (skipped) counts as empty
            self._lengths.append(0)
        terms = tokenize(text)
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, count in counts.items():
            entry = self._postings.get(term)
            if entry is None:
                entry = self._postings[term] = (array("q"), array("H"))
            entry[0].append(index)
            entry[1].append(min(count, 65535))  # BM25 saturates long before this
        self._lengths.append(len(terms))
        self._live_length += len(terms)
        self._next = index + 1
        return len(counts)

    def evict_before(self, oldest: int) -> None:
        """Forget every document with an index below ``oldest``."""
        oldest = min(max(oldest, self._oldest), self._next)
        if oldest == self._oldest:
            return
        start, end = self._oldest - self._base, oldest - self._base
        self._live_length -= int(sum(self._lengths[start:end]))
        self._oldest = oldest
        if not len(self):
            self._postings.clear()
            self._lengths = array("I")
            self._base = self._oldest
            self._live_length = 0
        elif (self._oldest - self._base) > self._compact_ratio * len(self):
            self._compact()

    def _compact(self) -> None:
        for term in list(self._postings):
            ids, tfs = self._postings[term]
            cut = int(np.searchsorted(np.frombuffer(ids, dtype=np.int64), self._oldest))
            if cut == len(ids):
                del self._postings[term]
            elif cut:
                self._postings[term] = (ids[cut:], tfs[cut:])
        self._lengths = self._lengths[self._oldest - self._base :]
        self._base = self._oldest

    def search(self, query: str, k: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The ``k`` best-scoring live documents for a query.

        Args:
            query: The query text (tokenized like documents; repeated terms count once).
            k: How many at most.

        Returns:
            ``(scores, archive indices)``, best first; only documents sharing at least one term.
        """
        live = len(self)
        if k <= 0 or live == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        lengths = np.frombuffer(self._lengths, dtype=np.uint32).astype(np.float32)
        average = self._live_length / live if self._live_length else 1.0
        id_parts, score_parts = [], []
        for term in dict.fromkeys(tokenize(query)):
            entry = self._postings.get(term)
            if entry is None:
                continue
            ids = np.frombuffer(entry[0], dtype=np.int64)
            start = int(np.searchsorted(ids, self._oldest))
            ids = ids[start:]
            if not len(ids):
                continue
            tfs = np.frombuffer(entry[1], dtype=np.uint16)[start:].astype(np.float32)
            df = len(ids)
            idf = math.log(1 + (live - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1 - self.b + self.b * lengths[ids - self._base] / average)
            id_parts.append(ids)
            score_parts.append((idf * tfs / (tfs + norm)).astype(np.float32))
        if not id_parts:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        all_ids = np.concatenate(id_parts)
        unique, inverse = np.unique(all_ids, return_inverse=True)
        totals = np.bincount(inverse, weights=np.concatenate(score_parts)).astype(np.float32)
        count = min(k, len(unique))
        top = np.argpartition(-totals, count - 1)[:count] if count < len(unique) else np.arange(len(unique))
        order = top[np.lexsort((unique[top], -totals[top]))]
        return totals[order], unique[order].astype(np.int64)
