"""A cached kernel: its manifest read back as a Kernel ready to boot, with
an initramfs of the current format (one an older iolab built is built anew
here), and the listing of every cached kernel."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.kernels import apt, initramfs
from iolab.kernels.cache import MANIFEST_FORMAT, cache_root, locked, write_manifest


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
                    "boot_modules": initramfs.build(path, apt.busybox(), directory / "initramfs.cpio")}
        write_manifest(directory, manifest)
        return manifest


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
