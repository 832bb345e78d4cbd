"""Kernels a variant can boot: Debian kernel packages, or a developer's build.

A variant names its kernel (``kernel = "..."`` in the experiment file):

    debian:6.1.0-56-amd64            the Debian package linux-image-6.1.0-56-amd64
    6.1.0-56-amd64                   the same (a bare ABI name)
    linux-image-6.1.0-56-amd64       the same (the package name)
    /src/linux/arch/x86/boot/bzImage a build of your own (a path: it has a '/'),
                                     with ``modules = "/lib/modules/KVER dir"``
                                     or an INSTALL_MOD_PATH root, when the
                                     kernel has modules

A Debian kernel is fetched once (``iolab kernel fetch``, or on first use):
``apt-get download`` (apt checks the package against the signed index),
``dpkg-deb -x``, ``depmod -b``, the uncompressed ``vmlinux`` taken out of
the bzImage (booted directly through its PVH entry: no firmware, no
decompression under emulation), the initramfs built (iolab.hosts.vm.initramfs, with
busybox from the busybox-static package, downloaded the same way and not
installed), ``manifest.json`` written, and the directory renamed into the
cache in one step. The cache is ``$XDG_CACHE_HOME/iolab/kernels``
(``~/.cache/iolab/kernels``):

    kernels/6.1.0-56-amd64/    manifest.json  vmlinux  initramfs.cpio  pkg/ (the package tree)
    kernels/local-<sha256>/    a build of your own, keyed by the image's content
    kernels/tools/busybox-<version>/busybox
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.hosts.vm import initramfs
from iolab.sysutil import ToolError

MANIFEST_FORMAT = 1
BUSYBOX_PACKAGE = "busybox-static"
_DEBIAN_NAME = re.compile(r"^[0-9][a-z0-9.+~-]*$")
_PVH_NOTE = 18  # XEN_ELFNOTE_PHYS32_ENTRY: the kernel has a PVH entry point

Log = Callable[[str], None]


class KernelError(ToolError):
    """A kernel that cannot be named, fetched or prepared; the message says what to do."""


@dataclass(frozen=True)
class KernelRef:
    """A parsed kernel name."""

    kind: str  # "debian" | "local"
    name: str  # debian: the ABI name (6.1.0-56-amd64); local: the image's path
    modules: str | None = None  # local: the module tree (or INSTALL_MOD_PATH)

    @property
    def package(self) -> str:
        return f"linux-image-{self.name}"

    def __str__(self) -> str:
        return f"debian:{self.name}" if self.kind == "debian" else self.name


@dataclass(frozen=True)
class Kernel:
    """A kernel ready to boot, from the cache."""

    name: str  # what the experiment file said, normalised (debian:6.1.0-56-amd64, a path)
    directory: Path
    kver: str  # uname -r in the guest
    image: Path  # vmlinux (PVH) or a bzImage
    pvh: bool
    initramfs: Path
    moddir: Path | None  # lib/modules/KVER (the guest binds it at /usr/lib/modules/KVER)
    manifest: dict[str, Any]


def parse(text: str, modules: str | None = None) -> KernelRef:
    """A kernel name from an experiment file or the command line."""
    text = text.strip()
    if not text:
        raise KernelError("empty kernel name")
    if "/" in text and not text.startswith("debian:"):
        return KernelRef("local", text, modules)
    if modules is not None:
        raise KernelError("modules = '...' is for a kernel of your own (a path); a Debian package has its modules")
    name = text.removeprefix("debian:").removeprefix("linux-image-")
    if not _DEBIAN_NAME.match(name):
        raise KernelError(
            f"{text!r} is not a versioned Debian kernel: name one like debian:6.1.0-56-amd64 "
            "(metapackages such as linux-image-amd64 change over time, so runs would not repeat), "
            "or give a path to a bzImage"
        )
    if name.endswith(("-dbg", "-dbgsym")):
        raise KernelError(f"{text!r} is a debug-symbols package; name the kernel itself ({name.rsplit('-', 1)[0]})")
    return KernelRef("debian", name)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base, "iolab", "kernels")


# -- small tools ------------------------------------------------------------


def _run(argv: list[str], what: str, cwd: Path | None = None, timeout: float = 900) -> str:
    if shutil.which(argv[0]) is None:
        package = {"apt-get": "apt", "apt-cache": "apt", "dpkg-deb": "dpkg", "depmod": "kmod"}.get(argv[0], argv[0])
        raise KernelError(f"{argv[0]} not found: install {package} (a Debian host is needed to fetch Debian kernels)")
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise KernelError(f"{what} did not finish in {timeout:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise KernelError(f"{what} failed (exit {done.returncode}): {' / '.join(lines[-3:]) or '(no output)'}")
    return done.stdout


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def locked(root: Path, name: str) -> Iterator[None]:
    """One fetch of a name at a time (other iolab processes wait)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".lock-{name}", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- apt ----------------------------------------------------------------------


