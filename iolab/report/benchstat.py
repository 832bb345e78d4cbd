"""Go benchmark format, one line per sample, for Go's benchstat.

    iolab report 3 --format benchstat > run3.txt
    benchstat -col variant run3.txt

Each measured cell is one line, ``Benchmark<Workload> 1 <value> <unit> ...``,
with the table's metrics of its workload; a variant's lines follow a
``variant: NAME`` configuration line, so ``-col variant`` puts the variants
side by side (two runs compared: ``variant: run 3`` and ``variant: run 7``).
Units are kept and made one word per metric: ``MiB/s-read_bw``,
``us-read_p99`` (a line must not repeat a unit); ``Unit`` lines tell
benchstat which way is better. Failed cells have no line.

Names follow the format's rules: the benchmark name is ``Benchmark`` and the
workload with anything but letters, digits and ``._+-`` made ``_`` (and a
lowercase first letter upper-cased, which the format requires); a
configuration value has no newline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from iolab.analysis.model import Report
from iolab.report import headers
from iolab.store import RunInfo

UNSAFE = re.compile(r"[^A-Za-z0-9._+\-]")


def bench_name(workload: str) -> str:
    name = UNSAFE.sub("_", workload) or "_"
    return "Benchmark" + name[0].upper() + name[1:]


def config_value(text: object) -> str:
    return " ".join(str(text).split())


def unit(metric_name: str, metric_unit: str) -> str:
    return re.sub(r"\s", "_", f"{metric_unit or 'value'}-{metric_name}")


def _units(report: Report) -> dict[str, list[tuple[str, str, bool]]]:
    """Per workload: (metric, unit word, higher is better) of the table's rows."""
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for row in report.analysis.rows:
        found.setdefault(row.workload, []).append(
            (row.metric.name, unit(row.metric.name, row.metric.unit), row.metric.higher_is_better))
    return found


def _kernel(run: RunInfo) -> str:
    """The kernel the run's cells ran on: the host's, or each variant's in a VM (as the header names them)."""
    kernels = headers.run_kernels(run)
    if kernels is None:
        return str(run.host.get("kernel"))
    return " | ".join(dict.fromkeys(kernels.values())) or "a kernel per step"


def _per_run(runs: list[RunInfo], value: Callable[[RunInfo], object]) -> str:
    """One value, or each run's where two runs compared differ."""
    found = [str(value(run)) for run in runs]
    if len(set(found)) == 1:
        return config_value(found[0])
    return config_value("; ".join(f"run {run.id} {text}" for run, text in zip(runs, found)))


def _machine(report: Report) -> list[str]:
    """kernel and cpu lines: of the cells (a VM's guest kernels, and the CPU
    the guest saw where its samples recorded it), the host's named as such."""
    runs = list(report.compared) if report.compared is not None else [report.analysis.run]
    lines = [f"kernel: {_per_run(runs, _kernel)}"]
    if not any("vm" in run.host for run in runs):
        return lines + [f"cpu: {_per_run(runs, lambda run: run.host.get('cpu_model'))}"]
    guest_cpus = sorted({str(s.env["cpu_model"]) for s in report.samples
                         if s.status == "ok" and "vm" in s.env and s.env.get("cpu_model")})
    cpu = " | ".join(guest_cpus) or (f"{_per_run(runs, lambda run: run.host.get('cpu_model'))} (the host's; "
                                     "the guest's was not recorded)")
    return lines + [f"cpu: {config_value(cpu)}", f"host-kernel: {_per_run(runs, lambda run: run.host.get('kernel'))}",
                    f"host-cpu: {_per_run(runs, lambda run: run.host.get('cpu_model'))}"]


def _header(report: Report) -> list[str]:
    analysis = report.analysis
    lines = [
        f"iolab-experiment: {config_value(analysis.experiment.name)}",
        f"iolab-run: {config_value(analysis.run.id)}",
        "goos: linux",
        *_machine(report),
    ]
    if report.compared is not None:
        a, b = report.compared
        lines[1] = f"iolab-runs: {a.id} {b.id}"
    if analysis.experiment.clock == "modeled":  # the units say modeled ns; this says why
        lines.append(f"timing: modeled (QEMU icount, shift={analysis.experiment.vm.icount_shift}, a modeled "
                     "device): guest durations are instructions plus the device's modeled waits")
    elif analysis.experiment.timing != "wall":  # the units say insn; this says why
        lines.append(f"timing: {analysis.experiment.timing} (QEMU icount, "
                     f"shift={analysis.experiment.vm.icount_shift}): guest durations are instruction counts")
    return lines


def render(report: Report) -> str:
    units = _units(report)
    lines = _header(report)
    seen_units: set[str] = set()
    for _workload, rows in units.items():
        for _name, word, higher in rows:
            if word not in seen_units:
                lines.append(f"Unit {word} better={'higher' if higher else 'lower'}")
                seen_units.add(word)
    for variant in report.analysis.variants:
        lines += ["", f"variant: {config_value(variant)}"]
        for sample in report.samples:
            if sample.variant != variant or sample.status != "ok" or sample.workload not in units:
                continue
            values = [f"{sample.metrics[name]!r} {word}" for name, word, _ in units[sample.workload]
                      if name in sample.metrics and math.isfinite(sample.metrics[name])]
            if values:
                lines.append(f"{bench_name(sample.workload)} 1 " + " ".join(values))
    return "\n".join(lines) + "\n"
