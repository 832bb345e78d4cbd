"""Two runs of one experiment (different times, machines, kernels) compared.

Run A is the reference, run B the candidate. Each variant of the experiment
becomes a group of rows (``randread [buffered]``) and the two runs become the
two columns, so the table, its statistics and every renderer are those of a
run: iolab.analysis computes them from the samples relabelled so (run A's
under ``run A``, run B's under ``run B``). The rounds of run B are moved
past run A's and the order marked sequential: rounds of two runs are not
pairs, and the test is the unpaired one (Mann-Whitney U, as benchstat
compares runs), Holm-corrected over the table. Percentile rows come from the
merged histograms of each run, as in a run's own report.

Variants or workloads that only one run has are left out, with a note; the
environment rows (iolab.analysis.envdiff) list what differs between the two runs.
Runs of different timing modes (wall, instructions) are refused.
"""

from __future__ import annotations

import statistics

from dataclasses import replace

from iolab.analysis.table import analyse
from iolab.analysis import diagnostics, envdiff
from iolab.analysis.model import Report
from iolab.spec import Experiment
from iolab.stats import View
from iolab.store import RunInfo, Sample, StoreError

ROUND_OFFSET = 1_000_000  # run B's rounds start here: no round of B pairs with one of A


def column(run: RunInfo) -> str:
    return f"run {run.id}"


def group(workload: str, variant: str) -> str:
    return f"{workload} [{variant}]"


def _shared(a: Experiment, b: Experiment) -> tuple[list[str], list[str], list[str]]:
    """(variants, workloads) both runs have, in A's order, and notes on the rest."""
    variants = [v.name for v in a.variant if v.name in {w.name for w in b.variant}]
    workloads = [w.name for w in a.workload if w.name in {w.name for w in b.workload}]
    notes = []
    for kind, mine, theirs in (("variant", a.variant, b.variant), ("workload", a.workload, b.workload)):
        only_a = [x.name for x in mine if x.name not in {y.name for y in theirs}]
        only_b = [x.name for x in theirs if x.name not in {y.name for y in mine}]
        for names, side in ((only_a, "A"), (only_b, "B")):
            if names:
                notes.append(f"{kind}s only in run {side} are left out: {', '.join(names)}")
    return variants, workloads, notes


def _experiment(a: RunInfo, b: RunInfo, exp_a: Experiment, variants: list[str], workloads: list[str],
                rounds: int) -> Experiment:
    """The table's experiment: runs as variants, (workload, variant) as workloads."""
    report = exp_a.report.model_dump()
    report["kind"] = "comparison"
    return Experiment.model_validate({
        "name": exp_a.name,
        "variant": [{"name": column(a)}, {"name": column(b)}],
        "workload": [
            {"name": group(w, v), "job": "[compare]\n", "metrics": exp_a.workload_named(w).metrics}
            for w in workloads for v in variants
        ],
        "run": {"iterations": max(1, rounds), "order": "sequential", "seed": 0},
        "report": report,
        "vm": {"timing": exp_a.timing, "disk": exp_a.vm.disk, "model": exp_a.vm.model},  # what the figures count
    })


def comparable(a: str, exp_a: Experiment, b: str, exp_b: Experiment) -> tuple[list[str], list[str], list[str]]:
    """What the experiments of two runs (`a`, `b`: "run 3", "this run") can
    be compared on: (variants, workloads, notes on the rest). A StoreError
    when nothing can be: a calibration, durations that count different
    things (time, instructions: never set against each other), or no
    variant and workload in common. ``iolab run --baseline`` asks before
    its run begins."""
    for label, exp in ((a, exp_a), (b, exp_b)):
        if exp.report.kind == "calibration":
            raise StoreError(f"{label} is a calibration (A/A); compare runs of an experiment")
    if exp_a.clock != exp_b.clock:
        raise StoreError(f"{a} {exp_a.clock}, {b} {exp_b.clock}: a time, an instruction count and modeled time "
                         "are not comparable; compare runs of one timing mode (iolab run --timing "
                         "wall|instructions; modeled: [vm] disk = \"model\")")
    variants, workloads, notes = _shared(exp_a, exp_b)
    if not variants or not workloads:
        raise StoreError(f"{a} and {b} share no variant and workload: not the same experiment")
    return variants, workloads, notes


def _relabel(samples: list[Sample], run: RunInfo, variants: list[str], workloads: list[str],
             offset: int) -> list[Sample]:
    return [
        replace(s, variant=column(run), workload=group(s.workload, s.variant), round=s.round + offset)
        for s in samples
        if not s.warmup and s.variant in variants and s.workload in workloads
    ]


def _other_cpu(samples: list[Sample]) -> float | None:
    """The median CPU seconds other processes used during a run's measured cells (host.other_cpu_s)."""
    values = [s.metrics["host.other_cpu_s"] for s in samples
              if not s.warmup and s.status == "ok" and "host.other_cpu_s" in s.metrics]
    return statistics.median(values) if values else None


def runs_compared(a: RunInfo, samples_a: list[Sample], b: RunInfo, samples_b: list[Sample], *,
                  view: View | None = None, min_max: bool | None = None) -> Report:
    if a.id == b.id:
        raise StoreError(f"compare needs two different runs, got run {a.id} twice")
    exp_a = Experiment.model_validate_json(a.experiment_json)
    exp_b = Experiment.model_validate_json(b.experiment_json)
    variants, workloads, notes = comparable(f"run {a.id}", exp_a, f"run {b.id}", exp_b)
    if exp_a.name != exp_b.name:
        notes.insert(0, f"the runs' experiments are named differently: {exp_a.name!r} and {exp_b.name!r}")
    relabelled = (_relabel(samples_a, a, variants, workloads, 0)
                  + _relabel(samples_b, b, variants, workloads, ROUND_OFFSET))
    rounds = max(len({s.round for s in relabelled if s.variant == column(r)}) for r in (a, b))
    experiment = _experiment(a, b, exp_a, variants, workloads, rounds)
    table_run = replace(b, experiment_json=experiment.model_dump_json(), recheck_of=None, stop_reason=None)
    result = analyse(table_run, relabelled, view=view, min_max=min_max)
    result = replace(result, diagnostics=[  # diagnostics and disturbed rounds name each run's own rounds
        replace(d, rounds=tuple(r % ROUND_OFFSET for r in d.rounds)) for d in result.diagnostics],
        disturbed={})
    any_disturbed = False
    for run, samples in ((a, samples_a), (b, samples_b)):  # each run's own round numbers
        disturbed = diagnostics.disturbed_rounds([s for s in samples if not s.warmup])
        if disturbed:
            any_disturbed = True
            notes.append(f"run {run.id}: host disturbed rounds {', '.join(map(str, sorted(disturbed)))} "
                         f"(rule: {result.disturbance_rule})")
    load = [(run, _other_cpu(samples)) for run, samples in ((a, samples_a), (b, samples_b))]
    if any_disturbed and all(value is not None for _, value in load):
        shown = ", ".join(f"run {run.id} {value:.2f} s" for run, value in load)
        notes.append(f"other processes' CPU beside a cell (median): {shown}: a change between runs taken at "
                     "different times carries the machine's change too; variants of one run are paired by "
                     "round, runs are not")
    environment = envdiff.rows(relabelled, lambda s: s.variant, [column(a), column(b)], mixed_differs=False)
    return Report(result, tuple(relabelled), tuple(environment), (a, b), tuple(notes))

