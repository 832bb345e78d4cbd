"""The header of a report: the experiment, where it ran (filesystem and
target, kernel or VM), the timing mode, the rounds, the view; for a
recheck its own line, for two runs compared a line per run; the hosts of a
queued run's rounds."""

from __future__ import annotations

import datetime
import textwrap
from typing import Any

from iolab.analysis import Analysis
from iolab.analysis import hosts as hosts_of
from iolab.analysis import iorows
from iolab.analysis.model import Report
from iolab.engines import fio, probe
from iolab.report.figures import WIDTH, table_view_text
from iolab.report.figures import wrapped as wrapped_lines
from iolab.spec import CARRIED_PATCH, Experiment, Variant
from iolab.store import RunInfo
from iolab.units import counted, format_size


def _rounds_text(analysis: Analysis) -> str:
    run = analysis.experiment.run
    if run.auto:
        text = f"{analysis.rounds_done} rounds (auto, {run.min_iterations}..{run.max_iterations})"
    else:
        text = f"{analysis.rounds_done} of {run.max_rounds} rounds"
    per_round = analysis.cells_planned // run.max_rounds if run.max_rounds else 0
    partial = analysis.cells_done != analysis.rounds_done * per_round
    if analysis.series is not None and analysis.series.strategy == "bisect":
        partial = False  # its rounds run the steps of their stage only: no plan fixes its cells
        if analysis.run.status != "complete":
            text += f" ({counted(analysis.cells_done, 'cell')} run)"
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


def _blocks_text(sizes: dict[str, list[int]]) -> str:
    """" (1KiB blocks)" after the filesystem; per filesystem where there are several."""
    if not sizes:
        return ""
    each = {fs: "/".join(format_size(size) for size in found) for fs, found in sizes.items()}
    if len(set(each.values())) == 1:
        return f" ({next(iter(each.values()))} blocks)"
    return " (blocks: " + ", ".join(f"{fs} {text}" for fs, text in each.items()) + ")"


def _same_variants(experiment: Experiment) -> list[str]:
    """A line naming candidates that boot the baseline's kernel with its
    patches and settings, under another name (a series not given yet): an
    A/A run, whose deltas are noise."""
    def settings(variant: Variant) -> dict[str, Any]:
        return variant.model_dump(exclude={"name", "description", "fails"})

    base = experiment.baseline
    if base.kernel is None:  # host cells: variants by name only are the test fakes' way to differ
        return []
    same = [v.name for v in experiment.variant[1:] if settings(v) == settings(base)]
    if not same:
        return []
    return [f"A/A: {', '.join(same)} {'is' if len(same) == 1 else 'are'} {base.name} (same kernel, patches, "
            f"settings): its deltas are noise"]


def target_text(analysis: Analysis) -> str:
    """What the cells measured: the filesystem (its block size) on the
    target, "ext4 (4KiB blocks) on a loop image in the VM's memory (256MiB)"."""
    primary = analysis.original or analysis
    experiment = primary.experiment
    target = experiment.target
    where = {"loop": f"loop ({format_size(target.size)})", "device": target.device or "", "dir": target.path or ""}
    fs = _fs_text(experiment) + _blocks_text(primary.block_sizes)
    if target.fs == "erofs":
        where["loop"] = "loop"
    if target.kind == "loop" and primary.target_place:
        where["loop"] = f"loop ({format_size(target.size)}, image in {primary.target_place})"
    if "vm" in primary.run.host:
        disk = {"ram": "a loop image in the VM's memory", "null_blk": "the guest's null_blk (memory-backed)",
                "model": "a modeled device (the guest's null_blk, timer completions)"}.get(
            experiment.vm.disk, "a virtio disk")
        where["loop"] = f"{disk} ({format_size(target.size)})" if experiment.vm.disk in ("ram", "virtio") else disk
    return f"{fs} on {where[target.kind]}"


def machine_text(analysis: Analysis) -> str:
    """Where the cells ran: this host's kernel and CPUs, or a VM run's
    kernels (each variant's, as booted) and the VM."""
    primary = analysis.original or analysis
    host = primary.run.host
    if "vm" in host:
        return _vm_text(host["vm"], analysis.variants, primary.experiment.series is not None)
    return f"kernel {host.get('kernel')}, {host.get('cpus')} CPUs"


