"""Table content shared by the text and markdown renderers.

Turns an Analysis into header lines, blocks of string cells (one block per
candidate, each beside the baseline) and footnotes. Renderers only lay
them out.

A row may carry second lines: "min..max" when asked, and for a recheck run
"recheck" (the rechecked run's figures are the row itself, the recheck's
the line below, as in the f2fs-dio-iostat seed's "median"/"recheck" rows).
"""

from __future__ import annotations

import datetime
import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass

from iolab.analysis import Analysis, Diagnostic, Figure, Row
from iolab.analysis import hosts as hosts_of
from iolab.analysis.envdiff import differences
from iolab.analysis.model import Report
from iolab.stats import EXACTNESS, Comparison
from iolab.spec import Experiment
from iolab.store import RunInfo
from iolab.units import format_size, percent

WIDTH = 72  # a mail's line


def wrapped(lines: list[str], indent: str = "  ", width: int = WIDTH) -> list[str]:
    """Lines wrapped to a mail's width, continuation lines indented."""
    out = []
    for line in lines:
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def json_number(value: float) -> float | None:
    """A figure for JSON: None where it is nan or infinite."""
    return value if math.isfinite(value) else None

SYMBOL = {"better": "*", "worse": "*", "same": "~", "insufficient": "?"}
VIEW_TEXT = {"median": "median ±rel. spread", "mean": "mean ±stddev", "hmean": "harmonic mean ±rel. stddev"}
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


@dataclass(frozen=True)
class Block:
    """Baseline beside one candidate."""

    columns: list[str]  # workload, metric, baseline, candidate, delta
    rows: list[list[str]]


