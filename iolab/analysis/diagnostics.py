"""Noise findings about a run's values, for the notes under the table.

Per variant and row: high spread, drift across rounds, outliers by round;
per candidate and row: baseline and candidate rising and falling together
from round to round; per run: rounds the host disturbed (by the rule
below, from what each cell recorded about the host, never from the
measured values); checked environment keys that differ between samples.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iolab import stats
from iolab.cell.environment import CHECKED, lookup
from iolab.analysis.envdiff import TOOLS
from iolab.analysis.metrics import Metric
from iolab.spec import Experiment
from iolab.cell.sample import Sample

MIN_SAMPLES = 4
HIGH_SPREAD = 0.05  # relative stddev above which a row gets a noise footnote
DRIFT_P = 0.01  # trend test level for the drift footnote

# A cell is disturbed when, during its workload, other processes used more
# than OTHER_CPU of one CPU, the hypervisor stole more than STEAL of one CPU,
# or the host disk behind a loop image was busy more than DISK_BUSY of the time.
OTHER_CPU, STEAL, DISK_BUSY = 0.25, 0.05, 0.10
DISTURBANCE_RULE = (f"a cell during which other processes used > {OTHER_CPU:.0%} of a CPU, steal > {STEAL:.0%}, "
                    f"or the host disk behind the image was busy > {DISK_BUSY:.0%} of the time")


DiagnosticKind = Literal["spread", "drift", "outliers", "rounds", "view"]


@dataclass(frozen=True)
class Diagnostic:
    """A noise finding about one variant's values in one row.

    kind: "spread" (relative stddev above HIGH_SPREAD), "drift" (trend across
    rounds, p < DRIFT_P), "outliers" (Tukey fences; ``rounds`` names them),
    "rounds" (a candidate's values rise and fall with the baseline's from
    round to round: Kendall tau of the values paired by round, p < DRIFT_P),
    "view" (the row could not use the requested view).
    """

    kind: DiagnosticKind
    workload: str
    label: str
    variant: str
    value: float = math.nan  # spread: rel. stddev; drift: Kendall tau
    p: float = math.nan  # drift: p of the trend test
    rounds: tuple[int, ...] = ()  # outliers: their rounds
    detail: str = ""  # view: what was shown instead


def noise(workload: str, metric: Metric, variant: str, group: list[Sample]) -> list[Diagnostic]:
    """Spread, drift and outlier findings for one variant's values in round order."""
    found: list[Diagnostic] = []
    pairs = [(s.round, s.metrics[metric.name]) for s in sorted(group, key=lambda s: s.seq) if metric.name in s.metrics]
    rounds = [r for r, _ in pairs]
    values = np.array([v for _, v in pairs], dtype=float)
    if values.size < MIN_SAMPLES:
        return found
    mean = float(np.mean(values))
    if mean != 0:
        spread = float(np.std(values, ddof=1)) / abs(mean)
        if spread > HIGH_SPREAD:
            found.append(Diagnostic("spread", workload, metric.label, variant, value=spread))
    drift = stats.trend(values)
    if math.isfinite(drift.p) and drift.p < DRIFT_P:
        found.append(Diagnostic("drift", workload, metric.label, variant, value=drift.tau, p=drift.p))
    q1, q3 = np.percentile(values, [25, 75])
    if q3 > q1:  # with most values equal (quantized percentiles) Tukey's rule flags all others
        odd = stats.outliers(values)
        if odd:
            found.append(Diagnostic("outliers", workload, metric.label, variant,
                                    rounds=tuple(rounds[i] for i in odd)))
    return found


