"""Loading an experiment file: TOML -> checked `Experiment`, in two steps.

    load(path)          read the file and parse it
    parse(raw)          the same from a TOML table: the schema (iolab.spec)
                        and the experiment's structure; pure: it reads the
                        files the experiment names (job files, kernels,
                        patches) and nothing of this machine, and runs no
                        program (no fio on PATH needed)
    check_here(exp)     what needs this machine: the CPUs and sysctls the
                        knobs name, sysfs files, a `dir` target that is no
                        system directory, and fio's own parse of every job
                        (the command line calls it after load, the runner's
                        preflight before a run)

The structure is probe parameters (iolab.engines.probe), kernel names
(iolab.kernels), derived-metric expressions (iolab.cell.derived), job
files and '@workload' references, and fio's option table
(iolab.engines.fio_options). The machine is checked only for cells that
run on it (a variant with a kernel runs in a VM: its CPUs are the VM's and
its sysctls the guest kernel's). Every error is a SpecError whose message
names the field, as ``variant["direct"].fio`` or ``workload[1].probe``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iolab import process
from iolab.spec import Build, CellSettings, Experiment, SpecError, Variant, Workload

MAX_FILE = 1 << 20  # bytes of an experiment (or job) file
MAX_DEPTH = 8  # nesting of tables and arrays in an experiment file
MAX_ERRORS = 4  # validation errors shown


def load(path: str | os.PathLike[str], timing: str | None = None) -> Experiment:
    """The checked experiment of a TOML file; SpecError names the file and field.
    ``timing`` overrides [vm] timing (iolab run --timing) before that mode's
    defaults of what the file leaves unset apply (spec.with_timing_defaults)."""
    path = Path(path)
    text = read_text(path, "experiment file")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {str(error)[:200]}") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML: nested more than {MAX_DEPTH} levels deep") from None
    if "base_dir" in raw:
        raise SpecError(f"{path}: base_dir: unknown field")
    if timing is not None:
        vm = raw.get("vm", {})
        raw = {**raw, "vm": {**(vm if isinstance(vm, dict) else {}), "timing": timing}}
    with in_file(path):
        return parse(raw, base_dir=str(path.resolve().parent))


@contextmanager
def in_file(path: str | os.PathLike[str]) -> Iterator[None]:
    """SpecErrors raised inside name the file on each of their lines."""
    try:
        yield
    except SpecError as error:
        raise SpecError(f"{path}: {error}".replace("\n", f"\n{path}: ")) from None


def parse(raw: dict[str, Any], base_dir: str = ".") -> Experiment:
    """The experiment of a TOML table, its schema and structure checked
    (paths relative to ``base_dir``); nothing of this machine."""
    _check_depth(raw)
    _check_series(raw)
    prepared = _probe_tables(raw)
    try:
        experiment = Experiment.model_validate({**prepared, "base_dir": base_dir})
    except ValidationError as error:
        raise SpecError(_explain(error, raw)) from None
    for check in STRUCTURE:
        check(experiment)
    return experiment


def check_here(experiment: Experiment) -> None:
    """What the experiment needs of this machine (SpecError names the field)."""
    for check in HERE:
        check(experiment)


def job_text(experiment: Experiment, workload: Workload) -> str:
    """The fio job text of a workload, following '@other' references and job files."""
    if workload.job_file is not None:
        return read_text(Path(experiment.base_dir, workload.job_file), "job file")
    assert workload.job is not None
    if workload.job.startswith("@"):
        return job_text(experiment, experiment.workload_named(workload.job[1:].strip()))
    return workload.job


def _check_depth(raw: Any) -> None:
    """Refuse tables and arrays nested deeper than MAX_DEPTH (without recursion)."""
    todo: list[tuple[Any, int, str]] = [(raw, 0, "")]
    while todo:
        node, depth, where = todo.pop()
        if depth > MAX_DEPTH:
            raise SpecError(f"{where or '(file)'}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            todo += [(v, depth + 1, f"{where}.{k}" if where else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(node)]


def read_text(path: Path, what: str) -> str:
    """A user's file as text: at most MAX_FILE bytes of UTF-8 (SpecError otherwise)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except OSError as error:
        raise SpecError(f"{path}: cannot read the {what}: {error.strerror}") from None
    if len(data) > MAX_FILE:
        raise SpecError(f"{path}: the {what} is larger than {MAX_FILE >> 10} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SpecError(f"{path}: the {what} is not UTF-8 text (byte {error.start}, line {line})") from None


# -- probe tables: normalised before validation ------------------------------


def _probe_tables(raw: dict[str, Any]) -> dict[str, Any]:
    """Probe workloads get their job text (the checked probe table as JSON)
    and variants their normalised probe overrides; errors name the field."""
    from iolab.engines import probe

    out = dict(raw)
    for kind in ("workload", "variant"):
        items = raw.get(kind)
        if not isinstance(items, list):
            continue
        out[kind] = [_probe_item(kind, index, item, probe) for index, item in enumerate(items)]
    return out


def _probe_item(kind: str, index: int, item: Any, probe: Any) -> Any:
    if not isinstance(item, dict) or not isinstance(item.get("probe"), dict):
        return item
    where = f"{kind}{_name_of(item, index)}.probe"
    try:
        if kind == "variant":
            return {**item, "probe": probe.normalize_overrides(item["probe"])}
        if item.get("engine") != "probe":
            return item  # the schema says probe = {...} is for engine = 'probe'
        text = probe.job_text(item["probe"])
    except ValueError as error:
        raise SpecError(f"{where}: {error}") from None
    if item.get("job") not in (None, text):
        raise SpecError(f"{kind}{_name_of(item, index)}.job: a probe workload takes its parameters "
                        "from probe = {...}; leave out job")
    return {**item, "job": text, "probe": probe.normalize(item["probe"])}


def _name_of(item: dict[str, Any], index: int) -> str:
    name = item.get("name")
    return f'["{name}"]' if isinstance(name, str) and name else f"[{index}]"


# -- a [series]: what its steps are made of ----------------------------------------


def _check_series(raw: dict[str, Any]) -> None:
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
            raise SpecError(f"series.patches: {_excerpt(patch, 60)} is listed twice (patches {seen[key]} and "
                            f"{index}): each patch is one step")
        seen[key] = index
    variants = raw.get("variant") or []
    if not isinstance(variants, list) or len(variants) > 1:
        raise SpecError(f"series: the base is [kernel] and at most one [[variant]] (found {len(variants)}); "
                        "the steps are made from it and [series] patches")
    base = variants[0] if variants and isinstance(variants[0], dict) else {}
    own = base.get("kernel")
    if isinstance(own, str):
        raise SpecError(f"series: variant{_name_of(base, 0)}.kernel is a prebuilt image ({_excerpt(own, 60)}): "
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
                    raise SpecError(f"series.patches: {_excerpt(patch, 60)} is also in the base's kernel "
                                    "patches: it would be applied twice")


def _check_series_files(experiment: Experiment) -> None:
    if experiment.series is None:
        return
    for index, patch in enumerate(experiment.series.patches):
        if not Path(experiment.base_dir, patch).is_file():
            raise SpecError(f"series.patches[{index}]: no such file: {Path(experiment.base_dir, patch)}")


# -- checks of a validated experiment ------------------------------------------


def _check_job_references(experiment: Experiment) -> None:
    for index, workload in enumerate(experiment.workload):
        where = f'workload["{workload.name}"]'
        if workload.job_file is not None:
            job_path = Path(experiment.base_dir, workload.job_file)
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

    for variant in experiment.variant:
        if variant.kernel is None:
            continue
        where = f'variant["{variant.name}"]'
        if isinstance(variant.kernel, Build):
            _check_build(variant.kernel, f"{where}.kernel", experiment.base_dir)
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


def _check_build(build: Build, where: str, base_dir: str) -> None:
    from iolab.kernels import kconfig, sources

    try:
        sources.parse(build.source, build.commit)
        kconfig.parse_fragment(build.config, "config")
    except sources.KernelError as error:
        raise SpecError(f"{where}: {error}") from None
    named = [("source", build.source)] if not build.source.startswith("debian:") else []
    named += [("config_file", build.config_file)] if build.config_file else []
    named += [("patches", p) for p in build.patches] + [("reverse", p) for p in build.reverse]
    for name, value in named:
        if not value.strip() or not Path(base_dir, value).exists():
            raise SpecError(f"{where}.{name}: no such file: {Path(base_dir, value)}")


def _check_derived(experiment: Experiment) -> None:
    from iolab.cell import derived

    try:
        derived.parse_all(experiment.derived)
    except ValueError as error:
        raise SpecError(f"derived: {error}") from None


def _check_machine(experiment: Experiment) -> None:
    """CPUs and sysctls name ones that exist where the cells run: this host,
    or for variants with a kernel the VM ([vm] cpus; the guest kernel's
    sysctls are checked when the cell runs)."""
    in_vm = any(v.kernel is not None for v in experiment.variant)
    cpus = experiment.vm.cpus if in_vm else (os.cpu_count() or 1)
    items: list[tuple[str, CellSettings]] = [(f'variant["{v.name}"]', v) for v in experiment.variant]
    items += [(f'workload["{w.name}"]', w) for w in experiment.workload]
    for where, item in items:
        if item.cpus is not None and (not item.cpus or max(item.cpus) >= cpus):
            place = "the VM ([vm] cpus)" if in_vm else "this host"
            raise SpecError(f"{where}.cpus: must name CPUs between 0 and {cpus - 1} of {place}")
        if in_vm:
            continue
        for key in item.sysctl:
            if not os.path.exists("/proc/sys/" + key.replace(".", "/")):
                raise SpecError(
                    f"{where}.sysctl: {key!r}: no such sysctl on this kernel (/proc/sys/{key.replace('.', '/')})"
                )
        for path in item.sysfs:
            _check_sysfs_path(where, path)


def _check_sysfs_path(where: str, path: str) -> None:
    """A sysfs knob stays under /sys once '..' and links are resolved, and
    (unless it names the target's device) exists on this host."""
    concrete = path.replace("{dev}", "loop0")
    real = os.path.realpath(concrete) if "{dev}" not in path else os.path.normpath(concrete)
    if not real.startswith("/sys/"):
        raise SpecError(f"{where}.sysfs: {_excerpt(path, 60)} leads out of /sys ({_excerpt(real, 60)})")
    if "{dev}" not in path and not os.path.isfile(path):
        raise SpecError(f"{where}.sysfs: {_excerpt(path, 60)}: no such file on this host")


def _check_fio_jobs(experiment: Experiment) -> None:
    """Every fio job, with every variant's fio options, judged against fio's option
    table (iolab.engines.fio_options): what a dry run accepts, a run accepts."""
    from iolab.engines import fio_options

    for workload, variant, job, raw_device in _fio_pairs(experiment):
        try:
            fio_options.check(job, variant.fio, raw_device=raw_device, allow=[*workload.allow, *variant.allow])
        except fio_options.UnsafeJob as error:
            raise SpecError(f'workload["{workload.name}"] with variant["{variant.name}"]: {error}') from None


def _fio_pairs(experiment: Experiment) -> Iterator[tuple[Workload, Variant, str, bool]]:
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

    for workload, variant, job, _ in _fio_pairs(experiment):
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


# Directories a `dir` target may not be (nor be under, for the second set).
SYSTEM_DIRS = frozenset("/ /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root "
                        "/run /sbin /snap /srv /sys /usr /var /var/lib /var/log /var/cache /var/spool /var/mail".split())
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr")


def _system_dir(path: str) -> str | None:
    """A `dir` target gets fio's files: refuse system directories and home directories."""
    import pwd

    real = os.path.realpath(path)
    homes = {os.path.realpath(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/")}
    if real in SYSTEM_DIRS or real in homes or real.startswith(tuple(tree + "/" for tree in SYSTEM_TREES)):
        return real
    return None


def _check_dir_target(experiment: Experiment) -> None:
    """A `dir` target gets fio's files: not a system or home directory."""
    target = experiment.target
    for field, path in (("path", target.path if target.kind == "dir" else None), ("image_dir", target.image_dir)):
        if path and (real := _system_dir(path)):
            raise SpecError(f"target.{field}: {_excerpt(path, 60)} is a system or home directory ({real}); "
                            "give a directory of its own, e.g. /srv/iolab-scratch")


def _check_fio_parses(experiment: Experiment) -> None:
    """fio itself parses every job as a cell would place it (fio --parse-only,
    after the option check: parsing loads the I/O engine), so a value fio
    refuses fails here and not in every cell. Skipped where fio is missing
    (the run's preflight says so)."""
    binary = "fio"
    if experiment.fio != "fio":  # a fio built from source: parsed by it once it is built
        from iolab.kernels import fio_source

        built = fio_source.cached_for(experiment.fio)
        if built is None:
            return
        binary = str(built.path)
    if shutil.which(binary) is None:
        return
    from iolab.engines import EngineError, fio

    for workload, variant, job, raw in _fio_pairs(experiment):
        where = f'workload["{workload.name}"] with variant["{variant.name}"]'
        try:
            placed = fio.place_job(job, dict(variant.fio), None if raw else "/iolab-target",
                                   "/dev/null" if raw else None, (*workload.allow, *variant.allow))
        except EngineError as error:
            raise SpecError(f"{where}: {error}") from None
        refused = _fio_refuses(placed, binary)
        if refused:
            raise SpecError(f"{where}: fio refuses the job: {refused}")
        if re.search(r"^\s*uncached\s*=\s*[1-9]", placed, re.M) and not _fio_dontcache(binary):
            raise SpecError(
                f"{where}: uncached=1, but this fio ({binary}) sets RWF_UNCACHED, an old flag value that "
                "today's kernels read as another flag (RWF_ATOMIC), not RWF_DONTCACHE: the I/O would not be "
                "what the job says; use a fio that has RWF_DONTCACHE: fio = \"debian:fio\"")


@functools.lru_cache(maxsize=8)
def _fio_dontcache(binary: str) -> bool:
    """Whether this fio's uncached option means RWF_DONTCACHE (fio's own help says so)."""
    done = process.run([binary, "--enghelp=io_uring"], timeout=60)
    return "RWF_DONTCACHE" in done.stdout


@functools.lru_cache(maxsize=256)
def _fio_refuses(job: str, binary: str = "fio") -> str | None:
    """fio's own words if `fio --parse-only` refuses the job text, else None."""
    from iolab.engines.fio import fio_error

    with tempfile.NamedTemporaryFile("w", prefix="iolab-parse-", suffix=".fio") as handle:
        handle.write(job)
        handle.flush()
        done = process.run([binary, "--parse-only", handle.name], timeout=60)
    if done.returncode == 0:
        return None
    return fio_error(done.stderr, done.stdout)[:300]


STRUCTURE: tuple[Callable[[Experiment], None], ...] = (
    _check_job_references, _check_series_files, _check_timing, _check_kernels, _check_derived, _check_fio_jobs,
    _check_fio_room,
)
HERE: tuple[Callable[[Experiment], None], ...] = (_check_machine, _check_dir_target, _check_fio_parses)


# -- pydantic's errors, with the field's path -----------------------------------


def _excerpt(value: object, limit: int = 40) -> str:
    """A short printable excerpt of user input, for messages (never the whole input)."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _field_path(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    """('variant', 1, 'fio') -> variant[1].fio, naming the item where it has a name."""
    parts: list[str] = [""]
    node: Any = raw
    for key in loc:
        if isinstance(key, int):
            item = node[key] if isinstance(node, list) and key < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            shown = f'["{name}"]' if isinstance(name, str) and name.isprintable() and len(name) <= 24 else f"[{key}]"
            parts[-1] += shown
        else:
            key_text = str(key)
            parts.append(key_text if key_text.isprintable() and len(key_text) <= 40 else _excerpt(key_text, 32))
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(part for part in parts if part) or "(file)"


def _explain(error: ValidationError, raw: dict[str, Any]) -> str:
    lines = []
    errors = error.errors()
    for item in errors[:MAX_ERRORS]:
        loc = tuple(k for i, k in enumerate(item["loc"])
                    if not (isinstance(k, str) and k.startswith("function-"))
                    and not (k in ("name", "build") and i and item["loc"][i - 1] == "kernel"))  # union tags
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field (check its spelling; see README.md for the fields)"
        elif item["type"] == "literal_error":
            message = f"{message}, got {_excerpt(item['input'])}"
        if len(message) > 300:
            message = message[:297] + "..."
        lines.append(f"{_field_path(loc, raw)}: {message}")
    if len(errors) > MAX_ERRORS:
        lines.append(f"(and {len(errors) - MAX_ERRORS} more errors)")
    return "\n".join(lines)
