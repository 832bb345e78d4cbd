"""From stored samples to the comparison table a reviewer reads (re-exported
by iolab.analysis).

`analyse` takes a run's samples and returns plain data (`Analysis`): per
workload x metric x variant the central value, its spread and n; per
candidate the delta against the baseline with its CI, the test, and the
verdict; noise diagnostics (iolab.analysis.diagnostics). Renderers in iolab.report
only format this data.

Test. The plan fixes the test of a run before any data (iolab.plan.test_choice:
the rounds, the order and the number of primary comparisons; never the values):
the paired signed-rank test where its smallest p can pass the corrected level,
else the exact Mann-Whitney U where that can. A run whose order gives every
variant a cell in every round (interleaved, alternate) and whose plan can use
the paired test is analysed **paired by round** (iolab.stats.paired:
the signed-rank test of per-round ratios, Hodges-Lehmann delta and CI;
for a percentile row the change of the merged histograms' percentile, with
a bootstrap over the paired rounds):
host noise that moves both variants of a round together stays out. Rounds
in which the baseline or the candidate has no value (a failed cell) drop
out of the pairing, and the comparison says how many. A sequential run,
a row with fewer than MIN_PAIRS complete rounds, or values of 0 or below
(no ratio) is compared unpaired (Mann-Whitney U, exact as benchstat), and
the comparison's warnings say why.

Family. The experiment's primary metrics (``[report] primary``,
``[[workload]] primary``; default iolab.analysis.metrics.PRIMARY) form the family
that Holm (or BH) corrects; the other rows are exploratory: each tested at
alpha, uncorrected, and marked so in every report. An adaptive run tests
each primary comparison at the per-look level of its stopping rule
(iolab.stats.sequential.level: alpha split over the primary comparisons,
then over the looks by the calibrated boundary), exploratory ones at the
level of a single comparison.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import replace

from iolab import histogram, plan, stats
from iolab.engines import fio_jobs
from iolab.analysis import iorows, metrics, prepared
from iolab.analysis.failures import Failure, grouped
from iolab.analysis.diagnostics import (Diagnostic, accel_switch, disturbed_rounds,
                                       env_differences, host_differences, noise, round_effect)
from iolab.analysis.metrics import Metric
from iolab.analysis.claims import agreements
from iolab.analysis.results import Analysis, Design, Figure, Row
from iolab.analysis.series import TOTAL, Done, attribute, series_progress, step_pairs
from iolab.spec import Experiment
from iolab.cell.sample import Sample
from iolab.stats import tails
from iolab.stats.choice import Choice, fewest_rounds, min_p
from iolab.stats.kinds import PAIRED, UNPAIRED, View
from iolab.stats.sequential import Sequential
from iolab.store import RunInfo

__all__ = ["Analysis", "Row", "Figure", "Failure", "Diagnostic", "Sequential", "analyse", "sequential_level"]

MIN_SAMPLES = 4  # per side, unpaired
MIN_PAIRS = stats.MIN_PAIRS  # rounds with both variants, paired
BOUNDARY = "calibrated"
def _row_metrics(experiment: Experiment, workload: str, produced: set[str], counted: bool | None = None) -> list[str]:
    """A workload's rows; a workload whose I/O pattern is the point (io = "primary") has its count
    of I/Os first where its cells counted them (``counted``; by default: ``produced`` has it)."""
    chosen = experiment.workload_named(workload).metrics or experiment.report.metrics
    rows = list(chosen) if chosen else [name for name in metrics.DEFAULT_ROWS if name in produced]
    declared = experiment.workload_named(workload).primary or experiment.report.primary or []
    rows += [name for name in declared if name not in rows]
    claimed = [r.metric for r in experiment.claims.row if r.workload == workload] if experiment.claims else []
    rows += [name for name in dict.fromkeys(claimed) if name and name not in rows]  # a claim row is checked by it
    counted = metrics.IO_COUNT in produced if counted is None else counted
    if experiment.workload_named(workload).io == "primary" and counted and metrics.IO_COUNT not in rows:
        rows.insert(0, metrics.IO_COUNT)
    return rows


def _counts_io(experiment: Experiment, workload: str) -> bool:
    """Whether a workload's cells will count the device's I/Os (diskstats on a target with a device)."""
    return experiment.collect.diskstats and experiment.target_for(experiment.baseline,
                                                                  experiment.workload_named(workload)).kind != "dir"


def _rows_of(experiment: Experiment, workload: str, produced: set[str]) -> list[str]:
    """A workload's rows: of the metrics its cells produced, or where every cell
    failed, the rows its job would have had (each shown FAILED, not left out)."""
    if produced:
        return _row_metrics(experiment, workload, produced)
    directions: frozenset[str] = frozenset()
    if experiment.workload_named(workload).engine == "fio":
        directions = frozenset().union(*(job.directions for job in fio_jobs.jobs(_inline_job(experiment, workload))))
    return expected_rows(experiment, workload, directions)


def primary_metrics(experiment: Experiment, workload: str, rows: list[str]) -> list[str]:
    """The metrics of this workload whose comparisons form the corrected family."""
    if experiment.workload_named(workload).exploratory:
        return []
    declared = experiment.workload_named(workload).primary or experiment.report.primary
    if declared:
        chosen = [name for name in rows if name in declared]
    else:
        chosen = [name for name in rows if name in metrics.PRIMARY] or [n for n in rows if n != metrics.IO_COUNT][:1]
    if experiment.workload_named(workload).io == "primary" and metrics.IO_COUNT in rows:
        chosen = [metrics.IO_COUNT, *(name for name in chosen if name != metrics.IO_COUNT)]
    return chosen or rows[:1]


def figure(values: list[float], failed: int, view: View, center: float | None = None) -> Figure:
    if not values:
        return Figure(0, failed, math.nan, math.nan, None)
    summary = stats.summarize(values, view)
    return Figure(len(values), failed, summary.center if center is None else center, summary.rel_spread, summary)


def _unpaired(metric: Metric, view: View, base: list[Sample], cand: list[Sample]) -> stats.Comparison | None:
    base_values = [s.metrics[metric.name] for s in base if metric.name in s.metrics]
    cand_values = [s.metrics[metric.name] for s in cand if metric.name in s.metrics]
    if not base_values or not cand_values:
        return None
    comparison = stats.compare(base_values, cand_values, higher_is_better=metric.higher_is_better, view=view,
                               min_n=MIN_SAMPLES)
    if metric.histogram is None or metric.quantile is None:
        return comparison
    base_h = [s.histograms[metric.histogram] for s in base if metric.histogram in s.histograms]
    cand_h = [s.histograms[metric.histogram] for s in cand if metric.histogram in s.histograms]
    if not base_h or not cand_h:
        return comparison
    delta, low, high = tails.delta_ci(base_h, cand_h, metric.quantile)
    if comparison.verdict == "insufficient":
        low = high = math.nan
    return replace(comparison, delta=delta, delta_low=low, delta_high=high)


def _paired_values(metric: Metric, base: list[Sample], cand: list[Sample],
                   rounds: set[int]) -> tuple[list[float], list[float], int]:
    """Values of the rounds in which both have the metric, and how many rounds dropped out."""
    b = {s.round: s.metrics[metric.name] for s in base if metric.name in s.metrics}
    c = {s.round: s.metrics[metric.name] for s in cand if metric.name in s.metrics}
    common = sorted(set(b) & set(c))
    return [b[r] for r in common], [c[r] for r in common], len(rounds) - len(common)


def _exact(metric: Metric, view: View, base: list[Sample], cand: list[Sample], design: Design, rounds: set[int],
           tolerance: float) -> stats.Comparison | None:
    """The exact comparison when neither variant's values vary (iolab.stats.exact);
    a percentile row's delta is then that of its merged histograms' percentiles."""
    if design == "paired":
        b, c, dropped = _paired_values(metric, base, cand, rounds)
    else:
        b = [s.metrics[metric.name] for s in base if metric.name in s.metrics]
        c = [s.metrics[metric.name] for s in cand if metric.name in s.metrics]
        dropped = 0
    if not b or not c:
        return None
    comparison = stats.compare_exact(b, c, higher_is_better=metric.higher_is_better, view=view,
                                     tolerance=tolerance, paired=design == "paired")
    if comparison is None:
        return None
    base_center, cand_center = merged_center(metric, base), merged_center(metric, cand)
    if comparison.exact != "paired" and base_center and cand_center is not None:
        comparison = replace(comparison, delta=cand_center / base_center - 1.0)
    return replace(comparison, dropped=dropped)


def compare_row(metric: Metric, view: View, base: list[Sample], cand: list[Sample], design: Design,
                rounds: set[int], tolerance: float = 0.0) -> stats.Comparison | None:
    """The comparison of one row for one candidate: exact when the values do
    not vary (beyond ``tolerance``); else paired when the plan chose the
    paired test ("paired") and the data allow, else unpaired with the reason
    among its warnings."""
    exact = _exact(metric, view, base, cand, design, rounds, tolerance)
    if exact is not None:
        return exact
    if design != "paired":
        return _unpaired(metric, view, base, cand)
    b, c, dropped = _paired_values(metric, base, cand, rounds)
    if not b:
        return _unpaired(metric, view, base, cand)
    why = stats.paired.pairable(stats.checks.values(b), stats.checks.values(c))
    if not why and len(b) < MIN_PAIRS:
        why = f"{len(b)} rounds with both variants, fewer than the {MIN_PAIRS} the paired test needs"
    if why:
        comparison = _unpaired(metric, view, base, cand)
        return comparison and replace(comparison, dropped=dropped,
                                      warnings=comparison.warnings + (f"unpaired test: {why}",))
    comparison = stats.compare_paired(b, c, higher_is_better=metric.higher_is_better, view=view, dropped=dropped)
    return _merged_tail_delta(metric, comparison, base, cand)


def _merged_tail_delta(metric: Metric, comparison: stats.Comparison, base: list[Sample],
                       cand: list[Sample]) -> stats.Comparison:
    """A percentile row's delta is the change of the merged histograms' percentile
    (the centers the row shows), its CI a bootstrap over the paired rounds."""
    if metric.histogram is None or metric.quantile is None or comparison.verdict == "insufficient":
        return comparison
    b = {s.round: s.histograms[metric.histogram] for s in base if metric.histogram in s.histograms}
    c = {s.round: s.histograms[metric.histogram] for s in cand if metric.histogram in s.histograms}
    common = sorted(set(b) & set(c))
    if len(common) < 2:
        return comparison
    delta, low, high = tails.delta_ci([b[r] for r in common], [c[r] for r in common], metric.quantile,
                                      paired=True)
    return replace(comparison, delta=delta, delta_low=low, delta_high=high)


def expected_rows(experiment: Experiment, workload: str, directions: frozenset[str] = frozenset()) -> list[str]:
    """The rows a workload will have, before it ran: the chosen metrics, else
    the default rows its engine reports (a fio job: per direction it reads or
    writes, ``directions``; the probe: per mode)."""
    item = experiment.workload_named(workload)
    counted = _counts_io(experiment, workload)
    if item.metrics or experiment.report.metrics:
        return _row_metrics(experiment, workload, set(), counted)
    if item.engine == "fio":
        produced = {f"{d}_{m}" for d in directions for m in ("bw", "p50", "p99")}
    else:
        mode = (item.probe or {}).get("mode")
        produced = {"batch": {"per_call"}, "churn": {"phase_ns"}}.get(str(mode), {"lat_p50", "lat_p99"})
    return _row_metrics(experiment, workload, produced, counted)


def planned_comparisons(experiment: Experiment, rows: dict[str, list[str]]) -> int:
    """The size of the primary family: primary rows x candidates, from each
    workload's row names (what its engine reports, not the values)."""
    candidates = len(experiment.variant) - 1
    return candidates * sum(len(primary_metrics(experiment, w, names)) for w, names in rows.items())


