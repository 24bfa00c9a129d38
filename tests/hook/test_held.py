"""What a model call holds, as archive indices: looked up once per tracking id, again after a restore."""

from __future__ import annotations

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.hook._held import HeldIndices


def said(i: int, text: str) -> dict:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": text}], "tracking_id": f"t{i}"}


class Counting:
    def __init__(self, memory):
        self.memory, self.asked = memory, []

    def __getattr__(self, name):
        return getattr(self.memory, name)

    def indices_of(self, messages):
        self.asked.append([m["tracking_id"] for m in messages])
        return self.memory.indices_of(messages)


def test_only_unseen_messages_are_looked_up_and_changed_ones_are_not_held(embedder):
    memory = SemanticMemory(embedder=embedder)
    history = [said(i, f"message {i}") for i in range(4)]
    indices = memory.add(history[:3])
    counting, held = Counting(memory), HeldIndices()
    assert held.of(counting, history) == frozenset(indices)
    assert counting.asked == [["t0", "t1", "t2", "t3"]]
    assert held.of(counting, history) == frozenset(indices)
    assert counting.asked == [["t0", "t1", "t2", "t3"]], "nothing looked up again while the memory is unchanged"
    memory.add(history[3:])
    assert held.of(counting, history) == frozenset(memory.indices)
    assert counting.asked[-1] == ["t3"], "only the message that was missing is asked again after a change"
    edited = [*history[:3], {**history[3], "content": [{"text": "changed since"}]}]
    assert HeldIndices().of(memory, edited) == frozenset(indices), "a changed message is not the archived one"
    memory.close()


def test_a_restore_forgets_what_was_found(embedder):
    memory = SemanticMemory(embedder=embedder)
    history = [said(i, f"message {i}") for i in range(2)]
    memory.add(history)
    state = memory.to_state()
    held = HeldIndices()
    assert len(held.of(memory, history)) == 2
    memory.forget_all()
    memory.load_state(state)
    assert held.of(memory, history) == frozenset(memory.indices_of(history).values())
    memory.close()
