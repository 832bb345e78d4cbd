"""The reply block: what a mail to the list needs, in at most 72 columns.

What was measured (filesystem, target) and on which kernels, as the
text header says it, and how they were built; the timing mode, the table
(for a series: one column per step and the attribution), the verdicts'
legend, and the one command that reproduces it (with the run's seed and rounds). Plain text (UTF-8 only for
the table's ±), nothing wider than a mail's line, so it pastes into a
reply unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from iolab.report import claims, figures, headers, legends, series, table
from iolab.analysis import Analysis
from iolab.analysis.model import Report
from iolab.units import counted

WIDTH = figures.WIDTH
RULE = "-" * 24


def _measured(report: Report) -> list[str]:
    """What was measured and on which kernels, as the text header says it:
    the filesystem and target, and the host's kernel or each variant's in a
    VM (two runs compared: each run's line); then how the kernels were built."""
    analysis = report.analysis
    if report.compared is not None:
        skip = 1 + len(headers.mail_lines(analysis.experiment))  # the title and the mail: said above
        return headers.report_header(report)[skip:skip + 2]
    lines = [f"{headers.target_text(analysis)}, {headers.machine_text(analysis)}"]
    build = analysis.experiment.kernel
    if build is None:
        return lines
    source = build.source + (f" at {build.commit}" if build.commit else "")
    built = sorted(set((analysis.run.host.get("vm") or {}).get("kernel_from", {}).values()))
    if built:  # the package and its version the source resolved to
        source += f" ({', '.join(built)})"
    base = [f"-R {Path(p).name}" for p in build.reverse] + [f"+ {Path(p).name}" for p in build.patches]
    config = "tinyconfig + iolab's base.config"
    own = [line for line in build.config.splitlines() if line.strip() and not line.startswith("#")]
    if build.config_file:
        config += f" + {Path(build.config_file).name}"
    if own:
        config += f" + {len(own)} line{'s' if len(own) > 1 else ''} ({', '.join(own[:3])}{', ...' if len(own) > 3 else ''})"
    return lines + [f"kernel source: {source}" + (f", base {' '.join(base)}" if base else "") + f"; config: {config}"]


def _timing(report: Report) -> str:
    experiment = report.analysis.experiment
    mode = getattr(experiment.vm, "timing", "wall")
    vm = report.analysis.run.host.get("vm")
    if mode == "instructions" and experiment.vm.device_model is not None:
        return ("timing: modeled (QEMU TCG icount, a null_blk with timer completions of "
                f"{experiment.vm.device_model.completion_nsec} ns): guest time counts instructions plus "
                "the device's modeled waits, not time")
    if mode == "instructions":
        return "timing: instructions (QEMU TCG icount): guest time counts instructions, not time"
    where = f"in a VM ({vm.get('accel')})" if vm else "on this host"
    return f"timing: wall clock, {where}"


def _command(report: Report, command: str | None) -> str:
    """The command that runs this run's plan again: its file with the seed
    and rounds it ran with (an --iterations or --timing given then is not
    in the file), or --recheck of the stored run."""
    if command:
        return command
    run, experiment = report.analysis.run, report.analysis.experiment
    if not run.experiment_path:
        return f"iolab run --recheck {run.id}"
    if report.compared is not None or experiment.report.kind == "calibration":  # two runs' table; an A/A
        return f"iolab run {run.experiment_path}"
    options = f" --seed {run.seed} --iterations {experiment.run.iterations}"
    if any(variant.kernel is not None for variant in experiment.variant):
        options += f" --timing {experiment.timing}"
    return f"iolab run {run.experiment_path}{options}"


def _decided(analysis: Analysis) -> tuple[Analysis, list[str]]:
    """The analysis with only the rows that found a verdict, and a line naming the ones left out:
    an undecided row never heads a mail (the full report keeps it)."""
    out = [row for row in analysis.rows if row.undecided]
    if not out:
        return analysis, []
    named = ", ".join(dict.fromkeys(f"{row.workload} {row.metric.label}" for row in out))
    kept = replace(analysis, rows=[row for row in analysis.rows if not row.undecided])
    return kept, [f"left out, undecided (no verdict from {counted(analysis.rounds_done, 'round')}; the full "
                  f"report shows them): {named}"]


def render(report: Report, command: str | None = None) -> str:
    analysis, undecided = _decided(report.analysis)
    failed = series.failure_lines(analysis)  # a failure is the first thing the reader sees
    lines = [f"{RULE} iolab reply {RULE}", *figures.wrapped(failed),
             *figures.wrapped([f"iolab: {analysis.experiment.name}", *headers.mail_lines(analysis.experiment)]),
             *figures.wrapped([*_measured(report), _timing(report), *headers.io_lines(analysis)])]
    rounds = f"{analysis.rounds_done} rounds, {analysis.experiment.run.order}; {figures.table_view_text(analysis)}"
    if report.compared is not None:  # two runs' rounds, unpaired: as the compare header says it
        rounds = headers.report_header(report)[-1]
    lines += figures.wrapped([rounds])
    if analysis.series is not None:
        lines += ["", *series.text_table(analysis), "",
                  *figures.wrapped([series.steps_line(analysis), *series.kernels_line(analysis)]),
                  *figures.wrapped(series.attribution(analysis), "      "), *figures.wrapped([series.spent(analysis)])]
    else:
        from iolab.report import text

        for block in table.blocks(analysis):
            lines += ["", *text._layout(block)]
    lines += figures.wrapped(undecided)
    lines += ["", *figures.wrapped(legends.legend(analysis))]
    checked = claims.text_lines(analysis)
    if checked:
        lines += ["", *checked]
    failures = [f"{f.what} {f.variant} / {f.workload}: {f.error.splitlines()[0][:120]}" for f in analysis.failures
                if f.expected]  # the unexpected ones head the block
    lines += figures.wrapped(failures)
    lines += ["", "reproduce:", *figures.wrapped([f"  {_command(report, command)}"], "    "),
              f"{RULE}-------------{RULE}"]
    return "\n".join(line.rstrip() for line in lines) + "\n"
