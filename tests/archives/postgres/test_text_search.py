"""What PostgreSQL indexes of a message: hostile texts round-trip, tsvector literals stay within its limits."""

from strands_semantic_memory.archives._protocol import NewRecord
from strands_semantic_memory.archives.postgres._text_search import MAX_LEXEME_BYTES, tsquery_literal, tsvector_literal
from tests.support.postgres import HOSTILE_TEXTS, make_record


def test_hostile_texts_archive_and_come_back_byte_for_byte(make_archive):
    """NUL, lone surrogates, tokens over 2,046 bytes and 5 MB messages all archive."""
    store = make_archive()
    records = [make_record(text, tracking_id=f"t-{name}", clean=False) for name, text in HOSTILE_TEXTS.items()]
    raw = NewRecord(
        data=b'{"role":"user","content":[{"text":"\\u0000"}]}\xff\x00 not even UTF-8',
        role="user",
        tracking_id=None,
        text="raw bytes",
        key="u:raw",
        archived_at=1.0,
    )
    indices = store.add([*records, raw])
    assert indices == list(range(len(records) + 1))
    stored = store.get(indices)
    assert [stored[i].data for i in indices] == [r.data for r in [*records, raw]], "the bytes are never altered"
    assert len(stored[3].data) > 5_000_000
    # The searchable copies are usable: the long token matches itself, the NUL text is found, nothing waits wrongly.
    long_token = HOSTILE_TEXTS["long token"].split()[1]
    assert len(long_token.encode()) > MAX_LEXEME_BYTES
    assert list(store.candidates(None, long_token, 0, 5).lexical) == [2]
    assert store.find_text("BEFORE AFTER") == [0], "NUL became a space in the searchable text"
    assert store.find_text("lone \ufffd surrogate") == [1]
    pending = dict(store.pending(set()))
    assert set(pending) == set(indices) and "\x00" not in pending[0]


def test_tsvector_literals_respect_postgresql_limits():
    literal, terms = tsvector_literal(HOSTILE_TEXTS["5 MB"])
    assert len(literal.encode()) < 1_048_575 and terms == 50_001
    assert tsquery_literal("the of and") is None, "stopwords only: no lexical query"
    hashed = tsquery_literal("x" * 3000)
    assert hashed is not None and hashed.startswith("'#") and len(hashed) < 64