def planned_test(experiment: Experiment, comparisons: int) -> Choice:
    """The plan's test for a family of ``comparisons`` primary comparisons."""
    run = experiment.run
    if not run.auto:
        return plan.test_choice(experiment, comparisons)
    design: Design = "paired" if plan.paired(experiment) else "unpaired"
    return plan.test_choice(experiment, comparisons, sequential_level(experiment, comparisons, design).look_alpha)


def sequential_level(experiment: Experiment, comparisons: int, design: Design = "unpaired") -> Sequential:
    """The per-look level of an adaptive run with this many primary comparisons."""
    run = experiment.run
    test = PAIRED if design == "paired" else UNPAIRED
    return stats.level(experiment.report.alpha, comparisons, run.min_iterations, run.max_iterations, test, BOUNDARY)


Pending = list[tuple[int, str, stats.Comparison]]


def _decide(rows: list[Row], pending: Pending, experiment: Experiment,
            design: Design) -> tuple[list[Row], Sequential | None]:
    """The rows with their comparisons decided, and the stopping rule of an
    adaptive run: the primary family corrected together, exploratory rows
    each at alpha. A series' totals (last step against the base) are a
    family of their own beside its steps' deltas."""
    report = experiment.report
    explore = [(i, cand, c) for i, cand, c in pending if not rows[i].primary]
    families = [[(i, cand, c) for i, cand, c in pending if rows[i].primary and (cand == TOTAL) == total]
                for total in (False, True)]
    primary = families[0]
    sequential = None
    decided: list[stats.Comparison] = []
    if experiment.run.auto:
        sequential = sequential_level(experiment, len(primary), design)
        single = sequential_level(experiment, 1, design).look_alpha
        decided += stats.decide([c for *_, c in primary], sequential.look_alpha, "none")
        if families[1]:
            totals = sequential_level(experiment, len(families[1]), design).look_alpha
            decided += stats.decide([c for *_, c in families[1]], totals, "none")
        decided += stats.decide([c for *_, c in explore], single, "none", family="exploratory")
    else:
        for family in families:
            decided += stats.decide([c for *_, c in family], report.alpha, report.correction) if family else []
        decided += stats.decide([c for *_, c in explore], report.alpha, "none", family="exploratory")
    found: dict[int, dict[str, stats.Comparison]] = defaultdict(dict)
    for (row_index, candidate, _), comparison in zip(families[0] + families[1] + explore, decided):
        found[row_index][candidate] = comparison
    return [replace(row, comparisons=found[n]) if n in found else row for n, row in enumerate(rows)], sequential


