"""The shapes of the benchmark results: what each measurement returns and what the report reads.

Every result is plain JSON data (``benchmarks.run`` writes the whole run as ``benchmarks.json`` beside the report,
and ``python -m benchmarks.report`` renders a report from such a file), so the shapes are ``TypedDict``s: typed for
the measurements and the report, and nothing but dicts, lists and numbers on disk.

A new benchmark adds its result type here and a key in :class:`Results`, a measurement (``benchmarks.measure``),
a section builder (``benchmarks.report.sections``) and its line in the table of sections (``benchmarks.sections``);
targets go in ``benchmarks.report.targets``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from typing_extensions import NotRequired

from strands_semantic_memory.embeddings import Vectors

# --------------------------------------------------------------------------------------------- shared shapes


class Spread(TypedDict):
    """Run-to-run spread of a repeated measurement."""

    min: float
    median: float
    max: float
    runs: int


class Backend(TypedDict):
    """What runs an embedder: ``name`` (``onnx``, ``torch`` or a class name) and labels for a cell and a sentence."""

    name: str
    short: str
    long: str


class Recall(TypedDict):
    """Recall at 5, 10, 25 and 50 hits (LoCoMo: percent, rounded to 0.1)."""

    r5: float
    r10: float
    r25: float
    r50: float


KS = (5, 10, 25, 50)
"""The k of recall@k, in the order of :func:`at_ks`."""


def at_ks(recall: Recall) -> tuple[float, float, float, float]:
    """A recall's figures in the order of :data:`KS`."""
    return recall["r5"], recall["r10"], recall["r25"], recall["r50"]


# --------------------------------------------------------------------------------------------- the embedded pool


class PoolCompare(TypedDict):
    """The comparison backend's document vectors and cost, measured on the first pool texts."""

    backend: Backend
    measured_on: int
    ms_per_message: float
    default_ms_per_message_same_texts: float
    max_cosine_difference: float


class Pool(TypedDict):
    """Filler messages embedded once with the real model, shared by the measurements (kept in process)."""

    messages: list[Any]
    texts: list[str]
    vectors: Vectors
    seconds: float
    ms_per_message: float
    distinct: int
    backend: Backend
    compare: NotRequired[PoolCompare]


# --------------------------------------------------------------------------------------------- retrieval quality


class QualityResult(TypedDict):
    """The synthetic retrieval set: recall by mode and question kind, window recall at equal turn budgets."""

    modes: dict[str, dict[str, dict[str, float]]]
    """mode -> kind (``all`` first) -> ``{"r5", "r10"}``."""
    windows: dict[str, dict[str, float]]
    """mode -> budget label -> recall of evidence turns inside the windows."""
    questions: int
    messages: int
    kinds: list[str]


# --------------------------------------------------------------------------------------------- hook latency and cost


class Latency(TypedDict):
    """Per-query time (ms) over distinct queries; ``rounds`` is the spread of the per-round p50s."""

    p50: float
    p99: float
    rounds: Spread


class HookLatency(Latency):
    """``SemanticMemoryHook.preview`` per user turn, and the query embedding alone (``embed_p50``)."""

    embed_p50: float


class PostgresLatency(HookLatency):
    """The hook over PostgreSQL, with the bulk load (vectors precomputed) and the index build that preceded it."""

    fill_seconds: float
    index_seconds: float
    indexed: bool
    filled: int


class ScaleRow(TypedDict):
    """One archive size of the scale section."""

    size: int
    estimated_bytes_per_message_beyond_text: float
    rss_bytes_per_message_beyond_text: float
    latency_hybrid: HookLatency
    latency_dense: HookLatency
    latency_lexical: HookLatency
    latency_lexical_without_context: HookLatency
    latency_compare: NotRequired[HookLatency]
    index_ms_per_message: float
    index_spread: Spread
    at_limit_ms_per_message: float
    latency_pgvector: NotRequired[PostgresLatency]
    pgvector_error: NotRequired[str]
    latency_naive: NotRequired[Latency]
    latency_naive_default_threads: NotRequired[Latency]
    naive_add_ms_per_message: NotRequired[float]
    naive_evict_ms_per_message: NotRequired[float]


class WithEmbedding(TypedDict):
    """Archiving with embedding included (ms per message): ours, the naive pattern, and the prototype as shipped."""

    size: int
    messages: int
    ours: Spread
    naive: Spread
    embedder: Backend
    prototype: Spread | None
    prototype_embedder: Backend | None
    prototype_threads: int | None