def round_effect(workload: str, metric: Metric, candidate: str, base: list[Sample],
                 cand: list[Sample]) -> list[Diagnostic]:
    """Whether baseline and candidate move together across rounds (the
    machine's state changing between rounds, which pairing by round cancels)."""
    by_round = {s.round: s.metrics[metric.name] for s in base if metric.name in s.metrics}
    pairs = [(by_round[s.round], s.metrics[metric.name]) for s in cand
             if metric.name in s.metrics and s.round in by_round]
    if len(pairs) < 6:
        return []
    x, y = zip(*pairs)
    if len(set(x)) < 2 or len(set(y)) < 2:
        return []
    result = stats.kendall(x, y)
    if result.tau > 0 and result.p < DRIFT_P:
        return [Diagnostic("rounds", workload, metric.label, candidate, value=result.tau, p=result.p)]
    return []


def disturbed(sample: Sample) -> str:
    """Why the host disturbed this cell ("" when it did not, or was not measured)."""
    m, wall = sample.metrics, sample.run_s
    if not wall or wall <= 0:
        return ""
    found = []
    for key, limit, what in (("host.other_cpu_s", OTHER_CPU, "other processes"), ("host.steal_s", STEAL, "steal")):
        if key in m and m[key] / wall > limit:
            found.append(f"{what} {m[key] / wall:.0%} of a CPU")
    if "host.disk_busy_ms" in m and m["host.disk_busy_ms"] / 1000.0 / wall > DISK_BUSY:
        found.append(f"host disk busy {m['host.disk_busy_ms'] / 10.0 / wall:.0f}%")
    return ", ".join(found)


def disturbed_rounds(samples: list[Sample]) -> dict[int, str]:
    """Measured rounds with a disturbed cell, and the first reason seen."""
    found: dict[int, str] = {}
    for s in sorted(samples, key=lambda s: s.seq):
        why = disturbed(s) if not s.warmup else ""
        if why and s.round not in found:
            found[s.round] = f"{s.variant}: {why}"
    return found


def env_differences(samples: list[Sample], experiment: Experiment) -> list[str]:
    """Checked environment keys that differ between samples compared with each
    other; the kernel may differ between variants when variants name kernels."""
    notes = []
    ok = [s for s in samples if s.status == "ok"]
    kernels_vary = any(v.kernel for v in experiment.variant)
    for key in CHECKED:
        if key == "kernel" and kernels_vary:
            groups = [[s for s in ok if s.variant == v.name] for v in experiment.variant]
        else:
            groups = [ok]
        for group in groups:
            values = {json.dumps(lookup(s.env, key)) for s in group}
            if key in TOOLS:  # a workload that does not run the tool has no version of it
                values.discard("null")
            if len(values) > 1:
                notes.append(f"samples differ in {key}: {', '.join(sorted(values))}")
    return notes


def host_differences(samples: list[Sample]) -> str:
    """For a run whose rounds came from several agents (iolab.run.agent): the
    checked environment keys in which those hosts differ, as one sentence
    ("" when they agree, or the samples are from one host)."""
    by_host: dict[str, list[Sample]] = {}
    for sample in samples:
        if sample.host is not None and sample.status == "ok":
            by_host.setdefault(sample.host, []).append(sample)
    if len(by_host) < 2:
        return ""
    differ = []
    for key in CHECKED:
        values = {host: sorted({json.dumps(s.env.get(key)) for s in group}) for host, group in sorted(by_host.items())}
        if len({tuple(v) for v in values.values()}) > 1:
            differ.append(f"{key} (" + "; ".join(f"{host} {', '.join(v)}" for host, v in values.items()) + ")")
    return ", ".join(differ)


def accel_switch(samples: list[Sample]) -> str:
    """For a VM run whose accelerator fell back from KVM to TCG mid-run
    (iolab.hosts.vm.accel): the rounds each accelerator ran, as one sentence
    ("" when one accelerator ran every ok cell)."""
    rounds: dict[str, set[int]] = {}
    for sample in samples:
        accel = lookup(sample.env, "vm.accel") if sample.status == "ok" else None
        if accel:
            rounds.setdefault(str(accel), set()).add(sample.round)
    if len(rounds) < 2:
        return ""
    return "; ".join(f"{accel.upper()} in rounds {', '.join(map(str, sorted(found)))}"
                     for accel, found in sorted(rounds.items(), key=lambda item: min(item[1])))
