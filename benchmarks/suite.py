"""The measurements. Each function returns plain data that ``report.py`` turns into tables and plots."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
from strands_semantic_memory.embeddings import Vectors
from strands_semantic_memory.rendering import render_message

from .dataset import Dataset, filler_messages
from .naive import NaiveMemory

MODES = ("dense", "lexical", "hybrid")


@dataclass(frozen=True)
class Settings:
    """Sizes of one run. ``FULL`` is what ``docs/benchmarks.md`` reports; ``QUICK`` keeps the smoke test fast."""

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    pool: int = 10_000
    latency_queries: int = 200
    per_kind: int = 25
    naive_sizes: tuple[int, ...] = (1_000, 10_000)
    naive_ops: int = 20
    restore_size: int = 10_000
    loop_turns: int = 48
    pg_sizes: tuple[int, ...] = (10_000, 100_000)


FULL = Settings()
QUICK = Settings(
    sizes=(200, 600),
    pool=300,
    latency_queries=15,
    per_kind=3,
    naive_sizes=(200,),
    naive_ops=3,
    restore_size=300,
    loop_turns=16,
    pg_sizes=(200,),
)


class PrecomputedEmbedder:
    """Serves real vectors computed earlier for known texts; embeds anything else with the real model.

    Lets the scale benchmarks build 100k-message archives without embedding 100k texts in every run: the vectors
    are the real model's, computed once for the pool.
    """

    def __init__(self, inner: Any, texts: Sequence[str], vectors: Vectors) -> None:
        self.inner = inner
        self.known = dict(zip(texts, vectors, strict=True))
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.document_calls = 0
        self.query_calls = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.document_calls += 1
        missing = [t for t in texts if t not in self.known]
        if missing:
            self.known.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return np.stack([self.known[t] for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.query_calls += 1
        return self.inner.embed_queries(texts)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------------------------- pool


def embed_pool(embedder: Any, size: int) -> dict[str, Any]:
    """Embed ``size`` distinct filler messages once; the timing is the embedding cost per message."""
    messages = filler_messages(size, seed=101)
    texts = [render_message(m) for m in messages]
    started = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    seconds = time.perf_counter() - started
    distinct = len(set(texts))
    return {
        "messages": messages,
        "texts": texts,
        "vectors": vectors,
        "seconds": seconds,
        "ms_per_message": seconds * 1000 / size,
        "distinct": distinct,
    }


def cyclic_messages(pool: dict[str, Any], count: int) -> list[dict[str, Any]]:
    messages = pool["messages"]
    return [messages[i % len(messages)] for i in range(count)]


def build_memory(embedder: Any, messages: list[dict[str, Any]], **kwargs: Any) -> SemanticMemory:
    memory = SemanticMemory(embedder=embedder, **kwargs)
    for start in range(0, len(messages), 2000):
        memory.archive(messages[start : start + 2000])
    return memory


# --------------------------------------------------------------------------------------------- quality


def retrieval_quality(dataset: Dataset, embedder: Any) -> dict[str, Any]:
    """Recall@5/@10 of evidence turns per mode and question kind; window recall at equal turn budgets."""
    results: dict[str, Any] = {
        "modes": {},
        "windows": {},
        "questions": len(dataset.questions),
        "messages": len(dataset.messages),
    }
    kinds = sorted({q.kind for q in dataset.questions})
    texts = [render_message(m) for m in dataset.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts))  # embed once, for all modes
    for mode in MODES:
        memory = build_memory(shared, dataset.messages, retrieval=mode)
        per_kind: dict[str, dict[str, list[float]]] = {k: {"r5": [], "r10": []} for k in ["all", *kinds]}
        for question in dataset.questions:
            hits = [h.index for h in memory.search(question.text, top_k=10)]
            evidence = set(question.evidence)
            r5 = len(evidence & set(hits[:5])) / len(evidence)
            r10 = len(evidence & set(hits[:10])) / len(evidence)
            for key in ("all", question.kind):
                per_kind[key]["r5"].append(r5)
                per_kind[key]["r10"].append(r10)
        results["modes"][mode] = {k: {m: float(np.mean(v)) for m, v in d.items()} for k, d in per_kind.items()}
        windows: dict[str, float] = {}
        for budget in (10, 20):
            for radius in (0, 1, 2):
                top_k = max(1, budget // (2 * radius + 1))
                scores = []
                for question in dataset.questions:
                    covered: set[int] = set()
                    for window in memory.retrieve(question.text, top_k=top_k, context_radius=radius):
                        covered.update(window.indices)
                    assert len(covered) <= budget
                    evidence = set(question.evidence)
                    scores.append(len(evidence & covered) / len(evidence))
                windows[f"budget {budget}, radius {radius} (top_k {top_k})"] = float(np.mean(scores))
        results["windows"][mode] = windows
    results["kinds"] = kinds
    return results


# --------------------------------------------------------------------------------------------- latency and cost


def unique_queries(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    from .dataset import DAYS, NAMES, TOPICS

    return [
        f"What did {NAMES[rng.integers(len(NAMES))]} say about {TOPICS[rng.integers(len(TOPICS))]} "
        f"on {DAYS[rng.integers(len(DAYS))]} (question {i})?"
        for i in range(count)
    ]


def hook_latency(memory: SemanticMemory, queries: Sequence[str]) -> dict[str, float]:
    """The hook's added time per user turn: query embedding + search + window assembly + formatting."""
    from strands.hooks import MessageAddedEvent

    hook = SemanticMemoryHook(memory=memory)
    memory.search("warm up the caches", top_k=3)
    totals, embed = [], []
    for query in queries:
        message = {"role": "user", "content": [{"text": query}]}
        started = time.perf_counter()
        hook._on_message_added(MessageAddedEvent(agent=None, message=message))  # type: ignore[arg-type]
        totals.append((time.perf_counter() - started) * 1000)
    for query in queries[:50]:
        started = time.perf_counter()
        memory.embedder.embed_queries([query + " (timing)"])
        embed.append((time.perf_counter() - started) * 1000)
    return {"p50": percentile(totals, 50), "p99": percentile(totals, 99), "embed_p50": percentile(embed, 50)}


