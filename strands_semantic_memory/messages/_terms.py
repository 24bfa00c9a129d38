"""Terms of a message: what lexical search indexes and what queries match, the same on every archive.

Tokens are lowercase word runs; a run joined by ``- _ . / : #`` (``BK-7731-QZ``, ``v2.3.1``, ``user_id``) is indexed
whole *and* by its parts, so an exact code matches strongly and its pieces still match. Words are reduced to their
Snowball (Porter2) English stem (``paintings``, ``painted`` -> ``paint``; the pure-Python ``snowballstemmer``) after
the stopwords are removed; a compound's whole form is kept as written. Measured on the LoCoMo development half:
stemming lifts BM25 recall@5/@50 from 54.0/71.0 to 57.6/77.3 %. A speaker prefix such as ``"Caroline: "`` is indexed
like any word (questions name the person whose turn answers them: removing it cost 2.9 points of BM25 recall@5).

The terms are computed here, not by a database's tokenizer, so SQLite's FTS5 and PostgreSQL index exactly the same
terms (each archive stores them as one space-separated string and lets its engine split on spaces).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

__all__ = ["STOPWORDS", "TOKENIZER_VERSION", "stem", "terms_text", "tokenize"]

TOKENIZER_VERSION = 1
"""Changes whenever ``tokenize`` does: an archive that stores terms records it and indexes again on a change."""

STOPWORDS = frozenset(
    """a about above after again against ain all am an and any are aren aren't as at be because been before being
    below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don don't down during
    each few for from further had hadn hadn't has hasn hasn't have haven haven't having he her here hers herself him
    himself his how i if in into is isn isn't it it's its itself just ll m ma me mightn mightn't more most mustn
    mustn't my myself needn needn't no nor not now o of off on once only or other our ours ourselves out over own re
    s same shan shan't she she's should should've shouldn shouldn't so some such t than that that'll the their
    theirs them themselves then there these they this those through to too under until up ve very was wasn wasn't we
    were weren weren't what when where which while who whom why will with won won't wouldn wouldn't y you you'd
    you'll you're you've your yours yourself yourselves""".split()
)
"""English stopwords left out of the terms (bm25s's extended list, ``STOPWORDS_EN_PLUS``)."""

_WORD = re.compile(r"\w+(?:[-./:#]\w+)*")
_SPLIT = re.compile(r"[-_./:#]")
_local = threading.local()  # a Snowball stemmer keeps state while it stems: one per thread


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball English stem of one lowercase word (``"agencies"`` -> ``"agenc"``); cached, thread-safe."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def _term(word: str) -> str:
    return word if word.isdigit() and word.isascii() else stem(word)  # numbers are left as they are


def tokenize(text: str) -> list[str]:
    """The terms of a text, in order: stopwords removed, words stemmed, compounds whole then by their parts."""
    terms: list[str] = []
    for token in _WORD.findall(text.lower()):
        if token.isalnum():  # the common case: no separator, a single part
            if token not in STOPWORDS:
                terms.append(_term(token))
            continue
        parts = [p for p in _SPLIT.split(token) if p]
        if len(parts) > 1:
            terms.append(token)
        terms.extend(_term(p) for p in parts if p not in STOPWORDS)
    return terms


def terms_text(text: str) -> str:
    """The terms of a text as one space-separated string: what an archive's full-text index stores."""
    return " ".join(tokenize(text))