def number(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    size = abs(value)
    if size >= 10_000:
        return f"{value:.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def mean_sd(center: float, stddev: float) -> str:
    """``4333 ±27``: the stddev to two significant digits, the mean to the
    same decimal place; large values in k or M (``184k ±59k``), as the
    block-task-context-completion seed prints them."""
    if not math.isfinite(center):
        return "-"
    if not math.isfinite(stddev):
        return number(center)
    scale, suffix = (1e6, "M") if abs(center) >= 1e7 else (1e3, "k") if abs(center) >= 1e5 else (1.0, "")
    c, s = center / scale, stddev / scale
    if s == 0:
        return f"{number(c)}{suffix} ±0"
    decimals = min(6, max(0, 1 - math.floor(math.log10(s))))
    return f"{c:.{decimals}f}{suffix} ±{s:.{decimals}f}{suffix}"


def figure_cell(figure: Figure, view: str = "median") -> str:
    if figure.n == 0:
        return (figure.expected or "FAILED") if figure.failed else "-"
    if view == "mean":
        return mean_sd(figure.center, figure.summary.stddev if figure.summary else math.nan)
    spread = figure.rel_spread
    if not math.isfinite(spread):
        return number(figure.center)
    width = f"{spread * 100:.1f}" if spread < 0.1 else f"{spread * 100:.0f}"
    return f"{number(figure.center)} ±{width}%"


def minmax_cell(figure: Figure) -> str:
    if figure.summary is None:
        return "-"
    return f"{number(figure.summary.minimum)}..{number(figure.summary.maximum)}"


def delta_cell(comparison: Comparison | None) -> str:
    """``+20.5% *``, ``~``, ``?``; an exploratory row's marks in parentheses: ``+3.1% (*)``, ``(~)``."""
    if comparison is None:
        return "-"
    mark = {"same": "~", "insufficient": "?"}.get(comparison.verdict, "*")
    if comparison.exact is not None:  # no test: the delta as measured, 0 included
        mark = "=" if comparison.family != "exploratory" else "(=)"
        return f"{percent(comparison.delta)} {mark}" if math.isfinite(comparison.delta) else mark
    if comparison.family == "exploratory":
        mark = f"({mark})"
    if comparison.verdict == "same" or not math.isfinite(comparison.delta):
        return mark
    return f"{percent(comparison.delta)} {mark}"


def _rounds_text(analysis: Analysis) -> str:
    run = analysis.experiment.run
    if run.auto:
        text = f"{analysis.rounds_done} rounds (auto, {run.min_iterations}..{run.max_iterations})"
    else:
        text = f"{analysis.rounds_done} of {run.max_rounds} rounds"
    per_round = analysis.cells_planned // run.max_rounds if run.max_rounds else 0
    partial = analysis.cells_done != analysis.rounds_done * per_round
    if analysis.series is not None and analysis.series.strategy == "bisect":
        partial = False  # its rounds run the steps of their stage only
    if analysis.cells_planned and (partial or analysis.run.status != "complete"):
        text += f" ({analysis.cells_done} of {analysis.cells_planned} cells)"  # a run cut short says how short
    return text


def _status(analysis: Analysis) -> str:
    return "" if analysis.run.status == "complete" else f" ({analysis.run.status})"


def _fs_text(experiment: Experiment) -> str:
    """The filesystem; where variants (or workloads) set their own, each one's."""
    def name(fs: str) -> str:
        return "raw" if fs == "none" else fs

    of = {(v.name, w.name): name(experiment.target_for(v, w).fs) for v in experiment.variant
          for w in experiment.workload}
    if len(set(of.values())) == 1:
        return next(iter(of.values()))
    by_variant = {v.name: {of[(v.name, w.name)] for w in experiment.workload} for v in experiment.variant}
    if all(len(found) == 1 for found in by_variant.values()):
        return ", ".join(f"{next(iter(found))} ({v})" for v, found in by_variant.items())
    by_workload = {w.name: {of[(v.name, w.name)] for v in experiment.variant} for w in experiment.workload}
    common = name(experiment.target.fs)
    other = [f"{w}: {'/'.join(sorted(found))}" for w, found in by_workload.items() if found != {common}]
    return f"{common} ({'; '.join(other)})"


def _same_variants(experiment: Experiment) -> list[str]:
    """A line naming candidates that boot the baseline's kernel with its
    patches and settings, under another name (a series not given yet): an
    A/A run, whose deltas are noise."""
    def settings(variant) -> dict:  # type: ignore[no-untyped-def]
        return variant.model_dump(exclude={"name", "description", "fails"})

    base = experiment.baseline
    if base.kernel is None:  # host cells: variants by name only are the test fakes' way to differ
        return []
    same = [v.name for v in experiment.variant[1:] if settings(v) == settings(base)]
    if not same:
        return []
    return [f"A/A: {', '.join(same)} {'is' if len(same) == 1 else 'are'} {base.name} (same kernel, patches "
            f"and settings): every delta is noise"]


def header(analysis: Analysis) -> list[str]:
    primary = analysis.original or analysis
    run, experiment = primary.run, primary.experiment
    target = experiment.target
    where = {"loop": f"loop ({format_size(target.size)})", "device": target.device or "", "dir": target.path or ""}
    fs = _fs_text(experiment)
    if target.fs == "erofs":
        where["loop"] = "loop"
    host = run.host
    machine = f"kernel {host.get('kernel')}, {host.get('cpus')} CPUs"
    if target.kind == "loop" and primary.target_place:
        where["loop"] = f"loop ({format_size(target.size)}, image in {primary.target_place})"
    if "vm" in host:
        disk = "a loop image in the VM's memory" if experiment.vm.disk == "ram" else "a virtio disk"
        where["loop"] = f"{disk} ({format_size(target.size)})"
        machine = _vm_text(host["vm"], analysis.variants, experiment.series is not None)
    lines = [
        f"iolab: {experiment.name}",
        f"{fs} on {where[target.kind]}, {machine}",
        *_vm_notes(host.get("vm")),
        *timing_lines(experiment),
        f"run {run.id}{_status(primary)}: {_rounds_text(primary)}, {experiment.run.order}; "
        f"{VIEW_TEXT[analysis.view]}",
    ]
    lines += _same_variants(experiment)
    if run.stop_reason:
        stopped = "failed" if run.status == "failed" else f"stopped after {primary.rounds_done} rounds"
        lines.append(f"{stopped}: {run.stop_reason}")
    if analysis.original is not None:
        stop = f", stopped: {analysis.run.stop_reason}" if analysis.run.stop_reason else ""
        lines.append(
            f"recheck: run {analysis.run.id}{_status(analysis)}: {_rounds_text(analysis)}, "
            f"seed {analysis.run.seed}{stop}; its figures are the \"recheck\" lines"
        )
    return lines


def timing_lines(experiment: Experiment) -> list[str]:
    """What the figures count, said in the header of every format."""
    if experiment.timing != "instructions":
        return []
    lines = ["instructions mode (QEMU TCG, -icount shift=0,sleep=off): every duration the guest "
             "measured is a count of instructions, not a time (insn; kinsn = 10^3, Minsn = 10^6, "
             "Ginsn = 10^9), and rates are per 10^9 instructions"]
    if experiment.vm.disk == "virtio":
        lines.append("disk = virtio: a wait for the emulated disk counts as a jump to the guest's next "
                     "timer, not as instructions; disk = \"ram\" keeps the device out")
    return lines


def _run_line(side: str, run: RunInfo, report: Report) -> str:
    when = datetime.datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M")
    host = run.host
    rounds = len({s.round for s in report.samples if s.variant == f"run {run.id}"})
    status = "" if run.status == "complete" else f" ({run.status})"
    where = f", host {host['hostname']}" if host.get("hostname") else ""
    return (f"{side} = run {run.id}{status}, {when}, {rounds} rounds; kernel {host.get('kernel')}, "
            f"{host.get('cpus')} CPUs{where}")


def report_header(report: Report) -> list[str]:
    """The header of a run's report, or of two runs compared."""
    analysis = report.analysis
    if report.compared is None:
        return header(analysis) + host_lines(report)
    a, b = report.compared
    return [
        f"iolab compare: {analysis.experiment.name}",
        _run_line("A", a, report),
        _run_line("B", b, report),
        *timing_lines(analysis.experiment),
        f"each variant's values in run A against run B, unpaired; {VIEW_TEXT[analysis.view]}",
    ]


def host_lines(report: Report) -> list[str]:
    """A queued run: a line per host (its rounds), and one per superseded try."""
    if report.hosts is None:
        return []
    experiment = report.analysis.experiment
    return hosts_of.lines(report.hosts, len(experiment.variant) * len(experiment.workload))


def report_notes(report: Report) -> list[str]:
    """Footnotes, and for two runs compared what is left out and what differs."""
    notes = footnotes(report.analysis)
    if report.compared is None:
        return notes
    changed = [f"environment differs in {line}" for line in differences(list(report.environment))]
    return list(dict.fromkeys([*report.notes, *changed, *notes]))


def _vm_text(vm: dict, variants: list[str], series: bool = False) -> str:
    """The VM line of the header: kernels, shape, QEMU."""
    kernels = vm.get("kernels", {})
    names = [kernels.get(v, "?") for v in variants]
    which = f"kernel {names[0]}" if len(set(names)) == 1 else "kernels " + " | ".join(names)
    if series:  # its steps' kernels are built as they are first run
        which = "a kernel per step (below)"
    return (f"{which}; VM: {vm.get('machine')}, {vm.get('cpus')} vCPUs, "
            f"{vm.get('memory_mib')} MiB, QEMU {vm.get('qemu')}")


def _vm_notes(vm: dict | None) -> list[str]:
    if not vm:
        return []
    if vm.get("accel") == "tcg":
        return ["emulated (TCG): numbers comparable only with each other; VM boot time (vm.boot_s) "
                "is not in the figures"]
    return [f"accelerator {vm.get('accel')}; VM boot time (vm.boot_s) is not in the figures"]


def _row_lines(row: Row | None, baseline: str, candidate: str, min_max: bool, label: str) -> list[list[str]]:
    if row is None:
        return [["", label, "-", "-", "-"]]
    lines = [[
        "",
        label,
        figure_cell(row.figures[baseline], row.view),
        figure_cell(row.figures[candidate], row.view),
        delta_cell(row.comparisons.get(candidate)),
    ]]
    if min_max:
        lines.append(["", "  min..max", minmax_cell(row.figures[baseline]), minmax_cell(row.figures[candidate]), ""])
    return lines


def _key(row: Row) -> tuple[str, str]:
    return row.workload, row.metric.name


def blocks(analysis: Analysis) -> list[Block]:
    primary = analysis.original or analysis
    recheck = {_key(row): row for row in analysis.rows} if analysis.original else None
    result = []
    for candidate in analysis.variants[1:]:
        rows = []
        previous = None
        for row in primary.rows:
            lines = _row_lines(row, analysis.baseline, candidate, analysis.min_max, row.metric.label)
            if recheck is not None:
                lines += _row_lines(recheck.get(_key(row)), analysis.baseline, candidate, analysis.min_max,
                                    "  recheck")
            if row.workload != previous:
                lines[0][0] = row.workload
            previous = row.workload
            rows += lines
        result.append(Block(["", "", analysis.baseline, candidate, "delta"], rows))
    return result


def _test_text(analysis: Analysis) -> str:
    """The test each tested row used: one name when all used the same, else
    the most used one and the rows of each other one. "" when none ran."""
    used: dict[str, list[str]] = defaultdict(list)
    for row in analysis.rows:
        for c in row.comparisons.values():
            if c.verdict != "insufficient" and c.exact is None and f"{row.workload} {row.metric.label}" not in used[c.test]:
                used[c.test].append(f"{row.workload} {row.metric.label}")
    order = sorted(used, key=lambda t: -len(used[t]))
    if not order:
        return ""
    others = [f"{TEST_TEXT.get(t, t)} for {_listing(used[t], 3)}" for t in order[1:]]
    return "; ".join([TEST_TEXT.get(order[0], order[0]) + (" for the other rows" if others else "")] + others)


TEST_TEXT = {"signed-rank": "Wilcoxon signed-rank test of per-round ratios, paired by round",
             "mann-whitney": "Mann-Whitney U, exact"}


def _primary_count(analysis: Analysis, totals: bool = False) -> int:
    """Primary comparisons that were tested (the size of the corrected family;
    a series' totals are a family of their own)."""
    return sum(1 for row in analysis.rows if row.primary for key, c in row.comparisons.items()
               if c.verdict != "insufficient" and c.exact is None and (key == "total") == totals)


def _legend_line(analysis: Analysis) -> str:
    report = analysis.experiment.report
    keys = "~ no significant change; ? no test (too few samples, or all values equal)"
    tests = _test_text(analysis)
    if not tests:
        return (f"no comparison was tested: every row is ? (too few samples, all values equal, or a test "
                f"whose smallest p cannot pass its level; the notes say which); ~ no significant change")
    sequential = analysis.sequential
    if sequential is not None:
        return (
            f"* significant ({tests}, p<{sequential.look_alpha:.2g}, the level of every "
            f"look of this auto run: alpha {sequential.alpha:g} split over {sequential.comparisons} primary "
            f"comparisons and {sequential.looks} looks, calibrated boundary); {keys}"
        )
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[report.correction]
    family = _primary_count(analysis)
    totals = _primary_count(analysis, totals=True) if analysis.series is not None else 0
    over = f"{family} primary comparison{'s' if family != 1 else ''}"
    if totals:
        over = f"the {family} primary steps' deltas, and apart over the {totals} totals"
    return f"* significant ({tests}, p<{report.alpha:g}, {correction}-corrected over {over}); {keys}"


def _exploratory_line(analysis: Analysis) -> list[str]:
    rows = [f"{row.workload} {row.metric.label}" for row in analysis.rows if not row.primary]
    if not rows:
        return []
    level = analysis.sequential.look_alpha if analysis.sequential else analysis.experiment.report.alpha
    return [f"(*) (~) exploratory rows, not in the corrected family ([report] primary): each tested "
            f"at p<{level:.2g} uncorrected, a lead to check, not a finding"]


EXACT_TEXT = {
    "identical": "every value of each variant identical",
    "identical_rows": "identical values: {rows}",
    "tolerance": "each variant's values within {tolerance} of each other: {rows}",
    "paired": "the candidate equal to the baseline in every round: {rows}",
}


def exact_line(analysis: Analysis) -> list[str]:
    """The legend of exact comparisons: how many rounds, which tolerance, and
    the rows that were not identical."""
    found = [(row, c) for row in analysis.rows for c in row.comparisons.values() if c.exact is not None]
    if not found:
        return []
    rounds = sorted({min(c.n_base, c.n_cand) for _, c in found})
    over = f"{rounds[0]}" if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]}"
    widest = max(c.tolerance for _, c in found)
    tolerance = f"±{percent(widest, signed=False)}"
    kinds = []
    for kind in EXACTNESS:
        rows = list(dict.fromkeys(f"{row.workload} {row.metric.label}" for row, c in found if c.exact == kind))
        if rows:
            every = kind == "identical" and len({c.exact for _, c in found}) == 1
            text = EXACT_TEXT[kind if every or kind != "identical" else "identical_rows"]
            kinds.append(text.format(tolerance=tolerance, rows=_listing(rows)))
    if widest and not any(c.exact == "tolerance" for _, c in found):
        kinds.append(f"tolerance {tolerance}")
    return [f"= exact: deterministic over {over} rounds ({'; '.join(kinds)}): the delta as "
            "measured, no test, no CI; a change when every candidate value lies beyond every baseline "
            "value and beyond the tolerance; (=) an exploratory row"]


