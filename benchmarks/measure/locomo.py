"""LoCoMo retrieval: recall@k of annotated evidence turns, measured the way the LoCoMo paper measures its retrievers.

Data: ``locomo10.json`` of the public repository snap-research/LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024), licensed CC BY-NC 4.0 and therefore not shipped with this
project. Pass the path of that file (or of a subset with the same shape, such as the development half) to
``python -m benchmarks.run --locomo PATH`` or ``python -m benchmarks.measure.locomo PATH``.

The metric, exactly:

- every turn of a conversation is archived, in order, one message per turn, text ``"{speaker}: {text}"`` plus
  ``" [shares a photo: {blip_caption}]"`` when the turn has a caption; role ``user`` for ``speaker_a`` and
  ``assistant`` for ``speaker_b``; nothing else reaches the library (no dates, no ids, no sessions);
- evidence ids are read leniently (``"D:11:26"`` is ``D11:26``; ``"D8:6; D9:17"`` is two ids); ids that name no turn
  are dropped, and a question left without evidence is skipped;
- each question is asked once with ``search(question, top_k=50)``; recall@k is the share of the question's evidence
  turns among the first k hits, averaged over questions, for k = 5, 10, 25, 50.

Everything else is the library's default configuration; only ``retrieval`` changes between the modes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchmarks.data.locomo import CATEGORIES, load_conversations, turn_text_of
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.tools import NO_CONTEXT, PrecomputedEmbedder, backend_of, percentile, spread
from benchmarks.results import KS, CategoryRecall, LocomoMode, LocomoResult, Recall, at_ks
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.retrieval import RETRIEVAL_MODES

MODES = RETRIEVAL_MODES
DRAGON: Recall = {"r5": 56.7, "r10": 66.2, "r25": 76.7, "r50": 82.7}
"""The LoCoMo paper's best retriever (DRAGON), recall % on all ten conversations, same metric."""


def recall_at(hits: Sequence[int], evidence: Sequence[int], k: int) -> float:
    """Share of the evidence among the first ``k`` hits."""
    return len(set(evidence) & set(hits[:k])) / len(evidence)


def _summary(rows: list[list[float]]) -> Recall:
    means = np.mean(np.asarray(rows), axis=0) * 100 if rows else np.zeros(len(KS))
    r5, r10, r25, r50 = (round(float(m), 1) for m in means)
    return {"r5": r5, "r10": r10, "r25": r25, "r50": r50}


def _by_category(rows: list[list[float]]) -> CategoryRecall:
    return {**_summary(rows), "questions": len(rows)}


def run_locomo(
    path: Path,
    *,
    embedder: Any = None,
    modes: Sequence[str] = MODES,
    limit: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> LocomoResult:
    """Recall@5/10/25/50 on LoCoMo by retrieval mode and question category, and search latency.

    Args:
        path: A LoCoMo JSON file (``locomo10.json`` or a subset of it). When it is absent, one line says so and
            the result is ``{"skipped": reason}``.
        embedder: The embedder to use (default: the bundled all-MiniLM-L6-v2). Each message is embedded once and
            the vectors are shared by the modes.
        modes: Retrieval modes to measure; the first one's searches are timed.
        limit: Only the first ``limit`` conversations (smoke tests).
        options: Extra ``SemanticMemory`` options (default: none, i.e. the default configuration).

    Returns:
        ``{"conversations", "messages", "questions", "modes": {mode: {"all": {"r5", ...}, "categories":
        {name: {...}}}}, "latency_ms": {"p50", "p95", "searches"}, "dragon": {...}}`` with recalls in percent.
    """
    path = Path(path)
    if not path.is_file():
        reason = f"LoCoMo skipped: {path} not found (locomo10.json from snap-research/LoCoMo, CC BY-NC 4.0)"
        print(reason, flush=True)
        return {"skipped": reason}
    conversations = load_conversations(path)[:limit]
    if embedder is None:
        from strands_semantic_memory.embeddings import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    texts = [turn_text_of(m) for c in conversations for m in c.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts)) if texts else embedder
    modes_measured: dict[str, LocomoMode] = {}
    results: LocomoResult = {
        "conversations": len(conversations),
        "messages": len(texts),
        "questions": sum(len(c.questions) for c in conversations),
        "modes": modes_measured,
        "dragon": DRAGON,
    }
    latencies: list[float] = []
    for number, mode in enumerate(modes):
        rows: list[list[float]] = []
        by_category: dict[int, list[list[float]]] = {}
        for conversation in conversations:
            memory = SemanticMemory(embedder=shared, **{**(options or {}), "retrieval": mode})
            memory.add(conversation.messages)
            for question in conversation.questions:
                started = time.perf_counter()
                hits = [h.index for h in memory.search(question.text, top_k=50)]
                if number == 0:
                    latencies.append((time.perf_counter() - started) * 1000)
                row = [recall_at(hits, question.evidence, k) for k in KS]
                rows.append(row)
                by_category.setdefault(question.category, []).append(row)
        modes_measured[mode] = {
            "all": _summary(rows),
            "categories": {f"{c} {CATEGORIES.get(c, '?')}": _by_category(v) for c, v in sorted(by_category.items())},
        }
    if latencies:
        results["latency_ms"] = {
            "mode": modes[0],
            "p50": round(statistics.median(latencies), 2),
            "p95": round(float(np.percentile(latencies, 95)), 2),
            "searches": len(latencies),
        }
    return results


