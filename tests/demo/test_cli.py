"""The demo (main.py over demo/cli.py) end to end with a scripted chat model (the real embedding model, FAISS, hook
and manager).

No llama.cpp here: the chat model is a scripted ``strands.models.Model``. The three outcomes the demo must report
truthfully are covered: retrieval and answer right; retrieval right, answer wrong; retrieval wrong.
"""

import io
import re

import pytest

from demo import cli, conversation
from demo.checks import TOPICS, check_summary, names_topic
from tests.support.scripted_model import ScriptedModel, default_responder, last_user_text

REFERENCE = re.compile(r"REF-\d{5}-[A-Z]\d{2}")
TOPICAL_SUMMARY = "* We covered hash tables, binary search trees, stacks and queues, and quicksort's pivot choice."


def run(argv, responder=default_responder, model=None):
    out = io.StringIO()
    model = model or ScriptedModel(responder)
    status = cli.main(argv, chat_model=model, out=out)
    return status, out.getvalue(), model


def flat(text):
    return " ".join(text.split())


def is_recall(messages, is_summary):
    return not is_summary and conversation.RECALL_QUESTION in last_user_text(messages)


def reading(messages, system_prompt, is_summary):
    """A model that summarizes topically and answers the recall question from what it received."""
    if is_summary:
        return TOPICAL_SUMMARY
    if is_recall(messages, is_summary):
        found = REFERENCE.search(last_user_text(messages))
        return f"Your reference number is {found.group(0)}." if found else "I do not know."
    return default_responder(messages, system_prompt, is_summary)


def test_retrieval_and_answer_right():
    status, output, model = run(["--seed", "5", "--turns", "10"], reading)
    reference = conversation.reference_number(5)
    assert status == 0, output
    for section in ["1. Session 1: setting up", "2. Planting", "4. Before summarization", "5. Summarizing"]:
        assert section in output
    assert "6. Session 2, in the same process: a new agent, manager and hook over the same archive file" in output
    # Session 2 starts empty: the number can only come from the archive file session 1 wrote.
    assert "the new session starts with 0 messages in context; the archive file holds 13" in flat(output)
    assert f"{reference} is retrievable from the archive, verbatim" in output
    assert "[ok] the summary names 4 of the" in output and "hash tables, binary search trees" in output
    assert f"the summary does not contain {reference}" in output
    # What the model received for the last question holds the planted turn, before the user's own question.
    final = last_user_text(model.chat_requests[-1]["messages"])
    assert reference in final and final.endswith(conversation.RECALL_QUESTION)
    assert "[Message" not in final  # the demo's hook leaves out the labels the small model copied
    assert f"RESULT retrieval (the library): ok, {reference} reached the model" in output
    assert f"RESULT answer (the model):      ok, the reply contains {reference}" in output


def test_retrieval_right_answer_wrong_and_an_empty_summary_are_reported():
    reference = conversation.reference_number(9)

    def wrong(messages, system_prompt, is_summary):
        if is_summary:
            return "I'm ready to help with any questions you have."
        if is_recall(messages, is_summary):
            return "[Message 0, user]: your reference number is REF-11111-A11."
        return default_responder(messages, system_prompt, is_summary)

    status, output, _ = run(["--seed", "9", "--turns", "6"], wrong)
    assert status == 3, output
    assert "[!!] the summary names none of the" in output and "[ok] the summary names" not in output
    assert f"RESULT retrieval (the library): ok, {reference} reached the model" in output
    assert (
        f"RESULT answer (the model):      WRONG, the reply does not contain {reference}; it gave REF-11111-A11 instead"
        in output
    )
    assert "copies [Message N] labels" in output


