"""The demo's verdicts: which failure decides the exit status, and what a failed summary reports."""

from demo.checks import (
    EXIT_ANSWER_WRONG,
    EXIT_OK,
    EXIT_RETRIEVAL_FAILED,
    EXIT_SUMMARY_FAILED,
    Outcome,
    SummaryCheck,
    failed_summary,
    seeds_exit_status,
    summary_result,
)

REFERENCE = "REF-12345-A12"


def outcome(*, injected=True, answered=True, summary=None):
    answer = f"It is {REFERENCE}." if answered else "I do not know."
    return Outcome(REFERENCE, searched=True, injected=injected, still_in_context=False, answer=answer, summary=summary)


def test_a_failed_summary_is_its_own_verdict():
    failed = failed_summary(ValueError("JSON cut off at the bound\nTraceback-like second line"))
    assert failed.failed and not failed.passed and failed.label == "FAILED"
    assert failed.error == "JSON cut off at the bound"
    assert summary_result(failed).endswith(
        "FAILED, no summary was made (JSON cut off at the bound); the messages stayed in context, archived"
    )
    assert failed_summary(RuntimeError()).error == "RuntimeError"
    assert summary_result(None) is None
    assert SummaryCheck().label == "ok" and "names 0 of the 0 topics" in summary_result(SummaryCheck())


def test_the_exit_status_puts_retrieval_first_then_the_summary_then_the_answer():
    failed = failed_summary(ValueError("cut off"))
    assert outcome().exit_status == EXIT_OK == 0
    assert outcome(answered=False).exit_status == EXIT_ANSWER_WRONG == 3
    assert outcome(summary=failed).exit_status == EXIT_SUMMARY_FAILED == 4
    assert outcome(summary=failed, answered=False).exit_status == EXIT_SUMMARY_FAILED
    assert outcome(summary=failed, injected=False).exit_status == EXIT_RETRIEVAL_FAILED == 1
    empty = SummaryCheck(replaced=[object()])  # a summary that names none of the topics: reported, not fatal
    assert empty.label == "empty" and outcome(summary=empty).exit_status == EXIT_OK


def test_the_seeds_status_fails_on_any_failed_summary_not_on_wrong_answers():
    failed = failed_summary(ValueError("cut off"))
    assert seeds_exit_status([outcome(), outcome(answered=False)]) == EXIT_OK
    assert seeds_exit_status([outcome(), outcome(summary=failed)]) == EXIT_SUMMARY_FAILED
    assert seeds_exit_status([outcome(summary=failed), outcome(injected=False)]) == EXIT_RETRIEVAL_FAILED
