"""HTML: one self-contained page (inline CSS, plots as inline SVG, no script,
no network), to mail or attach to a bug.

The page has the text report's table and notes (the shared table helpers),
then per candidate: the delta with its 95% CI across metrics (forest plot),
and per workload the samples of each variant (box and points), the values
paired by round (baseline to candidate, the pairing of the rounds of an
interleaved run; not drawn for two runs compared, whose rounds are not
pairs), and latency CDFs of the merged histograms; then the environment with
what differs, and the notes. Every text from the user (names, errors,
environment values) is escaped; a Content-Security-Policy forbids any fetch
or script, so even a mistake cannot reach the network.
"""

from __future__ import annotations

import math
import re
from html import escape

from iolab import histogram
from iolab.analysis import Analysis
from iolab.report import claims, footnotes, headers, legends, plots, series, table
from iolab.analysis.model import Report, ok_samples

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 72em; color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; }
p.meta { color: #555; margin: 0.1em 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr.differs td { background: #fff4e0; }
td.better { color: #2e7d32; font-weight: bold; } td.worse { color: #c62828; font-weight: bold; }
svg.plot { max-width: 100%; height: auto; display: block; margin: 0.4em 0; }
ul.notes li { margin: 0.3em 0; }
code, .env td { font-family: ui-monospace, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
.env td:first-child { white-space: nowrap; overflow-wrap: normal; }
"""


def _cells(row: list[str], numeric_from: int, classes: dict[int, str] | None = None) -> str:
    out = []
    for i, cell in enumerate(row):
        css = ["num"] if i >= numeric_from else []
        if classes and i in classes:
            css.append(classes[i])
        attr = f' class="{" ".join(css)}"' if css else ""
        out.append(f"<td{attr}>{escape(cell)}</td>")
    return "<tr>" + "".join(out) + "</tr>"


def table_html(block: table.Block, verdicts: list[str]) -> str:
    head = "".join(f'<th{" class=num" if i >= 2 else ""}>{escape(c)}</th>' for i, c in enumerate(block.columns))
    body = [_cells(row, 2, {4: verdicts[i]} if i < len(verdicts) else None) for i, row in enumerate(block.rows)]
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _verdicts(analysis: Analysis, candidate: str, block: table.Block) -> list[str]:
    """The verdict class of each line of a block (lines of one row share it)."""
    rows = iter(analysis.original.rows if analysis.original else analysis.rows)
    out, current = [], ""
    for line in block.rows:
        if not line[1].startswith("  "):
            row = next(rows, None)
            comparison = row.comparisons.get(candidate) if row else None
            current = comparison.verdict if comparison else ""
        out.append(current)
    return out


def _list(items: list[str], css: str = "") -> str:
    if not items:
        return ""
    attr = f' class="{css}"' if css else ""
    return f"<ul{attr}>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"


def _summary(report: Report) -> list[str]:
    analysis = report.analysis
    head = headers.report_header(report)
    parts = [f"<h1>{escape(head[0])}</h1>", *(f'<p class="meta">{escape(line)}</p>' for line in head[1:])]
    parts.append("<h2>Comparison</h2>")
    if analysis.series is not None:
        parts += _series(analysis)
    for block, candidate in zip([] if analysis.series is not None else table.blocks(analysis),
                                analysis.variants[1:]):
        parts.append(table_html(block, _verdicts(analysis, candidate, block)))
    parts.append(_list(legends.legend(analysis)))
    if analysis.experiment.claims is not None:
        checked = claims.rows(analysis)
        parts += [f"<h3>{escape(claims.TITLE)}</h3>",
                  table_html(table.Block(claims.COLUMNS, checked), [""] * len(checked)) if checked else "",
                  _list(claims.notes(analysis))]
    intervals = legends.delta_intervals(analysis)
    if intervals:
        parts += ["<h3>delta 95% CI</h3>", _list(intervals)]
    return parts


def _series(analysis: Analysis) -> list[str]:
    """The series table (a column per step), the attribution, and per metric a line over the steps."""
    lines = series.rows(analysis, list(range(len(analysis.variants))), True, True)
    block = table.Block(lines[0], lines[1:])
    head = "".join(f'<th{" class=num" if i >= 2 else ""}>{escape(c)}</th>' for i, c in enumerate(block.columns))
    body = [_cells(line, 2) for line in block.rows]
    attribution = series.attribution(analysis)
    labels = [series.step_label(analysis, k) for k in range(len(analysis.variants))]
    panels = []
    for row in analysis.rows:
        figures = [row.figures[v] for v in analysis.variants]
        panels.append(plots.StepLine(f"{row.workload} {row.metric.label}", row.metric.unit, labels,
                                     [f.center for f in figures],
                                     [f.summary.low if f.summary else math.nan for f in figures],
                                     [f.summary.high if f.summary else math.nan for f in figures]))
    return [f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>",
            f"<p>{escape(series.steps_line(analysis))}</p>", *[f"<p>{escape(line)}</p>" for line in series.kernels_line(analysis)],
            f"<h3>{escape(attribution[0])}</h3>",
            _list([line.strip() for line in attribution[1:]]), f"<p>{escape(series.spent(analysis))}</p>",
            *(["<h3>each metric over the steps (center and its 95% CI)</h3>", figure]
              if (figure := plots.steps_figure(panels)) else [])]


def _intervals(analysis: Analysis, candidate: str) -> list[plots.Interval]:
    found = []
    for row in analysis.rows:
        c = row.comparisons.get(candidate)
        if c is not None:
            exact = " (exact)" if c.exact else ""
            found.append(plots.Interval(f"{row.workload} {row.metric.label}{exact}", c.delta, c.delta_low,
                                        c.delta_high, c.verdict))
    return found


def _strips(report: Report, candidate: str, workload: str, paired: bool) -> list[plots.Strip]:
    analysis = report.analysis
    base = ok_samples(report, analysis.baseline, workload)
    cand = ok_samples(report, candidate, workload)
    strips = []
    for row in (r for r in analysis.rows if r.workload == workload):
        name = row.metric.name
        values = {analysis.baseline: [s.metrics[name] for s in base if name in s.metrics],
                  candidate: [s.metrics[name] for s in cand if name in s.metrics]}
        pairs = []
        if paired:
            by_round = {s.round: s.metrics[name] for s in base if name in s.metrics}
            pairs = [(s.round, by_round[s.round], s.metrics[name]) for s in cand
                     if name in s.metrics and s.round in by_round]
        strips.append(plots.Strip(row.metric.label, row.metric.unit, values, sorted(pairs)))
    return strips


def _cdfs(report: Report, variants: list[str], workload: str) -> dict[str, dict[str, histogram.Histogram]]:
    panels: dict[str, dict[str, histogram.Histogram]] = {}
    for variant in variants:
        for sample in ok_samples(report, variant, workload):
            for name in sample.histograms:
                panels.setdefault(name, {}).setdefault(variant, {})
    for name, by_variant in panels.items():
        for variant in by_variant:
            hists = [s.histograms[name] for s in ok_samples(report, variant, workload) if name in s.histograms]
            by_variant[variant] = histogram.merge(hists)
    return panels


def _workload_section(report: Report, candidate: str, workload: str) -> list[str]:
    analysis = report.analysis
    paired = report.compared is None
    strips = _strips(report, candidate, workload, paired)
    if not strips or not any(v for s in strips for v in s.values.values()):
        return [f"<h3>{escape(workload)}</h3>", "<p>no successful samples to draw</p>"]
    parts = [f"<h3>{escape(workload)}: samples per variant" + (", and paired by round" if paired else "")
             + "</h3>", plots.samples_figure(strips, (analysis.baseline, candidate) if paired else None)]
    cdfs = _cdfs(report, [analysis.baseline, candidate], workload)
    if cdfs and analysis.experiment.clock == "modeled":
        parts += [f"<h3>{escape(workload)}: CDF of modeled time per I/O</h3>",
                  plots.cdf_figure(cdfs, "modeled time per I/O, modeled us")]
    elif cdfs and analysis.experiment.timing == "instructions":
        parts += [f"<h3>{escape(workload)}: CDF of instructions per I/O</h3>",
                  plots.cdf_figure(cdfs, "instructions per I/O, kinsn")]
    elif cdfs:
        parts += [f"<h3>{escape(workload)}: latency CDF</h3>", plots.cdf_figure(cdfs)]
    return parts


def _candidate_section(report: Report, candidate: str) -> list[str]:
    analysis = report.analysis
    title = f"{candidate} against {analysis.baseline}"
    parts = [f"<h2>{escape(title)}</h2>"]
    intervals = _intervals(analysis, candidate)
    if intervals:
        parts.append(plots.forest_figure(intervals, title))
    workloads = list(dict.fromkeys(row.workload for row in analysis.rows))
    for workload in workloads:
        parts += _workload_section(report, candidate, workload)
    if report.compared is not None:
        parts.append("<p>Runs are compared unpaired: their rounds are not pairs.</p>")
    return parts


def samples_html(report: Report) -> list[str]:
    """A queued run: every cell with the host that ran it (superseded tries too, marked)."""
    if report.hosts is None:
        return []
    rows = [(s, "counted") for s in report.samples] + [
        (s, "superseded") for s in report.hosts.superseded_samples if not s.warmup]
    head = "<tr><th>round</th><th>try</th><th>host</th><th>variant</th><th>workload</th><th>status</th><th></th></tr>"
    body = "".join(
        f'<tr{"" if mark == "counted" else " class=differs"}><td>{s.round}</td><td>{s.attempt + 1}</td>'
        f"<td>{escape(s.host or '-')}</td><td>{escape(s.variant)}</td><td>{escape(s.workload)}</td>"
        f"<td>{escape(s.status)}</td><td>{mark}</td></tr>"
        for s, mark in sorted(rows, key=lambda item: (item[0].round, item[0].attempt, item[0].seq)))
    return ["<h2>Samples by host</h2>", _list(headers.host_lines(report)),
            f'<table class="env"><thead>{head}</thead><tbody>{body}</tbody></table>']


_PATCH_PATH = re.compile(r'(?:[^\s"\[\],]*/)+([^\s"\[\],/]+\.(?:patch|diff|mbx|mbox|eml))\b')


def named(value: str) -> str:
    """An environment value with each patch named by its file, not its path ("../../../x/0001-a.patch",
    a path relative to wherever the run began, says nothing to a reader)."""
    return _PATCH_PATH.sub(r"\1", value)


def environment_html(report: Report) -> list[str]:
    if not report.environment:
        return []
    groups = list(report.environment[0].values)
    head = "<tr><th>key</th>" + "".join(f"<th>{escape(g)}</th>" for g in groups) + "</tr>"
    body = []
    for row in report.environment:
        css = ' class="differs"' if row.differs else ""
        key = escape(row.key) + (" (checked)" if row.checked else "")
        body.append(f"<tr{css}><td>{key}</td>" + "".join(f"<td>{escape(named(v))}</td>" for v in row.values.values())
                    + "</tr>")
    differ = sum(1 for row in report.environment if row.differs)
    return ["<h2>Environment</h2>",
            f"<p>{differ} of {len(report.environment)} keys differ (highlighted); checked keys must agree "
            "between samples compared.</p>",
            f'<table class="env"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>']


def page(title: str, parts: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(p for p in parts if p) + "\n</body>\n</html>\n"
    )


def render(report: Report) -> str:
    analysis = report.analysis
    plots.new_page()
    parts = _summary(report)
    if not report.samples:
        parts.append("<p>(no samples given: the plots need a report built from the store)</p>")
    else:
        for candidate in analysis.variants[1:] if analysis.series is None else []:
            parts += _candidate_section(report, candidate)
    parts += samples_html(report)
    parts += environment_html(report)
    notes = footnotes.report_notes(report)
    if notes:
        parts += ["<h2>Notes</h2>", _list(notes, "notes")]
    head = headers.report_header(report)[0]
    return page(head, parts)