class ScaleResult(TypedDict):
    """Hook latency, archive cost, eviction and memory at each archive size."""

    rows: list[ScaleRow]
    embedding_ms_per_message: float
    pool: int
    pool_distinct: int
    with_embedding: WithEmbedding
    faiss_default_threads: int
    backend: Backend
    compare_backend: Backend | None


class RestoreResult(TypedDict):
    """Restoring a saved archive from JSON state, against the naive restore that embeds everything again."""

    size: int
    seconds: float
    spread: Spread
    embedding_calls: int
    state_bytes: int
    naive_seconds: float
    naive_measured_on: int


# --------------------------------------------------------------------------------------------- LoCoMo


class CategoryRecall(Recall):
    """Recall of one LoCoMo question category."""

    questions: int


class LocomoMode(TypedDict):
    """LoCoMo recall of one retrieval mode, overall and by question category."""

    all: Recall
    categories: dict[str, CategoryRecall]


class LocomoLatency(TypedDict):
    """``search(q, top_k=50)`` time of the first mode measured, in one pass over every question."""

    mode: str
    p50: float
    p95: float
    searches: int


class LocomoCompare(TypedDict):
    """Recall with the comparison backend embedding the questions over the same document vectors."""

    backend: Backend
    modes: dict[str, LocomoMode]


class LocomoResult(TypedDict):
    """LoCoMo recall by retrieval mode and question category; ``skipped`` alone when the data file is absent."""

    skipped: NotRequired[str]
    conversations: NotRequired[int]
    messages: NotRequired[int]
    questions: NotRequired[int]
    modes: NotRequired[dict[str, LocomoMode]]
    dragon: NotRequired[Recall]
    latency_ms: NotRequired[LocomoLatency]
    backend: NotRequired[Backend]
    lexical_without_context: NotRequired[Recall]
    compare: NotRequired[LocomoCompare]
    latency_spread: NotRequired[Spread]


# --------------------------------------------------------------------------------------------- the Strands loop


class CompactionRow(TypedDict):
    """One conversation manager over the scripted conversation (``benchmarks.measure.compaction``)."""

    manager: str
    mean_tokens: float
    max_tokens: int
    last_tokens: int
    facts_reached: int
    facts: int
    stale_value_sent: bool
    stale_without_update: NotRequired[bool]
    overflows: int
    summaries: int
    archived: int
    scripted: str
    seconds: float
    summarizer: str | None
    failed_turns: int
    first_failure: str | None
    found_not_sent: int | None
    retried_recalls: int | None


class LoopResult(TypedDict):
    """The compaction rows, and why the rows with a real summarizer are missing when they are."""

    turns: int
    rows: list[CompactionRow]
    local_model_missing: str | None


# --------------------------------------------------------------------------------------------- LoCoMo in the loop


class LocomoLoopCell(TypedDict):
    """One row on one conversation at one window (``benchmarks.measure.locomo_loop.play``): delivered and categories in percent."""

    delivered: float
    categories: dict[str, float]
    overflows: int
    question_overflows: int
    input_chars: int
    ms_per_exchange: float
    failed_turns: int
    questions: int


class LocomoLoopOverall(TypedDict):
    """One row over every conversation at one window: each question weighs once; overflows are summed."""

    delivered: float
    lowest: float
    overflows: int
    question_overflows: int
    input_chars: int
    ms_per_exchange: float
    failed_turns: int
    categories: dict[str, float]


class LocomoLoopRow(TypedDict):
    """One row at one window: per conversation (by name) and overall."""

    conversations: dict[str, LocomoLoopCell]
    all: LocomoLoopOverall


class LocomoLoopResult(TypedDict):
    """LoCoMo in the loop (``benchmarks.measure.locomo_loop.run_loop``); ``skipped`` alone when the data file is absent.

    ``windows`` maps a window in characters (as a string) to its rows by name; ``rows`` are the rows the run played
    (``benchmarks.measure.locomo_loop.ROWS`` at the time), ``questions`` the per-conversation cap (None: every question).
    """

    skipped: NotRequired[str]
    windows: NotRequired[dict[str, dict[str, LocomoLoopRow]]]
    rows: NotRequired[list[str]]
    conversations: NotRequired[list[str]]
    exchanges: NotRequired[dict[str, int]]
    questions: NotRequired[int | None]
    seconds: NotRequired[float]


# --------------------------------------------------------------------------------------------- cold start


class ColdStartRow(TypedDict):
    """A new process's first ``retrieve`` with an empty or a warm graph cache (seconds)."""

    cache: str
    first_retrieve: Spread
    importing: Spread
    process: Spread
    exports: list[int]
    torch_imported: bool


