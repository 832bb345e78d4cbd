"""The engine interface: what an engine is given (WorkloadRun, on a
Prepared target) and what it gives back (EngineResult), or EngineError
with the tool's own error text."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol


@dataclass(frozen=True)
class Prepared:
    """A target ready for a workload."""

    fs: str
    device: str | None  # /dev/loop3, /dev/vdb; None for a directory target
    mountpoint: str | None  # None for a raw device (fs = none)
    mkfs_options: list[str] = field(default_factory=list)
    mount_options: str = ""
    loop: dict[str, object] = field(default_factory=dict)  # losetup options of a loop target
    image_place: str = ""  # where a loop target's image lives ("RAM (tmpfs /dev/shm)", a directory)
    block_size: int | None = None  # the mounted filesystem's block size (statvfs f_bsize), as mkfs chose it

    @property
    def device_name(self) -> str | None:
        return os.path.basename(self.device) if self.device else None

    def describe(self) -> dict[str, object]:
        return asdict(self)


class EngineError(Exception):
    """The workload failed; the message is the tool's own error text."""


@dataclass
class EngineResult:
    metrics: dict[str, float]
    histograms: dict[str, dict[int, int]] = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)
    # metrics the tool's output has but contradicts: name -> why they are not given (a sample's env["unmeasured"])
    unmeasured: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadRun:
    """Everything an engine needs to run one workload once."""

    job: str  # the workload's job text, as the user wrote it
    options: dict[str, object]  # the variant's engine options (e.g. fio = {direct = 1})
    target: Prepared
    workdir: Path  # the cell's scratch directory (not on the target)
    preexec: Callable[[], None] | None = None  # joins cgroups, pins CPUs, in the child
    allow: tuple[str, ...] = ()  # fio options the experiment opts in to (iolab.engines.fio_options)


_VERSIONS: dict[tuple[str, int, int, int], str] = {}


def version_of(path: str | Path, ask: Callable[[], str]) -> str:
    """A program's version, asked once per process for each build of it (its
    path, inode, size and mtime): every cell records its engine's version,
    and in a VM guest each ``--version`` is an exec of its own under
    emulation (about a tenth of a second; issue 29). A program rebuilt
    during a run is asked again."""
    info = os.stat(path)
    key = (os.fspath(path), info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _VERSIONS:
        _VERSIONS[key] = ask()
    return _VERSIONS[key]


class Engine(Protocol):
    name: str

    def version(self) -> str: ...

    def run(self, work: WorkloadRun) -> EngineResult: ...
