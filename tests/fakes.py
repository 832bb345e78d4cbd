"""A host that returns scripted samples, for exact-output tests of everything
after the cell executor (runner, store, analysis, reports)."""

from __future__ import annotations

import random

from iolab.cell.cellspec import CellSpec
from iolab.hosts import CellByCell
from iolab.cell.sample import Sample

FIXED_HOST = {"kernel": "6.18.0-test", "cpus": 2, "cpu_model": "Test CPU", "fio": "fio-3.33"}


class ScriptedHost(CellByCell):
    """Each variant's metrics are `level * (1 + noise)`; a variant may fail."""

    def __init__(self, levels: dict[str, float], fail: dict[str, str] | None = None, seed: int = 1,
                 noise: float = 0.01):
        self.levels = levels
        self.noise = noise  # relative: 0 gives the same values in every round (deterministic)
        self.fail = fail or {}
        self.rng = random.Random(seed)
        self.seen: list[CellSpec] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run_cell(self, cell: CellSpec) -> Sample:
        self.seen.append(cell)
        base = dict(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                    variant=cell.variant.name, workload=cell.workload.name, env=dict(FIXED_HOST),
                    started=1_700_000_000.0 + cell.seq)
        if cell.variant.name in self.fail:
            return Sample(status="failed", error=self.fail[cell.variant.name], **base)
        level = self.levels[cell.variant.name]
        noise = 1 + self.rng.uniform(-self.noise, self.noise)
        latency_ns = int(1e9 / (level * 256))  # 4 KiB I/Os at `level` MiB/s
        hist = {latency_ns: 90, latency_ns * 2: 9, latency_ns * 5: 1}
        return Sample(
            status="ok",
            metrics={"read_bw": level * noise, "read_p50": latency_ns / 1e3, "read_p99": latency_ns * 2 / 1e3,
                     "ctx": 1000.0 * noise, "ios": 100.0},
            histograms={"read_clat": hist},
            **base,
        )