def _row_view(view: View, values: list[list[float]]) -> View:
    """The requested view, or the median where the harmonic mean cannot be taken."""
    if view == "hmean" and any(v <= 0 for group in values for v in group):
        return "median"
    return view


def merged_center(metric: Metric, samples: list[Sample]) -> float | None:
    if metric.histogram is None or metric.quantile is None:
        return None
    hists = [s.histograms[metric.histogram] for s in samples if metric.histogram in s.histograms]
    if not hists:
        return None
    return histogram.percentile(histogram.merge(hists), metric.quantile) * metric.scale


def _allowed(experiment: Experiment) -> list[str]:
    """A note naming the fio options the experiment let through (allow = [...]):
    a reader sees that the job ran programs or wrote outside the target."""
    named = [f"{kind} {item.name!r}: {', '.join(item.allow)}"
             for kind, items in (("workload", experiment.workload), ("variant", experiment.variant))
             for item in items if getattr(item, "allow", None)]
    what = "fio options" if all(w.engine != "script" for w in experiment.workload) else \
        "what ran a program or fio options"  # a script workload: allow = ["script"]
    return [f"{what} allowed past iolab's check: {'; '.join(named)}"] if named else []


def _inline_job(experiment: Experiment, workload: str) -> str:
    job = experiment.workload_named(workload).job or ""
    return _inline_job(experiment, job[1:].strip()) if job.startswith("@") else job