class FirstTurnRow(TypedDict):
    """The first user turn of a new process that reopens a durable archive (seconds)."""

    warm_up: bool
    pause: float
    first_turn: Spread
    start_to_answer: Spread


class TurnLatencyRow(TypedDict):
    """Turns of one scripted conversation in a warm process (seconds per turn), reducing turns apart.

    ``reducing`` is None when no turn reduced.
    """

    manager: str
    reducing: Spread | None
    other: Spread
    reductions: int


class ColdStartResult(TypedDict):
    """Cold start and the reducing turn (``benchmarks.measure.cold_start.run``), with the load average when it started."""

    cold: list[ColdStartRow]
    first_turns: list[FirstTurnRow]
    turns: list[TurnLatencyRow]
    load_average: list[float]
    turns_per_manager: int


# --------------------------------------------------------------------------------------------- durable archive, 1M


class SessionTurnRow(TypedDict):
    """One agent turn with Strands' ``FileSessionManager``: the archive in JSON state against the durable file."""

    size: int
    json_turn_ms: float
    json_turn_round_ms: list[float]
    json_turn_cpu_ms: float
    json_agent_json_bytes: int
    sqlite_turn_ms: float
    sqlite_turn_round_ms: list[float]
    sqlite_turn_cpu_ms: float
    sqlite_agent_json_bytes: int
    json_overhead_ms: float | None
    sqlite_overhead_ms: float | None
    sqlite_overhead_rounds: NotRequired[Spread]


class DurableOpenRow(TypedDict):
    """Reopening a durable archive, against saving and restoring the same archive as JSON state."""

    size: int
    sqlite_fill_ms_per_message: float
    sqlite_open_seconds: float
    sqlite_open_spread: Spread
    sqlite_open_cpu_seconds: float
    sqlite_file_bytes: int
    json_state_bytes: int
    json_save_seconds: float
    json_restore_seconds: float
    json_restore_cpu_seconds: float


class VectorIndexRow(TypedDict):
    """The vector index alone at one size."""

    size: int
    data: str
    tier: str
    build_seconds: float
    search_p50_ms: float
    search_p99_ms: float
    search_cpu_p50_ms: float
    recall_at_10: float
    store_bytes_per_vector: float
    rss_bytes_per_vector: float


class EngineRow(TypedDict):
    """``SemanticMemory.retrieve`` at one size, in one mode, with queries embedded by one backend."""

    size: int
    mode: str
    queries: str
    default: bool
    build_seconds: float
    retrieve_p50_ms: float
    retrieve_p99_ms: float
    rounds: Spread
    query_embedding_p50_ms: float
    search_and_windows_cpu_p50_ms: float
    approximate: bool


class Crossover(TypedDict):
    """Archive sizes above which the durable archive pays (None: it never does at the sizes measured)."""

    turn_size: float | None
    open_size: float | None


class LargeResult(TypedDict, total=False):
    """The durable archive and the 1k..1M measurements; each part is present when its section ran."""

    session_turns: list[SessionTurnRow]
    durable_open: list[DurableOpenRow]
    vector_index: list[VectorIndexRow]
    engine: list[EngineRow]
    crossover: Crossover
    caveats: list[str]


# --------------------------------------------------------------------------------------------- the run


class QueryThreads(TypedDict):
    """Query-embedding p50 (ms) with PyTorch's default intra-op threads and with one."""

    default_threads: float
    default_p50_ms: float
    one_p50_ms: float


class RunMeta(TypedDict):
    """How the run went: its command, machine, load, time per section, failures and what was skipped."""

    command: str
    seconds: float
    python: str
    cpus: int | None
    seed: int
    load_before: tuple[float, float, float] | list[float]
    load_after: tuple[float, float, float] | list[float]
    steps: dict[str, float]
    errors: dict[str, str]
    skipped: list[str]
    deadline: float | None
    torch_threads: int
    query_threads: QueryThreads | None
    backend: Backend
    compare_backend: Backend | None
    pool_compare: PoolCompare | None
    locomo_path: str
    versions: str


class Results(TypedDict):
    """One run: a key per section that ran (and did not fail), and the run's ``meta``."""

    quality: NotRequired[QualityResult]
    scale: NotRequired[ScaleResult]
    restore: NotRequired[RestoreResult]
    locomo: NotRequired[LocomoResult]
    loop: NotRequired[LoopResult]
    locomo_loop: NotRequired[LocomoLoopResult]
    cold_start: NotRequired[ColdStartResult]
    large: NotRequired[LargeResult]
    meta: RunMeta
