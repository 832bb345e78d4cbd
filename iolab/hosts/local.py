"""Cells on this machine, in-process."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import TracebackType

from iolab.cell import executor as cell_executor
from iolab import knobs
from iolab.cell.cellspec import CellSpec
from iolab.hosts import CellByCell
from iolab.cell.sample import Sample


def default_journal() -> Path:
    """Where applied knobs are journalled until restored (see iolab.knobs)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state, "iolab", "knobs.journal")


class LocalHost(CellByCell):
    """Runs cells here; owns a scratch directory for the whole run.

    On entry it restores whatever a killed iolab left changed (the knob
    journal), so a run never starts on a host that is not as it was.
    """

    name = "local"

    def __init__(self, scratch_parent: str | None = None, journal: Path | None = None):
        self.scratch_parent = scratch_parent
        self.journal = journal or default_journal()
        self.scratch: Path | None = None

    def __enter__(self) -> LocalHost:
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        for item in knobs.recover(self.journal):
            if item.outcome == "restored":
                print(f"iolab: restored what a killed run left changed: {item.text}", file=sys.stderr)
            elif item.outcome == "failed":
                print(f"iolab: could not restore what a killed run left changed: {item.text}", file=sys.stderr)
        self.scratch = Path(tempfile.mkdtemp(prefix="iolab-run-", dir=self.scratch_parent))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def run_cell(self, cell: CellSpec) -> Sample:
        assert self.scratch is not None, "use LocalHost as a context manager"
        cache = self.scratch / "cache"
        cache.mkdir(exist_ok=True)
        return cell_executor.execute(cell, self.scratch, cache, self.journal)
