"""Terms of a message: what BM25 indexes (in process, in the durable file, in PostgreSQL) and what queries match.

Tokens: lowercase word runs; a run joined by ``- _ . / : #`` (``BK-7731-QZ``, ``v2.3.1``, ``user_id``) is indexed
whole *and* by its parts, so an exact code matches strongly and its pieces still match. Words are reduced to their
Snowball (Porter2) English stem (``paintings``, ``painted`` -> ``paint``; the ``snowballstemmer`` package, pure
Python), after the stopwords are removed; a compound's whole form is kept as written. Measured on the LoCoMo
development half (``benchmarks/locomo.py``): stemming lifts BM25 recall@5/@50 from 54.0/71.0 to 57.6/77.3 %. The
index's ``k1=0.9, b=0.75`` were chosen by leave-one-conversation-out on LoCoMo and on long assistant-heavy task
conversations (``benchmarks/loo.py``): in the hybrid ranking, ``b=0.75`` (against Anserini's 0.4) costs LoCoMo,
whose turns are all short, 1.0 point of recall@5 and lifts the task conversations, whose long answers otherwise
outscore the short turn that states a fact, by 3.9. A speaker prefix such as ``"Caroline: "`` is indexed like any
word: removing it cost 2.9 points of BM25 recall@5 on LoCoMo, since questions name the person whose turn answers
them.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

from strands_semantic_memory.messages._stopwords import STOPWORDS_EN_PLUS

__all__ = ["TOKENIZER_VERSION", "count_terms", "stem", "tokenize"]

TOKENIZER_VERSION = 1
"""Changes whenever ``tokenize`` does. An archive that persists terms (SQLite, PostgreSQL) re-indexes on a change."""

_WORD = re.compile(r"\w+(?:[-./:#]\w+)*")
_SPLIT = re.compile(r"[-_./:#]")
_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
_local = threading.local()  # a Snowball stemmer object keeps state while it stems: one per thread


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball English stem of one lowercase word (``"agencies"`` -> ``"agenc"``); cached, thread-safe.

    ``tokenize`` does not call it for ASCII digit runs: the stemmer leaves them as they are (it only rewrites
    letter suffixes), and a number is rarely seen twice, so stemming one cost ~35 us and a cache slot for nothing.
    """
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def tokenize(text: str) -> list[str]:
    """Split text into BM25 terms (see the module docstring).

    Args:
        text: Any text.

    Returns:
        Terms in order, stopwords removed, words stemmed, compounds (as written) followed by their stemmed parts.
    """
    terms: list[str] = []
    for token in _WORD.findall(text.lower()):
        if token.isalnum():  # \w is isalnum() or "_": no separator, a single part (the common case, 3x faster)
            if token not in _STOPWORDS:
                terms.append(_term(token))
            continue
        parts = [p for p in _SPLIT.split(token) if p]
        if len(parts) > 1:
            terms.append(token)
        terms.extend(_term(p) for p in parts if p not in _STOPWORDS)
    return terms


def _term(word: str) -> str:
    """A word's term: ASCII digit runs as they are (see ``stem``), other words stemmed."""
    return word if word.isdigit() and word.isascii() else stem(word)


def count_terms(text: str) -> tuple[dict[str, int], int]:
    """The distinct terms of a text with their counts, and its length in terms (what a document is indexed as).

    Args:
        text: Any text.

    Returns:
        ``(counts, length)``: each distinct ``tokenize`` term with how often it occurs (in order of first
        occurrence), and the number of terms, repeats included.
    """
    terms = tokenize(text)
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return counts, len(terms)
