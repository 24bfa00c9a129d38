"""Many users' agents in one event loop: no turn stalls the loop, and no user's words reach another user's model.

Ten named users, a SQLite file each, the across-sessions setup (``SemanticSummarizingConversationManager`` and
``SemanticMemoryHook``), all calling ``invoke_async`` at once for a few rounds while a coroutine sleeping 10 ms at a
time records how late it wakes. The bound is issue 45's: 50 ms.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from strands import Agent

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.embeddings import Embedder
from strands_semantic_memory.testing import ScriptedModel

USERS = 10
ROUNDS = 3
STALL_BOUND_MS = 50.0


def _facts(user: int) -> list[dict[str, object]]:
    return [
        {"role": "user", "content": [{"text": f"USER{user:02d}X: my storage locker code is {user:02d}77-PLUM."}]},
        {"role": "assistant", "content": [{"text": f"Noted, USER{user:02d}X: locker {user:02d}77-PLUM."}]},
    ]


async def _all_at_once(agents: list[Agent]) -> float:
    """Every agent takes ``ROUNDS`` turns, all at once each round; the loop's largest stall (ms)."""
    late: list[float] = []

    async def ticker() -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            late.append((time.perf_counter() - before - 0.01) * 1000)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    for round_ in range(ROUNDS):
        await asyncio.gather(*(agent.invoke_async(f"USER{user:02d}X asks ({round_}): what is my locker code?")
                               for user, agent in enumerate(agents)))  # fmt: skip
    task.cancel()
    return max(late)


def test_users_at_once_never_stall_the_loop_and_see_only_their_own_words(tmp_path: Path, embedder: Embedder) -> None:
    for user in range(USERS):
        with SemanticMemory(embedder=embedder, archive_path=tmp_path / f"{user}.db", user_id=f"user-{user}") as memory:
            memory.add(_facts(user), session_id="last week")  # type: ignore[arg-type]
    agents = []
    for user in range(USERS):
        manager = SemanticSummarizingConversationManager(
            archive_path=tmp_path / f"{user}.db", user_id=f"user-{user}", embedder=embedder
        )
        agents.append(Agent(model=ScriptedModel(context_window_limit=8_000), conversation_manager=manager,
                            plugins=[SemanticMemoryHook()], callback_handler=None))  # fmt: skip
    embedder.embed_queries(["the model is loaded before the loop is timed"])

    stall = asyncio.run(_all_at_once(agents))

    assert stall <= STALL_BOUND_MS, f"the event loop stalled for {stall:.0f} ms"
    for user, agent in enumerate(agents):
        seen = str([request["messages"] for request in agent.model.requests])  # type: ignore[attr-defined]
        assert {int(other) for other in re.findall(r"USER(\d{2})X", seen)} == {user}
        assert f"{user:02d}77-PLUM" in seen  # the hook found the user's own earlier words
        agent.conversation_manager.memory.close()  # type: ignore[attr-defined]