def candidate(package: str) -> str:
    """The version apt would download, or KernelError naming close packages."""
    out = _run(["apt-cache", "policy", package], f"apt-cache policy {package}")
    match = re.search(r"^\s*Candidate:\s*(\S+)", out, re.M)
    if match and match.group(1) != "(none)":
        return match.group(1)
    stem = "linux-image-" if package.startswith("linux-image-") else package
    names = _run(["apt-cache", "pkgnames", stem], "apt-cache pkgnames").split()
    if not names:
        raise KernelError(
            f"{package}: the apt package index is empty or missing: run apt-get update, then try again"
        )
    import difflib

    kernels = sorted(n for n in names if not n.endswith(("-dbg", "-unsigned")))
    close = difflib.get_close_matches(package, kernels, n=6, cutoff=0.75)
    hint = f"close names: {', '.join(n.removeprefix('linux-image-') for n in close)}" if close else (
        "no close names; 'apt-cache search linux-image' lists them")
    raise KernelError(f"no package {package} in the apt index (is it current? apt-get update); {hint}")


def apt_download(package: str, version: str, into: Path) -> Path:
    """The .deb of package=version, downloaded into `into` (apt checks its hash)."""
    into.mkdir(parents=True, exist_ok=True)
    argv = ["apt-get", "download", "-q"]
    if os.geteuid() == 0:  # root's downloads are otherwise "unsandboxed" with a warning
        argv += ["-o", "APT::Sandbox::User=root"]
    _run([*argv, f"{package}={version}"], f"apt-get download {package}", cwd=into)
    debs = sorted(into.glob(f"{package}_*.deb"))
    if len(debs) != 1:
        raise KernelError(f"apt-get download {package} left {len(debs)} .deb files in {into}")
    return debs[0]


def busybox(log: Log = lambda _: None) -> Path:
    """A static busybox for the initramfs, from the busybox-static package
    (downloaded and unpacked into the cache, not installed)."""
    root = cache_root() / "tools"
    existing = sorted(root.glob("busybox-*/busybox"))
    if existing:
        return existing[-1]
    with locked(root, "busybox"):
        existing = sorted(root.glob("busybox-*/busybox"))
        if existing:
            return existing[-1]
        version = candidate(BUSYBOX_PACKAGE)
        log(f"fetching {BUSYBOX_PACKAGE} {version}")
        work = Path(tempfile.mkdtemp(prefix=".fetch-busybox-", dir=root))
        try:
            deb = apt_download(BUSYBOX_PACKAGE, version, work)
            _run(["dpkg-deb", "-x", str(deb), str(work / "pkg")], "dpkg-deb -x")
            binary = work / "pkg" / "bin" / "busybox"
            if not binary.exists():
                raise KernelError(f"{deb.name} has no bin/busybox")
            final = root / f"busybox-{version.replace(':', '_')}"
            final.mkdir()
            shutil.copy2(binary, final / "busybox")
            return final / "busybox"
        finally:
            shutil.rmtree(work, ignore_errors=True)


# -- kernel images --------------------------------------------------------------

