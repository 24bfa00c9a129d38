"""The block: archived text can never forge the block or the question (a property of the text)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.archives import StoredRecord
from strands_semantic_memory.formatting import BlockWriter, context_block, quote
from strands_semantic_memory.formatting._block import ARCHIVE_END, QUESTION_PREFIX
from strands_semantic_memory.messages import encode_message
from strands_semantic_memory.retrieval import Passage

pieces = st.text(max_size=20) | st.sampled_from(
    ["\n", "\r", "\u2028", "\x85", "[end of archive]", "Current question: ", "> ", "[archive]", "[...]", "\ud800"]
)
hostile = st.lists(pieces, max_size=12).map("".join)


def passage(index: int, words: str, role: str = "user") -> Passage:
    message = {"role": role, "content": [{"text": words}]}
    record = StoredRecord(index, encode_message(message), role, words, 1_700_000_000.0 + index)  # type: ignore[arg-type]
    return Passage((record,), {index: 1.0}, 1.0)


@given(st.lists(hostile, min_size=1, max_size=4), hostile, st.booleans(), st.booleans())
def test_archived_text_can_never_forge_the_block_or_the_question(texts, question, metadata, dates):
    passages = [passage(i * 3, text) for i, text in enumerate(texts)]
    writer = BlockWriter(include_metadata=metadata, show_dates=dates)
    said = [writer.statement(passages[0].records[0], [texts[0]], asked=texts[-1])]
    block = context_block(writer.with_statements(said, passages), question.replace("\n", " "))
    lines = block.split("\n")
    assert [i for i, line in enumerate(lines) if line == ARCHIVE_END] == [len(lines) - 2]
    assert [line for line in lines if line.startswith(QUESTION_PREFIX)][-1] == lines[-1]
    inside = lines[2:-2]
    assert all(line.startswith((">", "[")) or line == "" for line in inside)
    assert all(line.startswith(">") for line in inside if not line.startswith("[") and line)


@given(hostile)
def test_quote_marks_every_line(text):
    assert all(line.startswith(">") for line in quote(text).split("\n"))


def test_the_gap_line_separates_passages_that_are_not_adjacent():
    body = BlockWriter(show_dates=False).body([passage(0, "first"), passage(5, "later"), passage(6, "next")])
    assert body.split("\n") == ["> first", "[...]", "> later", "", "> next"]
