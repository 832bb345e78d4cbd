"""The experiment's structure, checked after the schema and before anything
of this machine: a [series]' patches (on the raw table, before its steps
are made), job files and '@workload' references, the timing mode, kernel
names and builds (iolab.kernels), derived-metric expressions
(iolab.cell.derived), fio's option table (iolab.engines.fio_options),
whether a job's files fit its loop target, and the metric names it gives
(iolab.load.metric_names). Pure: files the experiment names
are read; no program runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from iolab.load.errors import excerpt, name_of
from iolab.load.files import job_text, read_text
from iolab.load.metric_names import check_metric_names
from iolab.spec import Build, Experiment, SpecError, Variant, Workload


# -- a [series]: what its steps are made of ----------------------------------------


def check_series(raw: dict[str, Any]) -> None:
    """A series is patches in order, each once, over a base built from source:
    [kernel] and at most one [[variant]] (the steps are made from them)."""
    series = raw.get("series")
    if series is None:
        return
    if not isinstance(series, dict):
        raise SpecError("series: must be a table: [series] patches = [\"0001-....patch\", ...]")
    patches = series.get("patches")
    if not isinstance(patches, list) or not all(isinstance(p, str) and p.strip() for p in patches):
        raise SpecError("series.patches: must be a list of patch files, in order")
    if not patches:
        raise SpecError("series.patches: the series is empty: list its patch files in order "
                        "(patches = [\"0001-....patch\", \"0002-....patch\"])")
    seen: dict[str, int] = {}
    for index, patch in enumerate(patches, 1):
        key = os.path.normpath(patch)
        if key in seen:
            raise SpecError(f"series.patches: {excerpt(patch, 60)} is listed twice (patches {seen[key]} and "
                            f"{index}): each patch is one step")
        seen[key] = index
    variants = raw.get("variant") or []
    made = isinstance(variants, list) and all(isinstance(v, dict) and "step" in v for v in variants)
    if made:  # a stored experiment (a queued run's, as an agent checks it): its steps are made already
        variants = variants[:1]
    if not isinstance(variants, list) or len(variants) > 1:
        raise SpecError(f"series: the base is [kernel] and at most one [[variant]] (found {len(variants)}); "
                        "the steps are made from it and [series] patches")
    base = variants[0] if variants and isinstance(variants[0], dict) else {}
    own = base.get("kernel")
    if isinstance(own, str):
        raise SpecError(f"series: variant{name_of(base, 0)}.kernel is a prebuilt image ({excerpt(own, 60)}): "
                        "it has no source to patch; build the base from source: [kernel] source = "
                        "\"debian:linux-source-7.2\" (or a tarball, or a git tree with commit)")
    tables = [t for t in (raw.get("kernel"), own) if isinstance(t, dict)]
    if not any("source" in t for t in tables):
        raise SpecError("series: the steps are kernels built from source: give [kernel] source = "
                        "\"debian:linux-source-7.2\" (or a tarball, or a git tree with commit)")
    for table in tables:
        for kind in ("patches", "reverse"):
            for patch in table.get(kind) or []:
                if kind == "patches" and isinstance(patch, str) and os.path.normpath(patch) in seen:
                    raise SpecError(f"series.patches: {excerpt(patch, 60)} is also in the base's kernel "
                                    "patches: it would be applied twice")


def _check_series_files(experiment: Experiment) -> None:
    if experiment.series is None:
        return
    for index, patch in enumerate(experiment.series.patches):
        if not experiment.file(patch).is_file():
            raise SpecError(f"series.patches[{index}]: no such file: {experiment.file(patch)}")
    _once_each(experiment, experiment.series.patches, "series.patches", "each patch is one step")


def _once_each(experiment: Experiment, names: list[str], where: str, why: str) -> None:
    """A list of patches names each once, and no diff twice under two names:
    the second would not apply (or not reverse) on top of the first."""
    from iolab.kernels.diff import digest

    seen: dict[str, str] = {}
    for name in names:
        key = os.path.normpath(name)
        if key in seen:
            raise SpecError(f"{where}: {excerpt(name, 60)} is listed twice: {why}")
        path = experiment.file(name)
        try:
            diff = digest(path.read_text(errors="replace"))
        except OSError as error:
            raise SpecError(f"{where}: {excerpt(name, 60)}: {error.strerror}") from None
        if diff and diff in seen:
            raise SpecError(f"{where}: {excerpt(name, 60)} and {excerpt(seen[diff], 60)} are the same diff under "
                            f"two names: {why}")
        seen[key] = seen[diff] = name


# -- checks of a validated experiment ------------------------------------------


def _check_job_references(experiment: Experiment) -> None:
    for index, workload in enumerate(experiment.workload):
        where = f'workload["{workload.name}"]'
        if workload.job_file is not None:
            job_path = experiment.file(workload.job_file)
            if not job_path.is_file():
                raise SpecError(f"{where}.job_file: no such file: {job_path}")
        elif workload.job is not None and workload.job.startswith("@"):
            other = workload.job[1:].strip()
            names = [w.name for w in experiment.workload[:index]]
            if other not in names:
                raise SpecError(
                    f"{where}.job: '@{other}' must name a workload defined before it "
                    f"(defined before: {', '.join(names) or 'none'})"
                )


def _check_timing(experiment: Experiment) -> None:
    """Instructions mode counts a VM's instructions: cells on this host have none."""
    if experiment.timing == "instructions" and any(v.kernel is None for v in experiment.variant):
        raise SpecError("vm.timing: \"instructions\" counts the instructions of a VM's guest: every variant "
                        "needs a kernel (kernel = ... or a [kernel] table); cells on this host are timed by "
                        "the wall clock")