def _fio_note(experiment: Experiment, measured: list[Sample]) -> list[str]:
    """The fio that ran and the uncached flag, where the experiment chose a
    fio or its jobs ask for RWF_DONTCACHE (uncached=1)."""
    uncached = [w.name for w in experiment.workload
                if w.engine == "fio" and re.search(r"^\s*uncached\s*=\s*[1-9]", _inline_job(experiment, w.name), re.M)]
    if experiment.fio == "fio" and not uncached:
        return []
    versions = sorted({str(s.env["fio"]) for s in measured if s.env.get("fio")}) or ["no cell ran fio"]
    text = f"fio: {', '.join(versions)} ({experiment.fio})"
    if uncached:
        text += f"; uncached=1 (buffered I/O with RWF_DONTCACHE) in {', '.join(uncached)}"
    return [text]


def _unmeasured_note(experiment: Experiment, measured: list[Sample]) -> list[str]:
    """The metrics a tool's output had but contradicted (a sample's env["unmeasured"]:
    left out of its cells, not shown as numbers), with the engine's reason."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    cells: dict[tuple[str, str], int] = defaultdict(int)
    for sample in measured:
        reasons: dict[str, str] = sample.env.get("unmeasured") or {}
        for why in set(reasons.values()):
            cells[(sample.workload, why)] += 1
        for name, why in reasons.items():
            found[(sample.workload, why)].add(name)
    ran = Counter(s.workload for s in measured if s.status == "ok")
    return [f"{workload}: {', '.join(metrics.lookup(n, experiment.clock).label for n in sorted(names))} "
            f"not measured in {cells[(workload, why)]} of {ran[workload]} cells: {why}"
            for (workload, why), names in sorted(found.items())]


def _plan_note(experiment: Experiment, planned: Choice) -> list[str]:
    """Why a paired run's rows use the unpaired test: the plan chose it before any data."""
    if not plan.paired(experiment) or planned.test != UNPAIRED or experiment.run.auto:
        return []  # undecidable plans: each row's warning says what its test could give
    paired_p = min_p(PAIRED, planned.rounds)
    return [f"the plan fixed the test before the run: with {planned.rounds} rounds the signed-rank test's "
            f"smallest p is {paired_p:.3g}, not below {planned.level:.3g} ({planned.comparisons} primary "
            f"comparisons), so every row uses the exact Mann-Whitney U; "
            f"{fewest_rounds(PAIRED, planned.level)} rounds give the paired test"]


