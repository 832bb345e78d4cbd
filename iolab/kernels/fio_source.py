"""A newer fio, built from Debian's source package, cached like kernels.

Debian's fio for this host may lack options a seed's jobs use (fio 3.33 has
no ``uncached``, RWF_DONTCACHE). Unstable carries a newer fio whose binary
needs a newer libc than this host's, so iolab builds it from the source
package instead:

    fio = "debian:fio"           the candidate version of unstable's source package
    fio = "debian:fio=3.41-2"    that version

The source comes through iolab's private apt configuration for source
packages (iolab.kernels.sources: its own lists and cache; the system's apt
sources are never touched; apt checks the file against the signed index):
the package's upstream tarball (``apt-get source --tar-only``; Debian's
packaging patches are not applied: the fio is upstream's release as
Debian carries it), and fio's own ``configure`` and ``make`` build
the fio binary against this host's libraries (optional engines whose
libraries are missing are left out, as fio's configure does). The result is
``$XDG_CACHE_HOME/iolab/tools/fio-<version>/fio`` with a manifest; a VM
guest runs the same file (it sees the host's / read-only).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from iolab import process
from iolab.kernels import cache, sources
from iolab.kernels.apt import run as _run
from iolab.kernels.kernel_ref import KernelError, Log

_REF = re.compile(r"^debian:fio(?:=([0-9][0-9a-z.+~:-]*))?$")
BUILD_TIMEOUT = 3600.0


@dataclass(frozen=True)
class Fio:
    path: Path
    version: str  # fio --version: "fio-3.41"
    package: str  # "fio 3.41-2 (Debian source, built here)"


def parse(text: str) -> str | None:
    """The Debian version asked for ("" for the candidate), or None when
    ``text`` is not a debian:fio reference."""
    match = _REF.match(text.strip())
    return None if match is None else (match.group(1) or "")


def root() -> Path:
    return cache.cache_root().parent / "tools"


def _candidate(log: Log) -> str:
    for attempt in (1, 2):
        if attempt == 2 or not any(sources.apt_dir(True).joinpath("lists").glob("*_Sources*")):
            log(f"updating iolab's private apt index of source packages in {sources.apt_dir(True)}")
            sources._apt(["apt-get", "update", "-q", *sources._NO_EXTRAS], "apt-get update (source packages)",
                         sources=True)
        out = sources._apt(["apt-cache", "showsrc", "--only-source", "fio"], "apt-cache showsrc fio", sources=True)
        versions = re.findall(r"^Version:\s*(\S+)", out, re.M)
        if versions:
            return versions[0]
    raise KernelError("no source package fio in iolab's private apt index of source packages")


def cached(version: str) -> Fio | None:
    directory = root() / f"fio-{version}"
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    binary = directory / "fio"
    if not os.access(binary, os.X_OK):
        return None
    return Fio(binary, manifest["fio_version"], f"Debian's fio {version} source, built here")


def cached_for(text: str) -> Fio | None:
    """The cached build an experiment's ``fio`` names, without asking apt:
    that version, or for the candidate the newest build in the cache."""
    asked = parse(text)
    if asked:
        return cached(asked)
    builds = sorted(root().glob("fio-*/manifest.json"), key=lambda p: p.stat().st_mtime)
    return cached(builds[-1].parent.name.removeprefix("fio-")) if builds else None


def ensure(text: str, log: Log = lambda _: None) -> Fio:
    """The fio an experiment names: from the cache, or built now."""
    asked = parse(text)
    if asked is None:
        raise KernelError(f"fio {text!r}: name Debian's source package, debian:fio or debian:fio=VERSION")
    version = asked or _candidate(log)
    found = cached(version)
    if found is not None:
        return found
    with cache.locked(root(), f"fio-{version}"):
        found = cached(version)
        if found is not None:
            return found
        return _build(version, log)


def _build(version: str, log: Log) -> Fio:
    started = time.monotonic()
    with cache.staging(root(), f".fio-{version}-") as work:
        log(f"fio {version}: downloading Debian's source package (its upstream tarball)")
        sources._apt(["apt-get", "source", "--tar-only", "--download-only", "-q", f"fio={version}"],
                     f"apt-get source --tar-only fio={version}", cwd=work, sources=True)
        tarball = next(work.glob("fio_*.orig.tar.*"))
        _run(["tar", "-xf", tarball.name], f"unpacking {tarball.name}", cwd=work)
        tarball.unlink()
        tree = next(p for p in work.iterdir() if p.is_dir())
        log(f"fio {version}: configure and make (2 jobs); the log is {work / 'build.log'}")
        with open(work / "build.log", "w") as out:
            for argv in (["./configure", "--disable-native"], ["make", f"-j{os.cpu_count() or 1}", "fio"]):
                try:
                    done = process.run(argv, cwd=tree, output=out, timeout=BUILD_TIMEOUT)
                except subprocess.TimeoutExpired:
                    raise KernelError(f"fio {version}: {' '.join(argv)} did not finish in {BUILD_TIMEOUT:.0f} s; "
                                      f"see {work / 'build.log'}") from None
                if done.returncode != 0:
                    raise KernelError(f"fio {version}: {' '.join(argv)} failed (exit {done.returncode}); "
                                      f"see {work / 'build.log'}")
        binary = work / "fio"
        (tree / "fio").rename(binary)
        reported = _run([str(binary), "--version"], f"{binary} --version").strip()
        cache.write_manifest(work, {
            "package": "fio", "version": version, "fio_version": reported,
            "built_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "build_seconds": round(time.monotonic() - started, 1),
        })
        shutil.rmtree(tree, ignore_errors=True)
        cache.install(work, root() / f"fio-{version}")
    found = cached(version)
    assert found is not None
    log(f"fio {version}: built ({found.version}, {time.monotonic() - started:.0f} s)")
    return found
