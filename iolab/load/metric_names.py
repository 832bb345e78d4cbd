"""The metric names an experiment gives, checked against what it can produce.

Names are given in [report] metrics and primary, in each [[workload]]'s
metrics and primary, as the inputs of [derived] expressions, and as the
metric of a [claims] row (its workload's). A name is
produced by a workload's engine (iolab.engines.fio: per direction its jobs'
rw= does; iolab.engines.probe: per mode), by the collectors of [collect]
(iolab.collectors.metric_names), by the cell itself (host.settle_s, ...),
by a memory_max cgroup (cgroup.*), by a VM (vm.boot_s) or by [derived].

A name nothing produces is refused, with the closest known name; a name
only another engine, mode or direction produces is refused with the
reason (a read metric of a job that only writes), since its row would have
no value and, as a primary metric, would still count in the plan's family.
A workload's own names must be produced by that workload; a [report]
name, which applies to every workload without its own, by some workload,
and by each it applies to whose engine could: a row that can never have a
value still counts in the plan's primary family. Where fio's rw= or a probe's phases cannot be read, every
direction or phase counts as produced: only the certain is refused.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from iolab.engines import fio, fio_jobs, probe, script
from iolab.engines.fio_options import did_you_mean
from iolab.load.errors import excerpt
from iolab.load.files import job_text
from iolab.spec import Experiment, SpecError, Workload

CELL = ("host.settle_s", "host.dirty_kib")  # iolab.cell.executor.settle, in every cell
CGROUP = ("cgroup.memory_peak_bytes", "cgroup.oom_kill")  # iolab.knobs.cgroup, with memory_max
VM = ("vm.boot_s",)  # iolab.hosts.vm.host, with a kernel
FIO_ALL = fio.metric_names(("read", "write"))
PROBE_ALL = {mode: probe.metric_names(mode) for mode in probe.METRICS}


def check_metric_names(experiment: Experiment) -> None:
    """SpecError naming the field of the first name the experiment cannot produce."""
    from iolab import collectors

    common = collectors.metric_names(experiment.collect.model_dump()) | set(CELL)
    if any(v.kernel is not None for v in experiment.variant):
        common |= set(VM)
    if any(v.memory_max is not None for v in experiment.variant):
        common |= set(CGROUP)
    derived = set(experiment.derived)
    produced = {w.name: common | derived | _engine_names(experiment, w)
                | (set(CGROUP) if w.memory_max is not None else set()) for w in experiment.workload}
    anywhere = set().union(*produced.values())
    _check_derived_inputs(experiment, anywhere - derived)
    for field in ("metrics", "primary"):
        for name in getattr(experiment.report, field) or []:
            if not _matches(name, anywhere):
                raise SpecError(f"report.{field}: {_why_not(experiment, experiment.workload, name, anywhere)}")
            for workload in (w for w in experiment.workload if not getattr(w, field)):  # its own replace them
                if not _matches(name, produced[workload.name]) and (why := _engine_reason(experiment, workload, name)):
                    raise SpecError(f"report.{field}: {why}: {name} has no value (a name of some workloads goes in "
                                    f"their [[workload]] {field})")
        for workload in experiment.workload:
            for name in getattr(workload, field) or []:
                if not _matches(name, produced[workload.name]):
                    why = _why_not(experiment, [workload], name, produced[workload.name])
                    raise SpecError(f'workload["{workload.name}"].{field}: {why}')
    for row in experiment.claims.row if experiment.claims else []:  # a row's workload is checked by the spec
        if row.workload in produced and row.metric and not _matches(row.metric, produced[row.workload]):
            workload = experiment.workload_named(row.workload)
            why = _why_not(experiment, [workload], row.metric, produced[workload.name])
            raise SpecError(f"claims.row[{excerpt(row.label)}].metric: {why}")


def _check_derived_inputs(experiment: Experiment, produced: set[str]) -> None:
    """Each [derived] expression reads metrics produced, or derived before it."""
    from iolab.cell import derived

    known = set(produced)
    for item in derived.parse_all(experiment.derived):
        for name in sorted(item.names):
            if not _matches(name, known):
                raise SpecError(f"derived.{item.name}: {_why_not(experiment, experiment.workload, name, known)}")
        known.add(item.name)


def _engine_names(experiment: Experiment, workload: Workload) -> set[str]:
    if workload.engine == "script":
        return set(script.METRICS)
    if workload.engine == "probe":
        return probe.metric_names(*_probe_mode(experiment, workload))
    return fio.metric_names(_directions(experiment, workload))


def _jobs(experiment: Experiment, workload: Workload) -> list[fio_jobs.Job]:
    """The job sections of a fio workload with each variant's fio options."""
    text = job_text(experiment, workload)
    return [job for variant in experiment.variant for job in fio_jobs.jobs(text, dict(variant.fio))]


def _directions(experiment: Experiment, workload: Workload) -> set[str]:
    return set().union(*(job.directions for job in _jobs(experiment, workload)))


def _probe_mode(experiment: Experiment, workload: Workload) -> tuple[str, str | None]:
    """The workload's mode, and its churn phases where every variant runs the
    same ones (None: the probe's defaults, or phases that differ)."""
    params = workload.probe or {}
    mode = str(params["mode"])
    phases = {str(v.probe.get("phases", params.get("phases", ""))) for v in experiment.variant}
    return mode, phases.pop() if len(phases) == 1 and "" not in phases else None


def _matches(name: str, produced: set[str]) -> bool:
    return name in produced or any(fnmatchcase(name, pattern) for pattern in produced)


def _why_not(experiment: Experiment, workloads: list[Workload], name: str, produced: set[str]) -> str:
    """Why no workload of ``workloads`` gives ``name``: what gives it
    instead, or that nothing does (with the closest name that is produced)."""
    reasons = [why for w in workloads if (why := _engine_reason(experiment, w, name))]
    if reasons:
        return f"{'; '.join(reasons[:2])}: {name} has no value"
    exact = {n for n in produced if not any(c in n for c in "*?[")}
    return f"unknown metric {excerpt(name)}{did_you_mean(name, exact)} (see docs/experiment.md, \"Metrics\")"


def _engine_reason(experiment: Experiment, workload: Workload, name: str) -> str | None:
    where = f'workload "{workload.name}"'
    if workload.engine == "fio":
        if name in FIO_ALL:
            jobs = _jobs(experiment, workload)
            does = {frozenset({"read"}): "reads only", frozenset({"write"}): "writes only"}.get(
                frozenset(_directions(experiment, workload)), "neither reads nor writes")
            return f"{where} {does} (rw={', '.join(sorted({job.rw for job in jobs}))})"
        modes = [mode for mode, names in PROBE_ALL.items() if name in names]
        return f"{where} runs fio, not the probe's {'/'.join(modes)} mode" if modes else None
    if workload.engine == "script":
        return f"{where} runs a script, which gives {', '.join(script.METRICS)}" \
            if name in FIO_ALL or any(name in names for names in PROBE_ALL.values()) else None
    mode, _ = _probe_mode(experiment, workload)
    if name in FIO_ALL:
        return f"{where} runs the probe ({mode} mode), not fio"
    modes = [m for m, names in PROBE_ALL.items() if name in names and m != mode]
    return f"{where} runs the probe's {mode} mode, not {'/'.join(modes)}" if modes else None
