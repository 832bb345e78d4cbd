"""The reply block: what a maintainer pastes into a reply on the list, in
the manner of a Tested-by reply, in at most 72 columns and about 40 lines.

    iolab: <the outcome: the failure, once; nothing decided; or the claim's words>
    mail / kernels / mode / device          one line each
    the claimed rows: the mail's delta, iolab's, and the word
    iolab's decided rows (a series: its steps' table and attribution)
    undecided: the rows left out, on one line
    marks / caveats                         a line each
    reproduce: b4 am the mail by its Message-Id, the command, the experiment's digest

It names no path of this machine (iolab.report.reproduce): a reader of
the list cannot use one. Plain text (UTF-8 only for the table's ±), so it
pastes into a reply unchanged.
"""

from __future__ import annotations

import email.utils
import shlex
import textwrap
from collections import defaultdict
from dataclasses import replace

from iolab.analysis import Analysis, Row, iorows
from iolab.analysis.model import Report
from iolab.report import claims, figures, headers, reproduce, series, table
from iolab.report.figures import WIDTH
from iolab.units import counted, format_size

RULE = "-- the reply block, to paste into the list --"  # iolab patch prints it above the block
CLAIMED = 16  # lines of the claimed rows' table at most, its header included
LINES = 40  # about what a reply's reader takes in; decided rows past it are counted, not shown


LABEL = 11  # the width of a header line's label ("undecided: ")


def _fit(label: str, text: str, lines: int = 1) -> str:
    """``label`` and ``text`` shortened at a word to ``lines`` of a mail's width (wrapped later)."""
    return f"{label:<{LABEL}}" + textwrap.shorten(text, lines * (WIDTH - LABEL) - 8 * (lines - 1), placeholder=" ...")


def _failed(analysis: Analysis) -> str:
    """The run's failure, once: the error most cells share, where it struck, and how many others."""
    run = analysis.series
    if run is not None and run.unbuilt:
        step = run.unbuilt[0]
        more = f" (and {counted(len(run.unbuilt) - 1, 'other step')})" if len(run.unbuilt) > 1 else ""
        error = " ".join(step.build_error.split())  # make's line and the compiler's first error
        return f"iolab: FAILED: step {step.step} ({reproduce.name(step.patch or '')}) did not build{more}: {error}"
    by_error: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for f in analysis.failures:
        if not f.expected:
            by_error[f.error.splitlines()[0] if f.error else "no error text"].append((f.variant, f.workload,
                                                                                      len(f.cells)))
    if not by_error:
        return ""
    error, where = max(by_error.items(), key=lambda item: sum(cells for *_, cells in item[1]))
    variants = list(dict.fromkeys(v for v, _, _ in where))
    workloads = list(dict.fromkeys(w for _, w, _ in where))
    cells = sum(n for *_, n in where)
    place = (f"{'every variant' if len(variants) == len(analysis.variants) else ', '.join(variants)}, "
             f"{counted(len(workloads), 'workload') if len(workloads) > 1 else workloads[0]}")
    others = f" (and {counted(len(by_error) - 1, 'other error')})" if len(by_error) > 1 else ""
    return f"iolab: FAILED in {counted(cells, 'cell')} ({place}){others}: {error}"


def _outcome(analysis: Analysis) -> str:
    """The first line: the failure, else what was decided (the claim's words, or the rows')."""
    failed = _failed(analysis)
    if failed:
        return failed
    after = f" after {counted(analysis.rounds_done, 'round')}" if analysis.rounds_done else ""  # two runs: no rounds
    if analysis.claims:
        words: dict[str, int] = defaultdict(int)
        for a in analysis.claims:
            words[a.word] += 1
        if not any(words[w] for w in ("agrees", "opposite", "no change found")):
            needed = max((a.needed for a in analysis.claims), default=0)
            more = f", ~{needed} needed" if needed else ""
            return f"iolab: nothing decided: no claimed row has a verdict{after}{more}"
        said = ", ".join(f"{n} {'agree' if w == 'agrees' and n > 1 else w}" for w, n in words.items() if n)
        return f"iolab: the mail's claimed rows{after}: {said}"
    decided = sum(1 for row in analysis.rows if _decided_row(row))
    if not decided:
        return f"iolab: nothing decided: no row has a verdict{after}"
    changed = sum(1 for row in analysis.rows if _decided_row(row)
                  and any(c.verdict in ("better", "worse") for c in row.comparisons.values()))
    still = sum(1 for row in analysis.rows if row.undecided)
    return (f"iolab: {decided} of {counted(len(analysis.rows), 'row')} decided{after}: {changed} changed"
            + (f", {still} undecided" if still else ""))