def _tested(analysis: Analysis) -> bool:
    """Whether any comparison is a test's (not exact): the test legend is for those."""
    return any(c.exact is None for row in analysis.rows for c in row.comparisons.values())


def legend(analysis: Analysis) -> list[str]:
    primary = analysis.original or analysis
    lines = [_legend_line(primary), *_exploratory_line(primary)] if _tested(primary) else []
    lines += exact_line(primary)
    if analysis.original is not None and _tested(analysis) and _legend_line(analysis) not in lines:
        lines.append("recheck: " + _legend_line(analysis))
    return lines


def interval_title(analysis: Analysis) -> str:
    """The heading of the delta CI lines: which estimate they are."""
    primary = analysis.original or analysis
    if primary.design == "paired" and "signed-rank" in primary.tests:
        return "delta 95% CI (paired rows: Hodges-Lehmann of per-round ratios):"
    return "delta 95% CI:"


def _intervals(analysis: Analysis, suffix: str) -> list[str]:
    lines = []
    for row in analysis.rows:
        for candidate, comparison in row.comparisons.items():
            if comparison.verdict in ("better", "worse", "same") and math.isfinite(comparison.delta_low):
                who = f" {candidate}" if len(analysis.variants) > 2 else ""
                if comparison.family == "exploratory":
                    who += " (exploratory)"
                mark = {"better": "*", "worse": "*", "same": "~"}[comparison.verdict]
                lines.append(
                    f"{row.workload} {row.metric.label}{who}{suffix}: {percent(comparison.delta)} "
                    f"[{percent(comparison.delta_low)}, {percent(comparison.delta_high)}] {mark}, "
                    f"{_p_text(comparison)}"
                )
    return lines