def _refuse(rows: list[Row], why: str) -> list[Row]:
    """No verdict for any comparison: the samples compared were not taken alike."""
    return [replace(row, comparisons={candidate: replace(c, verdict="insufficient", refusal="hosts",
                                                         warnings=c.warnings + (f"no verdict: {why}",))
                                      for candidate, c in row.comparisons.items()}) for row in rows]


def _progress(measured: list[Sample], experiment: Experiment) -> Done:
    """How much of the plan ran: complete rounds (a sample, ok or failed, of
    every variant x workload) and cells, so a run cut short says so."""
    if experiment.series is not None:
        return series_progress(measured, experiment)
    pairs = len(experiment.variant) * len(experiment.workload)
    per_round: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for sample in measured:
        per_round[sample.round].add((sample.variant, sample.workload))
    complete = sum(1 for cells in per_round.values() if len(cells) == pairs)
    return {"rounds_done": complete, "cells_done": len(measured), "cells_planned": experiment.run.max_rounds * pairs}


Groups = dict[tuple[str, str], list[Sample]]  # (variant, workload) -> samples


def _row(experiment: Experiment, workload: str, name: str, primary: bool, groups: tuple[Groups, Groups],
         view: View, design: Design,
         measured: list[Sample]) -> tuple[Row, list[tuple[str, stats.Comparison]], list[Diagnostic]]:
    """One row of the table before its verdicts: each variant's figures, the
    comparisons to decide (by candidate), and what the row's samples show."""
    ok, failed = groups
    variants = [v.name for v in experiment.variant]
    metric = metrics.lookup(name, experiment.clock)
    values = {v: [s.metrics[name] for s in ok[(v, workload)] if name in s.metrics] for v in variants}
    row_view = _row_view(view, list(values.values()))
    diagnostics = [Diagnostic("view", workload, metric.label, "", detail=row_view)] if row_view != view else []
    figures = {}
    for n, variant in enumerate(variants):
        group = ok[(variant, workload)]
        figures[variant] = replace(
            figure(values[variant], len(failed[(variant, workload)]), row_view, merged_center(metric, group)),
            expected=experiment.variant[n].fails.get(workload, ""))
        diagnostics += noise(workload, metric, variant, group)
    if experiment.series is None:
        compared = [(variants[0], candidate, candidate) for candidate in variants[1:]]
    else:
        compared = step_pairs(variants, {v: ok[(v, workload)] for v in variants})
    rounds = {s.round for s in measured if s.workload == workload}
    against: dict[str, str] = {}
    pending: list[tuple[str, stats.Comparison]] = []
    for reference, candidate, key in compared:
        base, cand = ok[(reference, workload)], ok[(candidate, workload)]
        if key != TOTAL:
            diagnostics += round_effect(workload, metric, candidate, base, cand)
        if reference != variants[0] or key == TOTAL:
            against[key] = reference
        paired_rounds = rounds if experiment.series is None else _both(measured, workload, reference, candidate)
        comparison = compare_row(metric, row_view, base, cand, design, paired_rounds, experiment.tolerance)
        if comparison is not None:
            pending.append((key, comparison))
    return Row(workload, metric, figures, {}, row_view, primary, against), pending, diagnostics


