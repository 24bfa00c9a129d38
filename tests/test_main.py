"""main.py end to end with a scripted chat model (the real embedding model and FAISS)."""

import io
import re

import main
from tests.scripted_model import ScriptedModel, default_responder, last_user_text


def run(argv, responder=default_responder):
    out = io.StringIO()
    model = ScriptedModel(responder)
    status = main.main(argv, chat_model=model, out=out)
    return status, out.getvalue(), model


def test_demo_runs_end_to_end_and_retrieves_the_number():
    status, output, model = run(["--seed", "5", "--turns", "10"])
    reference = main.reference_number(5)
    assert status == 0, output
    for section in [
        "1. Setting up",
        "2. Planting",
        "4. Before summarization",
        "5. Summarizing",
        "6. Searching",
        "7. Asking the agent",
        "Memory and timings",
    ]:
        assert section in output
    assert f"{reference} is retrievable from the archive, verbatim" in output
    assert f"the summary does not contain {reference}" in output
    # The model received the enriched recall question holding the exact planted turn.
    final = last_user_text(model.chat_requests[-1]["messages"])
    assert reference in final and final.endswith(f"Current question: {main.RECALL_QUESTION}")
    assert "RESULT: reference number retrieved from the archive" in output


def test_demo_reports_a_summary_that_echoes_the_number_honestly():
    reference = main.reference_number(9)

    def echoing(messages, system_prompt, is_summary):
        if is_summary:
            return f"The user shared reference {reference} and asked about data structures."
        return default_responder(messages, system_prompt, is_summary)

    status, output, _ = run(["--seed", "9", "--turns", "6"], echoing)
    assert status == 0
    assert f"the summary repeats {reference}" in output


def test_demo_answer_check_reports_what_the_model_said():
    reference = main.reference_number(11)

    def answering(messages, system_prompt, is_summary):
        text = last_user_text(messages)
        if not is_summary and "Current question: What is my reference number?" in text:
            found = re.search(r"REF-\d{5}-[A-Z]\d{2}", text)
            return f"Your reference number is {found.group(0)}." if found else "I do not know."
        return default_responder(messages, system_prompt, is_summary)

    status, output, _ = run(["--seed", "11"], answering)
    assert status == 0 and f"the agent answered with {reference}" in output


def test_missing_aws_credentials_is_one_line_not_a_traceback(monkeypatch):
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    out = io.StringIO()
    status = main.main(["--model", "us.amazon.nova-lite-v1:0"], out=out)
    assert status == 2
    assert "needs AWS credentials" in out.getvalue() and "Traceback" not in out.getvalue()
    out = io.StringIO()
    assert main.main(["--compare"], out=out) == 0
    assert "skipping bedrock:amazon.titan-embed-text-v2:0: no AWS credentials" in out.getvalue()


def test_embedding_test_only_checks_the_local_model():
    out = io.StringIO()
    assert main.main(["--embedding-test-only"], out=out) == 0
    assert "dimension: 384" in out.getvalue() and "similar texts score above unrelated ones" in out.getvalue()


def test_unknown_local_embedding_model_is_explained(tmp_path):
    out = io.StringIO()
    assert main.main(["--embedding-test-only", "--embedding-model", str(tmp_path / "nope")], out=out) == 2
    assert "could not load the embedding model" in out.getvalue() and "Traceback" not in out.getvalue()


def test_missing_local_chat_model_runtime_is_explained(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if llama-cpp-python were not installed
    out = io.StringIO()
    assert main.main([], out=out) == 2
    text = out.getvalue()
    assert "llama-cpp-python is not installed" in text and "scripts/demo.sh" in text and "Traceback" not in text
