"""Kernels built from source: a source, patches, a configuration -> a bzImage.

A build request (``BuildRequest``) names a source (iolab.kernels.sources),
patches to apply and to apply reversed (iolab.kernels.patches) and the
experiment's config fragment (merged over iolab's base, iolab.kernels.kconfig).
The kernel is cached by content: its key covers the source's identity, each
patch's direction and content, the merged configuration and the compiler and
linker versions, so a second run, or another experiment asking for the same
kernel, boots the cached one (``iolab kernel list`` shows them).

Layout under ``$XDG_CACHE_HOME/iolab``:

    sources/<id>/linux            the source tree (patched in place, see patches.py)
    builds/<tree-key>/obj         the object tree (make O=...) of a source and a
                                  configuration: builds that differ only by
                                  patches share it, so the second kernel only
                                  recompiles what the patches touched
    builds/<tree-key>/logs/<key>.log   each build's log (a failed one's too)
    kernels/build-<key>/          the kernel: vmlinux (PVH) or bzImage, initramfs,
                                  config, build.log, manifest.json

The kernel is built with every option built in (no modules), from
``make tinyconfig`` plus the fragments, as ``make -j<cpus> vmlinux`` where
the configuration has a PVH entry (CONFIG_PVH, in iolab's base fragment):
QEMU boots that ELF as it is, so the bzImage's compression (xz of the
whole kernel, longer than the rest of a one-file rebuild) is skipped;
without CONFIG_PVH, ``make bzImage``. Each build records how long each of
its phases took (manifest ``phases_s``: patch, configure, compile, link,
install), and in an object tree already configured for this configuration,
olddefconfig is left to make's own syncconfig (a patch that changes a
Kconfig file still gets it), the requested options checked after the build.

A step of a series changes a file or two. Where every source file that
changed since the object tree's last finished make (its record,
SOURCES_RECORD: the content of each file the tree's patches touched) is a
C file, kbuild's own dependency files (.*.cmd) name the objects that read
it, and make builds those objects only ("make fs/ext4/file.o"), then links
without the walk of every directory of the tree (which costs more than
the compile of a file): the built-in.a are thin archives of their
objects' paths, so the link takes the new objects (iolab.kernels.make).
Anything else (a header, a Makefile, Kconfig, assembler, a host program's
file, no record: the first build or a failed one) takes the whole make.
The manifest records the objects made (``make_objects``) and their
directories (``make_dirs``), the CPU
seconds of make and all it ran (``make_cpu_s``: what a loaded host does
not stretch much) and when kbuild's landmarks came (``make_marks_s``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from iolab.kernels import apt, cache, carry, images, initramfs, kconfig, patches, sources
from iolab.kernels.entry import Kernel, listing, load
from iolab.kernels.kernel_ref import KernelError, Log
from iolab.kernels.make import (SOURCES_RECORD, BuildError, Made, Reporter, dirs_of, make, own_objects, step,
                                take_record, write_record)
from iolab.kernels.patches import Patch
from iolab.spec import Build, Experiment

BUILD_FORMAT = 1  # bump when the way a kernel is built changes: cached builds are redone
BUILD_LOG = "kernel-build.log"  # the artefact of a run's sample that carries its kernel's build log
PVH_OPTION = "CONFIG_PVH"  # with it, make's vmlinux boots as it is (iolab.kernels.images.boot_image)


# What a kernel build runs or includes, and the Debian package that has it
# (scripts/setup installs them; iolab doctor names the missing ones).
BUILD_NEEDS = {
    "gcc": "gcc", "make": "make", "ld": "binutils", "flex": "flex", "bison": "bison", "bc": "bc",
    "perl": "perl", "patch": "patch", "xz": "xz-utils", "tar": "tar",
    "/usr/include/libelf.h": "libelf-dev", "/usr/include/openssl/ssl.h": "libssl-dev",
}


def missing_packages() -> list[str]:
    """Debian packages a kernel build needs that this machine lacks."""
    missing = []
    for need, package in BUILD_NEEDS.items():
        found = os.path.exists(need) if need.startswith("/") else shutil.which(need) is not None
        if not found and package not in missing:
            missing.append(package)
    return missing


@dataclass(frozen=True)
class BuildRequest:
    """What to build: a source, patches (reverse ones first), a fragment."""

    source: sources.SourceRef
    patches: tuple[Patch, ...] = ()
    config: tuple[tuple[str, str], ...] = ()  # the experiment's fragments: (origin, .config text)

    def describe(self) -> str:
        parts = [self.source.name + (f"@{self.source.version}" if self.source.version else "")]
        parts += [("-R " if p.reverse else "+ ") + p.path.name for p in self.patches]
        return " ".join(parts)


class Fleet(Protocol):
    """Kernels shared between the machines of a fleet (iolab.run.fleet, in the
    store's PostgreSQL): one machine builds a key, the others fetch it."""

    def claimed(self, key: str) -> AbstractContextManager[None]:
        """Held while this machine fetches or builds the key; waits while another one builds it."""
        ...

    def fetch(self, key: str, into: Path) -> bool:
        """Unpack the key's kernel directory into ``into`` (a fresh staging
        directory); False when no machine has published it."""
        ...

    def publish(self, key: str, directory: Path) -> None:
        """Offer a kernel built here to the other machines."""
        ...


class LogReporter:
    """Phases as log lines (no terminal, or --quiet)."""

    def __init__(self, log: Log):
        self.log = log
        self.shown = -1

    def phase(self, name: str, detail: str = "") -> None:
        self.log(f"kernel build: {name}" + (f" ({detail})" if detail else ""))

    def files(self, done: int, expected: int | None, eta_s: float | None) -> None:
        if expected and done * 10 // expected > self.shown:
            self.shown = done * 10 // expected
            eta = f", ETA {eta_s / 60:.1f} min" if eta_s is not None else ""
            self.log(f"kernel build: {done}/{expected} files{eta}")

    def finish(self) -> None:
        pass


@dataclass
class _Plan:
    """A request resolved: everything its keys cover."""

    request: BuildRequest
    source: sources.Source
    merged: dict[str, kconfig.Option]
    notes: list[str]
    patch_ids: list[str]
    toolchain: str
    tree_key: str = ""
    key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def builds_root() -> Path:
    return cache.cache_root().parent / "builds"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def fragments(request: BuildRequest) -> tuple[dict[str, kconfig.Option], list[str]]:
    """iolab's base fragment and the experiment's, merged (and the redefinition notes)."""
    base = kconfig.parse_fragment(kconfig.BASE.read_text(), "base.config")
    own = [kconfig.parse_fragment(text, origin) for origin, text in request.config]
    return kconfig.merge(base, *own)


def request_for(build: Build, experiment: Experiment) -> BuildRequest:
    """The build a kernel table of `experiment` asks for, its paths made
    absolute (patches and fragments: their stored copies, Experiment.file),
    after what iolab carries into it for the experiment (iolab.kernels.carry)."""
    def path(name: str) -> Path:
        return experiment.file(name).resolve()

    fragments = []
    if build.config_file:
        fragments.append((build.config_file, path(build.config_file).read_text()))
    if build.config:
        fragments.append(("kernel.config", build.config))
    return BuildRequest(
        source=sources.parse(build.source, build.commit, experiment.base_dir),
        patches=(*carry.carried(experiment.vm), *(Patch(path(p), True) for p in build.reverse),
                 *(Patch(path(p)) for p in build.patches)),
        config=tuple(fragments),
    )


def plan(request: BuildRequest, log: Log = lambda _: None) -> _Plan:
    """Resolve a request (the source's version or commit) and compute its keys."""
    source = sources.resolve(request.source, log)
    merged, notes = fragments(request)
    patch_ids = []
    for patch in request.patches:
        text = patches.read(patch)
        patch_ids.append(f"{'R' if patch.reverse else 'F'} {hashlib.sha256(text.encode()).hexdigest()}")
    tools = sources.toolchain()
    resolved = _Plan(request, source, merged, notes, patch_ids, tools)
    resolved.tree_key = _digest(str(BUILD_FORMAT), source.identity, kconfig.canonical(merged), tools)[:16]
    resolved.key = _digest(resolved.tree_key, *patch_ids)[:16]
    return resolved


def kernel_dir(key: str) -> Path:
    return cache.cache_root() / f"build-{key}"


def cached(resolved: _Plan) -> Kernel | None:
    return load(kernel_dir(resolved.key), f"build-{resolved.key}")


def ensure(request: BuildRequest, log: Log = lambda _: None, reporter: Reporter | None = None,
           fleet: Fleet | None = None) -> Kernel:
    """The kernel of this request: from the cache, else (with a ``fleet``)
    fetched from the machine that built it or waited for while one builds
    it, else built now (and, with a fleet, offered to the others)."""
    resolved = plan(request, log)
    kernel = cached(resolved)
    if kernel is not None:
        return kernel
    if fleet is None:
        return _built(resolved, log, reporter)
    with fleet.claimed(resolved.key):
        kernel = cached(resolved) or _fetched(resolved, fleet, log)
        if kernel is not None:
            return kernel
        kernel = _built(resolved, log, reporter)
        fleet.publish(resolved.key, kernel.directory)
        return kernel


def _built(resolved: _Plan, log: Log, reporter: Reporter | None) -> Kernel:
    reporter = reporter or LogReporter(log)
    with cache.locked(sources.cache_root(), resolved.source.slug + "-tree"):
        kernel = cached(resolved)
        if kernel is not None:
            return kernel
        try:
            return _build(resolved, log, reporter)
        finally:
            reporter.finish()


def _fetched(resolved: _Plan, fleet: Fleet, log: Log) -> Kernel | None:
    """The kernel another machine of the fleet built, into this cache (its
    image checked against its manifest); None when none has it."""
    root = cache.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with cache.staging(root, f".fetch-{resolved.key}-") as work:
        if not fleet.fetch(resolved.key, work):
            shutil.rmtree(work, ignore_errors=True)
            return None
        manifest = json.loads((work / "manifest.json").read_text())
        if manifest.get("name") != f"build-{resolved.key}" or \
                cache.sha256(work / manifest["image"]) != manifest.get("image_sha256"):
            raise KernelError(f"the fleet's kernel build-{resolved.key} does not match its manifest")
        cache.install(work, kernel_dir(resolved.key))
    log(f"fetched build-{resolved.key} ({resolved.request.describe()}) from the fleet: "
        f"built by {manifest.get('built_by') or 'another machine'}")
    return cached(resolved)


# -- the build ------------------------------------------------------------------------


def _target(obj: Path) -> str:
    """What make builds: vmlinux where the configuration has a PVH entry, else the bzImage."""
    config = obj / ".config"
    pvh = config.exists() and f"\n{PVH_OPTION}=y\n" in "\n" + config.read_text()
    return "vmlinux" if pvh else "bzImage"


def _product(obj: Path, target: str) -> Path:
    return obj / "vmlinux" if target == "vmlinux" else obj / "arch" / "x86" / "boot" / "bzImage"


def built_before(obj: Path) -> bool:
    """Whether an object tree holds a finished kernel (a build in it is incremental)."""
    return (obj / "vmlinux").exists() or (obj / "arch" / "x86" / "boot" / "bzImage").exists()


def _build(resolved: _Plan, log: Log, reporter: Reporter) -> Kernel:
    missing = missing_packages()
    if missing:
        raise KernelError(f"a kernel build needs {', '.join(missing)}: apt-get install {' '.join(missing)} "
                          "(scripts/setup installs them)")
    reporter.phase("source", resolved.source.label)
    root = sources.unpack(resolved.source, log)
    phases: dict[str, float] = {}
    started = clock = time.monotonic()
    if resolved.request.patches:
        reporter.phase("patch", ", ".join(str(p.path.name) + (" -R" if p.reverse else "")
                                          for p in resolved.request.patches))
    tree = patches.Tree(root)
    tree.apply(list(resolved.request.patches))
    phases["patch"], clock = time.monotonic() - clock, time.monotonic()
    work = builds_root() / resolved.tree_key
    obj = work / "obj"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    log_path = work / "logs" / f"{resolved.key}.log"
    fresh = not built_before(obj)
    record = take_record(obj)  # taken away: a make that fails leaves none
    with open(log_path, "w", buffering=1) as out:  # line by line: the log can be followed
        out.write(f"iolab: building {resolved.request.describe()}\n"
                  f"iolab: source {resolved.source.identity}\niolab: toolchain {resolved.toolchain}\n")
        checked = _configure(root, obj, resolved, out, reporter, fresh)
        phases["configure"], clock = time.monotonic() - clock, time.monotonic()
        target = _target(obj)
        expected = _expected_files(resolved.tree_key) if fresh else None
        changed = None if fresh or checked or record is None else tree.changed_since(record)
        objects = None if changed is None else own_objects(root, obj, changed)
        dirs = None if objects is None else dirs_of(objects)
        if objects is not None:
            out.write(f"iolab: changed since this object tree's last build: {' '.join(changed or []) or 'nothing'}; "
                      f"kbuild's dependency files name the objects that read them: {' '.join(objects) or 'none'}\n")
        reporter.phase("compile", f"make -j{os.cpu_count() or 1} {target}" + (
            "" if fresh else ", incremental: only what changed" if objects is None else
            f", only {', '.join(objects)}" if objects else ", nothing to compile: the last build's kernel stands"))
        if objects is None:
            made = make(root, obj, [target], out, log_path, reporter, expected)
        elif not objects:
            made = Made(0, None, 0.0, {})
        else:
            made = step(root, obj, target, objects, out, log_path, reporter)
        ended = time.monotonic()
        phases["compile"], phases["link"] = (made.linked or ended) - clock, ended - (made.linked or ended)
        if not checked:  # make's syncconfig ran olddefconfig's rules where a patch changed a Kconfig file
            kconfig.check(resolved.merged, (obj / ".config").read_text(), obj / ".config")
    write_record(obj, tree.contents(record or {}))
    seconds = time.monotonic() - started
    files = made.files
    if fresh:
        _record_files(resolved.tree_key, files, seconds)
    reporter.phase("initramfs")
    kernel = _install(resolved, obj, _product(obj, target), log_path,
                      {"build_seconds": round(seconds, 1), "compiled_files": files, "incremental": not fresh,
                       "make_target": target, "make_dirs": "all" if dirs is None else dirs,
                       "make_objects": "all" if objects is None else objects,
                       "make_cpu_s": made.cpu_s, "make_marks_s": made.marks}, phases)
    log(f"built {kernel.name} ({resolved.request.describe()}) in {seconds:.0f} s, {files} files compiled")
    return kernel


def _configure(root: Path, obj: Path, resolved: _Plan, out: Any, reporter: Reporter, fresh: bool) -> bool:
    """tinyconfig + the merged fragments (once per object tree), then
    olddefconfig and the check that every requested option survived;
    False where that was left to the build (an object tree built before with
    this configuration: make's syncconfig does what olddefconfig would, only
    where a Kconfig file changed, and the caller checks after make)."""
    reporter.phase("configure", "tinyconfig + base.config + the experiment's fragment, olddefconfig")
    stamp = obj / ".iolab-fragment"
    wanted = kconfig.canonical(resolved.merged)
    for note in resolved.notes:
        out.write(f"iolab: {note}\n")
    if not fresh and stamp.exists() and stamp.read_text() == wanted and (obj / ".config").exists():
        out.write("iolab: configured for this configuration before: make's syncconfig brings .config up to date\n")
        return False
    if not stamp.exists() or stamp.read_text() != wanted or not (obj / ".config").exists():
        obj.mkdir(parents=True, exist_ok=True)
        make(root, obj, ["tinyconfig"], out, None, None, None)
        (obj / ".config").write_text(kconfig.apply((obj / ".config").read_text(), resolved.merged))
        stamp.write_text(wanted)
    make(root, obj, ["olddefconfig"], out, None, None, None)
    kconfig.check(resolved.merged, (obj / ".config").read_text(), obj / ".config")
    return True


def _stats_path() -> Path:
    return builds_root() / "stats.json"


def _last_build(tree_key: str) -> dict[str, Any] | None:
    """The figures of the last full build of this object tree, else of the last full build."""
    path = _stats_path()
    if not path.exists():
        return None
    stats = json.loads(path.read_text())
    return stats.get(tree_key) or stats.get("last")


def _expected_files(tree_key: str) -> int | None:
    """Files a full build compiled last time."""
    entry = _last_build(tree_key)
    return entry["files"] if entry else None


def last_build_seconds(tree_key: str) -> tuple[float, str] | None:
    """What a build of a kernel in this object tree will likely take, and what
    that figure is (the dry run's estimate): where the object tree is there,
    a build recompiles only what its patches change, so the last build in it
    (the cached kernels' manifests); where it is gone (or none but the first
    was timed), its last full build; else the last full build of another tree."""
    if built_before(builds_root() / tree_key / "obj"):
        timed = [m for m in listing() if m.get("kind") == "build" and m.get("tree_key") == tree_key
                 and m.get("incremental") and isinstance(m.get("build_seconds"), (int, float))]
        if timed:
            last = max(timed, key=lambda manifest: str(manifest.get("fetched_at", "")))
            return float(last["build_seconds"]), "the last build in this object tree took"
    path = _stats_path()
    stats = json.loads(path.read_text()) if path.exists() else {}
    if tree_key in stats:
        return float(stats[tree_key]["seconds"]), "a full build of this tree took"
    if "last" in stats:
        return float(stats["last"]["seconds"]), "no build of this tree timed yet; the last full build took"
    return None


def _record_files(tree_key: str, files: int, seconds: float) -> None:
    path = _stats_path()
    stats = json.loads(path.read_text()) if path.exists() else {}
    stats[tree_key] = stats["last"] = {"files": files, "seconds": round(seconds, 1)}
    path.write_text(json.dumps(stats, indent=1) + "\n")


def _install(resolved: _Plan, obj: Path, product: Path, log_path: Path, figures: dict[str, Any],
             phases: dict[str, float]) -> Kernel:
    """The built kernel into the kernel cache: boot image, initramfs, config,
    log, manifest (with ``phases``' seconds, this one's as "install")."""
    began = time.monotonic()
    root = cache.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with cache.staging(root, f".build-{resolved.key}-") as work:
        image, pvh = images.boot_image(product, work)
        kver = images.image_version(product.read_bytes()) or sources.kernel_version(sources.tree(resolved.source))
        tools_busybox = apt.busybox()
        packed = initramfs.build(None, tools_busybox, work / "initramfs.cpio")
        shutil.copyfile(obj / ".config", work / "config")
        shutil.copyfile(log_path, work / "build.log")
        request = resolved.request
        manifest = {
            "format": cache.MANIFEST_FORMAT,
            "initramfs_format": initramfs.FORMAT,
            "name": f"build-{resolved.key}",
            "kind": "build",
            "build_format": BUILD_FORMAT,
            "source": resolved.source.label,
            "source_identity": resolved.source.identity,
            "version": sources.kernel_version(sources.tree(resolved.source)),
            "patches": [f"{p}" for p in request.patches],
            "patch_ids": resolved.patch_ids,
            "config_fragments": [{"origin": origin, "text": text} for origin, text in request.config],
            "config_sha256": cache.sha256(work / "config"),
            "toolchain": resolved.toolchain,
            "tree_key": resolved.tree_key,
            "kver": kver,
            "image": image.name,
            "image_sha256": cache.sha256(image),
            "pvh": pvh,
            "moddir": None,
            "boot_modules": packed,
            "busybox": str(tools_busybox),
            "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **figures,
            "phases_s": {name: round(value, 2) for name, value in {**phases,
                                                                   "install": time.monotonic() - began}.items()},
        }
        cache.write_manifest(work, manifest)
        cache.install(work, kernel_dir(resolved.key))
    kernel = cached(resolved)
    assert kernel is not None
    return kernel


def build_log(kernel: Kernel) -> str | None:
    """The log of a built kernel's build (None for other kernels)."""
    path = kernel.directory / "build.log"
    return path.read_text(errors="replace") if kernel.manifest.get("kind") == "build" and path.exists() else None


def check_steps(requests: list[BuildRequest], log: Log = lambda _: None, root: Path | None = None) -> None:
    """The patches of every step of a series apply to its source (``root``:
    its unpacked tree, else unpacked now), step by step, before anything is
    built: a patch that does not apply at step k is a PatchError naming k,
    the patch, the file and the hunk. Tried on scratch copies
    (patches.check): the shared tree is not changed."""
    if not requests:
        return
    if root is None:
        root = sources.unpack(sources.resolve(requests[0].source, log), log)
    for step, request in enumerate(requests):
        try:
            patches.check(root, list(request.patches))
        except patches.PatchError as error:
            added = request.patches[-1].path.name if step else "the base's patches"
            raise patches.PatchError(f"series step {step} ({added}): {error}") from None