def header(analysis: Analysis) -> list[str]:
    primary = analysis.original or analysis
    run, experiment = primary.run, primary.experiment
    lines = [
        f"iolab: {experiment.name}",
        *mail_lines(experiment),
        f"{target_text(analysis)}, {machine_text(analysis)}",
        *_vm_notes(run.host.get("vm")),
        *timing_lines(experiment),
        *io_lines(analysis),
        f"run {run.id}{_status(primary)}: {_rounds_text(primary)}, {experiment.run.order}; "
        f"{table_view_text(analysis)}",
    ]
    lines += _same_variants(experiment)
    if run.stop_reason and not (experiment.series is not None and run.status == "complete"):  # a series says it
        # in its series line, with how it ran
        rounds = f"{primary.rounds_done} round" + ("" if primary.rounds_done == 1 else "s")
        stopped = "failed" if run.status == "failed" else f"stopped after {rounds}"
        lines.append(f"{stopped}: {run.stop_reason}")
    if analysis.original is not None:
        stop = f", stopped: {analysis.run.stop_reason}" if analysis.run.stop_reason else ""
        lines.append(
            f"recheck: run {analysis.run.id}{_status(analysis)}: {_rounds_text(analysis)}, "
            f"seed {analysis.run.seed}{stop}; its figures: the \"recheck\" lines"
        )
    return lines


SHORT = 6  # lines of the terminal report's header; the rest with --verbose, and always in the JSON


def short_header(report: Report) -> tuple[list[str], bool]:
    """The terminal report's header, at most SHORT lines of a mail's width: the experiment, the
    mail, where it ran, the rounds and the mode, then what the run must say first (how it stopped,
    its recheck, an A/A, a changed I/O count); and whether the full header says more."""
    full = report_header(report)
    analysis = report.analysis
    if report.compared is not None:  # the title, the mail, each run's line, how they are compared
        skip = 1 + len(mail_lines(analysis.experiment))
        mode = "; instructions mode" if analysis.experiment.timing == "instructions" else ""
        lines = [*full[:skip + 2], full[-1] + mode]
    else:
        primary = analysis.original or analysis
        run, experiment = primary.run, primary.experiment
        mail = experiment.mail
        vm = run.host.get("vm")
        machine = (f"{kernels_text(vm, analysis.variants, experiment.series is not None)}; VM: {vm_shape(vm)}"
                   + (f", {vm['accel'].upper()}" if vm.get("accel") else "") if vm else f"kernel {run.host.get('kernel')}, {run.host.get('cpus')} CPUs")
        mode = {"instructions": "; instructions mode"}.get(experiment.timing, "")
        if experiment.timing == "instructions" and experiment.vm.device_model is not None:
            mode = "; modeled time (instructions + null_blk's timer waits)"
        lines = [f"iolab: {experiment.name}",
                 *([f"mail: <{mail.message_id}>" if mail.message_id else f"mail: {mail.title}"] if mail else []),
                 f"{target_text(analysis)}, {machine}",
                 f"run {run.id}{_status(primary)}: {_rounds_text(primary)}, {experiment.run.order}; "
                 f"{table_view_text(analysis).split(' (')[0]}{mode}"]  # why no ±: --verbose
        lines += _firsts(analysis) + host_lines(report)
    return _within(lines, SHORT), lines != full


def _within(lines: list[str], most: int) -> list[str]:
    """The lines wrapped to a mail's width in at most ``most`` lines: the line that wraps to the
    most lines shortened by one (at a word, " ..." marking the cut) until they fit; past one line
    each, the last lines left out."""
    lines = lines[:most]
    wrapped = [wrapped_lines([line]) for line in lines]
    budget = [len(line) for line in lines]  # each line's characters so far: every cut takes at least one more
    while sum(map(len, wrapped)) > most:
        # the last line that wraps, shortened first: the experiment, the mail, where and the rounds lead
        longest = max((i for i in range(len(wrapped)) if len(wrapped[i]) > 1), default=None)
        if longest is None:
            del wrapped[-1]
            continue
        # a word longer than the line stays whole (figures.wrapped), so a cut to the lines kept may still
        # wrap to as many: the next pass cuts shorter, down to the placeholder alone (one line)
        budget[longest] = max(len(" ..."), min((len(wrapped[longest]) - 1) * (WIDTH - 6), budget[longest] - 1))
        wrapped[longest] = wrapped_lines([textwrap.shorten(lines[longest], budget[longest], placeholder=" ...")])
    return [line for group in wrapped for line in group]