_MAGICS = ((b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b\x08", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))


def _decompress(data: bytes, kind: str) -> bytes:
    if kind == "xz":
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)
    if kind == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    if shutil.which("zstd") is None:
        raise KernelError("this kernel is zstd-compressed: install zstd")
    return subprocess.run(["zstd", "-dcq"], input=data, capture_output=True, check=False).stdout


def extract_vmlinux(bzimage: bytes) -> bytes:
    """The ELF vmlinux inside a bzImage (as scripts/extract-vmlinux finds it)."""
    if bzimage[:4] == b"\x7fELF":
        return bzimage
    for magic, kind in _MAGICS:
        position = bzimage.find(magic)
        while position != -1:
            try:
                out = _decompress(bzimage[position:], kind)
            except (lzma.LZMAError, zlib.error, EOFError):
                out = b""
            if out[:4] == b"\x7fELF":
                return out
            position = bzimage.find(magic, position + 1)
    raise KernelError("no ELF vmlinux found inside the kernel image (xz, gzip or zstd payload expected)")


def has_pvh_note(elf: bytes) -> bool:
    """Whether a 64-bit ELF vmlinux has the PVH entry note QEMU boots it by."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for index in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + index * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        position, end = p_offset, p_offset + p_filesz
        while position + 12 <= end:
            namesz, descsz, note_type = struct.unpack_from("<III", elf, position)
            name = elf[position + 12:position + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and note_type == _PVH_NOTE:
                return True
            position += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def image_version(data: bytes) -> str | None:
    """`uname -r` of a kernel image: from a bzImage's setup header, or the
    'Linux version' banner of a vmlinux."""
    if len(data) > 0x210 and data[0x202:0x206] == b"HdrS":
        offset, = struct.unpack_from("<H", data, 0x20E)
        text = data[offset + 0x200:offset + 0x200 + 256].split(b"\0", 1)[0].decode(errors="replace")
        return text.split()[0] if text else None
    match = re.search(rb"Linux version (\S+) \(", data)
    return match.group(1).decode() if match else None


def boot_image(source: Path, into: Path) -> tuple[Path, bool]:
    """Write what QEMU boots into `into`: vmlinux when it has a PVH entry,
    else the bzImage itself; (path, pvh)."""
    data = source.read_bytes()
    elf = extract_vmlinux(data)
    if has_pvh_note(elf):
        target = into / "vmlinux"
        target.write_bytes(elf)
        return target, True
    if data[:4] == b"\x7fELF":
        raise KernelError(f"{source}: a vmlinux without a PVH entry (CONFIG_PVH) cannot be booted: give the bzImage")
    target = into / "bzImage"
    shutil.copyfile(source, target)
    return target, False


# -- the cache --------------------------------------------------------------------


def load(directory: Path, name: str) -> Kernel | None:
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        return None
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != MANIFEST_FORMAT:
        return None
    if manifest.get("initramfs_format") != initramfs.FORMAT:
        manifest = _rebuild_initramfs(directory, manifest)
    moddir = manifest.get("moddir")
    return Kernel(
        name=name,
        directory=directory,
        kver=manifest["kver"],
        image=directory / manifest["image"],
        pvh=manifest["pvh"],
        initramfs=directory / "initramfs.cpio",
        moddir=(directory / moddir if not os.path.isabs(moddir) else Path(moddir)) if moddir else None,
        manifest=manifest,
    )


def _rebuild_initramfs(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """A cached kernel whose initramfs an older iolab built: build it anew."""
    with locked(directory.parent, directory.name + "-initramfs"):
        current = json.loads((directory / "manifest.json").read_text())
        if current.get("initramfs_format") == initramfs.FORMAT:
            return current
        moddir = manifest.get("moddir")
        path = (directory / moddir if not os.path.isabs(moddir) else Path(moddir)) if moddir else None
        manifest = {**manifest, "initramfs_format": initramfs.FORMAT,
                    "boot_modules": initramfs.build(path, busybox(), directory / "initramfs.cpio")}
        write_manifest(directory, manifest)
        return manifest


def cached(ref: KernelRef) -> Kernel | None:
    """The kernel if it is in the cache and current, else None (fetch it)."""
    if ref.kind == "debian":
        return load(cache_root() / ref.name, str(ref))
    return _local_cached(ref)


def listing() -> list[dict[str, Any]]:
    """Manifests of the cached kernels (with their directory and size)."""
    root = cache_root()
    found = []
    for manifest_path in sorted(root.glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text())
        manifest["directory"] = str(manifest_path.parent)
        manifest["current"] = (manifest.get("format") == MANIFEST_FORMAT
                               and manifest.get("initramfs_format") == initramfs.FORMAT)
        found.append(manifest)
    return found


def ensure(ref: KernelRef | str, log: Log = lambda _: None) -> Kernel:
    """The kernel from the cache, fetched (or prepared) first when it is not there."""
    if isinstance(ref, str):
        ref = parse(ref)
    kernel = cached(ref)
    if kernel is not None:
        return kernel
    return fetch_debian(ref, log) if ref.kind == "debian" else prepare_local(ref, log)


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    partial = directory / "manifest.json.partial"
    partial.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    partial.rename(directory / "manifest.json")


@contextmanager
def staging(root: Path, prefix: str) -> Iterator[Path]:
    """A fresh directory in the cache to assemble an entry in before install()
    renames it into place; removed when anything fails before that."""
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    try:
        yield work
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def install(work: Path, final: Path) -> None:
    """Rename the finished directory into place (replacing an outdated one)."""
    if final.exists():
        stale = final.with_name(f".stale-{final.name}-{os.getpid()}")
        final.rename(stale)
        shutil.rmtree(stale, ignore_errors=True)
    work.rename(final)


def fetch_debian(ref: KernelRef, log: Log = lambda _: None) -> Kernel:
    """Download, unpack, index and prepare a Debian kernel package into the cache."""
    root = cache_root()
    with locked(root, ref.name):
        kernel = cached(ref)
        if kernel is not None:
            return kernel
        version = candidate(ref.package)
        tools_busybox = busybox(log)
        with staging(root, f".fetch-{ref.name}-") as work:
            log(f"fetching {ref.package} {version}")
            deb = apt_download(ref.package, version, work / "deb")
            fields = dict(
                line.split(": ", 1)
                for line in _run(["dpkg-deb", "-f", str(deb), "Package", "Version"], "dpkg-deb -f").splitlines()
                if ": " in line
            )
            if fields.get("Package") != ref.package or fields.get("Version") != version:
                raise KernelError(f"{deb.name} is {fields}, not {ref.package} {version}")
            log(f"unpacking {deb.name}")
            _run(["dpkg-deb", "-x", str(deb), str(work / "pkg")], "dpkg-deb -x")
            kver = _kver_of_tree(work / "pkg", ref.name)
            moddir = work / "pkg" / "lib" / "modules" / kver
            log(f"depmod {kver}")
            _run(["depmod", "-b", str(work / "pkg"), kver], "depmod")
            vmlinuz = work / "pkg" / "boot" / f"vmlinuz-{kver}"
            if not vmlinuz.exists():
                raise KernelError(f"{deb.name} has no boot/vmlinuz-{kver}")
            image, pvh = boot_image(vmlinuz, work)
            log(f"building the initramfs ({'PVH vmlinux' if pvh else 'bzImage'})")
            packed = initramfs.build(moddir, tools_busybox, work / "initramfs.cpio")
            manifest = {
                "format": MANIFEST_FORMAT,
                "initramfs_format": initramfs.FORMAT,
                "name": str(ref),
                "kind": "debian",
                "package": ref.package,
                "version": version,
                "kver": kver,
                "deb": deb.name,
                "deb_sha256": sha256(deb),
                "image": image.name,
                "image_sha256": sha256(image),
                "pvh": pvh,
                "moddir": str(moddir.relative_to(work)),
                "boot_modules": packed,
                "busybox": str(tools_busybox),
                "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            }
            shutil.rmtree(work / "deb")
            write_manifest(work, manifest)
            install(work, root / ref.name)
        kernel = cached(ref)
        assert kernel is not None
        log(f"cached {ref} in {kernel.directory}")
        return kernel


def _kver_of_tree(tree: Path, name: str) -> str:
    kvers = [p.name for p in (tree / "lib" / "modules").glob("*") if p.is_dir()]
    if len(kvers) != 1:
        raise KernelError(f"expected one lib/modules/<version> in the package of {name}, found {kvers or 'none'}")
    return kvers[0]


# -- a developer's own build ------------------------------------------------------


def _local_moddir(ref: KernelRef, kver: str | None) -> Path | None:
    if ref.modules is None:
        return None
    path = Path(ref.modules).resolve()
    if not path.is_dir():
        raise KernelError(f"modules: no such directory: {ref.modules}")
    if (path / "modules.dep").exists() or (path / "modules.order").exists():
        moddir = path
    else:  # an INSTALL_MOD_PATH root
        trees = [p for p in (path / "lib" / "modules").glob("*") if p.is_dir()]
        if kver is not None and (path / "lib" / "modules" / kver).is_dir():
            moddir = path / "lib" / "modules" / kver
        elif len(trees) == 1:
            moddir = trees[0]
        else:
            raise KernelError(f"modules: {ref.modules} is neither lib/modules/<version> nor a root holding one")
    if not (moddir / "modules.dep").exists():
        raise KernelError(f"modules: {moddir} has no modules.dep: run depmod (make modules_install runs it)")
    if kver is not None and moddir.name != kver:
        raise KernelError(f"modules: {moddir} is for {moddir.name}, the image is {kver}")
    return moddir


def _local_key(ref: KernelRef) -> tuple[Path, str]:
    image = Path(ref.name).resolve()
    if not image.is_file():
        raise KernelError(f"kernel: no such file: {ref.name}")
    key = hashlib.sha256(f"{sha256(image)}\0{ref.modules and Path(ref.modules).resolve()}".encode()).hexdigest()
    return image, f"local-{key[:16]}"


def _local_cached(ref: KernelRef) -> Kernel | None:
    _, key = _local_key(ref)
    return load(cache_root() / key, str(ref))


def prepare_local(ref: KernelRef, log: Log = lambda _: None) -> Kernel:
    """Prepare a kernel of your own for booting: its vmlinux (or bzImage) and
    an initramfs with its boot modules, cached by the image's content."""
    source, key = _local_key(ref)
    root = cache_root()
    with locked(root, key):
        kernel = _local_cached(ref)
        if kernel is not None:
            return kernel
        tools_busybox = busybox(log)
        with staging(root, f".prepare-{key}-") as work:
            kver = image_version(source.read_bytes())
            moddir = _local_moddir(ref, kver)
            kver = kver or (moddir.name if moddir else None)
            if kver is None:
                raise KernelError(f"{ref.name}: cannot tell its version (not a bzImage or vmlinux?)")
            image, pvh = boot_image(source, work)
            log(f"building the initramfs for {ref.name} ({kver})")
            try:
                packed = initramfs.build(moddir, tools_busybox, work / "initramfs.cpio")
            except initramfs.InitramfsError as error:
                raise KernelError(f"{ref.name}: {error} (the guest needs virtio-mmio/pci, virtio-blk, 9p, overlay)") from None
            manifest = {
                "format": MANIFEST_FORMAT,
                "initramfs_format": initramfs.FORMAT,
                "name": str(ref),
                "kind": "local",
                "source": str(source),
                "source_sha256": sha256(source),
                "kver": kver,
                "image": image.name,
                "pvh": pvh,
                "moddir": str(moddir) if moddir else None,
                "boot_modules": packed,
                "busybox": str(tools_busybox),
                "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            }
            write_manifest(work, manifest)
            install(work, root / key)
        kernel = _local_cached(ref)
        assert kernel is not None
        return kernel
