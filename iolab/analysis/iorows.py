"""The I/O pattern beside the instructions: which device counters become rows, and what changed.

A workload's device counters (iolab.collectors.diskstats: requests, KiB, mean request size,
merges; vmstat's major faults and refaults) are deterministic where the workload is: the same
kernel issues the same requests. Instructions mode counts the CPU's work and is blind to the
device's time, so a patch that multiplies the I/O (a smaller readahead window) can look free or
even faster there. So a counter that moved between the variants becomes a row of its workload
(``moved``), and a changed count of I/Os is said in the header (``changes``), with its ratio.

Moved: the variants' values separated as the exact rule separates them (a gap wider than 3 times
their ranges; any gap where each variant's values repeat), by more than the experiment's tolerance
of the smaller center. A counter that varies from round to round (a timed fio job's reads, a
buffered write's background writeback) needs that much more to move.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iolab.analysis.metrics import IO_COUNT, IO_ROWS
from iolab.cell.sample import Sample
from iolab.stats import exact

if TYPE_CHECKING:
    from iolab.analysis.results import Analysis


def _apart(a: list[float], b: list[float], tolerance: float) -> bool:
    """Separated as the exact rule separates values (iolab.stats.exact: a gap wider than 3 times their
    ranges, any gap where each side repeats), and by more than the tolerance of the smaller center: a
    counter that varies within a variant needs that much more to have moved (an A/A's writeback)."""
    if not exact.separated(np.array(a), np.array(b)):
        return False
    small, large = sorted((statistics.median(a), statistics.median(b)))
    return small <= 0 < large or (small > 0 and large / small - 1.0 > tolerance)


def moved(samples: Mapping[str, Sequence[Sample]], tolerance: float, shown: Sequence[str] = ()) -> list[str]:
    """The I/O rows (metrics.IO_ROWS, in that order) whose values moved between any two variants
    (``samples``: each variant's successful samples of one workload), less those ``shown`` already.
    disk.reads (disk.writes) is left out where no sample wrote (read): it is then disk.ios."""
    every = [s for group in samples.values() for s in group]
    quiet = {side for side, other in (("disk.reads", "disk.writes"), ("disk.writes", "disk.reads"))
             if every and all(s.metrics.get(other, 0) == 0 for s in every)}
    out = []
    for name in IO_ROWS:
        if name in shown or name in quiet:
            continue
        values = [[s.metrics[name] for s in group if name in s.metrics] for group in samples.values()]
        values = [v for v in values if v]
        if any(_apart(a, b, tolerance) for i, a in enumerate(values) for b in values[i + 1:]):
            out.append(name)
    return out


@dataclass(frozen=True)
class Change:
    """A workload's count of I/Os, changed between two variants (or steps)."""

    workload: str
    label: str  # the row's label ("disk I/Os")
    reference: str
    candidate: str
    before: float
    after: float

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else math.inf

    @property
    def size(self) -> float:
        """|log ratio|: how far apart, whichever way (inf from or to none)."""
        ratio = self.ratio
        return abs(math.log(ratio)) if 0 < ratio < math.inf else math.inf

    def text(self) -> str:
        ratio = f"×{self.ratio:.2g}" if math.isfinite(self.ratio) else "from none"
        return f"{ratio} ({self.workload}: {self.before:g} -> {self.after:g} {self.label}, {self.candidate})"


def changes(analysis: Analysis) -> list[Change]:
    """Each workload's largest change of its count of I/Os (disk.ios, else disk.reads or
    disk.writes, whichever is a row), where a comparison found a change (not "same", not
    undecided), largest first."""
    best: dict[str, tuple[tuple[bool, float], Change]] = {}
    for row in analysis.rows:
        if row.metric.name not in (IO_COUNT, "disk.reads", "disk.writes"):
            continue
        for key, comparison in row.comparisons.items():
            if comparison.verdict not in ("better", "worse"):
                continue
            reference = row.against.get(key, analysis.baseline)
            candidate = key if key in row.figures else analysis.variants[-1]  # a series' total: its last step
            before, after = row.figures[reference].center, row.figures[candidate].center
            if not (math.isfinite(before) and math.isfinite(after)) or before == after:
                continue
            change = Change(row.workload, row.metric.label, reference, candidate, before, after)
            rank = (row.metric.name == IO_COUNT, change.size)
            if row.workload not in best or rank > best[row.workload][0]:
                best[row.workload] = (rank, change)
    return sorted((change for _, change in best.values()), key=lambda c: -c.size)
