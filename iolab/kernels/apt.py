"""The system's apt, for the packages a kernel needs: a Debian kernel
package and busybox-static (downloaded and unpacked, never installed; apt
checks each .deb against the signed index)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from iolab.kernels.cache import cache_root, locked
from iolab.kernels.kernel_ref import KernelError, Log
from iolab.process import run_tool

BUSYBOX_PACKAGE = "busybox-static"


def run(argv: list[str], what: str, cwd: Path | None = None) -> str:
    """A tool of the kernel supply: its stdout, or KernelError."""
    return run_tool(argv, what=what, cwd=cwd, timeout=900, error=KernelError)


def candidate(package: str) -> str:
    """The version apt would download, or KernelError naming close packages."""
    out = run(["apt-cache", "policy", package], f"apt-cache policy {package}")
    match = re.search(r"^\s*Candidate:\s*(\S+)", out, re.M)
    if match and match.group(1) != "(none)":
        return match.group(1)
    stem = "linux-image-" if package.startswith("linux-image-") else package
    names = run(["apt-cache", "pkgnames", stem], "apt-cache pkgnames").split()
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
    run([*argv, f"{package}={version}"], f"apt-get download {package}", cwd=into)
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
            run(["dpkg-deb", "-x", str(deb), str(work / "pkg")], "dpkg-deb -x")
            binary = work / "pkg" / "bin" / "busybox"
            if not binary.exists():
                raise KernelError(f"{deb.name} has no bin/busybox")
            final = root / f"busybox-{version.replace(':', '_')}"
            final.mkdir()
            shutil.copy2(binary, final / "busybox")
            return final / "busybox"
        finally:
            shutil.rmtree(work, ignore_errors=True)