def naive_latency(naive: NaiveMemory, queries: Sequence[str]) -> dict[str, float]:
    totals = []
    for query in queries:
        started = time.perf_counter()
        naive.search(query, 3)
        totals.append((time.perf_counter() - started) * 1000)
    return {"p50": percentile(totals, 50), "p99": percentile(totals, 99)}


def scale(settings: Settings, embedder: Any, pool: dict[str, Any], pg_dsn: str | None = None) -> dict[str, Any]:
    """Latency, archive cost, eviction and memory at each archive size, ours and naive side by side."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    queries = unique_queries(settings.latency_queries, seed=5)
    extra = filler_messages(1000, seed=202)  # new messages for the timed archive batches
    pre.embed_documents([render_message(m) for m in extra])  # real vectors, computed before timing
    rows: list[dict[str, Any]] = []
    for size in settings.sizes:
        row: dict[str, Any] = {"size": size}
        base = cyclic_messages(pool, size)
        gc.collect()
        before = rss_bytes()
        memory = build_memory(pre, base, retrieval="hybrid")
        after = rss_bytes()
        stats = memory.get_memory_usage_stats()
        text_bytes = sum(len(render_message(m).encode()) for m in base)
        row["estimated_bytes_per_message_beyond_text"] = (stats["total_memory"] - text_bytes) / size
        row["rss_bytes_per_message_beyond_text"] = (after - before - text_bytes) / size
        for mode in ("hybrid", "dense", "lexical"):
            memory.retrieval = mode  # distinct queries per mode and size: no query-cache hits
            row[f"latency_{mode}"] = hook_latency(memory, [f"{q} [{mode} {size}]" for q in queries])
        memory.retrieval = "hybrid"
        # Archive cost beyond embedding: archive new messages (vectors precomputed) in batches of 100.
        per_message = []
        for start in range(0, 1000, 100):
            batch = [
                dict(m, content=[{"text": render_message(m) + f" [{size}:{start}]"}])
                for m in extra[start : start + 100]
            ]
            pre.embed_documents([render_message(m) for m in batch])  # precompute: timing excludes embedding
            started = time.perf_counter()
            memory.archive(batch)
            per_message.append((time.perf_counter() - started) * 1000 / len(batch))
        row["index_ms_per_message"] = float(np.median(per_message))
        # Eviction at the limit: the same batches into a memory that is full.
        memory.max_num_archived_messages = len(memory)
        at_limit = []
        for start in range(0, 1000, 100):
            batch = [
                dict(m, content=[{"text": render_message(m) + f" [limit {size}:{start}]"}])
                for m in extra[start : start + 100]
            ]
            pre.embed_documents([render_message(m) for m in batch])
            started = time.perf_counter()
            memory.archive(batch)
            at_limit.append((time.perf_counter() - started) * 1000 / len(batch))
        row["at_limit_ms_per_message"] = float(np.median(at_limit))
        if (
            pg_dsn is not None
            and size in settings.pg_sizes
            and importlib.util.find_spec("strands_semantic_memory.stores.pgvector_store")
        ):
            row["latency_pgvector"] = pgvector_latency(pg_dsn, pre, base, [f"{q} [pg {size}]" for q in queries])
        del memory
        gc.collect()
        if size in settings.naive_sizes:
            naive = NaiveMemory(embedder, pool["vectors"].shape[1])
            texts = [render_message(m) for m in base]
            naive.bulk_load(texts, np.stack([pre.known[t] for t in texts]))
            row["latency_naive"] = naive_latency(naive, [f"{q} [naive {size}]" for q in queries])
            adds, evicts = [], []
            for i in range(settings.naive_ops):
                vector = pre.known[render_message(extra[i])]
                started = time.perf_counter()
                naive.add(render_message(extra[i]), vector)
                adds.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                naive.evict_oldest()
                evicts.append((time.perf_counter() - started) * 1000)
            row["naive_add_ms_per_message"] = float(np.median(adds))
            row["naive_evict_ms_per_message"] = float(np.median(evicts))
            del naive
        rows.append(row)
    return {
        "rows": rows,
        "embedding_ms_per_message": pool["ms_per_message"],
        "pool": len(pool["texts"]),
        "pool_distinct": pool["distinct"],
    }


def pgvector_latency(
    dsn: str, embedder: Any, messages: list[dict[str, Any]], queries: Sequence[str]
) -> dict[str, float]:
    """Hook latency with the PostgreSQL + pgvector store (filled with the same messages and vectors)."""
    from strands_semantic_memory.stores.pgvector_store import PgVectorStore

    store = PgVectorStore(dsn=dsn, namespace=f"bench-{len(messages)}-{time.time_ns()}")
    memory = SemanticMemory(embedder=embedder, store=store, retrieval="hybrid")
    for start in range(0, len(messages), 2000):
        memory.archive(messages[start : start + 2000])
    result = hook_latency(memory, queries)
    store.drop_namespace()
    return result


def restore(settings: Settings, embedder: Any, pool: dict[str, Any]) -> dict[str, Any]:
    """Save and restore an archive of ``restore_size`` messages: ours (no embedding) vs naive (re-embedding)."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    messages = cyclic_messages(pool, settings.restore_size)
    memory = build_memory(pre, messages)
    payload = json.dumps(memory.to_state())
    calls_before = (pre.document_calls, pre.query_calls)
    started = time.perf_counter()
    restored = SemanticMemory.from_state(json.loads(payload), embedder=pre)
    ours = time.perf_counter() - started
    embedding_calls = (pre.document_calls - calls_before[0]) + (pre.query_calls - calls_before[1])
    assert len(restored) == len(messages)
    naive = NaiveMemory(embedder, pool["vectors"].shape[1])
    naive.bulk_load([render_message(m) for m in messages], np.stack([pre.known[render_message(m)] for m in messages]))
    naive_payload = naive.dump()
    started = time.perf_counter()
    NaiveMemory.restore(naive_payload, embedder, pool["vectors"].shape[1])
    naive_seconds = time.perf_counter() - started
    return {
        "size": len(messages),
        "seconds": ours,
        "embedding_calls": embedding_calls,
        "state_bytes": len(payload),
        "naive_seconds": naive_seconds,
    }