def _firsts(analysis: Analysis) -> list[str]:
    """The full header's lines a short one keeps too: a failure or stop, a recheck, an A/A; and
    in instructions mode a changed I/O count, in short."""
    keep = ("failed:", "stopped after", "recheck:", "A/A:")
    lines = [line for line in header(analysis) if line.startswith(keep)]
    changed = iorows.changes(analysis) if analysis.experiment.timing == "instructions" else []
    if changed:
        lines.append(f"I/O count changed {changed[0].text()}")
    return lines


def mail_lines(experiment: Experiment) -> list[str]:
    """The patch mail the experiment was written from (iolab patch): who, when, its Message-Id."""
    return [experiment.mail.header()] if experiment.mail is not None else []


def timing_lines(experiment: Experiment) -> list[str]:
    """What the figures count, said in the header of every format."""
    if experiment.timing != "instructions":
        return []
    lines = ["instructions mode (QEMU TCG, -icount shift=0,sleep=off): every duration of the "
             "guest's work is a count of instructions, not a time (insn; kinsn = 10^3, Minsn = 10^6, "
             "Ginsn = 10^9), and rates are per 10^9 instructions; a wait's unit is the guest clock's "
             "(guest s, guest ms: instructions plus the clock's jumps over idle time; host.settle_s, "
             "disk.*_ms), and vm.boot_s is the host's real time"]
    if experiment.vm.op_counts == "fewest":
        lines.append(f"op counts cut to what a count needs (probe: {probe.INSTRUCTIONS_BATCHES} batches, a pwrite "
                     f"batch {probe.INSTRUCTIONS_PWRITE_BATCH} calls; fio: "
                     f"{fio.INSTRUCTIONS_IOS} I/Os a job; where the job asks more; [vm] op_counts = "
                     "\"as-written\" runs them as written)")
    if experiment.vm.disk == "virtio":
        lines.append("disk = virtio: a wait for the emulated disk counts as a jump to the guest's next "
                     "timer, not as instructions; disk = \"ram\" keeps the device out")
    lines += model_lines(experiment)
    return lines


def io_lines(analysis: Analysis) -> list[str]:
    """In instructions mode, where a workload's count of I/Os changed: what this mode cannot see
    (the device's time), with the measured ratio, and the wall-mode run on a device that would."""
    if analysis.experiment.timing != "instructions":
        return []
    found = iorows.changes(analysis)
    if not found:
        return []
    also = f"; also {'; '.join(c.text() for c in found[1:3])}" if len(found) > 1 else ""
    if analysis.experiment.vm.device_model is not None:
        return [f"the I/O count changed {found[0].text()}{also}; the modeled device's waits for it are in the "
                "modeled ns (a model's fixed completion time, not a real device's)"]
    path = analysis.run.experiment_path or "EXPERIMENT.toml"
    return [f"the I/O count changed {found[0].text()}{also}; this mode does not count device time, so no "
            f"instruction row shows what the I/O costs: time it on a device, [vm] disk = \"virtio\" (an "
            f"image on this host's disk, cache=none) and wall timing: iolab run {path} --timing wall; or count "
            f"a modeled device's waits in this mode with [vm] disk = \"model\""]


def model_lines(experiment: Experiment) -> list[str]:
    """The modeled device (disk = "model"): its parameters, and what its unit counts."""
    model = experiment.vm.device_model
    if model is None:
        return []
    if model.carried:
        how = (f"with iolab's change ({CARRIED_PATCH}): {model.words()}; a request of B bytes takes "
               f"{model.completion_nsec} ns + B / ({model.mib_per_s or 'unlimited'} MiB/s) from when the device "
               "is free, completed by a guest timer at that time")
    else:
        how = (f"{model.words()}: each request completed by a guest timer {model.completion_nsec} ns after it is "
               f"issued (irqmode=2, completion_nsec={model.completion_nsec})")
    return [f"modeled device: null_blk, memory-backed, {how}: a workload's durations are "
            "modeled time (modeled ns = instructions plus the device's modeled waits), never a time; "
            "the CPU time at work stays instructions"]


