"""What a model call already holds, as archive indices: the search must not bring it back.

With the manager archiving every message as it is added (``archive_when="added"``), most of what a call sends is
archived too, and would otherwise be the best hits of its own turn. ``HeldIndices`` asks the memory which of the
call's messages are archived (``SemanticMemory.indices_of``: the tracking id and the exact bytes, as ``add`` keys
them) and remembers the answer per tracking id, so a turn looks up only the messages it has not seen: found ones
stay found until a restore replaces the archive (``generation``), missing ones are asked again once the memory
changed (``version``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from strands.types.content import Message

from strands_semantic_memory.engine._memory import SemanticMemory

__all__ = ["HeldIndices"]


@dataclass
class HeldIndices:
    """Archive indices of the messages one agent's calls hold, cached per tracking id for one memory."""

    found: dict[str, int] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    memory_id: int | None = None
    generation: int = -1
    version: int = -1

    def of(self, memory: SemanticMemory, messages: Sequence[Message]) -> frozenset[int]:
        """The archive indices of ``messages`` (those archived unchanged)."""
        if self.memory_id != id(memory) or self.generation != memory.generation:
            self.found.clear()
            self.missing.clear()
            self.memory_id, self.generation = id(memory), memory.generation
        if self.version != memory.version:
            self.missing.clear()
            self.version = memory.version
        ids = [m.get("tracking_id") for m in messages]
        unknown = [
            (position, m)
            for position, (m, i) in enumerate(zip(messages, ids, strict=True))
            if isinstance(i, str) and i not in self.found and i not in self.missing
        ]
        if unknown:
            located = memory.indices_of([m for _, m in unknown])
            for slot, (_, message) in enumerate(unknown):
                tracking_id = str(message.get("tracking_id"))
                if slot in located:
                    self.found[tracking_id] = located[slot]
                else:
                    self.missing.add(tracking_id)
        return frozenset(self.found[i] for i in ids if isinstance(i, str) and i in self.found)
