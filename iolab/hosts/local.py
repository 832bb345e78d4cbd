"""Cells on this machine, in-process."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import TracebackType

from iolab.cell import executor as cell_executor, targets
from iolab import knobs
from iolab.cell.cellspec import CellSpec
from iolab.hosts.base import CellByCell
from iolab.cell.sample import Sample
from iolab.journal import default_journal


class LocalHost(CellByCell):
    """Runs cells here; owns a scratch directory for the whole run.

    Everything it and its cells create is journalled (default_journal());
    the runner reclaims what a killed run left before it starts
    (iolab.run.recovery), and on exit this host undoes whatever of its own
    an interrupt cut off half made.
    """

    name = "local"

    def __init__(self, scratch_parent: str | None = None, journal: Path | None = None):
        self.scratch_parent = scratch_parent
        self.journal = journal or default_journal()
        self.scratch: Path | None = None

    def __enter__(self) -> LocalHost:
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        # what killed runs left (the runner reclaims first when it makes the host;
        # a host given to it, as by bench/, still starts on a machine as it was)
        self._say(knobs.recover(self.journal), "what a killed run left")
        self.scratch = Path(self.scratch_parent or tempfile.gettempdir(), targets.temp_name(targets.RUN_DIR))
        self._entry = knobs.Journal(self.journal).add(f"directory {self.scratch}", {"kind": "path", "path": str(self.scratch)})
        self.scratch.mkdir(mode=0o700)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            knobs.Journal(self.journal).discard(self._entry)
        # what an interrupt cut off half made (a loop device attached as Ctrl-C came)
        self._say(knobs.recover(self.journal, only_pid=os.getpid()), "what this run left")

    @staticmethod
    def _say(found: list[knobs.Recovered], what: str) -> None:
        for item in found:
            if item.outcome != "left":
                verb = "reclaimed" if item.outcome == "restored" else "could not reclaim"
                print(f"iolab: {verb} {what}: {item.text}", file=sys.stderr)

    def run_cell(self, cell: CellSpec) -> Sample:
        assert self.scratch is not None, "use LocalHost as a context manager"
        cache = self.scratch / "cache"
        cache.mkdir(exist_ok=True)
        return cell_executor.execute(cell, self.scratch, cache, self.journal)
