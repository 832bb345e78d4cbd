"""What a patch mail says of the machine it measured on, mapped onto the VM here.

The filesystem (the subject's prefix, a mkfs line, or the one the text
names), mkfs and mount options, sysctls, a memory limit (a figure, or
"low memory"), the device (a /dev name, or words such as "HDD" or "ram
disk") and a machine bigger than the VM (listed as not reproduced). Sizes
in the text are read here too (bytes_of).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

Device = Literal["raw", "null_blk", "rotational", "ram"]

LOW_MEMORY = 256 << 20  # "low memory" without a figure: the workload's cgroup limit
_FS = ("ext4", "xfs", "btrfs", "f2fs", "erofs")
SIZE = r"(\d+(?:\.\d+)?)\s?([KMGT]i?B?|[kmgt]i?b?)"  # a size in a mail's words: number and unit


@dataclass(frozen=True)
class Environment:
    fs: str | None = None
    sysctl: dict[str, int | str] = field(default_factory=dict)
    mount_options: str = ""
    mkfs_options: tuple[str, ...] = ()
    device: Device | None = None
    device_source: str = ""  # what the mail named ("/dev/nullb0", "a SATA HDD")
    memory_max: int | None = None
    checkpoint: bool = False  # the mail times a filesystem checkpoint (f2fs: its tracepoint's phases)


def bytes_of(number: str, unit: str) -> int:
    """A size as SIZE reads it, in bytes (a unit's K, M, G or T is binary)."""
    power = {"k": 1, "m": 2, "g": 3, "t": 4}[unit[0].lower()]
    return int(float(number) * 1024 ** power)


def device_of(name: str) -> Device | None:
    """The kind of device a /dev path names (None: no device iolab maps)."""
    if re.match(r"/dev/nullb\d+", name):
        return "null_blk"
    if re.match(r"/dev/(nvme\d+n\d+|sd[a-z]+|vd[a-z]+|hd[a-z]+|mmcblk\d+|md\d+|dm-\d+|loop\d+)", name):
        return "raw"
    if re.match(r"/dev/(ram\d+|pmem\d+|zram\d+)", name):
        return "ram"
    return None


# /dev names no VM here can stand in for, and why: iolab runs the mail's job only where what it measures is
_UNMAPPED = (
    (r"/dev/ublkb\d+", "a ublk device (the mail's ublk server makes it; the VM has none)"),
    (r"/dev/ng\d+n\d+", "an NVMe generic character device (io_uring passthrough to an NVMe controller; "
                        "the VM has none)"),
    (r"/dev/(?:nbd|rbd)\d+", "a network block device (its server is the mail's)"),
)


def unmapped(name: str) -> str:
    """Why a /dev name is a device no VM here can stand in for ("" for any other name)."""
    return next((why for pattern, why in _UNMAPPED if re.match(pattern, name)), "")


def environment(text: str, subject: str, devices: list[tuple[Device, str]]) -> tuple[Environment, list[str]]:
    """What the mail says of the machine, mapped onto the VM; and what is not reproduced of it."""
    missing = []
    prefix = re.match(r"\s*(?:\[[^\]]*\]\s*)?([a-z0-9_]+)(?:/[a-z0-9_]+)?:", subject)
    fs = prefix.group(1) if prefix and prefix.group(1) in _FS else None
    mkfs = re.search(r"\bmkfs\.(\w+)((?:\s+-\S+(?:\s+[^-/\s]\S*)?)*)", text)
    if mkfs and mkfs.group(1) in _FS:
        fs = fs or mkfs.group(1)
    if fs is None:
        said = [f for f in _FS if re.search(rf"\b{f}\b", text, re.I)]
        fs = said[0] if len(said) == 1 else None
    mkfs_options = tuple(shlex.split(mkfs.group(2))) if mkfs else ()
    mount = re.search(r"\bmount\s+(?:-t\s+\w+\s+)?-o\s+(\S+)", text)
    options = mount.group(1) if mount else ""
    compress = re.search(r"\b(compress(?:-force)?=[\w:]+)", text)
    if compress and compress.group(1) not in options:
        options = ",".join(filter(None, [options, compress.group(1)]))
    sysctl: dict[str, int | str] = {}
    for key, value, unit in re.findall(r"\b((?:vm|kernel|fs)\.[a-z0-9_.]*[a-z0-9_])\s*=\s*(\d+)\s?([KMG]i?B?)?\b",
                                       text):
        sysctl[key] = bytes_of(value, unit) if unit else int(value)
    memory = re.search(rf"\b{SIZE}\s+(?:memcg|cgroup|memory limit|memory\.max)", text)
    memory_max = None
    if memory:
        memory_max = bytes_of(memory.group(1), memory.group(2)) // 4096 * 4096
    elif re.search(r"\blow[- ]memory\b|\bmemory pressure\b", text, re.I):
        memory_max = LOW_MEMORY
    device, named = None, ""
    if devices:
        device, named = devices[0]
    elif re.search(r"/dev/nullb\d", text):
        device, named = "null_blk", re.search(r"/dev/nullb\d", text).group(0)  # type: ignore[union-attr]
    elif re.search(r"\b(HDD|hard disk|rotational|spinning (?:disk|rust)|SATA disk)\b", text, re.I):
        device, named = "rotational", "a rotational disk"
    elif re.search(r"\b(memory[- ]backed (?:disk|device)|ram ?disk|brd|pmem)\b", text, re.I):
        device, named = "ram", "a memory-backed disk"
    cpus = re.search(r"\b(\d{2,4})[- ](?:CPU|core|cpu)s?\b", text)
    if cpus and int(cpus.group(1)) > 8:
        missing.append(f"a {cpus.group(1)}-CPU machine: the VM here has 1-2 vCPUs (contention at that scale "
                       "is not reproduced)")
    checkpoint = fs == "f2fs" and bool(re.search(r"\bcheckpoint\b", text, re.I))
    return Environment(fs, sysctl, options, mkfs_options, device, named, memory_max, checkpoint), missing
