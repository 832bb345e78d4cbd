"""Reports from the store: the stage between the store and the renderers.

``run_report`` is one run (with the run it rechecks beside it);
``compare_report`` two runs of one experiment (iolab.analysis.compare);
``baseline_report`` a run against the run saved under a baseline name.
"""

from __future__ import annotations

from iolab.analysis.table import analyse
from iolab.analysis import compare
from iolab.analysis import envdiff
from iolab.analysis.hosts import hosts
from iolab.analysis.model import Report
from iolab.stats import View
from iolab.store import Store


def run_report(store: Store, run_id: int, *, view: View | None = None, min_max: bool | None = None) -> Report:
    run = store.run(run_id)
    samples = store.samples(run_id)
    original = None
    if run.recheck_of is not None:
        original = analyse(store.run(run.recheck_of), store.samples(run.recheck_of),
                                    view=view, min_max=min_max)
    result = analyse(run, samples, view=view, min_max=min_max, original=original)
    measured = tuple(s for s in samples if not s.warmup)
    environment = envdiff.rows(measured, lambda s: s.variant, result.variants)
    where = hosts(store.attempts(run_id), samples, store.samples(run_id, superseded=True)) if run.queued else None
    return Report(result, measured, tuple(environment), hosts=where)


def compare_report(store: Store, run_a: int, run_b: int, *, view: View | None = None,
                   min_max: bool | None = None) -> Report:
    return compare.runs_compared(store.run(run_a), store.samples(run_a), store.run(run_b),
                                 store.samples(run_b), view=view, min_max=min_max)


def baseline_report(store: Store, name: str, run_id: int, *, view: View | None = None,
                    min_max: bool | None = None) -> Report:
    saved = store.baseline(name)
    report = compare_report(store, saved.run_id, run_id, view=view, min_max=min_max)
    note = f"run {saved.run_id} is the baseline saved as {name!r}"
    return Report(report.analysis, report.samples, report.environment, report.compared,
                  (note, *report.notes))