def test_retrieval_wrong_is_reported_even_when_the_answer_is_right(monkeypatch):
    # A budget too small for any archived message: the search finds the number, the hook can inject nothing.
    monkeypatch.setattr(conversation, "HOOK_OPTIONS", {"max_context_length": 20})
    reference = conversation.reference_number(3)

    def knowing(messages, system_prompt, is_summary):
        if is_recall(messages, is_summary):
            return f"It is {reference}."  # right by luck: the demo must still not credit the library
        return reading(messages, system_prompt, is_summary)

    status, output, model = run(["--seed", "3", "--turns", "6"], knowing)
    assert status == 1, output
    assert reference not in last_user_text(model.chat_requests[-1]["messages"])
    assert "the hook found nothing to add to this turn" in output
    assert f"RESULT retrieval (the library): FAILED, {reference} was found by search but not injected" in output
    assert f"RESULT answer (the model):      ok, the reply contains {reference}" in output


def test_retrieval_wrong_when_the_search_misses(monkeypatch):
    monkeypatch.setattr(conversation, "RECALL_QUESTION", "Which planet has the largest moon?")
    # One hit per search: with its default budget the hook would bring back this short archive whole.
    monkeypatch.setattr(conversation, "HOOK_OPTIONS", {**conversation.HOOK_OPTIONS, "top_k": 1, "context_radius": 0})
    status, output, _ = run(["--seed", "4", "--turns", "6"], reading)
    reference = conversation.reference_number(4)
    assert status == 1, output
    assert f"[xx] {reference} was not among the top hits" in output
    assert f"RESULT retrieval (the library): FAILED, {reference} was not found in the archive" in output
    assert "RESULT answer (the model):      WRONG" in output


def test_replies_are_shown_in_full():
    long_reply = (
        "A hash table maps keys to buckets through a hash function, so lookups, inserts and deletes take constant "
        "time on average; use one when you need fast membership tests or a dictionary and do not need order. "
        "Collisions are resolved by chaining or open addressing."
    )

    def verbose(messages, system_prompt, is_summary):
        if not is_summary and not is_recall(messages, is_summary) and "hash table" in last_user_text(messages):
            return long_reply
        return reading(messages, system_prompt, is_summary)

    status, output, _ = run(["--seed", "2", "--turns", "6"], verbose)
    assert status == 0
    assert long_reply in flat(output)
    assert flat(TOPICAL_SUMMARY) in flat(output)  # the summary, in full


def test_seeds_report_both_rates():
    def every_other(messages, system_prompt, is_summary):
        if is_recall(messages, is_summary):
            found = REFERENCE.search(last_user_text(messages))
            digit = int(found.group(0)[4]) if found else 0
            return f"It is {found.group(0)}." if found and digit % 2 == 0 else "I do not remember."
        return reading(messages, system_prompt, is_summary)

    status, output, _ = run(["--seeds", "3", "--seed", "1", "--turns", "6"], every_other)
    expected = sum(int(conversation.reference_number(s)[4]) % 2 == 0 for s in (1, 2, 3))
    assert status == 0, output
    assert "RESULT retrieval (the library): 3/3 runs put the number in front of the model" in output
    assert f"RESULT answer (the model):      {expected}/3 answers contain the number" in output
    for seed in (1, 2, 3):
        assert f"seed   {seed} {conversation.reference_number(seed)}  retrieval ok" in output


def test_summary_check_could_fail():
    texts = ["What is a hash table and when should I use one?", "Why is mergesort stable?"]
    assert not check_summary("I'm ready to help.", texts, "REF-1").passed
    assert not check_summary("We talked about many interesting things.", texts, "REF-1").passed
    named = check_summary("- Hash tables give O(1) lookups.", texts, "REF-1")
    assert named.passed and [t.name for t in named.named] == ["hash tables"]
    assert check_summary("Reference REF-1 was mentioned.", texts, "REF-1").has_reference


def test_outcome_separates_retrieval_from_the_answer_and_names_near_misses():
    from demo.checks import Outcome

    missed = Outcome("REF-91644-I55", searched=True, injected=True, still_in_context=False, answer="> REF-9164-I55")
    assert missed.retrieved and not missed.answered and missed.exit_status == 3
    assert missed.other_references == ["REF-9164-I55"] and missed.copied_quote and not missed.echoed_labels
    lucky = Outcome("REF-1", searched=False, injected=False, still_in_context=False, answer="It is REF-1.")
    assert lucky.answered and lucky.exit_status == 1


