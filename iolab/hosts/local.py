"""Cells on this machine, in-process."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from iolab import cell as cell_executor
from iolab.cell import CellSpec
from iolab.store import Sample


class LocalHost:
    """Runs cells here; owns a scratch directory for the whole run."""

    name = "local"

    def __init__(self, scratch_parent: str | None = None):
        self.scratch_parent = scratch_parent
        self.scratch: Path | None = None

    def __enter__(self) -> LocalHost:
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
        return cell_executor.execute(cell, self.scratch, cache)
