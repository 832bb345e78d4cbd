"""What an experiment needs of this machine, checked by the command line
after loading and by the runner's preflight before a run: the CPUs and
sysctls the knobs name, sysfs files, a `dir` target that is no system
directory, fio's own parse of every job, and that the patches of a kernel
built from source apply to its source (where it is unpacked here). Only
cells that run on this machine are checked (a variant with a kernel runs in
a VM: its CPUs are the VM's and its sysctls the guest kernel's)."""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Callable

from iolab import process
from iolab.engines.fio_options import did_you_mean
from iolab.load import device
from iolab.load.errors import excerpt
from iolab.load.structure import fio_pairs
from iolab.spec import Build, CellSettings, Experiment, SpecError


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
        device = _sample_device(experiment)
        for path, value in item.sysfs.items():
            _check_sysfs_path(where, path)
            _check_sysfs_file(where, path, value, device)


def _check_sysfs_path(where: str, path: str) -> None:
    """A sysfs knob stays under /sys once '..' and links are resolved."""
    concrete = path.replace("{dev}", "loop0")
    real = os.path.realpath(concrete) if "{dev}" not in path else os.path.normpath(concrete)
    if not real.startswith("/sys/"):
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)} leads out of /sys ({excerpt(real, 60)})")


def _sample_device(experiment: Experiment) -> str | None:
    """A device whose sysfs shows what `{dev}` in a sysfs path will find: the
    target's device, or for a loop image a loop device of this machine (its
    files are those of any loop device, attached or not); None: none here."""
    target = experiment.target
    if target.kind == "device" and target.device:
        name = os.path.basename(os.path.realpath(target.device))
        return name if os.path.isdir(f"/sys/class/block/{name}") else None
    if target.kind != "loop":
        return None
    loops = [name for name in os.listdir("/sys/block") if re.fullmatch(r"loop\d+", name)] \
        if os.path.isdir("/sys/block") else []
    return min(loops, key=lambda name: int(name[4:]), default=None)


def _check_sysfs_file(where: str, path: str, value: object, device: str | None) -> None:
    """The sysfs file exists (a `{dev}` path: on the sample device; without a
    device here it is not checked), and the value is one it can take: one of
    the choices it shows (`[mq-deadline] none`), a number where it holds one."""
    if "{dev}" in path and device is None:
        return
    concrete = path.replace("{dev}", device or "")
    on = f" on {device}" if "{dev}" in path else ""
    if not os.path.isfile(concrete):
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)}: no such file on this host{on and f' (checked{on})'}"
                        f"{_closest(concrete)}")
    try:
        with open(concrete) as handle:
            shown = handle.read(4096).strip()
    except OSError:  # write-only, or it refuses a read: its value is the kernel's to check
        return
    wanted = str(int(value) if isinstance(value, bool) else value).strip()
    choices = [word.strip("[]") for word in shown.split()] if re.search(r"\[[^\]\s]+\]", shown) else []
    if choices and wanted not in choices and not _loadable_scheduler(path, wanted):
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)}: {excerpt(wanted)} is not one of its choices "
                        f"{on.strip() or 'here'}: {', '.join(choices)}")
    number = r"-?(0x[0-9a-fA-F]+|\d+)"
    if re.fullmatch(number, shown) and not re.fullmatch(number, wanted):
        raise SpecError(f"{where}.sysfs: {excerpt(path, 60)}: {excerpt(wanted)} is not a number; "
                        f"the file holds one (now {excerpt(shown)}{on})")


def _closest(path: str) -> str:
    """Where a path stops existing, and the closest name there (difflib)."""
    parent, missing = os.path.split(path)
    while parent != "/" and not os.path.isdir(parent):
        parent, missing = os.path.split(parent)
    try:
        names = os.listdir(parent)
    except OSError:
        return ""
    return f": {parent} has no {missing!r}" + did_you_mean(missing, names, quoted=True)


def _loadable_scheduler(path: str, name: str, modules: str | None = None) -> bool:
    """An I/O scheduler built as a module that is not loaded yet is not among
    the choices, but writing its name loads it (the kernel asks for
    "<name>-iosched"): so it is one when this kernel's modules have that name
    (modules.dep: kyber-iosched.ko) or alias (modules.alias: "alias bfq-iosched bfq")."""
    if not path.endswith("/queue/scheduler"):
        return False
    wanted = f"{name}-iosched"
    modules = modules or f"/lib/modules/{os.uname().release}"
    try:
        with open(f"{modules}/modules.alias") as aliases, open(f"{modules}/modules.dep") as dep:
            return (any(line.split()[1:2] == [wanted] for line in aliases)
                    or any(os.path.basename(line.split(":")[0]).split(".ko")[0] == wanted for line in dep))
    except OSError:
        return False


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
        refused = fio.parse_refusal(placed, binary)
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


def _check_local_kernels(experiment: Experiment) -> None:
    """A kernel of your own is a kernel image: a bzImage or vmlinux whose
    version iolab can read, or one with its modules directory (which names
    the version) -- not any file that happens to be at that path."""
    from iolab.kernels.images import image_version
    from iolab.kernels.kernel_ref import parse

    for variant in experiment.variant:
        if not isinstance(variant.kernel, str) or variant.modules or parse(variant.kernel).kind != "local":
            continue
        path = os.path.join(experiment.base_dir, variant.kernel)
        try:
            with open(path, "rb") as image:
                version = image_version(image.read())
        except OSError as error:
            raise SpecError(f'variant["{variant.name}"].kernel: {path}: {error.strerror}') from None
        if version is None:
            raise SpecError(f'variant["{variant.name}"].kernel: {path} is not a kernel image (no bzImage setup '
                            "header, no vmlinux version banner)")


def _check_kernel_patches(experiment: Experiment) -> None:
    """The patches of every kernel built from source apply, in order, to its
    source as it came (reverse ones first, as a build applies them: GNU
    patch on a scratch copy of the files they touch, iolab.kernels.patches.check),
    where the source is unpacked here already; where it is not, the build
    checks them before it compiles (the dry run's estimate says so)."""
    from iolab.kernels import KernelError, build, patches, sources

    requests = {v.name: build.request_for(v.kernel, experiment) for v in experiment.variant
                if isinstance(v.kernel, Build) and (v.kernel.patches or v.kernel.reverse)}
    checked: set[tuple[object, ...]] = set()
    for name, request in requests.items():
        where = f'variant["{name}"].kernel'
        try:
            root = sources.unpacked(request.source)
            if root is None or (request.source, request.patches) in checked:
                continue
            if experiment.series is not None:  # every step: its error names the step
                where = ""
                build.check_steps([build.request_for(v.kernel, experiment) for v in experiment.variant
                                   if isinstance(v.kernel, Build)], root=root)
                return
            checked.add((request.source, request.patches))
            patches.check(root, list(request.patches))
        except KernelError as error:  # a PatchError, or a source that does not resolve
            raise SpecError(f"{where}: {error}" if where else str(error)) from None


def _check_device(experiment: Experiment) -> None:
    """A job that no device of this experiment can run (polled I/O on a loop device) is refused now."""
    why = device.refusal(experiment)
    if why:
        raise SpecError(why)


HERE: tuple[Callable[[Experiment], None], ...] = (_check_machine, _check_dir_target, _check_fio_parses,
                                                  _check_device, _check_local_kernels, _check_kernel_patches)