def test_tools_are_shown_and_forget_removes_the_number():
    pytest.importorskip("strands_semantic_memory.tools._conversation_tools")
    status, output, _ = run(["--seed", "6", "--turns", "6", "--tools"], reading)
    reference = conversation.reference_number(6)
    assert status == 0, output
    assert "8. The conversation tools" in output
    assert "conversation_search(query='reference number', limit=2):" in output
    assert f"conversation_forget(query='{reference}'):" in output
    assert f"[ok] {reference} was found, read, then forgotten" in output


def test_structured_compaction_shows_the_structured_summary():
    session_state = pytest.importorskip("strands_semantic_memory.conversation_manager._structured_summary")

    class Structured(ScriptedModel):
        async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
            self.requests.append({"messages": prompt, "system_prompt": system_prompt, "is_summary": True})
            yield {
                "output": output_model(
                    facts=[session_state.Fact(text="Hash tables give constant-time lookups", sources=[1, 2])],
                    narrative="The user asked about hash tables and binary search trees.",
                )
            }

    status, output, model = run(["--seed", "8", "--turns", "6", "--structured"], model=Structured(reading))
    assert status == 0, output
    assert 'summary_format="structured"' in output
    assert "manager.structured_summary:" in output and "Hash tables give constant-time lookups" in output
    assert "[ok] the summary names" in output


def test_missing_aws_credentials_is_one_line_not_a_traceback(monkeypatch):
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    out = io.StringIO()
    status = cli.main(["--model", "us.amazon.nova-lite-v1:0"], out=out)
    assert status == 2
    assert "needs AWS credentials" in out.getvalue() and "Traceback" not in out.getvalue()
    out = io.StringIO()
    assert cli.main(["--compare"], out=out) == 0
    assert "skipping bedrock:amazon.titan-embed-text-v2:0: no AWS credentials" in out.getvalue()


def test_embedding_test_only_checks_the_local_model():
    out = io.StringIO()
    assert cli.main(["--embedding-test-only"], out=out) == 0
    assert "dimension: 384" in out.getvalue() and "similar texts score above unrelated ones" in out.getvalue()


def test_unknown_local_embedding_model_is_explained(tmp_path):
    out = io.StringIO()
    assert cli.main(["--embedding-test-only", "--embedding-model", str(tmp_path / "nope")], out=out) == 2
    text = flat(out.getvalue())
    assert "is unavailable: no folder at" in text and "Traceback" not in text