def _run_line(side: str, run: RunInfo, report: Report) -> str:
    when = datetime.datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M")
    host = run.host
    rounds = len({s.round for s in report.samples if s.variant == f"run {run.id}"})
    status = "" if run.status == "complete" else f" ({run.status})"
    where = f", host {host['hostname']}" if host.get("hostname") else ""
    if "vm" in host:  # the kernels the cells booted; the host's kernel named as the host's
        experiment = Experiment.model_validate_json(run.experiment_json)
        machine = _vm_text(host["vm"], [v.name for v in experiment.variant], experiment.series is not None)
        named = f"{host['hostname']}, " if host.get("hostname") else ""
        return f"{side} = run {run.id}{status}, {when}, {rounds} rounds; {machine}; host {named}kernel {host.get('kernel')}"
    return (f"{side} = run {run.id}{status}, {when}, {rounds} rounds; kernel {host.get('kernel')}, "
            f"{host.get('cpus')} CPUs{where}")


def run_kernels(run: RunInfo) -> dict[str, str] | None:
    """A VM run's kernel of each variant, as the header names them (a
    series' steps built after the run began are not known); None when the
    cells ran on this host."""
    if "vm" not in run.host:
        return None
    names = [v.name for v in Experiment.model_validate_json(run.experiment_json).variant]
    return {name: label for name, label in zip(names, vm_kernels(run.host["vm"], names)) if label != "?"}


def run_kernel_text(run: RunInfo) -> str:
    """The kernel a stored run's cells ran on, where a line names one per
    run (history): this host's, or a VM run's kernels as the header names
    them and the host's as the host's ("kernels 7.2.13 -R x.patch | 7.2.13;
    host 6.18.44")."""
    host = run.host
    if "vm" not in host:
        return str(host.get("kernel"))
    experiment = Experiment.model_validate_json(run.experiment_json)
    which = ("a kernel per step" if experiment.series is not None
             else kernels_text(host["vm"], [v.name for v in experiment.variant]))
    return f"{which}; host {host.get('kernel')}"


def report_header(report: Report) -> list[str]:
    """The header of a run's report, or of two runs compared."""
    analysis = report.analysis
    if report.compared is None:
        return header(analysis) + host_lines(report)
    a, b = report.compared
    return [
        f"iolab compare: {analysis.experiment.name}",
        *mail_lines(analysis.experiment),
        _run_line("A", a, report),
        _run_line("B", b, report),
        *timing_lines(analysis.experiment),
        f"each variant's values in run A against run B, unpaired; {table_view_text(analysis)}",
    ]


def host_lines(report: Report) -> list[str]:
    """A queued run: a line per host (its rounds), and one per superseded try."""
    if report.hosts is None:
        return []
    experiment = report.analysis.experiment
    return hosts_of.lines(report.hosts, len(experiment.variant) * len(experiment.workload))


def vm_kernels(vm: dict[str, Any], variants: list[str]) -> list[str]:
    """Each variant's kernel in a VM run, as iolab.kernels.supply.label
    named it when the run began ("7.2.13 -R x.patch"), in variant order."""
    kernels = vm.get("kernels", {})
    return [kernels.get(v, "?") for v in variants]


def kernels_text(vm: dict[str, Any], variants: list[str], series: bool = False) -> str:
    """The kernels a VM run's variants booted: "kernel 7.2.13", "kernels
    7.2.13 -R x.patch | 7.2.13" (in variant order), or a series' steps'."""
    if series:  # its steps' kernels are built as they are first run
        return "a kernel per step (below)"
    names = vm_kernels(vm, variants)
    return f"kernel {names[0]}" if len(set(names)) == 1 else "kernels " + " | ".join(names)


def vm_shape(vm: dict[str, Any]) -> str:
    """The VM's machine, vCPUs and memory: "microvm, 1 vCPU, 1024 MiB"."""
    cpus = vm.get("cpus")
    vcpus = counted(cpus, "vCPU") if isinstance(cpus, int) else f"{cpus} vCPUs"
    return f"{vm.get('machine')}, {vcpus}, {vm.get('memory_mib')} MiB"


def _vm_text(vm: dict[str, Any], variants: list[str], series: bool = False) -> str:
    """The VM line of the header: kernels, shape, QEMU."""
    return f"{kernels_text(vm, variants, series)}; VM: {vm_shape(vm)}, QEMU {vm.get('qemu')}"


def _vm_notes(vm: dict[str, Any] | None) -> list[str]:
    if not vm:
        return []
    why = [f"accelerator: {vm['accel_reason']}"] if vm.get("accel_reason") else []
    if vm.get("accel") == "tcg":
        return ["emulated (TCG): numbers comparable only with each other; VM boot time (vm.boot_s) "
                "is not in the figures", *why]
    return [f"accelerator {vm.get('accel')}; VM boot time (vm.boot_s) is not in the figures", *why]
