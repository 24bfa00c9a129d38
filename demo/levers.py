"""Measure what makes the local model stop copying the injected block into its answer.

    python -m demo.levers --seeds 10            # seeds 1..10; a table of answers right / echoing, per lever

Each seed runs the demo's conversation once (plant, ten turns, summarize: the expensive part), then asks the
final question once per lever, restoring the conversation before each: the hook's ``include_metadata``, a system
prompt calling the block reference material, a stop sequence, a lower ``max_tokens``. A lever applies to the final
call only; decoding is greedy, so each answer is the one a full demo run would give with that setting on its last
call (a full run with another system prompt, ``stop`` or ``max_tokens`` would also differ in the earlier turns).
The answer counted is the model's reply as generated: nothing is post-processed.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo.checks import Outcome
from demo.cli import build_parser
from demo.components import load_embedder
from demo.console import Console
from demo.conversation import SYSTEM_PROMPT, Prepared, ask_recall, prepare_run

REFERENCE_PROMPT = (
    "You are a helpful assistant. Answer the user's question in one or two plain sentences, in your own words. "
    "Some questions come with earlier messages as reference material, between [archive] and [end of archive]: "
    "take facts from it, copying names and numbers exactly, but do not copy its lines."
)
STOP = ("[Message", "> ")


@dataclass(frozen=True)
class Lever:
    """Settings of the final call only."""

    name: str
    include_metadata: bool = True
    system_prompt: str | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None


LEVERS = (  # grouped by system prompt: both backends reuse the evaluated prompt prefix between calls
    Lever("include_metadata=True"),
    Lever("include_metadata=False", include_metadata=False),
    Lever('stop ["[Message", "> "]', stop=STOP),
    Lever("max_tokens=40", max_tokens=40),
    Lever("reference prompt", system_prompt=REFERENCE_PROMPT),
    Lever("reference prompt + include_metadata=False", include_metadata=False, system_prompt=REFERENCE_PROMPT),
    Lever("reference prompt + include_metadata=False + stop", False, REFERENCE_PROMPT, STOP),
)


@dataclass
class Tally:
    """Counts for one (prompt, lever) over the seeds."""

    runs: int = 0
    retrieved: int = 0
    answered: int = 0
    labels: int = 0
    quotes: int = 0
    echoing: int = 0
    answers: list[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.runs += 1
        self.retrieved += outcome.retrieved
        self.answered += outcome.answered
        self.labels += outcome.echoed_labels
        self.quotes += outcome.copied_quote
        self.echoing += outcome.echoed_labels or outcome.copied_quote
        self.answers.append(outcome.answer)


def ask_with(prepared: Prepared, snapshot: list[Any], lever: Lever) -> Outcome:
    """Ask the final question on the restored conversation with ``lever``'s settings, then undo them."""
    model = prepared.agent.model
    saved = dict(model.get_config())
    saved_metadata, saved_prompt = prepared.hook.include_metadata, prepared.agent.system_prompt
    prepared.agent.messages = copy.deepcopy(snapshot)
    prepared.hook.include_metadata = lever.include_metadata
    prepared.agent.system_prompt = lever.system_prompt or SYSTEM_PROMPT
    model.update_config(stop=list(lever.stop), max_tokens=lever.max_tokens or saved.get("max_tokens"))
    try:
        return ask_recall(prepared, Console(io.StringIO()))
    finally:
        model.update_config(**saved)
        prepared.hook.include_metadata, prepared.agent.system_prompt = saved_metadata, saved_prompt


def measure(seeds: range, out: Console, backend: str = "auto") -> dict[str, Tally]:
    from demo.local_llm import load_local_model

    model = load_local_model(backend)
    args = build_parser().parse_args(["--backend", backend])
    embedder = load_embedder(args.embedding_model, None, Console(io.StringIO()))
    tallies: dict[str, Tally] = {}
    for seed in seeds:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ssm-levers-") as folder:
            prepared = prepare_run(
                argparse.Namespace(**{**vars(args), "seed": seed}),
                Console(io.StringIO()),
                model,
                embedder,
                Path(folder) / "archive.sqlite3",
            )
            prepared_seconds = time.perf_counter() - started
            snapshot = copy.deepcopy(prepared.agent.messages)
            try:
                for lever in LEVERS:
                    outcome = ask_with(prepared, snapshot, lever)
                    tallies.setdefault(lever.name, Tally()).add(outcome)
                    flags = "labels " * outcome.echoed_labels + "quote" * outcome.copied_quote
                    out.item(
                        f"seed {seed:>2} {lever.name:<50} answer {'ok' if outcome.answered else 'WRONG':<5} "
                        f"{flags or 'own words'}: {outcome.answer!r}"
                    )
            finally:
                prepared.manager.memory.close()
        out.item(
            f"seed {seed}: conversation {prepared_seconds:.0f} s, all levers {time.perf_counter() - started:.0f} s, "
            f"load average {os.getloadavg()[0]:.2f}"
        )
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write every answer to this file")
    parser.add_argument("--backend", choices=["auto", "torch", "llama"], default="auto")
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = Console()
    started = time.perf_counter()
    tallies = measure(range(args.seed, args.seed + args.seeds), out, args.backend)
    out.line()
    out.line(
        f"| lever (seeds {args.seed}..{args.seed + args.seeds - 1}) | retrieved | answer right | echoing "
        "(labels or quotes) | [Message N] labels | quoted lines |"
    )
    out.line("| --- | --- | --- | --- | --- | --- |")
    for name, t in tallies.items():
        out.line(
            f"| {name} | {t.retrieved}/{t.runs} | {t.answered}/{t.runs} | {t.echoing}/{t.runs} | "
            f"{t.labels}/{t.runs} | {t.quotes}/{t.runs} |"
        )
    out.line(f"({time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.2f})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({name: vars(t) for name, t in tallies.items()}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
