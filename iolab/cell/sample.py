"""A sample: the outcome of one cell, as plain data that travels as JSON.

Kept apart from the store (iolab.store re-exports it) so the cell executor,
which also runs inside VM guests, does not import sqlite3.

Samples are facts: a Sample is frozen once made, and its tables are never
changed after. It is made from its cell (``Sample.of``) with everything it
holds; what a host adds afterwards (a VM's boot, a kernel's build log) makes
a new one (``with_more``). The store reads it back whole (``iolab.store``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from iolab.cell.cellspec import CellSpec

SampleStatus = Literal["ok", "failed"]
BUILD_FAILED = "the kernel did not build"  # how the error of a cell whose kernel's build failed begins


@dataclass(frozen=True)
class Sample:
    """The outcome of one cell: metrics, or a failure with its error text."""

    seq: int
    round: int
    iteration: int
    warmup: bool
    variant: str
    workload: str
    status: SampleStatus
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    histograms: dict[str, dict[int, int]] = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    setup_s: float | None = None
    run_s: float | None = None
    teardown_s: float | None = None
    attempt: int = 0  # a queued round's try (iolab.run.agent); 0 for a run made here
    host: str | None = None  # the agent that took it (None: the run's own machine)

    @classmethod
    def of(cls, cell: CellSpec, status: SampleStatus, **fields: Any) -> Sample:
        """The sample of a cell: its place in the plan from the cell, the rest as given."""
        return cls(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                   variant=cell.variant.name, workload=cell.workload.name, status=status, **fields)

    def with_more(self, *, metrics: dict[str, float] | None = None, artefacts: dict[str, str] | None = None,
                  env: dict[str, Any] | None = None) -> Sample:
        """A new sample with these metrics, artefacts and environment entries added."""
        return replace(self, metrics={**self.metrics, **(metrics or {})},
                       artefacts={**self.artefacts, **(artefacts or {})}, env={**self.env, **(env or {})})

    def to_json(self) -> str:
        return json.dumps(self.__dict__, default=str)

    @classmethod
    def from_json(cls, text: str) -> Sample:
        data = json.loads(text)
        data["histograms"] = {
            name: {int(k): v for k, v in bins.items()} for name, bins in data["histograms"].items()
        }
        return cls(**data)
