"""The table of sections: what the report shows, in order, and what measures, builds and draws each part.

Each :class:`Section` names its key in the run's data (``benchmarks.results.Results``), the measurements that fill
it (``benchmarks.measure``), the builder that writes it (``benchmarks.report.sections``) and the figures it draws.
A run measures in this order (the slow LoCoMo in the loop and the cold start last, where a deadline skips them
first); ``--only`` names measurements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.measure.base import Measurement
from benchmarks.measure.cold_start import ColdStartAndReduction
from benchmarks.measure.compaction import CompactionLoop
from benchmarks.measure.durable import DurableOpen, SessionTurns, crossover
from benchmarks.measure.engine import EngineAtScale
from benchmarks.measure.locomo import LocomoRecall
from benchmarks.measure.locomo_loop import LocomoInTheLoop
from benchmarks.measure.quality import RetrievalQuality
from benchmarks.measure.restore import Restore
from benchmarks.measure.scale import Scale
from benchmarks.measure.vector_index import CAVEAT, VectorIndex
from benchmarks.report import figures
from benchmarks.report.figures import Part
from benchmarks.report.sections import (
    cold_start,
    compaction,
    conditions,
    large,
    locomo,
    locomo_loop,
    quality,
    restore,
    scale,
    target_table,
)
from benchmarks.results import LargeResult, Results


@dataclass(frozen=True)
class Section:
    """One section of the report.

    Attributes:
        name: Its key in the run's data ("" for the parts every report opens with).
        measurements: What fills it, in the order they run.
        build: Writes its Markdown and gives its figures as data.
        figures: The figure files it draws.
        assemble: Turns its measurements' results (by key) into its data; None: the one measurement's result.
    """

    name: str
    measurements: tuple[Measurement, ...]
    build: Callable[[Results], Part | None]
    figures: tuple[str, ...] = ()
    assemble: Callable[[Mapping[str, Any]], Any] | None = field(default=None)

    def data(self, measured: Mapping[str, Any]) -> Any:
        """This section's data from its measurements' results by key (those that ran), or None when none did."""
        if not measured:
            return None
        if self.assemble is not None:
            return self.assemble(measured)
        (only,) = measured.values()
        return only


def _large(measured: Mapping[str, Any]) -> LargeResult:
    """The durable-archive and 1k..1M rows, with where the file pays and the synthetic vectors' caveat."""
    data: LargeResult = {**measured}  # type: ignore[typeddict-item]
    turns, opens = data.get("session_turns"), data.get("durable_open")
    if turns is not None and opens is not None:
        data["crossover"] = crossover(turns, opens)
    data["caveats"] = [CAVEAT]
    return data


SECTIONS: tuple[Section, ...] = (
    Section("", (), conditions.build),
    Section("", (), target_table.build),
    Section("quality", (RetrievalQuality(),), quality.build, (figures.RECALL,)),
    Section("scale", (Scale(),), scale.build, (figures.SCALE,)),
    Section("restore", (Restore(),), restore.build),
    Section("locomo", (LocomoRecall(),), locomo.build, (figures.LOCOMO,)),
    Section("loop", (CompactionLoop(),), compaction.build, (figures.TOKENS,)),
    Section(
        "large",
        (SessionTurns(), DurableOpen(), VectorIndex(), EngineAtScale()),
        large.build,
        (figures.DURABLE, figures.INDEX),
        assemble=_large,
    ),
    Section("locomo_loop", (LocomoInTheLoop(),), locomo_loop.build, (figures.LOCOMO_LOOP,)),
    Section("cold_start", (ColdStartAndReduction(),), cold_start.build),
)
"""Every section of the report, in its order, which is also the order a run measures in."""


def measurements(sections: Sequence[Section] = SECTIONS) -> list[Measurement]:
    """Every measurement of ``sections``, in the order a run takes them."""
    return [measurement for section in sections for measurement in section.measurements]