def _mail(analysis: Analysis) -> str:
    mail = analysis.experiment.mail
    if mail is None:
        return _fit("test:", analysis.experiment.name)
    who = email.utils.parseaddr(mail.author or "")[0] or mail.author or ""
    when = ""
    if mail.date:
        try:
            when = email.utils.parsedate_to_datetime(mail.date).strftime("%Y-%m-%d")
        except (TypeError, ValueError):
            when = mail.date
    by = ", ".join(part for part in (who, when) if part)
    text = mail.title + (f" ({by})" if by else "")
    return _fit("mail:", text if len(text) <= WIDTH - LABEL else mail.title)


def _kernels(analysis: Analysis) -> str:
    """Version, base and patches: the baseline's kernel (as booted, and what it was built from),
    what its base takes out, and the patches the last candidate adds."""
    run, experiment = analysis.run, analysis.experiment
    vm = run.host.get("vm")
    base, last = experiment.baseline.kernel, experiment.variant[-1].kernel
    if isinstance(base, str) or isinstance(last, str):  # kernels by name (installed or cached): as booted
        named = [label if label != "?" else str(v.kernel) for label, v in
                 zip(headers.vm_kernels(vm or {}, analysis.variants), experiment.variant)]
        return _fit("kernels:", " | ".join(dict.fromkeys(reproduce.name(k) for k in named)))
    if vm is None and base is None:
        return _fit("kernel:", f"{run.host.get('kernel')} (this host's, every variant)")
    booted = headers.vm_kernels(vm, analysis.variants) if vm else ["?"]
    version = booted[0].split()[0] if booted[0] != "?" else ""
    origin = sorted(set((vm or {}).get("kernel_from", {}).values())) or ([reproduce.name(base.source)] if base else [])
    if len(origin) == 1 and len(origin[0].split()) == 2:  # "linux-source-7.2 7.2.13-1": the package's version
        package, built = origin[0].split()
        text = f"{built} ({package})" if not version or built.startswith(version) else f"{version} ({origin[0]})"
    else:
        text = f"{version} ({', '.join(origin)})" if version and origin else version or ", ".join(origin)
    if base is not None and base.commit:
        text += f" at {base.commit[:12]}"
    if base is not None and base.reverse:
        text += "; base -R " + ", ".join(reproduce.name(p) for p in base.reverse)
    added = [p for p in (last.patches if last else []) if base is None or p not in base.patches]
    if len(added) == 1:
        text += f"; + {reproduce.name(added[0])}"
    elif added:
        text += f"; + {counted(len(added), 'patch', 'patches')}: " + ", ".join(reproduce.name(p) for p in added)
    return _fit("kernels:", text)


def _mode(analysis: Analysis) -> str:
    experiment = analysis.experiment
    vm = analysis.run.host.get("vm")
    order = f"{counted(analysis.rounds_done, 'round')}, {experiment.run.order}"
    if experiment.timing == "instructions":
        model = experiment.vm.device_model
        what = (f"modeled (TCG icount + null_blk: {model.words()})" if model is not None
                else "instructions (TCG icount), not times")
        return _fit("mode:", f"{what}; {order}", 2 if model is not None else 1)
    where = f"VM, {vm.get('accel')}, QEMU {vm.get('qemu')}" if vm else "this host"
    return _fit("mode:", f"wall clock ({where}); {order}")


def _machine(report: Report) -> list[str]:
    """The kernels and the mode; for two runs compared, each run's line and how they were compared."""
    if report.compared is None:
        return [_kernels(report.analysis), _mode(report.analysis)]
    said = headers.report_header(report)
    skip = 1 + len(headers.mail_lines(report.analysis.experiment))  # the title and the mail: said apart
    return [_fit("runs:", said[skip], 2), _fit("", said[skip + 1], 2), _fit("mode:", said[-1], 2)]


def _device(analysis: Analysis) -> str:
    vm = analysis.run.host.get("vm")
    shape = f"; VM: {counted(vm['cpus'], 'vCPU') if isinstance(vm.get('cpus'), int) else vm.get('cpus')}, " \
        f"{format_size(int(vm.get('memory_mib') or 0) << 20)}" if vm else f"; {analysis.run.host.get('cpus')} CPUs"
    where = headers.target_text(replace(analysis, target_place="", original=None))  # the place: in short
    if analysis.target_place.startswith("RAM"):
        where += ", image in RAM"
    return _fit("device:", where + shape)


