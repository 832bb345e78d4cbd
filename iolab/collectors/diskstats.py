"""Block device counters from /proc/diskstats, for one device.

Field mapping (Documentation/admin-guide/iostats.rst; fields after
"major minor name"), emitted as deltas over the workload unless noted:

    field  iostats.rst name              metric
     1     reads completed successfully  disk.reads
     2     reads merged                  disk.read_merges
     3     sectors read                  disk.read_sectors
     4     time spent reading (ms)       disk.read_ms
     5     writes completed              disk.writes
     6     writes merged                 disk.write_merges
     7     sectors written               disk.write_sectors
     8     time spent writing (ms)       disk.write_ms
     9     I/Os currently in progress    disk.in_flight  (snapshot at stop)
    10     time spent doing I/Os (ms)    disk.io_ms      (busy time)
    11     weighted time doing I/Os (ms) disk.weighted_io_ms
    12     discards completed            disk.discards          (4.18+)
    13     discards merged               disk.discard_merges
    14     sectors discarded             disk.discard_sectors
    15     time spent discarding (ms)    disk.discard_ms
    16     flush requests completed      disk.flushes           (5.5+)
    17     time spent flushing (ms)      disk.flush_ms

plus disk.ios = disk.reads + disk.writes; per direction the bytes moved,
disk.read_kib and disk.write_kib (sectors / 2), and the mean request size,
disk.read_req_kib = disk.read_kib / disk.reads (emitted only where there
was a request). A sector is always 512 bytes here, whatever the device's
logical block size. Fields the running kernel
does not print are not emitted. Counts are of requests that completed, so
merged bios count once.
"""

from __future__ import annotations

import os
from typing import Any

from iolab.collectors.base import Collector, CollectorError, Counters

FIELDS = (
    "reads", "read_merges", "read_sectors", "read_ms",
    "writes", "write_merges", "write_sectors", "write_ms",
    "in_flight", "io_ms", "weighted_io_ms",
    "discards", "discard_merges", "discard_sectors", "discard_ms",
    "flushes", "flush_ms",
)  # fmt: skip
SNAPSHOTS = {"in_flight"}
DERIVED = ("ios", "read_kib", "write_kib", "read_req_kib", "write_req_kib")  # emit()'s own, from the fields


def device_name(device: str) -> str:
    """"loop0", "/dev/loop0" or a /dev/disk/by-* link -> the name in /proc/diskstats."""
    if "/" in device:
        device = os.path.realpath(device)
    return os.path.basename(device)


def read_diskstats(name: str, text: str | None = None) -> dict[str, int]:
    if text is None:
        with open("/proc/diskstats") as f:
            text = f.read()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[2] == name:
            return {field: int(v) for field, v in zip(FIELDS, parts[3:])}
    raise CollectorError(f"diskstats: no device {name!r} in /proc/diskstats")


class DiskStats(Counters):
    name = "diskstats"

    def __init__(self, device: str):
        self.device = device_name(device)
        super().__init__()

    @classmethod
    def from_config(cls, value: Any, device: str | None) -> list[Collector]:
        if value is True:
            if not device:
                raise ValueError("diskstats: true means the target's device, and this target has none; name one")
            return [cls(device)]
        if isinstance(value, str):
            return [cls(value)]
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            raise ValueError("diskstats: one device per experiment (metric names carry no device)")
        return super().from_config(value, device)

    def read(self) -> dict[str, float]:
        return {field: float(value) for field, value in read_diskstats(self.device).items()}

    def snapshot(self, key: str) -> bool:
        return key in SNAPSHOTS

    def emit(self, deltas: dict[str, float]) -> dict[str, float]:
        for field, value in deltas.items():
            if value < 0:
                raise CollectorError(
                    f"diskstats: {self.device} {field} went backwards (by {-value:.0f}); "
                    "was the device detached and attached again?"
                )
        out = {f"disk.{field}": value for field, value in deltas.items()}
        out["disk.ios"] = out["disk.reads"] + out["disk.writes"]
        for side in ("read", "write"):
            out[f"disk.{side}_kib"] = out[f"disk.{side}_sectors"] / 2
            if out[f"disk.{side}s"]:
                out[f"disk.{side}_req_kib"] = out[f"disk.{side}_kib"] / out[f"disk.{side}s"]
        return out
