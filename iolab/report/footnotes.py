"""A report's notes: failed cells with their error, the statistics'
caveats, the noise diagnostics with what to try, disturbed rounds; for two
runs compared, what differs in their environment."""

from __future__ import annotations

import re
from collections import defaultdict

from iolab.analysis import Analysis, Diagnostic, Failure
from iolab.analysis.envdiff import differences
from iolab.analysis.model import Report
from iolab.cell.sample import Sample
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
    notes = [prefix + note for note in _failure_notes(analysis)]
    seen: dict[str, list[str]] = {}
    for row in analysis.rows:
        for comparison in row.comparisons.values():
            for warning in comparison.warnings:
                seen.setdefault(warning, []).append(f"{row.workload} {row.metric.label}")
    for warning, where in by_cause(seen).items():
        rows = list(dict.fromkeys(where))
        shown = ", ".join(rows[:3]) + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")
        notes.append(f"{prefix}{shown}: {warning}" if len(rows) < 4 else f"{prefix}{len(rows)} rows ({shown}): "
                     f"{warning}")
    notes += [prefix + note for note in _diagnostic_notes(analysis.diagnostics, analysis.design == "paired")]
    notes += [prefix + note for note in _disturbed_notes(analysis)]
    notes += [prefix + note for note in by_cause({note: [] for note in analysis.notes})]
    return notes


_NUMBER = re.compile(r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)")


def by_cause(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """Notes that say the same but for their numbers (one per row: "with 6 rounds the smallest
    possible p is 0.0625", "... is 1") as one: each number that varies as its range ("0.0625..1"),
    with the places of all of them. ``found``: note -> where it applies; in the order first seen."""
    causes: dict[str, list[str]] = {}
    for note in found:
        causes.setdefault(_NUMBER.sub("#", note), []).append(note)
    out: dict[str, list[str]] = {}
    for notes in causes.values():
        where = [place for note in notes for place in found[note]]
        if len(notes) == 1:
            out[notes[0]] = where
            continue
        parts = [_NUMBER.split(note) for note in notes]
        merged = [part if i % 2 == 0 else _range([p[i] for p in parts]) for i, part in enumerate(parts[0])]
        out["".join(merged) + ("" if where else f" [{len(notes)} notes alike, their numbers as ranges]")] = where
    return out


def _range(numbers: list[str]) -> str:
    """The numbers of one place in several notes: one, or their least and greatest ("3..12")."""
    if len(set(numbers)) == 1:
        return numbers[0]
    ordered = sorted(set(numbers), key=float)
    return f"{ordered[0]}..{ordered[-1]}"


def _failure_notes(analysis: Analysis) -> list[str]:
    """One note per cause of failure (errors that differ only in a number are one), with the
    variants and workloads it struck and how many cells; the first cells' numbers."""
    causes: dict[tuple[str, str], list[Failure]] = {}
    for failure in analysis.failures:
        causes.setdefault((failure.what, _NUMBER.sub("#", failure.error)), []).append(failure)
    notes = []
    for (what, _), struck in causes.items():
        [error] = by_cause({f.error: [] for f in struck})
        seqs = sorted(seq for f in struck for seq in f.cells)
        cells = ", ".join(str(seq) for seq in seqs[:6]) + (" ..." if len(seqs) > 6 else "")
        variants = ", ".join(dict.fromkeys(f.variant for f in struck))
        workloads = ", ".join(dict.fromkeys(f.workload for f in struck))
        notes.append(f"{what}{':' if struck[0].expected else ''} {variants} / {workloads}: {len(seqs)} cell(s) "
                     f"[{cells}]: {error}")
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


def guest_starts(samples: tuple[Sample, ...]) -> list[str]:
    """How the VMs' guests started, where a run asked for saved states
    ([vm] start = "saved", iolab.hosts.vm.saved): each boot (a kernel's
    boot number) counted once, restored or saved or cold, the cold ones'
    reason."""
    boots: dict[tuple[str, int], dict[str, str]] = {}
    for sample in samples:
        vm = sample.env.get("vm") or {}
        if isinstance(vm.get("start"), dict) and vm.get("boot") is not None:
            boots.setdefault((str(vm.get("kernel")), int(vm["boot"])), vm["start"])
    if not any(start.get("kind") != "cold" or start.get("not_saved") for start in boots.values()):
        return []
    kinds = {kind: [s for s in boots.values() if s.get("kind") == kind] for kind in ("restored", "saved", "cold")}
    states = {s.get("state") for s in kinds["restored"] + kinds["saved"]}
    said = [f"{len(kinds['restored'])} restored", f"{len(kinds['saved'])} saved after their start-up and run on",
            f"{len(kinds['cold'])} cold"]
    note = f"guests: of {len(boots)} boots {', '.join(said)}; from {len(states)} saved states"
    note += " (every boot from the same state)" if len(states) == 1 and len(boots) > 1 and not kinds["cold"] else ""
    reasons = sorted({str(s["not_saved"]) for s in kinds["cold"] if s.get("not_saved")})
    return [note + "".join(f"; cold: {reason}" for reason in reasons)]


def report_notes(report: Report) -> list[str]:
    """Footnotes, how the guests started (guest_starts), and for two runs
    compared what is left out and what differs."""
    notes = footnotes(report.analysis) + guest_starts(report.samples)
    if report.compared is None:
        return notes
    changed = [f"environment differs in {line}" for line in differences(list(report.environment))]
    return list(dict.fromkeys([*report.notes, *changed, *notes]))
