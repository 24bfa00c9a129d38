"""LoCoMo read two ways (archived turns with evidence positions; exchanges with evidence texts), on a tiny file."""

import pytest

from benchmarks.data.locomo import LOCOMO_DEV, load_conversations, load_loop_conversations
from tests.support.benchmark_results import tiny_locomo


def test_turns_are_archived_in_order_and_evidence_ids_are_repaired_or_dropped(tmp_path):
    (conversation,) = load_conversations(tiny_locomo(tmp_path / "locomo.json"))
    assert conversation.name == "tiny" and len(conversation.messages) == 5
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "user", "assistant", "user"]
    hike = "Ann: We hiked Mount Tam on Sunday. [shares a photo: a trail]"
    assert conversation.messages[4]["content"][0]["text"] == hike
    assert [q.evidence for q in conversation.questions] == [(0,), (3,), (4,)], "D:1:4 read as D1:4; D9:9 dropped"


def test_the_loop_reads_exchanges_and_evidence_texts(tmp_path):
    (conversation,) = load_loop_conversations(tiny_locomo(tmp_path / "locomo.json"))
    assert conversation.exchanges[0] == (
        "Ann: I adopted a beagle called Pepper last week.",
        "Bob: Nice! I started learning the cello.",
    )
    assert conversation.exchanges[-1] == ("Ann: We hiked Mount Tam on Sunday. [shares a photo: a trail]", "OK.")
    assert conversation.questions[1].evidence == ("Bob: My cello teacher lives in Lisbon.",)


@pytest.mark.skipif(not LOCOMO_DEV.is_file(), reason="the LoCoMo development half is not beside the clone")
def test_locomo_becomes_alternating_exchanges_with_evidence_texts():
    conversations = load_loop_conversations()
    assert len(conversations) == 5
    first = conversations[0]
    assert first.exchanges[0][0].startswith("Caroline: ") and first.exchanges[0][1].startswith("Melanie: ")
    texts = "\n".join(u + "\n" + r for u, r in first.exchanges)
    assert all(e in texts for q in first.questions for e in q.evidence)