def _check_kernels(experiment: Experiment) -> None:
    """Kernel names parse; a kernel of your own (a path, relative to the
    experiment file) exists here; a kernel built from source names a source,
    a fragment and patch files that can be read."""
    from iolab import kernels

    if experiment.kernel is not None:  # every variant's: its errors named as the file has them, [kernel]
        _check_build(experiment.kernel, "kernel", experiment)
    for variant in experiment.variant:
        if variant.kernel is None:
            continue
        where = f'variant["{variant.name}"]'
        if isinstance(variant.kernel, Build):
            _check_build(variant.kernel, f"{where}.kernel", experiment)
            continue
        try:
            ref = kernels.parse(variant.kernel, variant.modules)
        except kernels.KernelError as error:
            raise SpecError(f"{where}.kernel: {error}") from None
        if ref.kind != "local":
            continue
        for name in ("kernel", "modules"):
            value = getattr(variant, name)
            if value is not None and not Path(experiment.base_dir, value).exists():
                raise SpecError(f"{where}.{name}: no such file: {Path(experiment.base_dir, value)}")


def _check_build(build: Build, where: str, experiment: Experiment) -> None:
    from iolab.kernels import KernelError, kconfig, sources

    try:
        sources.parse(build.source, build.commit, experiment.base_dir)
        kconfig.parse_fragment(build.config, "config")
    except KernelError as error:
        raise SpecError(f"{where}: {error}") from None
    named = [("source", build.source)] if not build.source.startswith("debian:") else []
    named += [("config_file", build.config_file)] if build.config_file else []
    named += [("patches", p) for p in build.patches] + [("reverse", p) for p in build.reverse]
    for name, value in named:
        path = Path(experiment.base_dir, value) if name == "source" else experiment.file(value)
        if not value.strip() or not path.exists():
            raise SpecError(f"{where}.{name}: no such file: {path}")
    if build.config_file:  # a fragment that is not .config text: refused here, not by the build
        try:
            kconfig.parse_fragment(read_text(experiment.file(build.config_file), "config_file"), build.config_file)
        except KernelError as error:
            raise SpecError(f"{where}.config_file: {error}") from None
    for kind in ("reverse", "patches"):
        _once_each(experiment, getattr(build, kind), f"{where}.{kind}", "list each patch once")


def _check_derived(experiment: Experiment) -> None:
    from iolab.cell import derived

    try:
        derived.parse_all(experiment.derived)
    except ValueError as error:
        raise SpecError(f"derived: {error}") from None


def _check_fio_jobs(experiment: Experiment) -> None:
    """Every fio job, with every variant's fio options, judged against fio's option
    table (iolab.engines.fio_options): what a dry run accepts, a run accepts."""
    from iolab.engines import fio_options

    for workload, variant, job, raw_device in fio_pairs(experiment):
        try:
            fio_options.check(job, variant.fio, raw_device=raw_device, allow=[*workload.allow, *variant.allow])
        except fio_options.UnsafeJob as error:
            raise SpecError(f'workload["{workload.name}"] with variant["{variant.name}"]: {error}') from None


def fio_pairs(experiment: Experiment) -> Iterator[tuple[Workload, Variant, str, bool]]:
    """Each fio workload with each variant: its job text and whether the
    job writes a raw device (fs = none on a loop image or a device)."""
    for workload in experiment.workload:
        if workload.engine != "fio":
            continue
        job = job_text(experiment, workload)
        for variant in experiment.variant:
            target = experiment.target_for(variant, workload)
            yield workload, variant, job, target.fs == "none" and target.kind != "dir"


def _check_fio_room(experiment: Experiment) -> None:
    """A fio job whose files cannot fit its loop target fails in every cell:
    refuse it, with the numbers and how long the run would have taken
    (iolab.engines.fio_jobs reads size, numjobs, filename, runtime)."""
    from iolab.engines import fio_jobs
    from iolab.plan import pairs, total_rounds
    from iolab.units import format_duration

    for workload, variant, job, _ in fio_pairs(experiment):
        target = experiment.target_for(variant, workload)
        if target.kind != "loop" or target.fs == "erofs":  # erofs: an image made to fit its files
            continue
        found = fio_jobs.jobs(job, dict(variant.fio))
        need, how = fio_jobs.room(found)
        if need <= target.size:
            continue
        cells = total_rounds(experiment) * len(pairs(experiment))
        seconds, exact = fio_jobs.duration(found)
        runs = ""
        if seconds is not None:
            runs = (f"\nas it is, each cell would run {'' if exact else 'up to '}{format_duration(seconds)}, "
                    f"{cells} cells: {format_duration(seconds * cells)} without setup")
        raise SpecError(
            f'workload["{workload.name}"] with variant["{variant.name}"]: fio\'s files need '
            f"{fio_jobs.human(need)} ({'; '.join(how[:3])}), more than the target's {fio_jobs.human(target.size)} "
            f"({target.fs} on a loop image): give [target] size more room, or the job a smaller size={runs}")


STRUCTURE: tuple[Callable[[Experiment], None], ...] = (
    _check_job_references, _check_series_files, _check_timing, _check_kernels, _check_derived, _check_fio_jobs,
    _check_fio_room, check_metric_names,
)
