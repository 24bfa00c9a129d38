"""What PostgreSQL indexes of a message: searchable text, ``tsvector`` and ``tsquery`` literals, storable keys.

The archived message itself (``data``, ``bytea``) is stored exactly as the engine encoded it; only the copies made
for searching are adapted to what PostgreSQL's text types accept:

- ``text`` cannot hold NUL, and UTF-8 has no form for lone surrogates: ``storable`` replaces them (as
  ``searchable_text`` does, so text the engine already cleaned is unchanged);
- a ``tsvector`` lexeme holds at most 2,046 bytes (a long JWT or hex blob is one token): longer terms are indexed
  as a hash of the term (``index_term``), and queries hash the same way, so an exact long token still
  matches itself;
- a ``tsvector`` holds at most 16,383 positions, 256 positions per lexeme and about 1 MB in all: the lexical
  index of a very large message covers its first terms up to those limits (its vectors and archived bytes are
  unaffected).

Terms are this library's (``tokenize``); PostgreSQL's parser is never used,
so both literal types are built here and cast with ``::tsvector`` / ``::tsquery``.
"""

from __future__ import annotations

import hashlib

from strands_semantic_memory.messages._codec import searchable_text
from strands_semantic_memory.messages._terms import tokenize

MAX_LEXEME_BYTES = 2046
"""PostgreSQL's limit for one ``tsvector`` lexeme."""

MAX_POSITION = 16383
"""PostgreSQL's largest ``tsvector`` position."""

MAX_POSITIONS_PER_LEXEME = 256
"""PostgreSQL keeps at most this many positions per lexeme."""

MAX_TSVECTOR_BYTES = 1_000_000
"""Budget for one ``tsvector`` (PostgreSQL refuses more than 1,048,575 bytes)."""


def storable(text: str) -> str:
    """``text`` with NUL and lone surrogates replaced, so PostgreSQL's ``text`` type accepts it."""
    return searchable_text(text)


def storable_key(key: str) -> str:
    """An idempotency key PostgreSQL can store: itself when it is clean, else a digest of its exact code points."""
    if storable(key) == key:
        return key
    return "h:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def index_term(term: str) -> str:
    """The lexeme stored for a term: the term, or ``#`` and a digest when it is over PostgreSQL's lexeme limit.

    Tokens start with a word character, so a ``#`` lexeme never collides with a real term.
    """
    raw = term.encode("utf-8")
    if len(raw) <= MAX_LEXEME_BYTES:
        return term
    return "#" + hashlib.blake2b(raw, digest_size=16).hexdigest()


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str) -> tuple[str, int]:
    """The ``tsvector`` literal of a message's searchable text, and its number of distinct terms.

    Args:
        text: The searchable text (cleaned again here).

    Returns:
        ``(literal, distinct_terms)``; the literal may cover only the first terms of a huge text (module docstring).
    """
    terms = tokenize(storable(text))
    positions: dict[str, list[int]] = {}
    size = 8
    for position, term in enumerate(terms[:MAX_POSITION], 1):
        lexeme = index_term(term)
        found = positions.get(lexeme)
        if found is None:
            size += 4 + len(lexeme.encode("utf-8")) + 4
            if size > MAX_TSVECTOR_BYTES:
                break
            positions[lexeme] = [position]
        elif len(found) < MAX_POSITIONS_PER_LEXEME:
            size += 2
            found.append(position)
    literal = " ".join(f"{_quote(lexeme)}:{','.join(map(str, where))}" for lexeme, where in positions.items())
    return literal, len(set(terms))


def query_lexemes(query: str) -> list[str]:
    """The distinct lexemes of a query, in order (as ``tsvector_literal`` stores them)."""
    return list(dict.fromkeys(index_term(t) for t in tokenize(storable(query))))


def quoted(lexeme: str) -> str:
    """A lexeme as a ``tsquery`` / ``tsvector`` literal operand."""
    return _quote(lexeme)


def tsquery_literal(query: str) -> str | None:
    """A ``tsquery`` literal matching any of the query's terms, or None when it has none."""
    lexemes = query_lexemes(query)
    return " | ".join(_quote(lexeme) for lexeme in lexemes) if lexemes else None
