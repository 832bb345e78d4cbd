"""One metric across the runs of one experiment: is it moving?

For each stored run of the experiment (same name; calibrations left out),
each workload x variant gets the central value of the metric with its
spread and 95% CI, computed as a run's own report computes them (the view's
summary; a percentile from the merged histogram of the run's rounds). Runs
of one timing mode only (the latest run's, or the one asked for): the others
are left out with a note.

Where a run's setup differs from the run before it (a table of the
experiment, a file it names, or a checked key of the samples' environment:
kernel, fio, CPUs...), the history marks that run and says what changed: a
step in a trend there may be the setup's, not the code's.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from iolab import stats
from iolab.analysis import metrics
from iolab.analysis.metrics import Metric
from iolab.analysis.table import figure, merged_center
from iolab.cell.environment import CHECKED, lookup
from iolab.spec import Experiment
from iolab.store import RunInfo, Sample, Store, StoreError

SPARKS = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class Point:
    run: int
    center: float  # nan: the run has no value here
    low: float
    high: float
    rel_spread: float
    n: int


@dataclass(frozen=True)
class Series:
    workload: str
    variant: str
    points: list[Point]  # one per run of History.runs, in run order


@dataclass(frozen=True)
class History:
    experiment: str
    metric: Metric
    view: stats.View
    runs: list[RunInfo]
    series: list[Series]
    notes: list[str]
    changes: dict[int, list[str]] = field(default_factory=dict)  # run id -> what changed since the run before


# Tables of an experiment that change what is measured (not how often or how it is reported).
SETUP_TABLES = ("target", "cell", "collect", "vm", "kernel", "series", "fio", "derived")


def sparkline(values: list[float]) -> str:
    """One character per value, ▁ (the smallest) to █ (the largest); a space
    where there is no value."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return " " * len(values)
    low, high = min(finite), max(finite)
    if high == low:
        return "".join(SPARKS[3] if math.isfinite(v) else " " for v in values)
    scale = (len(SPARKS) - 1) / (high - low)
    return "".join(SPARKS[round((v - low) * scale)] if math.isfinite(v) else " " for v in values)


def _listing(names: list[str], limit: int = 12) -> str:
    if not names:
        return "none"
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _point(run: RunInfo, metric: Metric, view: stats.View, group: list[Sample]) -> Point:
    values = [s.metrics[metric.name] for s in group if metric.name in s.metrics]
    if not values:
        return Point(run.id, math.nan, math.nan, math.nan, math.nan, 0)
    if view == "hmean" and any(v <= 0 for v in values):
        view = "median"
    shown = figure(values, 0, view, merged_center(metric, group))
    summary = shown.summary
    low, high = (summary.low, summary.high) if summary else (math.nan, math.nan)
    return Point(run.id, shown.center, low, high, shown.rel_spread, shown.n)


def _experiment_runs(store: Store, name: str | None) -> tuple[str, list[RunInfo]]:
    if name is None:
        runs = [r for r in store.runs() if Experiment.model_validate_json(r.experiment_json).report.kind
                != "calibration"]
        if not runs:
            raise StoreError(f"no runs in {store.where} yet (start one with 'iolab run')")
        name = runs[-1].name
    runs = [r for r in store.runs(name)
            if Experiment.model_validate_json(r.experiment_json).report.kind != "calibration"]
    if not runs:
        known = sorted({r.name for r in store.runs()})
        raise StoreError(f"no runs of an experiment named {name!r} (stored: {', '.join(known) or 'none'})")
    return name, runs


def _of_timing(runs: list[RunInfo], timing: str | None) -> tuple[str, list[RunInfo], list[str]]:
    """The runs of one timing mode (default: the latest run's), and a note
    naming those left out: a time and an instruction count share no axis."""
    modes = {r.id: Experiment.model_validate_json(r.experiment_json).clock for r in runs}
    timing = timing or modes[runs[-1].id]
    kept = [r for r in runs if modes[r.id] == timing]
    if not kept:
        raise StoreError(f"no {timing}-mode runs of this experiment (its runs: "
                         f"{', '.join(f'{i} {m}' for i, m in modes.items())})")
    left = [str(r.id) for r in runs if modes[r.id] != timing]
    which = (f"runs {', '.join(left)} left out: not {timing}-mode runs" if len(left) > 1
             else f"run {''.join(left)} left out: not a {timing}-mode run")
    notes = [f"{which} (--timing chooses)"] if left else []
    return timing, kept, notes


def _by_name(items: list[dict[str, Any]]) -> dict[str, str]:
    return {str(item.get("name")): json.dumps(item, sort_keys=True) for item in items}


