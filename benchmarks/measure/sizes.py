"""How large each measurement runs: the full sizes of the committed report, and the tiny sizes of ``--quick``.

:data:`FULL_SIZES` and :data:`QUICK_SIZES` bundle every measurement's sizes (a :class:`Sizes`); ``benchmarks.run`` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """Sizes of the retrieval, latency, archive-cost, restore, LoCoMo and compaction measurements.

    ``FULL`` is what ``docs/benchmarks.md`` reports; ``QUICK`` keeps the smoke test fast.
    """

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    pool: int = 5_000
    latency_queries: int = 60
    """Distinct queries per size for the hybrid hook latency (split into ``repeats`` rounds)."""
    side_queries: int = 20
    """Distinct queries per size for dense, lexical and query-embedding timings."""
    per_kind: int = 15
    naive_sizes: tuple[int, ...] = (1_000, 10_000)
    naive_ops: int = 20
    restore_size: int = 10_000
    naive_restore_size: int = 1_000
    """The naive restore (re-embedding everything) is timed on this many messages and scaled linearly."""
    loop_turns: int = 60
    pg_sizes: tuple[int, ...] = (10_000, 100_000)
    repeats: int = 3
    """Rounds of every measurement that has a target (the report shows their min / median / max)."""
    archive_probe: int = 100
    """Messages archived with embedding included, ours against the naive pattern, per round."""


FULL = Settings()
QUICK = Settings(
    sizes=(200, 600),
    pool=300,
    latency_queries=6,
    side_queries=3,
    per_kind=3,
    naive_sizes=(200,),
    naive_ops=3,
    restore_size=300,
    naive_restore_size=100,
    loop_turns=24,
    pg_sizes=(200,),
    repeats=2,
    archive_probe=10,
)


@dataclass(frozen=True)
class ScaleSettings:
    """Sizes of the durable-archive and 1k..1M measurements (``FULL_SCALE``: the report; ``QUICK_SCALE``: smoke tests)."""

    turn_sizes: tuple[int, ...] = (0, 1_000, 10_000, 100_000)
    turns: int = 5
    turn_rounds: int = 3
    """Rounds of ``turns`` turns with the durable archive (cheap); the JSON state runs one round (it is not)."""
    open_sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    open_repeats: int = 3
    """Reopens of each durable archive (their min / median / max is the spread)."""
    restore_repeats: int = 2
    """JSON-state restores of each archive (no target: the median is enough)."""
    index_sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 200_000, 500_000, 1_000_000)
    index_queries: int = 100
    approximate_above: int | None = None
    """Vectors above which the vector index turns approximate (None: ``FaissIndex``'s own default)."""
    engine_sizes: tuple[int, ...] = (1_000_000,)
    engine_queries: int = 20
    engine_rounds: int = 3
    """Hybrid retrieval is timed in this many rounds of ``engine_queries`` on the same built archive."""


FULL_SCALE = ScaleSettings()
"""What a full run measures."""
QUICK_SCALE = ScaleSettings(
    turn_sizes=(0, 300),
    turns=3,
    turn_rounds=2,
    open_sizes=(300,),
    open_repeats=2,
    restore_repeats=1,
    index_sizes=(1_000, 3_000),
    index_queries=20,
    approximate_above=2_000,
    engine_sizes=(3_000,),
    engine_queries=10,
    engine_rounds=2,
)


@dataclass(frozen=True)
class ColdStartSettings:
    """Repeats of the cold-start section: fresh processes per measurement, and turns per manager."""

    empty_runs: int = 3
    warm_runs: int = 5
    first_turn_runs: int = 3
    turns: int = 60


FULL_COLD_START = ColdStartSettings()
QUICK_COLD_START = ColdStartSettings(empty_runs=1, warm_runs=2, first_turn_runs=1, turns=20)

LOOP_WINDOWS = (16_000, 32_000)
"""Windows (characters) of LoCoMo in the loop."""


@dataclass(frozen=True)
class Sizes:
    """Every measurement's sizes for one kind of run.

    Attributes:
        quick: Whether these are the ``--quick`` sizes (numbers not worth committing).
        run: The retrieval, latency, archive-cost, restore, LoCoMo and compaction sizes.
        scale: The durable-archive and 1k..1M sizes.
        cold_start: The cold-start repeats.
        compare_size: Pool texts the comparison backend embeds (its cost and its agreement with the default).
        thread_queries: Queries of the PyTorch thread check at the start of a run.
        locomo_limit: LoCoMo recall: only the first N conversations (None: all).
        loop_limit: LoCoMo in the loop: only the first N conversations (None: all).
        loop_questions: LoCoMo in the loop: only the first N questions of each conversation (None: all).
        deadline: Seconds after which sections not yet started are skipped (None: no deadline).
    """

    quick: bool
    run: Settings
    scale: ScaleSettings
    cold_start: ColdStartSettings
    compare_size: int
    thread_queries: int
    locomo_limit: int | None
    loop_limit: int | None
    loop_questions: int | None
    deadline: float | None


FULL_SIZES = Sizes(
    quick=False,
    run=FULL,
    scale=FULL_SCALE,
    cold_start=FULL_COLD_START,
    compare_size=200,
    thread_queries=6,
    locomo_limit=None,
    loop_limit=None,
    loop_questions=None,
    deadline=780.0,
)
QUICK_SIZES = Sizes(
    quick=True,
    run=QUICK,
    scale=QUICK_SCALE,
    cold_start=QUICK_COLD_START,
    compare_size=50,
    thread_queries=3,
    locomo_limit=1,
    loop_limit=1,
    loop_questions=10,
    deadline=None,
)
"""A quick run plays LoCoMo's first conversation (recall) and asks its first 10 questions (in the loop)."""
