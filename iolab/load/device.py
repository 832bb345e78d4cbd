"""The device a benchmark needs, and whether this experiment's device can run it.

A job that polls for its completions (fio's ``hipri``: io_uring with
IORING_SETUP_IOPOLL, pvsync2 with RWF_HIPRI; ``t/io_uring -p1`` maps to it)
runs only on a queue that polls: a loop device or a virtio disk has none
(fio: "Operation not supported", in every cell), the guest's null_blk has
one by default, and the modeled device has ``poll_queues`` of its own
(iolab.spec.DeviceModel). :func:`refusal` says so before anything is built
or booted, and :func:`describe` names the device in the dry run.

:func:`need_of` turns what a mail says about its device (its kind, its
jobs) into a :class:`DeviceNeed`, and :func:`vm_table` into the [vm]
settings of the experiment `iolab patch` writes (the mail stage wires it:
iolab.workloads.compose, where it picks the disk today).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from iolab.engines import fio_jobs
from iolab.load.files import job_text
from iolab.spec import Experiment

DeviceKind = Literal["any", "null_blk", "rotational"]
_OFF = ("0", "false", "no", "off")


@dataclass(frozen=True)
class DeviceNeed:
    """What a benchmark needs of its device: a kind (a rotational disk, the
    mail's null_blk, or any), whether its jobs poll, and a transfer rate
    where the mail states one (MiB/s; None: the model's default)."""

    kind: DeviceKind = "any"
    polled: bool = False
    mib_per_s: int | None = None

    def words(self) -> str:
        parts = [{"any": "any device", "null_blk": "the mail's null_blk", "rotational": "a rotational disk"}[
            self.kind]]
        if self.polled:
            parts.append("polled I/O (poll queues)")
        if self.mib_per_s:
            parts.append(f"{self.mib_per_s} MiB/s")
        return ", ".join(parts)


def polls(job: str, extra: dict[str, object] | None = None) -> bool:
    """Whether a fio job file has a job that polls for completions (hipri set and not off)."""
    return any(value.strip().lower() not in _OFF for value in fio_jobs.option_values(job, "hipri", extra))


def need_of(device: str | None, jobs: Iterable[str] = ()) -> DeviceNeed:
    """A mail's device need: ``device`` as the mail stage reads it
    (iolab.mail.benchmark.Device: "rotational" for an HDD, "null_blk" for a
    /dev/nullbN; a raw NVMe or SCSI disk needs nothing of its own), and its
    fio jobs' texts (polled I/O)."""
    kind: DeviceKind = "rotational" if device == "rotational" else "null_blk" if device == "null_blk" else "any"
    return DeviceNeed(kind=kind, polled=any(polls(job) for job in jobs))


# A rotational disk's model where the mail gives no figures: a 7200 rpm SATA disk's order of
# magnitude (160 MiB/s streaming, 2 ms to move away from the last request's end), as
# bench/device-model-hdd-readahead.toml measured it deciding the rotational readahead change
HDD: dict[str, Any] = {"completion_nsec": 50_000, "mib_per_s": 160, "seek_nsec": 2_000_000,
                       "rotational": True, "max_kb": 1280}


def vm_table(need: DeviceNeed, timing: str) -> dict[str, Any]:
    """The [vm] disk settings that give a benchmark its device. In
    instructions mode a device's time is modeled (disk = "model"): rotational
    for an HDD, poll queues for polled I/O, the mail's rate where it gives
    one; in wall mode polled I/O and the mail's null_blk take the guest's
    null_blk; otherwise nothing (the experiment's default disk)."""
    if timing == "instructions":
        model: dict[str, Any] = {}
        if need.kind == "rotational":
            model.update(HDD)
        if need.polled:
            model["poll_queues"] = 1
        if need.mib_per_s:
            model["mib_per_s"] = need.mib_per_s
        if not model and need.kind == "any":
            return {}
        return {"disk": "model", **({"model": model} if model else {})}
    if need.polled or need.kind == "null_blk":
        return {"disk": "null_blk"}
    return {}


def _polled_workloads(experiment: Experiment) -> list[str]:
    return [w.name for w in experiment.workload if w.engine == "fio" and any(
        polls(job_text(experiment, w), dict(v.fio)) for v in experiment.variant)]


def describe(experiment: Experiment) -> str:
    """The device the cells run on, in a line (the dry run's "device:")."""
    target = experiment.target
    if not any(v.kernel is not None for v in experiment.variant):
        where = {"loop": "a loop device on an image on this host", "device": f"{target.device} on this host",
                 "dir": "a directory on this host"}.get(target.kind, target.kind)
        return f"device: {where}"
    vm = experiment.vm
    model = vm.device_model
    if model is not None:
        patch = "; iolab's change to null_blk carried into each kernel" if model.carried else ""
        return f"device: modeled null_blk in the VM ({model.words()}; unit: modeled){patch}"
    return "device: " + {"virtio": "a virtio disk on an image on this host (no poll queues)",
                         "ram": "a loop device on an image in the VM's memory (no poll queues)",
                         "null_blk": "the guest's null_blk (memory-backed, 1 poll queue)"}[vm.disk]


def refusal(experiment: Experiment) -> str:
    """Why no device here can run one of the experiment's jobs ("" when every one can)."""
    polled = _polled_workloads(experiment)
    if not polled:
        return ""
    in_vm = any(v.kernel is not None for v in experiment.variant)
    model = experiment.vm.device_model
    if in_vm and (experiment.vm.disk == "null_blk" or (model is not None and model.poll_queues)):
        return ""
    if not in_vm and experiment.target.kind == "device":
        return ""  # the user's own device: its driver says whether it polls
    instead = ('[vm] disk = "model" with model = { poll_queues = 1 } (a kernel built from source)'
               if experiment.timing == "instructions" else '[vm] disk = "null_blk" (the guest\'s null_blk polls)')
    here = (f"[vm] disk = \"{experiment.vm.disk}\"" + (" without poll_queues" if model is not None else "")
            if in_vm else f"a {experiment.target.kind} target on this host")
    return (f"workload {polled[0]!r} polls for its completions (fio hipri), which {here} cannot do "
            f"(fio would fail with \"Operation not supported\" in every cell): use {instead}")
