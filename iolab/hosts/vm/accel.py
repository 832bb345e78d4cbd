"""Which accelerator VMs run under here: KVM where it boots Linux, else TCG.

A KVM that runs QEMU's 14-byte probe guest (qemu.kvm_usable) may still
stall a Linux guest: measured on this project's machines, Debian's 6.1
kernel under ``-accel kvm -cpu host`` printed its first lines over 8 s and
then nothing. So under ``accel = "auto"`` the decision boots a real Linux
guest under KVM (the variant's own kernel, or the smallest cached one) to
iolab's ready marker (init starting its command) within LINUX_PROBE_S, and a
boot that stalls later in a run falls back to TCG (iolab.hosts.vm.host).

The machine is asked through the Machine protocol (iolab.hosts.vm.host's
ThisMachine, which boots its Linux guest as every VM boots; a test passes a
machine that describes itself), and each verdict that a Linux boot
decided is cached per host boot (boot_id), host kernel, QEMU version and
machine type, so the boot is paid once per host boot.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from iolab.hosts.vm.qemu import QEMU
from iolab.kernels import Kernel
from iolab.kernels.cache import cache_root
from iolab.sysutil import ToolError

Accel = Literal["kvm", "tcg"]
# How the verdict was found: a setting, no usable /dev/kvm, the 14-byte probe
# failing, a Linux guest booting or stalling under KVM (the probe's boot or a
# run's), or no Linux kernel to try (KVM then, until a boot stalls)
Found = Literal["set", "no-kvm", "probe-fails", "linux-boots", "linux-stalls", "no-linux"]
MachineType = Literal["microvm", "q35"]  # [vm] machine
LINUX_PROBE_S = 30.0  # a Linux guest under a working KVM reaches its init in 1-3 s
CACHE_NAME = "accel.json"


class AccelError(ToolError):
    """accel = "kvm" on a host where KVM cannot run the VMs; the message says why."""


@dataclass(frozen=True)
class Verdict:
    accel: Accel
    found: Found
    reason: str  # one sentence: doctor's line and the run header's
    detail: str = ""  # what the guest's console or QEMU said (doctor shows it)
    cached: bool = False  # read from the cache (decided earlier in this host boot)


@dataclass(frozen=True)
class LinuxBoot:
    """A Linux guest booted under KVM: whether it reached iolab's ready marker
    within the limit, after how long, and what its console said last."""

    ready: bool
    seconds: float
    kernel: str  # the guest kernel's release
    detail: str = ""  # why not ready: QEMU's error or the console's tail


class Machine(Protocol):
    """What a host says about running VMs under KVM, and where it keeps its
    verdicts (None: nowhere)."""

    @property
    def verdicts(self) -> VerdictCache | None:
        """Where its verdicts are kept (None: nowhere)."""
        ...

    def identity(self) -> dict[str, str]:
        """What a cached verdict holds for: the host boot, host kernel, QEMU version, machine type."""
        ...

    def kvm_device(self) -> bool:
        """/dev/kvm is there and usable, and QEMU is installed."""
        ...

    def tiny_probe(self) -> bool:
        """QEMU runs the 14-byte probe guest under KVM."""
        ...

    def boot_linux(self, limit: float) -> LinuxBoot | None:
        """Boot a Linux guest under KVM to iolab's ready marker, killed at
        `limit` seconds; None when there is no Linux kernel to boot."""
        ...


class VerdictCache:
    """Verdicts by machine identity in one JSON file; entries of other host
    boots are dropped as the file is written."""

    def __init__(self, path: Path | None = None):
        self.path = path or cache_root().parent / CACHE_NAME

    def _entries(self) -> list[dict[str, Any]]:
        try:
            entries = json.loads(self.path.read_text()).get("entries", [])
        except (OSError, ValueError, AttributeError):
            return []
        return [entry for entry in entries if isinstance(entry, dict)]

    def get(self, identity: dict[str, str]) -> Verdict | None:
        for entry in self._entries():
            verdict = entry.get("verdict")
            if (entry.get("identity") == identity and isinstance(verdict, dict)
                    and verdict.get("accel") in ("kvm", "tcg")):
                try:
                    return replace(Verdict(**verdict), cached=True)
                except TypeError:
                    return None
        return None

    def put(self, identity: dict[str, str], verdict: Verdict) -> None:
        kept = [entry for entry in self._entries() if isinstance(entry.get("identity"), dict)
                and entry["identity"].get("boot_id") == identity.get("boot_id") and entry["identity"] != identity]
        kept.append({"identity": identity, "verdict": asdict(replace(verdict, cached=False)), "at": time.time()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        partial.write_text(json.dumps({"entries": kept}, indent=1) + "\n")
        partial.rename(self.path)


def decide(setting: str, machine: Machine, limit: float = LINUX_PROBE_S) -> Verdict:
    """The accelerator for `setting` ("auto", "kvm", "tcg") on `machine`,
    whose Linux guest must reach iolab's init within `limit` seconds.

    "kvm" is the user's word: it is refused only where /dev/kvm is missing
    or this host boot's verdict says KVM stalls Linux (AccelError)."""
    if setting == "tcg":
        return Verdict("tcg", "set", 'accel = "tcg" is set')
    if not machine.kvm_device():
        if setting == "kvm":
            raise AccelError('[vm] accel = "kvm": no usable /dev/kvm here (or no QEMU); set accel = "auto"')
        return Verdict("tcg", "no-kvm", "no usable /dev/kvm: VMs run under QEMU's TCG (slow, emulated)")
    identity = machine.identity()
    cache = machine.verdicts
    cached = cache.get(identity) if cache is not None else None
    if cached is not None and setting == "kvm":
        if cached.accel == "tcg":
            raise AccelError(f'[vm] accel = "kvm": {cached.reason} (found earlier in this host boot); '
                             'set accel = "auto" to run under TCG')
        return Verdict("kvm", "set", 'accel = "kvm" is set')
    if cached is not None:
        return cached
    if setting == "kvm":
        return Verdict("kvm", "set", 'accel = "kvm" is set')
    if not machine.tiny_probe():
        verdict = Verdict("tcg", "probe-fails", "/dev/kvm is there but QEMU cannot run the 14-byte probe "
                          "guest under KVM (a nested or restricted hypervisor): VMs run under TCG")
    else:
        boot = machine.boot_linux(limit)
        if boot is None:
            return Verdict("kvm", "no-linux", "KVM runs the 14-byte probe; no Linux kernel is cached to try "
                           "(a boot that stalls under KVM falls back to TCG)")
        if boot.ready:
            verdict = Verdict("kvm", "linux-boots", f"KVM runs the 14-byte probe and boots Linux {boot.kernel} "
                              f"to iolab's init in {boot.seconds:.1f} s")
        else:
            verdict = stalled(boot)
    if cache is not None:
        cache.put(identity, verdict)
    return verdict


