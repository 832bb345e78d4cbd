"""A sample: the outcome of one cell, as plain data that travels as JSON.

Kept apart from the store (iolab.store re-exports it) so the cell executor,
which also runs inside VM guests, does not import sqlite3.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sample:
    """The outcome of one cell: metrics, or a failure with its error text."""

    seq: int
    round: int
    iteration: int
    warmup: bool
    variant: str
    workload: str
    status: str  # "ok" | "failed"
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

    def to_json(self) -> str:
        return json.dumps(self.__dict__, default=str)

    @classmethod
    def from_json(cls, text: str) -> Sample:
        data = json.loads(text)
        data["histograms"] = {
            name: {int(k): v for k, v in bins.items()} for name, bins in data["histograms"].items()
        }
        return cls(**data)
