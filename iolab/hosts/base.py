"""The Host protocol the runner sees every host through, and CellByCell, a
host that runs one cell per batch (this machine, test doubles)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from iolab.cell import environment

if TYPE_CHECKING:  # the guest imports iolab.hosts.vm.guest: keep this module light
    from iolab.cell.cellspec import CellSpec
    from iolab.cell.sample import Sample


class Host(Protocol):
    """Where cells run: a context manager around a whole run."""

    def __enter__(self) -> Host: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def describe(self) -> dict[str, Any]:
        """The run's record of where it ran (runs.host, the report's header):
        the machine (kernel, CPUs, fio: iolab.cell.environment.host) and what
        the host adds (a VM's shape and kernels). A test double describes
        itself the same way."""
        ...

    def batches(self, cells: Sequence[CellSpec]) -> list[list[CellSpec]]:
        """The cells in the groups this host runs together, in order."""
        ...

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        """Run one batch; yield each cell's sample the moment it exists."""
        ...

    @property
    def parallel(self) -> int:
        """How many batches it runs at once: 1, or more where a cell's counts
        do not depend on the host's load (VMs in instructions mode; iolab.run.parallel)."""
        ...

    @property
    def stopping(self) -> threading.Event:
        """Set by the runner when it leaves batches running side by side: each ends its work under way."""
        ...


class CellByCell:
    """A host that runs one cell at a time (this machine, test doubles):
    every batch is one cell. Subclasses define run_cell."""

    parallel = 1  # one batch at a time

    @functools.cached_property
    def stopping(self) -> threading.Event:
        return threading.Event()

    def describe(self) -> dict[str, Any]:
        return environment.host()

    def batches(self, cells: Sequence[CellSpec]) -> list[list[CellSpec]]:
        return [[cell] for cell in cells]

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        for cell in cells:
            yield self.run_cell(cell)

    def run_cell(self, cell: CellSpec) -> Sample:
        raise NotImplementedError
