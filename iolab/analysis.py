"""From stored samples to the comparison table a reviewer reads.

`analyse` takes a run's samples and returns plain data (`Analysis`):
per workload x metric x variant the central value, its spread and n; per
candidate the delta against the baseline with its confidence interval,
the test and the verdict after correction over the whole table; noise
diagnostics (spread, drift across rounds, outliers by round). Renderers
in iolab.report only format this data.

Verdicts. A fixed-length run corrects the p-values of the whole table
with Holm (or Benjamini-Hochberg), as ``[report] correction`` says. An
adaptive run (``iterations = "auto"``) looked at its data after every
round, so each comparison is tested at the per-look level its stopping
rule used (:func:`sequential_level`): alpha split evenly (Bonferroni) over
the table's comparisons, then over the planned looks by the calibrated
boundary of :func:`iolab.stats.sequential_alpha`. The chance of any false
"significant" in the table stays at or below alpha.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np

from iolab import histogram, metrics, stats
from iolab.stats import tails
from iolab.cell.environment import CHECKED
from iolab.metrics import Metric
from iolab.spec import Experiment
from iolab.cell.sample import Sample
from iolab.store import RunInfo

MIN_SAMPLES = 4
HIGH_SPREAD = 0.05  # relative stddev above which a row gets a noise footnote
DRIFT_P = 0.01  # trend test level for the drift footnote
BOUNDARY = "calibrated"


@dataclass(frozen=True)
class Figure:
    """One variant's figures in one row."""

    n: int
    failed: int
    center: float  # nan when there is no successful sample
    rel_spread: float
    summary: stats.Summary | None


@dataclass(frozen=True)
class Row:
    workload: str
    metric: Metric
    figures: dict[str, Figure]  # by variant name
    comparisons: dict[str, stats.Comparison]  # by candidate name
    view: str = "median"  # the view used for this row (hmean falls back per row)


@dataclass(frozen=True)
class Failure:
    variant: str
    workload: str
    error: str
    cells: list[int]  # seq numbers of the failed cells


@dataclass(frozen=True)
class Diagnostic:
    """A noise finding about one variant's values in one row.

    kind: "spread" (relative stddev above HIGH_SPREAD), "drift" (trend across
    rounds, p < DRIFT_P), "outliers" (Tukey fences; ``rounds`` names them),
    "rounds" (a candidate's values rise and fall with the baseline's from
    round to round: Kendall tau of the values paired by round, p < DRIFT_P),
    "view" (the row could not use the requested view).
    """

    kind: str
    workload: str
    label: str
    variant: str
    value: float = math.nan  # spread: rel. stddev; drift: Kendall tau
    p: float = math.nan  # drift: p of the trend test
    rounds: tuple[int, ...] = ()  # outliers: their rounds
    detail: str = ""  # view: what was shown instead


@dataclass(frozen=True)
class Sequential:
    """How an adaptive run's verdicts are made (see the module docstring)."""

    alpha: float  # the table's alpha
    comparisons: int  # alpha is split over this many comparisons ...
    first_look: int  # ... and over looks after rounds first_look..last_look
    last_look: int
    boundary: str
    look_alpha: float  # each comparison is significant when p < look_alpha

    @property
    def looks(self) -> int:
        return self.last_look - self.first_look + 1


@dataclass(frozen=True)
class Analysis:
    run: RunInfo
    experiment: Experiment
    variants: list[str]  # baseline first
    rows: list[Row]
    failures: list[Failure]
    notes: list[str] = field(default_factory=list)
    rounds_done: int = 0
    view: str = "median"  # requested view
    min_max: bool = False  # show min..max lines
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sequential: Sequential | None = None  # set for iterations = "auto"
    original: Analysis | None = None  # for a recheck run: the run it rechecks

    @property
    def baseline(self) -> str:
        return self.variants[0]


def _row_metrics(experiment: Experiment, workload: str, produced: set[str]) -> list[str]:
    chosen = experiment.workload_named(workload).metrics or experiment.report.metrics
    if chosen:
        return list(chosen)
    return [name for name in metrics.DEFAULT_ROWS if name in produced]


def _figure(values: list[float], failed: int, view: str, center: float | None = None) -> Figure:
    if not values:
        return Figure(0, failed, math.nan, math.nan, None)
    summary = stats.summarize(values, view)
    return Figure(
        n=len(values),
        failed=failed,
        center=summary.center if center is None else center,
        rel_spread=summary.rel_spread,
        summary=summary,
    )


def _compare(
    metric: Metric,
    view: str,
    base: list[Sample],
    cand: list[Sample],
) -> stats.Comparison | None:
    base_values = [s.metrics[metric.name] for s in base if metric.name in s.metrics]
    cand_values = [s.metrics[metric.name] for s in cand if metric.name in s.metrics]
    if not base_values or not cand_values:
        return None
    comparison = stats.compare(
        base_values, cand_values, higher_is_better=metric.higher_is_better, view=view, min_n=MIN_SAMPLES
    )
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


def _merged_center(metric: Metric, samples: list[Sample]) -> float | None:
    if metric.histogram is None or metric.quantile is None:
        return None
    hists = [s.histograms[metric.histogram] for s in samples if metric.histogram in s.histograms]
    if not hists:
        return None
    return histogram.percentile(histogram.merge(hists), metric.quantile) * metric.scale


def _env_differences(samples: list[Sample], experiment: Experiment) -> list[str]:
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
            values = {json.dumps(s.env.get(key)) for s in group}
            if len(values) > 1:
                notes.append(f"samples differ in {key}: {', '.join(sorted(values))}")
    return notes