class Settled:
    """A machine whose accelerator is already known (a probe's own boot)."""

    verdicts = None

    def identity(self) -> dict[str, str]:
        return {}

    def kvm_device(self) -> bool:
        return True

    def tiny_probe(self) -> bool:
        return True

    def boot_linux(self, limit: float) -> LinuxBoot | None:
        return None


def stalled(boot: LinuxBoot, limit: str = "") -> Verdict:
    """The verdict of a Linux guest that did not come up under KVM."""
    within = f" (not up within {limit})" if limit else ""
    return Verdict("tcg", "linux-stalls", f"KVM runs the 14-byte probe but a Linux guest ({boot.kernel}) stalled "
                   f"after {boot.seconds:.0f} s{within}: VMs run under TCG", boot.detail)


class Choice:
    """The accelerator of one run's VMs: decided once (decide); under "auto"
    a KVM boot that stalls switches it to TCG for every later boot. A stall
    is cached as this host boot's verdict whatever the setting."""

    def __init__(self, setting: str, machine: Machine):
        self.setting = setting
        self.machine = machine
        self.verdict = decide(setting, machine)

    @property
    def accel(self) -> Accel:
        return self.verdict.accel

    def stalled(self, boot: LinuxBoot, limit: str) -> bool:
        """A boot under KVM did not come up within `limit`: whether the run
        falls back to TCG (under "auto"; "kvm" set: its cells fail)."""
        verdict = stalled(boot, limit)
        if self.machine.verdicts is not None:
            self.machine.verdicts.put(self.machine.identity(), verdict)
        if self.setting != "auto":
            return False
        self.verdict = verdict
        return True


# -- this machine -------------------------------------------------------------------------


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def smallest_cached_kernel() -> Kernel | None:
    """The cached kernel with the smallest image (the quickest to boot), if any."""
    from iolab.kernels import entry, listing

    found = []
    for manifest in listing():
        if not manifest.get("current"):
            continue
        directory = Path(manifest["directory"])
        image = directory / str(manifest.get("image", ""))
        if image.is_file():
            found.append((image.stat().st_size, directory))
    for _, directory in sorted(found):
        kernel = entry.load(directory, directory.name)
        if kernel is not None:
            return kernel
    return None
