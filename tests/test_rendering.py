from strands_semantic_memory.rendering import (
    CONTEXT_BEGIN,
    CONTEXT_END,
    CONTEXT_HEADER,
    QUESTION_PREFIX,
    chunk_text,
    is_enriched,
    is_summary,
    original_message,
    render_message,
    set_marker,
)


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


def test_original_message_uses_marker_and_removes_it():
    original = [{"text": "What was the code?"}]
    enriched = {"role": "user", "content": [{"text": "injected ... What was the code?"}]}
    set_marker(enriched, original_content=original)
    assert is_enriched(enriched)
    clean = original_message(enriched)
    assert clean["content"] == original
    assert "metadata" not in clean
    assert is_enriched(enriched), "the input is not modified"


def test_original_message_recognises_the_format_without_marker():
    text = f"{CONTEXT_HEADER}\n{CONTEXT_BEGIN}\n[Message 1, user]: hi\n{CONTEXT_END}\n{QUESTION_PREFIX}What now?"
    clean = original_message({"role": "user", "content": [{"text": text}]})
    assert clean["content"] == [{"text": "What now?"}]


def test_summary_marker():
    summary = {"role": "user", "content": [{"text": "summary"}]}
    assert not is_summary(summary)
    set_marker(summary, kind="summary")
    assert is_summary(summary)


def test_chunk_text_covers_all_text_and_respects_size():
    text = " ".join(f"word{i}" for i in range(1000))
    chunks, truncated = chunk_text(text, 200, 100)
    assert not truncated
    assert all(len(c) <= 200 for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_chunk_text_reports_truncation():
    chunks, truncated = chunk_text("x" * 1000, 100, 3)
    assert len(chunks) == 3 and truncated
