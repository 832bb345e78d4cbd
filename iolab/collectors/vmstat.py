"""Memory-management counters from /proc/vmstat.

Emits `vmstat.<key>` for each key chosen, as the delta over the workload;
keys starting with "nr_" are gauges (pages right now, e.g. nr_dirty) and
are emitted as their value at stop() instead.

Keys may be shell-style patterns ("pgscan_*"). An explicitly named key or a
pattern that matches nothing in this kernel's /proc/vmstat is an error
(CollectorError at start); the default set drops what this kernel lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from iolab.collectors.base import Collector, CollectorError, Counters

# reclaim (scanned / stolen pages, direct-reclaim stalls), faults, refaults
# of evicted page cache, paging in and out (KiB)
DEFAULT_KEYS = (
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall_*",
    "pgfault",
    "pgmajfault",
    "workingset_refault_file",
    "pgpgin",
    "pgpgout",
)


def read_vmstat(text: str | None = None) -> dict[str, int]:
    if text is None:
        with open("/proc/vmstat") as f:
            text = f.read()
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip():
            out[key] = int(value)
    return out


class VmStat(Counters):
    name = "vmstat"

    def __init__(self, keys: Sequence[str] | None = None):
        self.patterns = tuple(keys) if keys is not None else DEFAULT_KEYS
        self.strict = keys is not None
        self.keys: list[str] = []
        super().__init__()

    @classmethod
    def from_config(cls, value: Any, device: str | None) -> list[Collector]:
        if isinstance(value, (list, tuple)):
            if not all(isinstance(k, str) for k in value):
                raise ValueError(f"vmstat: keys must be strings, not {value!r}")
            return [cls(value)]
        return super().from_config(value, device)

    def _select(self, available: dict[str, int]) -> list[str]:
        keys: list[str] = []
        for pattern in self.patterns:
            found = [k for k in available if fnmatchcase(k, pattern)]
            if not found and self.strict:
                raise CollectorError(f"vmstat: no key {pattern!r} in this kernel's /proc/vmstat")
            keys += [k for k in found if k not in keys]
        return keys

    def read(self) -> dict[str, float]:
        now = read_vmstat()
        if not self.keys:  # chosen at start(): the keys this kernel has
            self.keys = self._select(now)
        return {key: float(now[key]) for key in self.keys}

    def snapshot(self, key: str) -> bool:
        return key.startswith("nr_")

    def emit(self, deltas: dict[str, float]) -> dict[str, float]:
        return {f"vmstat.{key}": value for key, value in deltas.items()}
