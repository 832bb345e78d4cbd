"""What an experiment needs of this machine, checked by the command line
after loading and by the runner's preflight before a run: the CPUs and
sysctls the knobs name, sysfs files, a `dir` target that is no system
directory, and fio's own parse of every job. Only cells that run on this
machine are checked (a variant with a kernel runs in a VM: its CPUs are the
VM's and its sysctls the guest kernel's)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from collections.abc import Callable

from iolab import process
from iolab.load.errors import excerpt
from iolab.load.structure import fio_pairs
from iolab.spec import CellSettings, Experiment, SpecError


def check_here(experiment: Experiment) -> None:
    """What the experiment needs of this machine (SpecError names the field)."""
    for check in HERE:
        check(experiment)


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
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)} leads out of /sys ({excerpt(real, 60)})")
    if "{dev}" not in path and not os.path.isfile(path):
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)}: no such file on this host")


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
            raise SpecError(f"target.{field}: {excerpt(path, 60)} is a system or home directory ({real}); "
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

    for workload, variant, job, raw in fio_pairs(experiment):
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


HERE: tuple[Callable[[Experiment], None], ...] = (_check_machine, _check_dir_target, _check_fio_parses)
