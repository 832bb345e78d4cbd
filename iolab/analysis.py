"""From stored samples to the comparison table a reviewer reads.

`analyse` takes a run's samples and returns plain data (`Analysis`):
per workload x metric x variant the central value, its spread and n; per
candidate the delta against the baseline with its confidence interval,
the test and the verdict after correction over the whole table. Renderers
in iolab.report only format this data.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from iolab import histogram, metrics, stats, tails
from iolab.environment import CHECKED
from iolab.metrics import Metric
from iolab.spec import Experiment
from iolab.store import RunInfo, Sample

MIN_SAMPLES = 4


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


@dataclass(frozen=True)
class Failure:
    variant: str
    workload: str
    error: str
    cells: list[int]  # seq numbers of the failed cells


@dataclass(frozen=True)
class Analysis:
    run: RunInfo
    experiment: Experiment
    variants: list[str]  # baseline first
    rows: list[Row]
    failures: list[Failure]
    notes: list[str] = field(default_factory=list)
    rounds_done: int = 0

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


def _env_differences(samples: list[Sample]) -> list[str]:
    notes = []
    for key in CHECKED:
        values = {json.dumps(s.env.get(key)) for s in samples if s.status == "ok"}
        if len(values) > 1:
            notes.append(f"samples differ in {key}: {', '.join(sorted(values))}")
    return notes


def analyse(run: RunInfo, samples: list[Sample]) -> Analysis:
    experiment = Experiment.model_validate_json(run.experiment_json)
    view = experiment.report.view
    variants = [v.name for v in experiment.variant]
    measured = [s for s in samples if not s.warmup]
    ok: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    failed: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in measured:
        (ok if sample.status == "ok" else failed)[(sample.variant, sample.workload)].append(sample)

    rows: list[Row] = []
    pending: list[tuple[int, str, stats.Comparison]] = []
    for workload in (w.name for w in experiment.workload):
        produced = {name for v in variants for s in ok[(v, workload)] for name in s.metrics}
        for name in _row_metrics(experiment, workload, produced):
            metric = metrics.lookup(name)
            figures = {}
            for variant in variants:
                group = ok[(variant, workload)]
                values = [s.metrics[name] for s in group if name in s.metrics]
                figures[variant] = _figure(
                    values, len(failed[(variant, workload)]), view, _merged_center(metric, group)
                )
            rows.append(Row(workload, metric, figures, {}))
            for candidate in variants[1:]:
                comparison = _compare(metric, view, ok[(variants[0], workload)], ok[(candidate, workload)])
                if comparison is not None:
                    pending.append((len(rows) - 1, candidate, comparison))

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
        notes=_env_differences(measured),
        rounds_done=rounds_done,
    )