def setup_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The parts of an experiment (model dumps) that differ: a setup table,
    a variant or a workload by name, a file it names (``files``: name ->
    sha256, of each side)."""
    changed = [f"[{table}]" for table in SETUP_TABLES
               if json.dumps(before.get(table), sort_keys=True) != json.dumps(after.get(table), sort_keys=True)]
    for kind in ("variant", "workload"):
        old, new = _by_name(before.get(kind, [])), _by_name(after.get(kind, []))
        changed += [f"{kind} {name}" + (" added" if name not in old else "")
                    for name in new if old.get(name) != new[name]]
        changed += [f"{kind} {name} removed" for name in old if name not in new]
    old_files, new_files = before.get("files", {}), after.get("files", {})
    changed += [f"file {name}" for name in sorted(set(old_files) & set(new_files))
                if old_files[name] != new_files[name]]
    return changed


def env_changes(before: list[Sample], after: list[Sample]) -> list[str]:
    """Checked environment keys whose values (over the ok samples) differ
    between two runs: "kernel 6.18.0 -> 6.19.0"."""
    changed = []
    for key in CHECKED:  # a key one run did not record (an older iolab, a host cell's vm.*) is not a change
        values = [sorted({json.dumps(lookup(s.env, key)) for s in group if s.status == "ok"} - {"null"})
                  for group in (before, after)]
        if values[0] and values[1] and values[0] != values[1]:
            old, new = (", ".join(v.strip('"') for v in side) for side in values)
            changed.append(f"{key} {old} -> {new}")
    return changed


def _setup(store: Store, run: RunInfo) -> dict[str, Any]:
    dump: dict[str, Any] = json.loads(run.experiment_json)
    dump["files"] = {name: hashlib.sha256(data).hexdigest() for name, data in store.run_files(run.id).items()}
    return dump


def history(store: Store, metric_name: str, *, experiment: str | None = None, last: int | None = None,
            view: stats.View = "median", timing: str | None = None) -> History:
    if view not in stats.VIEWS:
        raise StoreError(f"view must be one of {', '.join(stats.VIEWS)}, got {view!r}")
    name, runs = _experiment_runs(store, experiment)
    others = sorted({r.name for r in store.runs()} - {name})
    # without --experiment, the latest run's experiment: say so, and how to pick another
    chosen = (f"the experiment {name!r} is the latest run's; --experiment NAME picks another "
              f"({_listing(others, 4)})" if experiment is None and others else "")
    timing, runs, timing_notes = _of_timing(runs, timing)
    if last is not None:
        runs = runs[-last:]
    points: dict[tuple[str, str], dict[int, Point]] = defaultdict(dict)
    metric_name = metrics.named(metric_name)  # "rd BW MiB/s", as the table labels it, is read_bw
    metric = metrics.lookup(metric_name, timing)
    seen_metrics: set[str] = set()
    changes: dict[int, list[str]] = {}
    previous: tuple[dict[str, Any], list[Sample]] | None = None
    for run in runs:
        groups: dict[tuple[str, str], list[Sample]] = defaultdict(list)
        samples = store.samples(run.id)
        setup = _setup(store, run)
        if previous is not None:
            changed = setup_changes(previous[0], setup) + env_changes(previous[1], samples)
            if changed:
                changes[run.id] = changed
        previous = setup, samples
        for sample in samples:
            if sample.status == "ok" and not sample.warmup:
                groups[(sample.workload, sample.variant)].append(sample)
                seen_metrics.update(sample.metrics)
        for key, group in groups.items():
            point = _point(run, metric, view, group)
            if point.n:
                points[key][run.id] = point
    if not points:
        close = difflib.get_close_matches(metric_name, sorted(seen_metrics), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        ordered = [m for m in metrics.KNOWN if m in seen_metrics] + sorted(seen_metrics - set(metrics.KNOWN))
        raise StoreError(f"no run of {name!r} has the metric {metric_name!r}; {hint}its metrics: "
                         f"{_listing(ordered, 8)}"  # the catalogue's first: a message stays a few lines
                         + (f"\n({chosen})" if chosen else ""))
    latest = Experiment.model_validate_json(runs[-1].experiment_json)
    order = {w.name: i for i, w in enumerate(latest.workload)}, {v.name: i for i, v in enumerate(latest.variant)}
    keys = sorted(points, key=lambda k: (order[0].get(k[0], len(order[0])), k[0],
                                         order[1].get(k[1], len(order[1])), k[1]))
    empty = {r.id: Point(r.id, math.nan, math.nan, math.nan, math.nan, 0) for r in runs}
    series = [Series(w, v, [points[(w, v)].get(r.id, empty[r.id]) for r in runs]) for w, v in keys]
    notes = [*([chosen] if chosen else []), *timing_notes]
    missing = [r.id for i, r in enumerate(runs) if all(math.isnan(s.points[i].center) for s in series)]
    if missing:
        notes.append(f"runs without this metric: {', '.join(map(str, missing))}")
    notes += [f"run {run}'s setup differs from the run before: {'; '.join(what)}" for run, what in changes.items()]
    return History(name, metric, view, runs, series, notes, changes)
