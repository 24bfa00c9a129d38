from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.formatting._block import render_context_block
from strands_semantic_memory.messages import _text as rendering
from strands_semantic_memory.messages._text import chunk_text, render_message
from strands_semantic_memory.retrieval._passages import Passage


def test_text_and_tool_blocks_render_with_their_content():
    message = {
        "role": "assistant",
        "content": [
            {"text": "Looking it up."},
            {"toolUse": {"toolUseId": "t1", "name": "lookup_order", "input": {"order_id": "A-77"}}},
        ],
    }
    text = render_message(message)
    assert "Looking it up." in text
    assert "[tool call lookup_order]" in text and '"order_id": "A-77"' in text


def test_tool_result_renders_text_json_and_media_placeholders():
    message = {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "t1",
                    "status": "error",
                    "content": [{"text": "not found"}, {"json": {"code": 404}}, {"image": {"format": "png"}}],
                }
            }
        ],
    }
    text = render_message(message)
    assert text.startswith("[tool result error]")
    assert "not found" in text and '"code": 404' in text and "[image (png)]" in text


def test_images_documents_and_odd_blocks_render_to_placeholders_or_nothing():
    message = {
        "role": "user",
        "content": [
            {"image": {"format": "jpeg", "source": {"bytes": b"\xff\xd8"}}},
            {"document": {"format": "pdf", "name": "invoice-17", "source": {"bytes": b"%PDF"}}},
            {"cachePoint": {"type": "default"}},
            {"reasoningContent": {"reasoningText": {"text": "thinking about it"}}},
            {"text": {"not": "a string"}},
        ],
    }
    text = render_message(message)
    assert "[image (jpeg)]" in text
    assert "[document invoice-17 (pdf)]" in text
    assert "thinking about it" in text
    assert '{"not": "a string"}' in text


def test_empty_content_renders_empty():
    assert render_message({"role": "user", "content": []}) == ""


def test_text_that_looks_like_an_enriched_turn_renders_exactly_as_written():
    """Issue 11.4: rendering never interprets text; nothing is cut from a look-alike of either block format."""
    legacy = (
        "Based on our previous conversation, these earlier exchanges may be relevant:\n---Previous Context---\n"
        "[Message 1, user]: hi\n---End Previous Context---\nCurrent question: What now?"
    )
    passage = Passage(0, 0, [{"role": "user", "content": [{"text": "hi"}]}], [0], 1.0, [0], [1.0])
    current = render_context_block([passage], "What now?")
    for text in (legacy, current):
        assert render_message({"role": "user", "content": [{"text": text}]}) == text


def test_rendering_keeps_no_marker_parsing():
    """The marker and strip-and-restore helpers are gone: nothing reads library markers on messages."""
    names = ("original_message", "restore_original_content", "set_marker", "is_enriched", "is_summary", "METADATA_KEY")
    for name in names:
        assert not hasattr(rendering, name)


def test_chunk_text_covers_all_text_and_respects_size():
    text = " ".join(f"word{i}" for i in range(1000))
    chunks, truncated = chunk_text(text, 200, 100)
    assert not truncated
    assert all(len(c) <= 200 for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_chunk_text_reports_truncation():
    chunks, truncated = chunk_text("x" * 1000, 100, 3)
    assert len(chunks) == 3 and truncated


prose = st.lists(
    st.one_of(
        st.text(alphabet="abcdefghij", min_size=1, max_size=12),
        st.sampled_from([". ", ", ", "\n", "\n\n", "? ", " ", "; "]),
    ),
    max_size=120,
).map("".join)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(prose, st.integers(2, 90))
def test_chunks_cover_the_text_within_the_size(text, size):
    chunks, truncated = chunk_text(text, size, 10_000)
    assert not truncated
    assert all(0 < len(c) <= size for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())  # nothing lost but whitespace


@settings(max_examples=200, deadline=None, derandomize=True)
@given(prose, st.integers(8, 90))
def test_a_chunk_ends_at_the_best_break_in_the_second_half_of_its_passage(text, size):
    start = 0
    while start < len(text):
        end = rendering.chunk_end(text, start, size)
        assert start < end <= start + size
        passage = text[start + size // 2 : start + size]
        if end < len(text) and "\n\n" in passage:
            assert text[end : end + 2] == "\n\n"
        elif end < len(text) and ". " in passage and "\n" not in passage:
            assert text[end - 1 : end + 1] == ". "
        start = end


def test_long_messages_are_cut_between_sentences():
    sentences = [f"Sentence number {n} says something about topic {n}." for n in range(40)]
    chunks, _ = chunk_text(" ".join(sentences), 300, 64)
    assert len(chunks) > 1
    assert all(c.endswith(".") for c in chunks)
    assert " ".join(chunks) == " ".join(sentences)


def test_every_part_of_a_long_message_can_be_found(embedder):
    """A fact in the last paragraph of a 600-word message: past what one vector of the model reads, found by its
    chunk (dense search alone), and lost when the whole message is one chunk."""
    from transformers import AutoTokenizer

    from strands_semantic_memory import SemanticMemory
    from strands_semantic_memory.embeddings._local import bundled_model_path
    from tests.support.long_text import handover_note

    fact = "The spare key to the server cage is kept in the blue lockbox behind reception."
    note = handover_note(7, fact)
    others = [handover_note(seed, "") for seed in range(20, 40)]
    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()))
    assert 550 <= len(note.split()) <= 700
    assert len(tokenizer(note)["input_ids"]) > 2 * 256, "one vector would read less than half of the note"
    assert note.rindex(fact) > len(note) * 0.9

    def rank_of_note(**options):
        memory = SemanticMemory(embedder=embedder, retrieval="dense", **options)
        memory.add([{"role": "user", "content": [{"text": t}]} for t in [*others[:10], note, *others[10:]]])
        hits = [h.index for h in memory.search("Where is the spare key to the server cage kept?", top_k=21)]
        return hits.index(10)

    assert rank_of_note() == 0
    assert rank_of_note(chunk_chars=100_000, max_chunks_per_message=1) > 0