def _p_text(comparison: Comparison) -> str:
    """The p-value as tested, and the corrected one where a correction ran."""
    name = {"holm": "Holm", "bh": "BH"}.get(comparison.correction, "")
    if not name or comparison.family == "exploratory" or comparison.p_adjusted == comparison.p:
        return f"p={comparison.p:.2g}"
    return f"p={comparison.p:.2g} ({name} {comparison.p_adjusted:.2g})"


def delta_intervals(analysis: Analysis) -> list[str]:
    if analysis.original is None:
        return _intervals(analysis, "")
    return _intervals(analysis.original, "") + _intervals(analysis, ", recheck")


def _listing(items: list[str], limit: int = 4) -> str:
    return "; ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


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
            notes.append(f"{title} in {_listing(items)}: {advice}")
    for shown, rows in by_kind.get("view", {}).items():
        notes.append(f"harmonic mean needs positive values: {_listing(rows)} shown as {shown}")
    return notes


def _footnotes(analysis: Analysis, prefix: str) -> list[str]:
    notes = []
    for failure in analysis.failures:
        cells = ", ".join(str(seq) for seq in failure.cells[:6]) + (" ..." if len(failure.cells) > 6 else "")
        what = f"{failure.expected} (expected to fail):" if failure.expected else "FAILED"
        notes.append(
            f"{prefix}{what} {failure.variant} / {failure.workload}: {len(failure.cells)} cell(s) "
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
    return [f"host disturbed {len(rounds)} of {analysis.rounds_done} rounds ({shown}; "
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
