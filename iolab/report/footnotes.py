"""A report's notes: failed cells with their error, the statistics'
caveats, the noise diagnostics with what to try, disturbed rounds; for two
runs compared, what differs in their environment."""

from __future__ import annotations

from collections import defaultdict

from iolab.analysis import Analysis, Diagnostic
from iolab.analysis.envdiff import differences
from iolab.analysis.model import Report
from iolab.report.figures import listing


ADVICE = {
    "spread": "try more rounds, a larger file or a longer runtime, [cell] drop_caches = true, "
    "or pinned CPUs (cpus = [...])",
    "drift": "the machine changed during the run; try warm-up rounds ([run] warmup), "
    "[cell] drop_caches = true, pinned CPUs, or a quieter machine",
    "outliers": "see what else ran then; try [cell] drop_caches = true, pinned CPUs, or more rounds",
    "rounds": "the machine's state changed between rounds; interleaving keeps that out of the delta, "
    "and the rank test, which does not pair rounds, is conservative here (fewer false alarms, less "
    "power); try a quieter machine, pinned CPUs, or [cell] drop_caches = true",
    "rounds-paired": "the machine's state changed between rounds; the paired test compares each "
    "round's candidate with its own baseline, so that stays out of the verdict",
}


def _diagnostic_notes(diagnostics: list[Diagnostic], paired: bool = False) -> list[str]:
    """One note per kind of finding, each row once, with what to try."""
    by_kind: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for d in diagnostics:
        row = f"{d.workload} {d.label}"
        if d.kind == "spread":
            by_kind["spread"][row].append(f"{d.variant} {d.value * 100:.1f}%")
        elif d.kind == "drift":
            way = "rises" if d.value > 0 else "falls"
            by_kind["drift"][row].append(f"{d.variant} {way}, p={d.p:.2g}")
        elif d.kind == "outliers":
            rounds = ", ".join(str(r) for r in d.rounds)
            by_kind["outliers"][row].append(f"{d.variant}: round{'s' if len(d.rounds) > 1 else ''} {rounds}")
        elif d.kind == "rounds":
            by_kind["rounds"][row].append(f"{d.variant} tau {d.value:.2f}, p={d.p:.2g}")
        elif d.kind == "view":
            by_kind["view"][d.detail].append(row)
    notes = []
    titles = {
        "spread": "high spread (rel. stddev over 5%)",
        "drift": "drift across rounds (Kendall trend test, p<0.01)",
        "outliers": "outliers (Tukey fences) by round",
        "rounds": "baseline and candidate rise and fall together from round to round (Kendall tau "
        "of values paired by round, p<0.01)",
    }
    for kind, title in titles.items():
        if kind in by_kind:
            items = [f"{row} ({', '.join(found)})" for row, found in by_kind[kind].items()]
            advice = ADVICE["rounds-paired" if kind == "rounds" and paired else kind]
            notes.append(f"{title} in {listing(items)}: {advice}")
    for shown, rows in by_kind.get("view", {}).items():
        notes.append(f"harmonic mean needs positive values: {listing(rows)} shown as {shown}")
    return notes


def _footnotes(analysis: Analysis, prefix: str) -> list[str]:
    notes = []
    for failure in analysis.failures:
        cells = ", ".join(str(seq) for seq in failure.cells[:6]) + (" ..." if len(failure.cells) > 6 else "")
        notes.append(
            f"{prefix}{failure.what}{':' if failure.expected else ''} {failure.variant} / {failure.workload}: "
            f"{len(failure.cells)} cell(s) "
            f"[{cells}]: {failure.error}"
        )
    seen: dict[str, list[str]] = {}
    for row in analysis.rows:
        for comparison in row.comparisons.values():
            for warning in comparison.warnings:
                where = seen.setdefault(warning, [])
                if f"{row.workload} {row.metric.label}" not in where:
                    where.append(f"{row.workload} {row.metric.label}")
    for warning, where in seen.items():
        rows = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        notes.append(f"{prefix}{rows}: {warning}")
    notes += [prefix + note for note in _diagnostic_notes(analysis.diagnostics, analysis.design == "paired")]
    notes += [prefix + note for note in _disturbed_notes(analysis)]
    notes += [prefix + note for note in analysis.notes]
    return notes


def _disturbed_notes(analysis: Analysis) -> list[str]:
    if not analysis.disturbed:
        return []
    rounds = sorted(analysis.disturbed)
    first = analysis.disturbed[rounds[0]]
    shown = ", ".join(str(r) for r in rounds[:12]) + (f" and {len(rounds) - 12} more" if len(rounds) > 12 else "")
    # rounds_done counts whole rounds; an interrupted run's last round may be disturbed too
    return [f"host disturbed {len(rounds)} of {max(analysis.rounds_done, len(rounds))} rounds ({shown}; "
            f"round {rounds[0]}: {first}); rule: {analysis.disturbance_rule}; the rounds stay in the "
            f"figures: see what else ran, or run again on a quieter machine"]


def footnotes(analysis: Analysis) -> list[str]:
    """Failures first (with their error text), then the statistics' caveats,
    then the noise diagnostics with what to try; each once."""
    if analysis.original is None:
        notes = _footnotes(analysis, "")
    else:
        notes = _footnotes(analysis.original, "") + _footnotes(analysis, "recheck: ")
    return list(dict.fromkeys(notes))


def report_notes(report: Report) -> list[str]:
    """Footnotes, and for two runs compared what is left out and what differs."""
    notes = footnotes(report.analysis)
    if report.compared is None:
        return notes
    changed = [f"environment differs in {line}" for line in differences(list(report.environment))]
    return list(dict.fromkeys([*report.notes, *changed, *notes]))