def test_missing_local_chat_model_runtime_is_explained(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if llama-cpp-python were not installed
    out = io.StringIO()
    assert cli.main(["--backend", "llama", "--one-process"], out=out) == 2
    text = flat(out.getvalue())
    assert "llama-cpp-python is not installed: bash scripts/local-model.sh compiles and installs it" in text
    assert "scripts/demo.sh" in text and "Traceback" not in text

    monkeypatch.setitem(sys.modules, "gguf", None)  # the PyTorch backend's GGUF reader, likewise
    out = io.StringIO()
    assert cli.main(["--one-process"], out=out) == 2  # auto: no llama-cpp-python, so PyTorch
    text = flat(out.getvalue())
    assert "Loading local chat model SmolLM2-135M-Instruct (PyTorch;" in text
    assert "the PyTorch backend needs gguf: pip install -e '.[demo]'" in text and "Traceback" not in text


def test_levers_apply_to_the_final_call_only_and_restore_the_conversation(tmp_path):
    import argparse

    from demo.console import Console
    from demo.levers import Lever, ask_with

    model = ScriptedModel(reading)
    args = argparse.Namespace(**{**vars(cli.build_parser().parse_args([])), "seed": 5, "turns": 6})
    prepared = conversation.prepare_run(args, Console(io.StringIO()), model, None, tmp_path / "archive.sqlite3")
    snapshot = [dict(m) for m in prepared.agent.messages]
    as_is = ask_with(prepared, snapshot, Lever("as is"))
    sent_as_is = model.chat_requests[-1]
    bare = ask_with(prepared, snapshot, Lever("bare", include_metadata=False, system_prompt="Answer briefly."))
    sent_bare = model.chat_requests[-1]
    assert as_is.retrieved and as_is.answered and bare.retrieved and bare.answered
    assert "[Message" in last_user_text(sent_as_is["messages"])
    assert "[Message" not in last_user_text(sent_bare["messages"])
    assert prepared.reference in last_user_text(sent_bare["messages"])
    assert sent_as_is["system_prompt"] == conversation.SYSTEM_PROMPT and sent_bare["system_prompt"] == "Answer briefly."
    # Each lever's question was asked on the same restored conversation, and the settings were undone.
    assert len(sent_bare["messages"]) == len(sent_as_is["messages"]) == len(snapshot) + 1
    assert prepared.hook.include_metadata is conversation.HOOK_OPTIONS["include_metadata"]
    assert prepared.agent.system_prompt == conversation.SYSTEM_PROMPT and not model.get_config().get("stop")
    prepared.manager.memory.close()


def test_a_phrase_of_one_topic_does_not_name_another():
    """'priority queues' names heaps only, not stacks and queues (it contains 'queue')."""
    stacks = next(t for t in TOPICS if t.name == "stacks and queues")
    heaps = next(t for t in TOPICS if t.name == "heaps")
    assert names_topic("we discussed priority queues.", heaps)
    assert not names_topic("we discussed priority queues.", stacks)
    assert names_topic("a queue is first in, first out; priority queues are heaps.", stacks)


@pytest.mark.subprocess
def test_main_py_runs_the_demo_cli():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    shown = subprocess.run(
        [sys.executable, str(root / "main.py"), "--help"], capture_output=True, text=True, check=True, cwd=root
    )
    assert cli.__doc__.split("\n\n")[0] in " ".join(shown.stdout.split()), "the description of demo/cli.py"
    assert "--embedding-test-only" in shown.stdout


class FailingStructured(ScriptedModel):
    """A chat model whose structured summary fails as the local model's does when its JSON is cut off."""

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        self.requests.append({"messages": prompt, "system_prompt": system_prompt, "is_summary": True})
        raise ValueError(
            "the local model's JSON was cut off at the 1024-token bound of structured output (3200 characters "
            "written, the object unfinished)"
        )
        yield {}  # pragma: no cover - makes this an async generator, as Model.structured_output is


def test_a_failed_structured_summary_is_reported_and_fails_the_exit_status():
    status, output, model = run(["--seed", "8", "--turns", "6", "--structured"], model=FailingStructured(reading))
    reference = conversation.reference_number(8)
    assert model.summary_requests, "the summary was asked for"
    assert "[xx] the summary failed (the local model's JSON was cut off" in output
    # The leaving messages were archived before the summary was asked for: session 2 finds the number there.
    assert f"RESULT retrieval (the library): ok, {reference} reached the model in the injected context" in output
    assert flat(
        "RESULT summary (the model):     FAILED, no summary was made (the local model's JSON was cut off at the "
        "1024-token bound"
    ) in flat(output)
    assert status == 4, output


def test_a_failed_summary_in_any_seed_fails_the_seeds_exit_status():
    status, output, _ = run(
        ["--seeds", "2", "--seed", "1", "--turns", "6", "--structured"], model=FailingStructured(reading)
    )
    assert "RESULT retrieval (the library): 2/2 runs put the number in front of the model" in output
    assert "RESULT summary (the model):     2/2 runs made no summary" in output
    assert "summary FAILED" in output
    assert status == 4, output


def test_a_summary_that_was_made_adds_its_own_result_line():
    status, output, _ = run(["--seed", "5", "--turns", "10"], reading)
    assert status == 0, output
    assert "RESULT summary (the model):     ok, it names 4 of the" in output