def format_results(results: LocomoResult) -> str:
    """A markdown report of :func:`run_locomo`'s results."""
    if "skipped" in results:
        return str(results["skipped"])
    lines = [
        f"LoCoMo: {results['conversations']} conversations, {results['messages']} messages, "
        f"{results['questions']} questions; search(question, top_k=50), default configuration.",
        "",
        "| retriever | R@5 | R@10 | R@25 | R@50 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, summary in results["modes"].items():
        lines.append(f"| {mode} | " + " | ".join(f"{value:.1f}" for value in at_ks(summary["all"])) + " |")
    lines.append("| DRAGON (LoCoMo paper, all ten) | " + " | ".join(f"{value:.1f}" for value in at_ks(DRAGON)) + " |")
    for mode, summary in results["modes"].items():
        lines += ["", f"By category ({mode}):", "", "| category | questions | R@5 | R@10 | R@25 | R@50 |"]
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for name, row in summary["categories"].items():
            lines.append(
                f"| {name} | {row['questions']} | " + " | ".join(f"{value:.1f}" for value in at_ks(row)) + " |"
            )
    if "latency_ms" in results:
        latency = results["latency_ms"]
        lines += [
            "",
            f"search(q, top_k=50), {latency['mode']}: p50 {latency['p50']:.1f} ms, p95 {latency['p95']:.1f} ms "
            f"over {latency['searches']} searches (query embedding included; {os.cpu_count()} CPUs).",
        ]
    return "\n".join(lines)


def locomo(
    path: Any,
    embedder: Any,
    repeats: int,
    limit: int | None = None,
    compare: Any = None,
    compare_modes: Sequence[str] = ("hybrid", "dense"),
) -> LocomoResult:
    """LoCoMo recall by mode and category (:func:`run_locomo`), and ``search(q, top_k=50)`` latency of the
    default configuration in ``repeats`` rounds (recall is deterministic; only the timing varies).

    Each round asks a different share of the questions (question ``n`` in round ``n % repeats``) of fresh
    memories, so no round hits a query cache. With ``compare`` (another backend of the same model), recall is
    measured again in ``compare_modes`` with ``compare`` embedding the questions over the same document vectors
    (``results["compare"]``): the effect of the query path alone (e.g. int8 ONNX queries against PyTorch). Only
    recall is compared, so ``compare`` embeds every question once, in batches (equal to one at a time up to float
    rounding): on a loaded machine PyTorch one query at a time would take most of the run.
    """
    if not Path(path).is_file():
        return run_locomo(path, embedder=embedder, limit=limit)  # prints the one line that says why
    conversations = load_conversations(path)[:limit]
    texts = [turn_text_of(m) for c in conversations for m in c.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts))  # embedded once for every run
    results = run_locomo(path, embedder=shared, limit=limit)
    results["backend"] = backend_of(embedder)
    plain = run_locomo(path, embedder=shared, modes=("lexical",), limit=limit, options={"ranking": NO_CONTEXT})
    results["lexical_without_context"] = plain["modes"]["lexical"]["all"]
    if compare is not None:
        other = PrecomputedEmbedder(embedder, texts, np.stack([shared.known[t] for t in texts]), queries=compare)
        questions = sorted({q.text for c in conversations for q in c.questions})
        if questions:
            other.known_queries = dict(zip(questions, compare.embed_queries(questions), strict=True))
        compared = run_locomo(path, embedder=other, modes=tuple(compare_modes), limit=limit)
        assert other.queries is compare and all(q in other.known_queries for q in questions)
        results["compare"] = {"backend": backend_of(compare), "modes": compared["modes"]}
    p50s = []
    for round_ in range(repeats):
        latencies = []
        for conversation in conversations:
            memory = SemanticMemory(embedder=shared)
            memory.add(conversation.messages)
            for number, question in enumerate(conversation.questions):
                if number % repeats == round_:
                    started = time.perf_counter()
                    memory.search(question.text, top_k=50)
                    latencies.append((time.perf_counter() - started) * 1000)
        p50s.append(percentile(latencies, 50))
    results["latency_spread"] = spread(p50s)
    return results


class LocomoRecall(Measurement):
    """LoCoMo recall by mode and category, and search latency in rounds, on the run's LoCoMo file."""

    name: ClassVar[str] = "locomo"
    label: ClassVar[str] = "LoCoMo"

    def skip(self, run: Run) -> str | None:
        """Not measured at all with ``--locomo none``."""
        return "LoCoMo skipped: --locomo none" if run.locomo is None else None

    def measure(self, run: Run) -> LocomoResult:
        """Every mode; PyTorch queries beside the default when the run compares."""
        assert run.locomo is not None
        return locomo(run.locomo, run.embedder, run.sizes.run.repeats, run.sizes.locomo_limit, compare=run.compare)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.measure.locomo PATH [--modes hybrid,dense] [--limit N] [--json OUT]``."""
    parser = argparse.ArgumentParser(description="LoCoMo evidence recall of the default configuration")
    parser.add_argument("path", type=Path, help="locomo10.json (snap-research/LoCoMo) or a subset of it")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated retrieval modes")
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    results = run_locomo(args.path, modes=tuple(args.modes.split(",")), limit=args.limit)
    if "skipped" not in results:  # run_locomo printed the one line that says why
        print(format_results(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
