"""A cached kernel: its manifest read back as a Kernel ready to boot, with
an initramfs of the current format (where another iolab built the entry's
own, one of this format is built beside it), and the listing of every
cached kernel."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.kernels import apt, initramfs, kconfig
from iolab.kernels.cache import MANIFEST_FORMAT, cache_root, locked


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

    def config(self, option: str) -> str | None:
        """The kernel's value of a Kconfig option ("CONFIG_..."): None where it
        is not set, or where the kernel's .config is not at hand (iolab's
        builds keep it as `config`, a package has it in its boot/)."""
        for path in (self.directory / "config", self.directory / "pkg" / "boot" / f"config-{self.kver}"):
            if path.is_file():
                return kconfig.read_config(path.read_text()).get(option)
        return None


def load(directory: Path, name: str) -> Kernel | None:
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        return None
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != MANIFEST_FORMAT:
        return None
    moddir_name = manifest.get("moddir")
    moddir = (directory / moddir_name if not os.path.isabs(moddir_name) else Path(moddir_name)) if moddir_name else None
    return Kernel(
        name=name,
        directory=directory,
        kver=manifest["kver"],
        image=directory / manifest["image"],
        pvh=manifest["pvh"],
        initramfs=_initramfs(directory, manifest, moddir),
        moddir=moddir,
        manifest=manifest,
    )


def _initramfs(directory: Path, manifest: dict[str, Any], moddir: Path | None) -> Path:
    """The kernel's initramfs of this iolab's format: initramfs.cpio when
    the entry was made with it, else one built beside it (initramfs-vN.cpio)
    and left there. The manifest and initramfs.cpio stay as they are: the
    cache is shared, and a checkout of iolab with another format keeps using
    its own, instead of the two rebuilding one file in turn."""
    if manifest.get("initramfs_format") == initramfs.FORMAT:
        return directory / "initramfs.cpio"
    path = directory / beside_name()
    if not path.exists():
        with locked(directory.parent, directory.name + "-initramfs"):
            if not path.exists():
                initramfs.build(moddir, apt.busybox(), path)
    return path


def beside_name() -> str:
    """The file name of an initramfs of this format built beside an entry's own."""
    return f"initramfs-v{initramfs.FORMAT}.cpio"


def listing() -> list[dict[str, Any]]:
    """Manifests of the cached kernels (with their directory and size)."""
    root = cache_root()
    found = []
    for manifest_path in sorted(root.glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text())
        manifest["directory"] = str(manifest_path.parent)
        manifest["current"] = (manifest.get("format") == MANIFEST_FORMAT
                               and (manifest.get("initramfs_format") == initramfs.FORMAT
                                    or (manifest_path.parent / beside_name()).exists()))
        found.append(manifest)
    return found