# --------------------------------------------------------------------------------------------- the Strands loop


def strands_loop(settings: Settings, embedder: Any) -> dict[str, Any]:
    """Tokens sent per turn, and whether planted facts reach the model, for three conversation managers."""
    from strands import Agent
    from strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager

    from strands_semantic_memory import SemanticSummarizingConversationManager
    from tests.scripted_model import ScriptedModel

    facts = {
        2: ("My locker code is LK-4417-QV.", "What is my locker code?", "LK-4417-QV"),
        6: (
            "The wifi password for the cabin is fjord-otter-92.",
            "What was the cabin wifi password?",
            "fjord-otter-92",
        ),
        10: ("Remember: the API key rotation is scheduled for March 14.", "When is the API key rotation?", "March 14"),
    }
    recall_turns = {settings.loop_turns - 6: 2, settings.loop_turns - 4: 6, settings.loop_turns - 2: 10}
    rng_messages = filler_messages(settings.loop_turns * 2, seed=303)
    turns: list[str] = []
    for turn in range(settings.loop_turns):
        if turn in facts:
            turns.append(facts[turn][0])
        elif turn in recall_turns:
            turns.append(facts[recall_turns[turn]][1])
        else:
            turns.append(render_message(rng_messages[turn * 2]))

    def managers() -> dict[str, tuple[Any, list[Any]]]:
        ours = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=8)
        return {
            "SemanticSummarizing + hook": (ours, [SemanticMemoryHook(max_context_length=800)]),
            "Summarizing (Strands)": (SummarizingConversationManager(preserve_recent_messages=8), []),
            "SlidingWindow (Strands)": (SlidingWindowConversationManager(window_size=16), []),
        }

    results: dict[str, Any] = {"turns": settings.loop_turns, "managers": {}}
    for name, (manager, hooks) in managers().items():
        model = ScriptedModel(max_input_chars=3000)
        agent = Agent(model=model, conversation_manager=manager, hooks=hooks, callback_handler=None)
        per_turn: list[int] = []
        reached: dict[str, bool] = {}
        for turn, text in enumerate(turns):
            agent(text)
            request = model.chat_requests[-1]
            chars = sum(len(render_message(m)) for m in request["messages"]) + len(request["system_prompt"] or "")
            per_turn.append(chars // 4)
            if turn in recall_turns:
                answer = facts[recall_turns[turn]][2]
                reached[answer] = any(answer in render_message(m) for m in request["messages"])
        results["managers"][name] = {
            "tokens_per_turn": per_turn,
            "mean": statistics.mean(per_turn),
            "max": max(per_turn),
            "facts_reached": reached,
            "overflows": model.overflows,
        }
    return results
