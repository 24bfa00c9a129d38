"""The unrelated prompts: 200 of six kinds, labelled by length, none naming anyone or anything of LoCoMo."""

import json
import re

import pytest

from benchmarks.data.locomo import LOCOMO_DEV
from benchmarks.data.unrelated import (
    KINDS,
    PROMPTS_FILE,
    counts,
    length_of,
    load_unrelated_prompts,
    spread_over_kinds,
)


def test_the_set_has_its_kinds_and_lengths_as_the_docstring_says():
    prompts = load_unrelated_prompts()
    kinds, lengths = counts(prompts)
    assert len(prompts) == 200 and len({p.text for p in prompts}) == 200
    assert kinds == {"arithmetic": 30, "coding": 40, "trivia": 35, "creative": 30, "smalltalk": 25, "instructions": 40}
    assert lengths == {"short": 54, "medium": 128, "long": 18}
    assert [p.kind for p in prompts] == sorted((p.kind for p in prompts), key=KINDS.index), "kind by kind"
    raw = json.loads(PROMPTS_FILE.read_text(encoding="utf-8"))
    assert [item["length"] for item in raw] == [length_of(item["text"]) for item in raw], "labels match the rule"


def test_a_smaller_set_takes_every_kind_in_turn():
    prompts = load_unrelated_prompts()
    few = spread_over_kinds(prompts, 8)
    assert [p.kind for p in few[:6]] == list(KINDS) and len(few) == 8
    assert spread_over_kinds(prompts, None) == prompts and spread_over_kinds(prompts, 500) == prompts


@pytest.mark.skipif(not LOCOMO_DEV.is_file(), reason="the LoCoMo development half is not beside the clone")
def test_no_prompt_names_a_speaker_of_the_conversations():
    samples = json.loads(LOCOMO_DEV.read_text(encoding="utf-8"))
    names = {s["conversation"][k] for s in samples for k in ("speaker_a", "speaker_b")}
    named = [p.text for p in load_unrelated_prompts() for n in names if re.search(rf"\b{re.escape(n)}\b", p.text)]
    assert not named