def analyse(run: RunInfo, samples: list[Sample], *, view: View | None = None, min_max: bool | None = None,
            original: Analysis | None = None) -> Analysis:
    """The table of one run. ``view`` and ``min_max`` override ``[report]``;
    ``original`` is the analysis of the run this one rechecks, shown beside it."""
    experiment = Experiment.model_validate_json(run.experiment_json)
    view = stats.checks.view(view or experiment.report.view)
    variants = [v.name for v in experiment.variant]
    measured = [s for s in samples if not s.warmup]
    ok: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    failed: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in measured:
        (ok if sample.status == "ok" else failed)[(sample.variant, sample.workload)].append(sample)
    rows: list[Row] = []
    diagnostics: list[Diagnostic] = []
    pending: Pending = []
    names_of = {w.name: _rows_of(experiment, w.name, {name for v in variants for s in ok[(v, w.name)]
                                                        for name in s.metrics})
                for w in experiment.workload}
    planned = planned_test(experiment, planned_comparisons(experiment, names_of))
    paired_plan = planned.test == PAIRED or (not planned.decidable and plan.paired(experiment))
    design: Design = "paired" if paired_plan else "unpaired"
    for workload in (w.name for w in experiment.workload):
        names = names_of[workload]
        primary = primary_metrics(experiment, workload, names)
        io = iorows.moved({v: ok[(v, workload)] for v in variants}, experiment.tolerance, names)
        at = 1 if names[:1] == [metrics.IO_COUNT] else len(names)  # after the count of I/Os, or last
        for name in names[:at] + io + names[at:]:
            row, found, notes = _row(experiment, workload, name, name in primary, (ok, failed), view, design,
                                     measured)
            pending += [(len(rows), key, comparison) for key, comparison in found]
            rows.append(row)
            diagnostics += notes
    rows, sequential = _decide(rows, pending, experiment, design)
    hosts = host_differences(measured)
    if hosts:
        rows = _refuse(rows, f"the rounds come from hosts that differ in {hosts}; queue them for hosts that "
                             "agree (iolab submit --labels)")
    accels = accel_switch(measured)
    if accels:
        rows = _refuse(rows, f"the VMs ran under different accelerators ({accels}): a boot stalled under KVM "
                             "and the run fell back to TCG; run it again (this host boot's verdict is cached: TCG)")
    result = Analysis(
        run=run, experiment=experiment, variants=variants, rows=rows, failures=grouped(failed, experiment),
        notes=(env_differences(measured, experiment) + prepared.small_ext4(measured) + _allowed(experiment)
               + _plan_note(experiment, planned)
               + _fio_note(experiment, measured) + _unmeasured_note(experiment, measured)),
        view=view, **_progress(measured, experiment),
        min_max=experiment.report.min_max if min_max is None else min_max, diagnostics=diagnostics,
        sequential=sequential, original=original, design=design, planned=planned,
        disturbed=disturbed_rounds([s for s in measured if s.status == "ok"]),
        target_place=prepared.place(measured), block_sizes=prepared.block_sizes(measured),
    )
    if experiment.series is not None:
        result = replace(result, series=attribute(result, measured))
    return replace(result, claims=agreements(result)) if experiment.claims is not None else result


def _both(measured: list[Sample], workload: str, reference: str, candidate: str) -> set[int]:
    """The rounds in which two steps of a series both ran (a bisection's rounds
    run only the steps of their stage)."""
    ran: dict[str, set[int]] = defaultdict(set)
    for sample in measured:
        if sample.workload == workload:
            ran[sample.variant].add(sample.round)
    return ran[reference] & ran[candidate]
