"""The history of one metric across runs: text (a sparkline per workload and
variant, then a line per run), JSON, and HTML with a plot."""

from __future__ import annotations

import datetime
import json
import math
import textwrap
from html import escape
from typing import Any

from iolab.analysis.history import History, Point, sparkline
from iolab.report import plots
from iolab.report.figures import WIDTH, json_number, number, view_text, wrapped
from iolab.report.headers import run_kernel_text, run_kernels
from iolab.report.html import page
from iolab.report.jsonout import JSON_VERSION

INDENT = 2  # a workload's rows under its name


def _when(started: float) -> str:
    return datetime.datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M")


def _cell(point: Point) -> str:
    if not math.isfinite(point.center):
        return "-"
    if not math.isfinite(point.rel_spread):
        return number(point.center)
    width = f"{point.rel_spread * 100:.1f}" if point.rel_spread < 0.1 else f"{point.rel_spread * 100:.0f}"
    return f"{number(point.center)} ±{width}%"


def header(found: History) -> list[str]:
    first, last = found.runs[0], found.runs[-1]
    runs = (f"{len(found.runs)} runs ({first.id}..{last.id}, {_when(first.started)} to {_when(last.started)})"
            if len(found.runs) > 1 else f"1 run ({first.id}, {_when(first.started)})")
    return [
        f"iolab history: {found.metric.label} ({found.metric.name}) of {found.experiment}",
        f"{runs}; {view_text(found.view, (p.rel_spread for s in found.series for p in s.points if p.n))}",
    ]


def _workload_lines(found: History, workload: str) -> list[str]:
    series = [s for s in found.series if s.workload == workload]
    rows = [["", *[s.variant for s in series], "kernel"]]
    rows.append(["trend", *[sparkline([p.center for p in s.points]) for s in series], ""])
    for i, run in enumerate(found.runs):
        changed = found.changes.get(run.id)
        kernel = run_kernel_text(run) + (f"  <- changed: {_short(changed)}" if changed else "")
        rows.append([f"run {run.id}", *[_cell(s.points[i]) for s in series], kernel])
    return [workload, *(f"{' ' * INDENT}{line}" for line in _aligned_left_kernel(rows))]


def _short(changed: list[str]) -> str:
    """What changed, without the values (the notes give them): "[target], kernel"."""
    return ", ".join(item.split(" ")[0] if not item.startswith(("variant ", "workload ", "file ")) else item
                     for item in changed)


def _aligned_left_kernel(rows: list[list[str]]) -> list[str]:
    """Label left, values right, the kernel column left, wrapped in its
    column where a line would be wider than a mail's (a VM run's kernels)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [f"{row[0]:<{widths[0]}}"]
        cells += [f"{c:>{w}}" for c, w in zip(row[1:-1], widths[1:-1])]
        start = "  ".join(cells) + "  "
        room = max(WIDTH - INDENT - len(start), 24)
        kernel = textwrap.wrap(row[-1], room, break_on_hyphens=False) or [""]
        out.append((start + kernel[0]).rstrip())
        out += [" " * len(start) + more for more in kernel[1:]]
    return out


def render_text(found: History) -> str:
    lines = wrapped(header(found))
    for workload in dict.fromkeys(s.workload for s in found.series):
        lines += ["", *_workload_lines(found, workload)]
    if found.notes:
        lines += ["", "notes:", *wrapped([f"- {n}" for n in found.notes], "  ")]
    return "\n".join(lines) + "\n"


def document(found: History) -> dict[str, Any]:
    return {
        "iolab_json_version": JSON_VERSION,
        "kind": "history",
        "experiment": found.experiment,
        "metric": found.metric.name, "label": found.metric.label, "unit": found.metric.unit,
        "higher_is_better": found.metric.higher_is_better,
        "view": found.view,
        "runs": [{"id": r.id, "started": r.started, "status": r.status, "kernel": run_kernel_text(r),
                  "kernels": run_kernels(r), "host_kernel": r.host.get("kernel"),
                  "hostname": r.host.get("hostname"), "setup_changes": found.changes.get(r.id, [])}
                 for r in found.runs],
        "series": [{"workload": s.workload, "variant": s.variant,
                    "points": [{"run": p.run, "n": p.n, "center": json_number(p.center), "ci": [json_number(p.low), json_number(p.high)],
                                "rel_spread": json_number(p.rel_spread)} for p in s.points]} for s in found.series],
        "notes": found.notes,
    }


def render_json(found: History) -> str:
    return json.dumps(document(found), indent=2) + "\n"


def render_html(found: History) -> str:
    plots.new_page()
    head = header(found)
    parts = [f"<h1>{escape(head[0])}</h1>", *(f'<p class="meta">{escape(line)}</p>' for line in head[1:])]
    for workload in dict.fromkeys(s.workload for s in found.series):
        series = {s.variant: [(p.run, p.center, p.low, p.high) for p in s.points]
                  for s in found.series if s.workload == workload}
        parts += [f"<h2>{escape(workload)}</h2>",
                  plots.history_figure(series, f"{workload}: {found.metric.label}", found.metric.unit,
                                       frozenset(found.changes)),
                  "<pre>" + escape("\n".join(_workload_lines(found, workload))) + "</pre>"]
    if found.notes:
        parts += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in found.notes) + "</ul>"]
    return page(head[0], parts)


RENDERERS = {"text": render_text, "json": render_json, "html": render_html}
