"""Failed cells, grouped as a reader expects (re-exported by iolab.analysis.table).

A failed cell's error names what was its own: its directory under the run's
scratch (`/tmp/iolab-run-<hex>/cell3-<hex>/mnt`), its loop image's directory,
its loop device (`/dev/loop0`, `/sys/block/loop1/...`). The same failure of
many cells would read as many notes; `general` puts those parts in general
form (`<cell dir>/mnt`, `loopN`), and the cells of a variant and workload
whose errors agree then make one Failure listing them all. The names come
from iolab.cell.targets, the code that makes the directories.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from iolab.cell import targets
from iolab.cell.sample import Sample
from iolab.spec import Experiment

__all__ = ["Failure", "general", "grouped"]

_HEX = f"[0-9a-f]{{{targets.RANDOM_HEX}}}"
_LEAD = r"[^\s'\"`(\[<>]*"  # the path before a directory's name, up to a space or a quote
_GENERAL = (
    (re.compile(rf"{_LEAD}/(?:{re.escape(targets.CELL_DIR)}\d+-|{re.escape(targets.DIR_CELL)}){_HEX}"), "<cell dir>"),
    (re.compile(rf"{_LEAD}/{re.escape(targets.IMAGE_DIR)}{_HEX}"), "<image dir>"),
    (re.compile(rf"{_LEAD}/{re.escape(targets.RUN_DIR)}{_HEX}"), "<run dir>"),
    (re.compile(r"(?<![\w-])loop\d+(?!\w)"), "loopN"),  # loop0, /dev/loop12, /sys/block/loop3/...
)


@dataclass(frozen=True)
class Failure:
    variant: str
    workload: str
    error: str  # in general form (general): what the cells have in common
    cells: list[int]  # seq numbers of the failed cells
    expected: str = ""  # the experiment's reason for it ([[variant]] fails), e.g. "needs the series"

    @property
    def what(self) -> str:
        """How the report names it: FAILED, or the reason it was expected to."""
        return f"{self.expected} (expected to fail)" if self.expected else "FAILED"


def general(error: str) -> str:
    """The error with each cell's own directories and loop device in general form."""
    for pattern, name in _GENERAL:
        error = pattern.sub(name, error)
    return error


def grouped(failed: dict[tuple[str, str], list[Sample]], experiment: Experiment) -> list[Failure]:
    """One Failure per variant, workload and error in general form, with its cells."""
    found = []
    expected = {v.name: v.fails for v in experiment.variant}
    for (variant, workload), group in sorted(failed.items()):
        by_error: dict[str, list[int]] = defaultdict(list)
        for sample in group:
            by_error[general(sample.error or "unknown error")].append(sample.seq)
        why = expected.get(variant, {}).get(workload, "")
        found += [Failure(variant, workload, error, sorted(seqs), why) for error, seqs in by_error.items()]
    return found