def _decided_row(row: Row) -> bool:
    """A row with a comparison and none undecided (a row that failed on a side has none)."""
    return bool(row.comparisons) and not row.undecided


def _undecided(analysis: Analysis) -> tuple[Analysis, list[str]]:
    """The analysis with only its decided rows, and one line naming the undecided ones (the full
    report keeps them; a failed row is the first line's)."""
    out = [row for row in analysis.rows if row.undecided]
    kept = replace(analysis, rows=[row for row in analysis.rows if _decided_row(row)])
    if not out:
        return kept, []
    by_workload: dict[str, list[str]] = defaultdict(list)
    for row in out:
        by_workload[row.workload].append(row.metric.label)
    named = "; ".join(f"{workload}: {', '.join(dict.fromkeys(labels))}" for workload, labels in by_workload.items())
    needed = analysis.planned.needed if analysis.planned is not None else 0
    head = f"{analysis.rounds_done} rounds" + (f", ~{needed} needed" if needed > analysis.rounds_done else "")
    return kept, [_fit("undecided:", f"({head}) {named}")]


def _claimed(analysis: Analysis) -> list[str]:
    """The claimed rows as a table (no header without rows), and why any was not measured."""
    found = claims.rows(analysis)
    if not found:
        return ["the mail's claim: no figures before and after in it"] if analysis.experiment.claims else []
    found = [[textwrap.shorten(r[0], 28, placeholder="..."), *r[1:]] for r in found]
    shown = [["claimed row", "mail", "iolab", "", "result"], *found]
    widths = [max(len(r[i]) for r in shown) for i in range(4)]
    lines = [(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}} {r[3]:<{widths[3]}}  {r[4]}").rstrip()
             for r in shown]
    reasons: dict[str, list[str]] = defaultdict(list)
    for a in analysis.claims:
        if a.reason:
            reasons["a cell failed (above)" if a.reason.endswith("(see the failures)") else a.reason].append(a.label)
    why = "; ".join(f"{', '.join(labels)}: {reason}" for reason, labels in reasons.items())
    return lines + ([_fit("why:", why, 2)] if why else [])


def _decided(report: Report, kept: Analysis) -> list[str]:
    """iolab's decided rows: a series' steps table and attribution (of every row: a step whose rows are
    undecided is not "no change"), else the table's blocks."""
    if kept.series is not None:
        said = [line.split(": FAILED: did not build")[0] + ": did not build (above)" if ": FAILED: did not build"
                in line else line for line in series.attribution(report.analysis)]  # its error: the first line's
        return [*series.text_table(kept), "", *figures.wrapped(said, "      ")]
    if not kept.rows:
        return []
    from iolab.report import text

    lines: list[str] = []
    for block in table.blocks(kept):
        lines += text._layout(block)
    return lines


def _marks(analysis: Analysis) -> str:
    """The marks, in one line: what each one the tables show means."""
    from iolab.report import legends

    shown = legends.marks(analysis) | {claims.mark(a) for a in analysis.claims}
    test = {"signed-rank": "Wilcoxon signed-rank", "mann-whitney": "Mann-Whitney U"}.get(
        analysis.tests[0], analysis.tests[0]) + ", " if analysis.tests else ""
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "uncorrected"}.get(
        analysis.experiment.report.correction, "")
    meaning = {"*": f"* significant ({test}p<{analysis.experiment.report.alpha:g}, {correction})",
               "~": "~ no significant change", "?": "? undecided", "=*": "=* exact change",
               "=": "= exactly equal"}
    said = [text for mark, text in meaning.items() if mark in shown or f"({mark})" in shown]
    if any(m.startswith("(") for m in shown):
        said.append("(...) an exploratory row, uncorrected")
    return _fit("marks:", "; ".join(said), 2) if said else ""


def _caveats(analysis: Analysis) -> str:
    """What a reader must weigh, most particular first, in one entry (at most 3 lines)."""
    items = [f"{f.what} {f.variant} / {f.workload}" for f in analysis.failures if f.expected]
    items = list(dict.fromkeys(items))
    changed = iorows.changes(analysis) if analysis.experiment.timing == "instructions" else []
    if changed:
        items.append(f"the I/O count changed {changed[0].text()}: instructions do not count device time")
    found = analysis.experiment.claims
    if found is not None:
        items += [f"not run: {item}" for item in found.not_reproduced] + [f"refused: {item}" for item in found.refused]
        items += [f"scaled: {', '.join(found.scaled)}"] if found.scaled else []
    if analysis.claims:
        items.append("the mail's figures are another machine's (ratios compared)")
    if analysis.experiment.timing == "instructions" and not changed:
        items.append("instructions count CPU work, not device time")
    elif analysis.experiment.timing == "wall":
        items.append("wall clock on a shared machine")
    return _fit("caveats:", "; ".join(items), 3)


