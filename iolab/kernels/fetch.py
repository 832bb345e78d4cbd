"""Kernels to boot that are not built from source: a Debian kernel package,
or a developer's own build (a bzImage and its modules).

A Debian kernel is fetched once (``iolab kernel fetch``, or on first use):
``apt-get download`` (apt checks the package against the signed index),
``dpkg-deb -x``, ``depmod -b``, the uncompressed ``vmlinux`` taken out of
the bzImage (booted directly through its PVH entry: no firmware, no
decompression under emulation), the initramfs built (iolab.kernels.initramfs,
with busybox from the busybox-static package, downloaded the same way and
not installed), ``manifest.json`` written, and the directory renamed into
the cache in one step. The cache is ``$XDG_CACHE_HOME/iolab/kernels``
(``~/.cache/iolab/kernels``):

    kernels/6.1.0-56-amd64/    manifest.json  vmlinux  initramfs.cpio  pkg/ (the package tree)
    kernels/local-<sha256>/    a build of your own, keyed by the image's content
    kernels/tools/busybox-<version>/busybox
"""

from __future__ import annotations

import datetime
import hashlib
import shutil
from pathlib import Path

from iolab.kernels import apt, initramfs
from iolab.kernels.cache import MANIFEST_FORMAT, cache_root, install, locked, sha256, staging, write_manifest
from iolab.kernels.entry import Kernel, load
from iolab.kernels.images import boot_image, image_version
from iolab.kernels.kernel_ref import KernelError, KernelRef, Log, parse


def cached(ref: KernelRef) -> Kernel | None:
    """The kernel if it is in the cache and current, else None (fetch it)."""
    if ref.kind == "debian":
        return load(cache_root() / ref.name, str(ref))
    return _local_cached(ref)


def ensure(ref: KernelRef | str, log: Log = lambda _: None) -> Kernel:
    """The kernel from the cache, fetched (or prepared) first when it is not there."""
    if isinstance(ref, str):
        ref = parse(ref)
    kernel = cached(ref)
    if kernel is not None:
        return kernel
    return fetch_debian(ref, log) if ref.kind == "debian" else prepare_local(ref, log)


def fetch_debian(ref: KernelRef, log: Log = lambda _: None) -> Kernel:
    """Download, unpack, index and prepare a Debian kernel package into the cache."""
    root = cache_root()
    with locked(root, ref.name):
        kernel = cached(ref)
        if kernel is not None:
            return kernel
        version = apt.candidate(ref.package)
        tools_busybox = apt.busybox(log)
        with staging(root, f".fetch-{ref.name}-") as work:
            log(f"fetching {ref.package} {version}")
            deb = apt.apt_download(ref.package, version, work / "deb")
            fields = dict(
                line.split(": ", 1)
                for line in apt.run(["dpkg-deb", "-f", str(deb), "Package", "Version"], "dpkg-deb -f").splitlines()
                if ": " in line
            )
            if fields.get("Package") != ref.package or fields.get("Version") != version:
                raise KernelError(f"{deb.name} is {fields}, not {ref.package} {version}")
            log(f"unpacking {deb.name}")
            apt.run(["dpkg-deb", "-x", str(deb), str(work / "pkg")], "dpkg-deb -x")
            kver = _kver_of_tree(work / "pkg", ref.name)
            moddir = work / "pkg" / "lib" / "modules" / kver
            log(f"depmod {kver}")
            apt.run(["depmod", "-b", str(work / "pkg"), kver], "depmod")
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
        tools_busybox = apt.busybox(log)
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
