"""A/A calibration: the baseline run against itself.

``iolab calibrate EXP.toml`` runs the experiment's baseline variant twice
per round -- as itself and as an identical copy named with a prime
(``buffered`` and ``buffered'``) -- interleaved, like any run, and stores it
as a run whose ``[report] kind`` is "calibration". Per report row it then
gives:

noise
    relative stddev (stddev / mean) of all values of both copies.
A/A delta
    the copy against the baseline, decided like any table (paired by round,
    Holm over the primary rows): "~" is the expected outcome, "*" a false
    alarm.
detectable change
    the smallest relative shift the table's test finds with 90% power at
    this noise with n rounds, at ``alpha / primary rows`` -- the level the
    best primary row of a Holm-corrected table must reach. Paired (the
    default for an interleaved run): the signed-rank test at the noise of
    the per-round log ratios copy/baseline
    (:func:`iolab.stats.detectable_change_paired`); unpaired: Mann-Whitney U
    at the noise of the pooled values (:func:`iolab.stats.detectable_change`).
    Both seeded simulations from a smoothed bootstrap.
A/A false-positive rate
    the share of subsets of k rounds in which the copy against the baseline,
    on those rounds only, has p < alpha with the table's test
    (:func:`iolab.stats.aa_false_positive_rate`: pairs stay in their rounds),
    beside the share expected with no difference at k. Subsets overlap; with
    few rounds this is a coarse figure -- bench/aa_rate.py measures the rate
    over many more rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np

from iolab import stats
from iolab.analysis import Analysis
from iolab.spec import Experiment, Run
from iolab.cell.sample import Sample

POWER = 0.9
DEFAULT_ITERATIONS = 10  # for an experiment whose own iterations are "auto"


def copy_name(name: str) -> str:
    return name[:23] + "'"


def aa_experiment(experiment: Experiment, iterations: int | None = None) -> Experiment:
    """The experiment with its baseline twice (baseline, baseline'), fixed length."""
    base = experiment.baseline
    own = experiment.run.iterations
    rounds = iterations or (own if isinstance(own, int) else DEFAULT_ITERATIONS)
    data = experiment.model_dump()
    plain = {**base.model_dump(), "step": None}  # a series' base, calibrated as a plain variant
    data["series"] = None
    data["variant"] = [plain, {**plain, "name": copy_name(base.name)}]
    data["run"] = Run(iterations=rounds, order="interleaved", warmup=experiment.run.warmup,
                      seed=experiment.run.seed).model_dump()
    data["report"] = {**experiment.report.model_dump(), "kind": "calibration"}
    return Experiment.model_validate({**data, "inputs": experiment.inputs})


@dataclass(frozen=True)
class CalibrationRow:
    workload: str
    metric: str
    label: str
    unit: str
    n: int  # rounds with a value from both copies
    noise: float  # rel. stddev of all values of both copies
    aa: stats.Comparison | None
    detectable: float  # relative shift; inf: none at this n; nan: cannot say (see warnings); an exact
    # row with a tolerance (aa.exact, instructions mode): its resolution, beyond which a change shows (0: any)
    false_positive: stats.AARate | None
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Calibration:
    analysis: Analysis  # the A/A run's comparison table (header, failures, diagnostics)
    baseline: str
    copy: str
    alpha: float
    detect_alpha: float  # alpha / primary rows
    power: float
    rows: list[CalibrationRow]
    test: stats.Test = stats.UNPAIRED  # the test the table used: paired (signed-rank) or not


def _paired(samples: list[Sample], workload: str, metric: str, a: str, b: str) -> tuple[list[float], list[float]]:
    by_round: dict[str, dict[int, float]] = {a: {}, b: {}}
    for s in samples:
        if s.status == "ok" and not s.warmup and s.workload == workload and s.variant in by_round:
            if metric in s.metrics:
                by_round[s.variant][s.round] = s.metrics[metric]
    rounds = sorted(set(by_round[a]) & set(by_round[b]))
    return [by_round[a][r] for r in rounds], [by_round[b][r] for r in rounds]


def _noise(pooled: np.ndarray) -> float:
    """The relative stddev of both copies' values (nan: too few, or a mean of 0)."""
    if pooled.size >= 2 and np.mean(pooled) != 0:
        return float(np.std(pooled, ddof=1) / abs(np.mean(pooled)))
    return math.nan


def within_tolerance(aa: stats.Comparison | None) -> TypeGuard[stats.Comparison]:
    """An A/A comparison exact within a tolerance (instructions mode): no test judged it."""
    return aa is not None and aa.exact is not None and aa.tolerance > 0


RowFigures = tuple[float, float, stats.AARate | None, tuple[str, ...]]  # noise, detectable, A/A rate, warnings


def _exact_row(a: list[float], b: list[float], aa: stats.Comparison) -> RowFigures:
    """A row whose values repeat within a tolerance (iolab.stats.exact;
    instructions mode): no test and no A/A rate; the smallest change that
    shows is the A/A's resolution (its values apart by more than
    iolab.stats.exact.SEPARATION times their ranges; 0: identical values,
    where any change of the value shows), from 3 rounds on where values vary.
    (Without a tolerance, values that repeat are quantized or constant: _row
    says a change smaller than one step does not show.)"""
    return _noise(np.array(a + b, dtype=float)), aa.resolution, None, ()


def _row(a: list[float], b: list[float], test: stats.Test, alpha: float, detect_alpha: float) -> RowFigures:
    """noise, detectable change, A/A rate and warnings of one row."""
    pooled = np.array(a + b, dtype=float)
    warnings: list[str] = []
    detectable = math.nan
    rate = None
    noise = _noise(pooled)
    if len(a) < 2:
        warnings.append(f"need >= 2 rounds with both copies, have {len(a)}")
    elif np.any(pooled <= 0):
        warnings.append("values of 0 or below: no relative detectable change")
    elif pooled.max() == pooled.min():
        warnings.append("all values equal (deterministic, or quantized, e.g. a histogram bucket): "
                        "a change smaller than one step does not show at all")
    elif test == stats.PAIRED:
        ratios = np.log(np.array(b)) - np.log(np.array(a))
        detectable = stats.detectable_change_paired(ratios, len(a), detect_alpha, POWER)
        rate = stats.aa_false_positive_rate(a, b, alpha, test=test)
        warnings += rate.warnings
    else:
        detectable = stats.detectable_change(pooled, len(a), detect_alpha, POWER)
        rate = stats.aa_false_positive_rate(a, b, alpha, test=test)
        warnings += rate.warnings
    return noise, detectable, rate, tuple(warnings)


def calibrate(result: Analysis, samples: list[Sample]) -> Calibration:
    """Noise, detectable change and A/A false-positive rate per row of an A/A run."""
    baseline, copy = result.variants[0], result.variants[1]
    alpha = result.experiment.report.alpha
    detect_alpha = alpha / max(1, sum(1 for row in result.rows if row.primary))
    test: stats.Test = stats.PAIRED if result.design == "paired" else stats.UNPAIRED
    rows = []
    for row in result.rows:
        a, b = _paired(samples, row.workload, row.metric.name, baseline, copy)
        aa = row.comparisons.get(copy)
        if within_tolerance(aa):
            noise, detectable, rate, warnings = _exact_row(a, b, aa)
        else:
            noise, detectable, rate, warnings = _row(a, b, test, alpha, detect_alpha)
        rows.append(CalibrationRow(
            workload=row.workload, metric=row.metric.name, label=row.metric.label, unit=row.metric.unit,
            n=len(a), noise=noise, aa=aa, detectable=detectable,
            false_positive=rate, warnings=warnings,
        ))
    return Calibration(result, baseline, copy, alpha, detect_alpha, POWER, rows, test)


def detectable_at(samples: list[Sample], workload: str, metric: str, baseline: str, copy: str, test: stats.Test,
                  n: int, level: float) -> float:
    """The smallest change ``test`` finds with POWER at ``n`` rounds and
    ``level``, at the noise an A/A run of this machine recorded (nan: that
    run cannot say: too few rounds, values of 0, or all equal)."""
    a, b = _paired(samples, workload, metric, baseline, copy)
    pooled = np.array(a + b, dtype=float)
    if len(a) < 2 or np.any(pooled <= 0) or pooled.max() == pooled.min():
        return math.nan
    if test == stats.PAIRED:
        return stats.detectable_change_paired(np.log(np.array(b)) - np.log(np.array(a)), n, level, POWER)
    return stats.detectable_change(pooled, n, level, POWER)