def _reproduce(report: Report, command: str | None) -> list[str]:
    """A way to run it again that a reader of the list can use: the mail by its Message-Id, the
    command without a path of this machine, and the experiment's digest to compare."""
    analysis = report.analysis
    mail = analysis.experiment.mail
    lines = ["reproduce:"]
    if mail is not None and mail.message_id:
        lines.append(f"  b4 am -o - '{mail.message_id}' > {reproduce.MBOX}")
    elif mail is not None:
        lines.append("  (the mail has no Message-Id: save it as it was sent)")
    lines.append(f"  {reproduce.public(_command(report, command), bool(mail and mail.message_id))}")
    return [*figures.wrapped(lines, "    "),
            f"  experiment sha256 {reproduce.digest(analysis.experiment)[:16]} (json: experiment_sha256)"]


def _command(report: Report, command: str | None) -> str:
    """The command that runs this run's plan again: its file with the seed
    and rounds it ran with (an --iterations or --timing given then is not
    in the file), or --recheck of the stored run."""
    if command:
        return command
    run, experiment = report.analysis.run, report.analysis.experiment
    if experiment.mail is not None and experiment.mail.message_id:  # iolab patch wrote it: the mail again
        source = experiment.kernel.source if experiment.kernel is not None else reproduce.DEFAULT_SOURCE
        return shlex.join(["iolab", "patch", reproduce.MBOX, *(["--source", source] if source !=
                                                              reproduce.DEFAULT_SOURCE else []),
                           *(["--timing", "wall"] if experiment.timing == "wall" else [])])
    if not run.experiment_path:
        return f"iolab run --recheck {run.id}"
    if report.compared is not None or experiment.report.kind == "calibration":  # two runs' table; an A/A
        return f"iolab run {run.experiment_path}"
    options = f" --seed {run.seed} --iterations {experiment.run.iterations}"
    if any(variant.kernel is not None for variant in experiment.variant):
        options += f" --timing {experiment.timing}"
    return f"iolab run {run.experiment_path}{options}"


def _mail_width(lines: list[str]) -> list[str]:
    """Every line within a mail's width (a header line's continuation under its text); a word
    longer than the line is broken too."""
    out = []
    for line in lines:
        indent = " " * LABEL if line[:LABEL].rstrip().endswith(":") or False else "    "
        out += [line] if len(line) <= WIDTH else textwrap.wrap(line, WIDTH, subsequent_indent=indent)
    return out


def _within(lines: list[str], most: int, what: str) -> list[str]:
    """At most ``most`` lines, the last saying how many more the full report has."""
    if len(lines) <= most:
        return lines
    cut = max(1, most - 1)
    return lines[:cut] + [f"... and {len(lines) - cut} more {what} (the full report)"]


def render(report: Report, command: str | None = None) -> str:
    analysis = report.analysis
    kept, undecided = _undecided(analysis)
    claimed, decided = _claimed(analysis), _decided(report, kept)
    ending = [line for line in (_marks(analysis), _caveats(analysis)) if line]
    ending += ["", *_reproduce(report, command)]
    head = [_outcome(analysis)]
    head = figures.wrapped([textwrap.shorten(head[0], 4 * (WIDTH - 4), placeholder=" ...")], "  ")  # <= 4 lines
    head += ["", _mail(analysis), *_machine(report), _device(analysis)]
    claimed = _within(claimed, CLAIMED, "claimed rows")  # the table's header and 2 lines of it at least
    room = max(0, LINES - len(head) - len(claimed) - len(undecided) - len(ending) - 3)
    if len(decided) > room and kept.series is not None:  # a series: its attribution before its table
        start = next(i for i, line in enumerate(decided) if line.startswith("attribution"))
        decided = ["(the steps' table: the full report)", *decided[start:]]
    decided = _within(decided, room, "lines of decided rows")
    lines = [*head, "", *claimed, *([""] if claimed and decided + undecided else []), *decided, *undecided, "",
             *ending]
    return "\n".join(line.rstrip() for line in _mail_width(lines)) + "\n"

