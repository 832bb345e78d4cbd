"""A series run's table and attribution, shared by the renderers.

One column per step (0 is the base), a row's values on one line and under
them each step's delta against the step measured before it, then the
total (the last measured step against the first). Below: which step adds
which patch, and the attribution: each change with the patch that made it,
its size and verdict; changes a bisection could not place, with the
patches they lie in; the builds and rounds spent.
"""

from __future__ import annotations

import math
from pathlib import Path

from iolab.analysis import Analysis, Row
from iolab.analysis.series import TOTAL, Change, SeriesResult
from iolab.report import figures
from iolab.stats import Comparison
from iolab.units import percent

WIDTH = figures.WIDTH


def _value(row: Row, variant: str, spread: bool) -> str:
    figure = row.figures[variant]
    if figure.n == 0:
        return "FAILED" if figure.failed else "-"
    return figures.figure_cell(figure, row.view) if spread else figures.number(figure.center)


def step_label(analysis: Analysis, index: int) -> str:
    """A step's column: "base", then its number."""
    return str(analysis.experiment.variant[index].step) if index else "base"


def _columns(analysis: Analysis, steps: list[int]) -> list[str]:
    return ["", "", *(step_label(analysis, k) for k in steps), "total"]


def rows(analysis: Analysis, steps: list[int], spread: bool, total: bool) -> list[list[str]]:
    """The table's lines for these steps (indices into the variants); for a recheck, the rechecked
    run's rows, each with its "recheck" line and delta under it (the recheck's figures)."""
    names = [analysis.variants[k] for k in steps]
    lines = [_columns(analysis, steps)[: len(steps) + 2 + total]]
    previous = None
    recheck = {(r.workload, r.metric.name): r for r in analysis.rows} if analysis.original else {}
    for row in (analysis.original or analysis).rows:
        first = row.workload if row.workload != previous else ""
        previous = row.workload
        lines += _row_lines(analysis, row, names, spread, total, [first, row.metric.label])
        again = recheck.get((row.workload, row.metric.name))
        if analysis.original is not None:
            lines += _row_lines(analysis, again, names, spread, total, ["", "  recheck"]) if again else \
                [["", "  recheck", *("-" for _ in names)]]
    return lines


def _row_lines(analysis: Analysis, row: Row, names: list[str], spread: bool, total: bool,
               label: list[str]) -> list[list[str]]:
    """A row's values and, under them, each step's delta (and the total's)."""
    values = [*label, *(_value(row, name, spread) for name in names)] + [""] * total
    deltas = ["" if name not in row.comparisons else figures.delta_cell(row.comparisons[name]) for name in names]
    if total:
        whole = row.comparisons.get(TOTAL) or _only_step(row, analysis)
        deltas.append(figures.delta_cell(whole) if whole else "")
    return [values, ["", "  delta", *deltas]]


def _only_step(row: Row, analysis: Analysis) -> Comparison | None:
    """With two measured steps the total is the one step's delta."""
    steps = [c for key, c in row.comparisons.items() if key != TOTAL]
    return steps[0] if len(steps) == 1 else None


def aligned(lines: list[list[str]]) -> list[str]:
    """Two label columns left-aligned, the figures right-aligned."""
    count = max(len(line) for line in lines)
    lines = [line + [""] * (count - len(line)) for line in lines]
    widths = [max(len(line[i]) for line in lines) for i in range(count)]
    out = []
    for line in lines:
        cells = [f"{cell:<{w}}" if i < 2 else f"{cell:>{w}}" for i, (cell, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells).rstrip())
    return out


def _stacked(lines: list[list[str]]) -> list[str]:
    """The workload on a line of its own above its rows (saves the first column)."""
    body = aligned([line[1:] for line in lines])
    out = [f"  {body[0]}"]
    for line, text in zip(lines[1:], body[1:]):
        if line[0]:
            out.append(line[0])
        out.append(f"  {text}")
    return out


def text_table(analysis: Analysis, width: int = WIDTH) -> list[str]:
    """The table as mail lines: with the spreads when they fit, else the
    values alone, the workload above its rows, and steps in groups."""
    count = len(analysis.variants)
    for spread in (True, False):
        for layout in (aligned, _stacked):
            lines = layout(rows(analysis, list(range(count)), spread, True))
            if max(len(line) for line in lines) <= width:
                return lines
    out: list[str] = []
    group = 4
    for start in range(0, count, group):
        steps = list(range(start, min(start + group, count)))
        last = steps[-1] == count - 1
        out += ([""] if out else []) + _stacked(rows(analysis, steps, False, last))
    return out


def _patch(path: str | None) -> str:
    return Path(path).name if path else "the base"


def steps_line(analysis: Analysis) -> str:
    series = analysis.series
    assert series is not None
    named = [f"{s.step} {_patch(s.patch)}" + (" (did not build)" if s.build_error else "" if s.cells else " (not run)")
             for s in series.steps]
    return "steps: " + "; ".join([f"base ({analysis.variants[0]})", *named[1:]])


