"""The memory's added cost per exchange over Strands' own ``SummarizingConversationManager``, in one run.

A warm process; each round replays the same LoCoMo conversation through two new agents: Strands'
``SummarizingConversationManager`` alone, and ``SemanticSummarizingConversationManager`` over a copy of an archive of
10,000 messages (named user, every message archived as it is added) with ``SemanticMemoryHook``. Both use
``ScriptedModel`` (answers at once) declaring an 8,000-token window and refusing inputs above 32,000 characters, so
each reduces as it would. The exchanges are paired and interleaved (the order alternates); an exchange's cost is the
wall time of ``agent(text)``, and the added cost is the memory's minus Strands' for the same exchange.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import _speed
from benchmarks.common import Section, Settings, percentile, spread, table

WINDOW = 8_000


def run(settings: Settings) -> dict[str, Any]:
    from strands import Agent
    from strands.agent.conversation_manager import SummarizingConversationManager

    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
    from strands_semantic_memory.testing import ScriptedModel

    size, exchanges, rounds = _speed.sized(settings, (10_000, 150, 5), (1_000, 30, 3), (200, 4, 1))
    texts = [text for role, text, *_ in _speed.locomo_turns(settings.locomo) if role == "user"][:exchanges]
    source = _speed.cached_archive(settings.locomo, size)
    _speed.warm_model()
    per_round: list[dict[str, float]] = []
    differences: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ssm-exchange-") as folder:
        path = _speed.copy_archive(source, Path(folder))
        for round_ in range(rounds + 1):  # round 0 warms both paths up and is not counted
            model: dict[str, Any] = {"context_window_limit": WINDOW, "max_input_chars": 4 * WINDOW}
            strands = Agent(model=ScriptedModel(**model), conversation_manager=SummarizingConversationManager(),
                            callback_handler=None)  # fmt: skip
            manager = SemanticSummarizingConversationManager(archive_path=path, user_id=_speed.USER)
            ours = Agent(model=ScriptedModel(**model), conversation_manager=manager, plugins=[SemanticMemoryHook()],
                         callback_handler=None)  # fmt: skip
            walls: dict[str, list[float]] = {"strands": [], "ours": []}
            for n, text in enumerate(texts[: 5 if round_ == 0 else None]):
                said = f"{text} [round {round_}]"  # distinct texts every round: no query-cache hit
                for name in ("strands", "ours") if n % 2 == 0 else ("ours", "strands"):
                    agent = strands if name == "strands" else ours
                    started = time.perf_counter()
                    agent(said)
                    walls[name].append((time.perf_counter() - started) * 1000)
            manager.memory.close()
            if round_ == 0:
                continue
            paired = [o - s for o, s in zip(walls["ours"], walls["strands"])]
            differences.extend(paired)
            per_round.append({"strands": percentile(walls["strands"], 0.5), "ours": percentile(walls["ours"], 0.5),
                              "added": percentile(paired, 0.5), "added_p90": percentile(paired, 0.9)})  # fmt: skip
    return {
        "size": size,
        "exchanges": len(texts),
        "rounds": per_round,
        "added_p50": percentile(differences, 0.5),
        "added_spread": spread([r["added"] for r in per_round]),
        "strands_spread": spread([r["strands"] for r in per_round]),
        "ours_spread": spread([r["ours"] for r in per_round]),
    }


def render(data: dict[str, Any], output: Path) -> str:
    rows = [[n + 1, _speed.ms(r["strands"]), _speed.ms(r["ours"]), _speed.ms(r["added"]), _speed.ms(r["added_p90"])]
            for n, r in enumerate(data["rounds"])]  # fmt: skip
    rows.append(["all rounds: median (min to max of the rounds)", _speed.with_spread(data["strands_spread"]),
                 _speed.with_spread(data["ours_spread"]), _speed.with_spread(data["added_spread"]), ""])  # fmt: skip
    return "\n\n".join(
        [
            f"`benchmarks/per_exchange.py`. {data['exchanges']} LoCoMo exchanges per round, replayed by two new agents "
            f"each round in one warm process: Strands' `SummarizingConversationManager`, and this library's manager "
            f"(over an archive of {data['size']:,} messages, every message archived as it is added) with the hook. "
            "`ScriptedModel` answers at once, so these figures hold no model time: in production the same added cost "
            "sits beside a model call of a second or more. Exchanges are paired and interleaved; **added** is the "
            f"paired difference (ms). Median added cost over every exchange: **{_speed.ms(data['added_p50'])} ms**.",
            table(["round", "Strands p50 (ms)", "memory p50 (ms)", "added p50 (ms)", "added p90 (ms)"], rows),
        ]
    )


SECTION = Section("per_exchange", "The memory's added cost per exchange, against Strands' summarizing manager", run,
                  render)  # fmt: skip
