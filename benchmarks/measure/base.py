"""What every measurement is: a :class:`Measurement` with a name, run against the :class:`Run` it shares.

A run loads the embedders once, embeds the pool once, starts PostgreSQL once, and hands all of it to each
measurement in turn (``benchmarks.run``); a measurement returns plain data of a shape in ``benchmarks.results``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.measure.sizes import Sizes
from benchmarks.results import Pool


@dataclass
class Run:
    """What the measurements of one run share.

    Attributes:
        sizes: How large everything runs.
        embedder: The library's default embedder (what ``SemanticMemory()`` builds), loaded.
        compare: PyTorch beside the default backend (same model), or None.
        torch_default_threads: PyTorch's own intra-op thread count, before the run pinned it (None: not measured).
        pg_dsn: A PostgreSQL with pgvector, or None.
        locomo: The LoCoMo file, or None when the run skips LoCoMo (``--locomo none``).
        loop_windows: The windows (characters) of LoCoMo in the loop.
        loop_limit: LoCoMo in the loop: only the first N conversations (None: all).
        loop_questions: LoCoMo in the loop: only the first N questions of each (None: all).
        pool: The embedded pool, when a measurement that uses it is run.
    """

    sizes: Sizes
    embedder: Any
    compare: Any = None
    torch_default_threads: int | None = None
    pg_dsn: str | None = None
    locomo: Path | None = None
    loop_windows: tuple[int, ...] = ()
    loop_limit: int | None = None
    loop_questions: int | None = None
    pool: Pool | None = field(default=None, repr=False)

    def require_pool(self) -> Pool:
        """The embedded pool (the run embeds it before any measurement that declares ``uses_pool``)."""
        if self.pool is None:
            raise RuntimeError("this measurement uses the pool, and the run did not embed it")
        return self.pool


class Measurement(ABC):
    """One measurement of the suite: what ``--only`` names, what the progress line says, what it returns.

    Attributes:
        name: The measurement's name (``--only``, and the key of its failure in the run's data).
        label: What the run prints when it starts, and how the report names its time.
        key: Where its result goes in its section's data (by default its name).
        uses_pool: Whether it needs the embedded pool.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    key: ClassVar[str] = ""
    uses_pool: ClassVar[bool] = False

    def result_key(self) -> str:
        """The key of this measurement's result in its section's data."""
        return self.key or self.name

    def skip(self, run: Run) -> str | None:
        """Why this run does not measure this at all (printed, and no time recorded), or None to measure it."""
        return None

    @abstractmethod
    def measure(self, run: Run) -> Any:
        """Measure, and return plain data of a shape in ``benchmarks.results``."""