def kernels_line(analysis: Analysis) -> list[str]:
    """Each step's kernel as booted (release and patches), and what it was
    built from (the source package and its version), from the run's record
    (no line when the steps did not run in VMs)."""
    series = analysis.series
    assert series is not None
    vm = analysis.run.host.get("vm")
    if vm is None:
        return []
    kernels, origins = vm.get("kernels") or {}, vm.get("kernel_from") or {}
    parts = []
    for step in series.steps:
        name = step_label(analysis, step.step)
        known = kernels.get(step.name)
        parts.append(f"{name} did not build" if step.build_error else f"{name} {known}" if known
                     else f"{name} not built")
    built = sorted(set(origins.values()))
    return ["kernels" + (f" (from {', '.join(built)})" if built else "") + ": " + "; ".join(parts)]


def _change(change: Change) -> str:
    ci = ""
    if math.isfinite(change.delta_low) and math.isfinite(change.delta_high):
        ci = f" [{percent(change.delta_low)}, {percent(change.delta_high)}]"
    mark = "=*" if change.exact else "*"  # a change, exact or significant (figures.mark)
    mark = mark if change.family == "primary" else f"({mark})"
    return f"{change.workload} {change.label}: {percent(change.delta)}{ci} {mark}"


def _unchanged(analysis: Analysis, name: str) -> str:
    """A step that placed no change, in words its rows support: "no change" only where each row's
    values say so exactly; "no significant change" where a test found none (not no change); "none
    decided" where a row has no verdict."""
    compared = [row.comparisons[name] for row in analysis.rows if name in row.comparisons]
    undecided = [c for c in compared if c.verdict == "insufficient" and c.refusal != "equal"]
    if undecided:
        return f"none decided ({len(undecided)} of {len(compared)} rows undecided)"
    tested = [c for c in compared if c.exact is None and c.refusal != "equal"]
    if tested:
        return f"no significant change ({len(tested)} row{'s' if len(tested) != 1 else ''})"
    return "no change"


def attribution(analysis: Analysis) -> list[str]:
    """The attribution lines: per step its patch and the changes it made."""
    series: SeriesResult | None = analysis.series
    assert series is not None
    lines = ["attribution (each step's delta is against the step before it):"]
    experiment = analysis.experiment
    unreached = experiment.unreached
    for step in series.steps[1:]:
        made = [c for c in series.changes if c.placed and c.step == step.step]
        left_out = unreached.get(step.name, [])
        if step.build_error:
            text = f"FAILED: did not build: {step.build_error}"
        elif len(left_out) == len(experiment.workload):
            text = "not run: its patch reaches none of the workloads (its files lie in filesystems they do not mount)"
        elif not step.cells:
            text = "not run" + (" (bisection: no change to place here)" if series.strategy == "bisect" and
                                analysis.run.status == "complete" else " (the run stopped before it)"
                                if analysis.run.status != "complete" else "")
        elif step.failed == step.cells:
            text = "FAILED (see the notes)"
        elif made:
            text = "; ".join(_change(c) for c in made)
        else:
            text = _unchanged(analysis, step.name)
        if left_out and len(left_out) < len(experiment.workload):
            text += f"; not run on {', '.join(left_out)} (its patch cannot reach them)"
        lines.append(f"  {step.step} {_patch(step.patch)}: {text}")
    for change in series.unplaced:
        patches = [s.patch for s in series.steps if change.first <= s.step <= change.step]
        lines.append(f"  not placed within the budget: {_change(change)} in patches {change.first}..{change.step} "
                     f"({', '.join(_patch(p) for p in patches)})")
    return lines


def spent(analysis: Analysis) -> str:
    """How the series ran, said once: the strategy, the steps built and run
    (and which did not build), the rounds, and why it stopped."""
    series = analysis.series
    assert series is not None
    total = len(series.steps)
    unreached = analysis.experiment.unreached
    how = ("every step in every round" if series.strategy == "every" and not unreached
           else "every step, each on the workloads its patch can reach" if series.strategy == "every"
           else "bisected: the ends, then midpoints where they differ")
    unbuilt = series.unbuilt
    built = f"{series.builds - len(unbuilt)} of {total} steps built and run"
    if unbuilt:
        built += f", {len(unbuilt)} did not build ({', '.join(f'{s.step} {_patch(s.patch)}' for s in unbuilt)})"
    stop = analysis.run.stop_reason
    return f"series: {how}; {built}; {series.rounds} rounds" + (f"; {stop}" if stop else "")


def failure_lines(analysis: Analysis) -> list[str]:
    """What failed, first: each step whose kernel did not build, else each
    failure the experiment did not expect (for the reply block's top)."""
    series = analysis.series
    if series is not None and series.unbuilt:
        return [f"FAILED: step {s.step} ({_patch(s.patch)}) did not build: {s.build_error}" for s in series.unbuilt]
    return [f"{f.what}: {f.variant} / {f.workload}: {f.error.splitlines()[0][:160]}"
            for f in analysis.failures if not f.expected]


def text_lines(analysis: Analysis) -> list[str]:
    """The series part of a text report: table, steps, attribution, cost."""
    return ["", *text_table(analysis), "", *figures.wrapped([steps_line(analysis), *kernels_line(analysis)]),
            *figures.wrapped(attribution(analysis), "      "), *figures.wrapped([spent(analysis)])]