def _row_view(view: str, values: list[list[float]]) -> str:
    """The requested view, or the median where the harmonic mean cannot be taken."""
    if view == "hmean" and any(v <= 0 for group in values for v in group):
        return "median"
    return view


def _noise(workload: str, metric: Metric, variant: str, group: list[Sample]) -> list[Diagnostic]:
    """Spread, drift and outlier findings for one variant's values in round order."""
    found = []
    pairs = [(s.round, s.metrics[metric.name]) for s in sorted(group, key=lambda s: s.seq) if metric.name in s.metrics]
    rounds = [r for r, _ in pairs]
    values = np.array([v for _, v in pairs], dtype=float)
    where = dict(workload=workload, label=metric.label, variant=variant)
    if values.size < MIN_SAMPLES:
        return found
    mean = float(np.mean(values))
    if mean != 0:
        spread = float(np.std(values, ddof=1)) / abs(mean)
        if spread > HIGH_SPREAD:
            found.append(Diagnostic("spread", value=spread, **where))
    drift = stats.trend(values)
    if math.isfinite(drift.p) and drift.p < DRIFT_P:
        found.append(Diagnostic("drift", value=drift.tau, p=drift.p, **where))
    q1, q3 = np.percentile(values, [25, 75])
    if q3 > q1:  # with most values equal (quantized percentiles) Tukey's rule flags all others
        odd = stats.outliers(values)
        if odd:
            found.append(Diagnostic("outliers", rounds=tuple(rounds[i] for i in odd), **where))
    return found


def _round_effect(workload: str, metric: Metric, candidate: str, base: list[Sample],
                  cand: list[Sample]) -> list[Diagnostic]:
    """Whether baseline and candidate move together across rounds (the
    machine's state changing between rounds, which interleaving cancels)."""
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


def sequential_level(experiment: Experiment, comparisons: int) -> Sequential:
    """The per-look level of an adaptive run with this many comparisons in its table."""
    alpha = experiment.report.alpha
    run = experiment.run
    share = alpha / max(1, comparisons)
    look_alpha = stats.sequential_alpha(share, run.min_iterations, run.max_iterations, BOUNDARY)
    return Sequential(alpha, comparisons, run.min_iterations, run.max_iterations, BOUNDARY, look_alpha)


def analyse(
    run: RunInfo,
    samples: list[Sample],
    *,
    view: str | None = None,
    min_max: bool | None = None,
    original: Analysis | None = None,
) -> Analysis:
    """The table of one run. ``view`` and ``min_max`` override ``[report]``;
    ``original`` is the analysis of the run this one rechecks, shown beside it."""
    experiment = Experiment.model_validate_json(run.experiment_json)
    view = view or experiment.report.view
    if view not in stats.VIEWS:
        raise ValueError(f"view must be one of {stats.VIEWS}, got {view!r}")
    variants = [v.name for v in experiment.variant]
    measured = [s for s in samples if not s.warmup]
    ok: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    failed: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in measured:
        (ok if sample.status == "ok" else failed)[(sample.variant, sample.workload)].append(sample)

    rows: list[Row] = []
    diagnostics: list[Diagnostic] = []
    pending: list[tuple[int, str, stats.Comparison]] = []
    for workload in (w.name for w in experiment.workload):
        produced = {name for v in variants for s in ok[(v, workload)] for name in s.metrics}
        for name in _row_metrics(experiment, workload, produced):
            metric = metrics.lookup(name)
            values = {
                variant: [s.metrics[name] for s in ok[(variant, workload)] if name in s.metrics]
                for variant in variants
            }
            row_view = _row_view(view, list(values.values()))
            if row_view != view:
                diagnostics.append(Diagnostic("view", workload, metric.label, "", detail=row_view))
            figures = {}
            for variant in variants:
                group = ok[(variant, workload)]
                figures[variant] = _figure(
                    values[variant], len(failed[(variant, workload)]), row_view, _merged_center(metric, group)
                )
                diagnostics += _noise(workload, metric, variant, group)
            rows.append(Row(workload, metric, figures, {}, row_view))
            for candidate in variants[1:]:
                diagnostics += _round_effect(workload, metric, candidate, ok[(variants[0], workload)],
                                             ok[(candidate, workload)])
                comparison = _compare(metric, row_view, ok[(variants[0], workload)], ok[(candidate, workload)])
                if comparison is not None:
                    pending.append((len(rows) - 1, candidate, comparison))

    sequential = None
    if experiment.run.auto:
        sequential = sequential_level(experiment, len(rows) * (len(variants) - 1))
        decided = stats.decide([c for _, _, c in pending], sequential.look_alpha, "none")
    else:
        decided = stats.decide([c for _, _, c in pending], experiment.report.alpha, experiment.report.correction)
    for (row_index, candidate, _), comparison in zip(pending, decided):
        rows[row_index].comparisons[candidate] = comparison

    failures = []
    for (variant, workload), group in sorted(failed.items()):
        by_error: dict[str, list[int]] = defaultdict(list)
        for sample in group:
            by_error[sample.error or "unknown error"].append(sample.seq)
        failures += [Failure(variant, workload, error, seqs) for error, seqs in by_error.items()]

    rounds_done = len({s.round for s in measured})
    return Analysis(
        run=run,
        experiment=experiment,
        variants=variants,
        rows=rows,
        failures=failures,
        notes=_env_differences(measured, experiment),
        rounds_done=rounds_done,
        view=view,
        min_max=experiment.report.min_max if min_max is None else min_max,
        diagnostics=diagnostics,
        sequential=sequential,
        original=original,
    )
