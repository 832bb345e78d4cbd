"""The kernel cache's ground rules: where it is, one writer per entry, and
entries that appear whole or not at all.

The cache is ``$XDG_CACHE_HOME/iolab`` (``~/.cache/iolab``), shared by every
iolab process on the machine and keyed by content:

    kernels/<name>/      a kernel ready to boot (iolab.kernels.entry)
    kernels/tools/       busybox for the initramfs
    sources/ builds/ apt/   kernels built from source (iolab.kernels.build)

An entry is assembled in a staging directory and renamed into place with
its manifest written last, so a reader sees a complete entry or none; a
lock file per name makes other processes wait for a fetch or build under
way instead of repeating it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MANIFEST_FORMAT = 1


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base, "iolab", "kernels")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Cancelled(Exception):
    """A wait for another process's fetch or build was called off (cancel_waits)."""


_WAITS = threading.local()  # .cancel: the Event that calls off this thread's waits for a lock
LOCK_POLL_S = 0.2


def cancel_waits(event: threading.Event | None) -> None:
    """This thread's waits for a cache lock end with Cancelled once ``event``
    is set (a series' build-ahead thread, whose run was interrupted: the
    lock may be another process's for minutes)."""
    _WAITS.cancel = event


@contextmanager
def locked(root: Path, name: str) -> Iterator[None]:
    """One fetch of a name at a time (other iolab processes wait; every
    LOCK_POLL_S the wait looks whether this thread's cancel_waits event is set)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".lock-{name}", "w") as handle:
        cancel: threading.Event | None = getattr(_WAITS, "cancel", None)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | (fcntl.LOCK_NB if cancel is not None else 0))
                break
            except BlockingIOError:
                if cancel is not None and cancel.wait(LOCK_POLL_S):
                    raise Cancelled(f"the wait for {name} (held by another process) was called off") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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
