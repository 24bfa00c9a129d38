"""What tracing costs the hook: ``hook.preview`` timed in fresh interpreters with and without an OpenTelemetry SDK.

Each measurement runs in its own process (OpenTelemetry's global providers are set once per process):

- ``none``: no SDK; the API's no-op spans and instruments (what a user who never configured telemetry runs);
- ``sdk``: an SDK tracer provider and meter provider, with no exporter and no reader (spans are recorded, then
  dropped);
- ``exporter``: the SDK with an in-memory span exporter (``SimpleSpanProcessor``) and an in-memory metric reader;
- ``base`` (with ``--base PATH``): the library at PATH (a checkout from before the tracing), no SDK.

A memory of 2,000 archived messages (in process, the bundled model's vectors cached on disk) answers 20 questions;
each process warms up (query vectors cached, relevance floor computed), then times ``--previews`` previews, and
reports the median. The modes alternate within each round, so a busy machine slows them alike; compare the ratios.

Usage: ``PYTHONPATH=$PWD python scripts/telemetry_overhead.py [--rounds 5] [--previews 400] [--base PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(tempfile.gettempdir()) / "ssm-telemetry-overhead-vectors"
QUESTIONS = (
    [
        f"What did we say about {topic}?"
        for topic in ("the budget", "the trip", "the dentist", "the release", "the landlord", "the garden", "the exam")
    ]
    + [f"When is the meeting about {t}?" for t in ("hiring", "billing", "search", "payroll", "the roadmap", "the demo")]
    + [f"Who was responsible for {t}?" for t in ("the migration", "the outage", "the report", "the party", "the audit")]
    + ["Remind me what I prefer for breakfast", "What was the booking reference?"]
)


def child(mode: str, previews: int) -> None:
    """Time ``previews`` previews under ``mode`` and print the median, in microseconds, as JSON."""
    if mode in ("sdk", "exporter"):
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        provider = TracerProvider()
        readers = []
        if mode == "exporter":
            provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
            readers.append(InMemoryMetricReader())
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=readers))

    import random

    from benchmarks.data.conversations import TOPICS, text_message
    from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
    from strands_semantic_memory.embeddings import SentenceTransformerEmbedder
    from strands_semantic_memory.testing import DiskCachedEmbedder

    rng = random.Random(11)
    messages = [
        text_message(("user", "assistant")[i % 2], f"About {rng.choice(TOPICS)}: note {i}, {rng.choice(TOPICS)}.")
        for i in range(2000)
    ]
    with DiskCachedEmbedder(SentenceTransformerEmbedder(), CACHE) as embedder:
        memory = SemanticMemory(embedder=embedder, embedding="inline")
        memory.add(messages)
        hook = SemanticMemoryHook(memory=memory)
        for question in QUESTIONS:  # query vectors cached, the relevance floor computed
            hook.preview(question)
        timings = []
        for i in range(previews):
            started = time.perf_counter()
            hook.preview(QUESTIONS[i % len(QUESTIONS)])
            timings.append((time.perf_counter() - started) * 1e6)
    print(json.dumps({"mode": mode, "median_us": statistics.median(timings)}))


def main() -> None:
    """Run the modes in alternation, each in a child process, and print each median and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--previews", type=int, default=400)
    parser.add_argument("--base", type=Path, help="a checkout of the library from before the tracing")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments.child, arguments.previews)
        return
    modes = {"none": ROOT, "sdk": ROOT, "exporter": ROOT}
    if arguments.base:
        modes["base"] = arguments.base.resolve()
    results: dict[str, list[float]] = {mode: [] for mode in modes}
    script = Path(__file__).resolve()
    for round_ in range(arguments.rounds):
        for mode, tree in modes.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
            env["PYTHONPATH"] = f"{tree}{os.pathsep}{ROOT}"  # the library from tree; benchmarks' data from here
            done = subprocess.run(
                [
                    sys.executable,
                    str(script),
                    "--child",
                    "none" if mode == "base" else mode,
                    "--previews",
                    str(arguments.previews),
                ],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            median = json.loads(done.stdout.strip().splitlines()[-1])["median_us"]
            results[mode].append(median)
            print(f"round {round_ + 1}: {mode:<9} {median:8.0f} us", flush=True)
    reference = statistics.median(results["base"] if "base" in results else results["none"])
    print("\nmode       median of medians   vs " + ("base" if "base" in results else "none"))
    for mode, medians in results.items():
        value = statistics.median(medians)
        print(f"{mode:<10} {value:10.0f} us        {value / reference:6.3f}")


if __name__ == "__main__":
    main()
