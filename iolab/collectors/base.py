"""The collector interface: started before the workload, stopped after it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar


class CollectorError(Exception):
    """The collector cannot give an honest number (lost events, a missing tool,
    an unknown event); the cell must be stored as FAILED with this message."""


class Collector(ABC):
    """Measures one thing over the workload.

    start() right before the workload, stop() right after it; stop() returns
    metric name -> value, deltas over the window unless the module says a
    metric is a snapshot. close() releases resources (a subprocess, a tracefs
    instance), is idempotent and belongs in a finally / ExitStack: it must be
    safe after a failed start() or without stop().
    """

    name: ClassVar[str]

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> dict[str, float]: ...

    def close(self) -> None:
        """Release resources; nothing to do for collectors that only read /proc."""

    @classmethod
    def from_config(cls, value: Any, device: str | None) -> list[Collector]:
        """Collectors for this config value (see iolab.collectors); `device`
        is the target's block device, if it has one."""
        if value is True:
            return [cls()]
        if value is False or value is None:
            return []
        raise ValueError(f"collector {cls.name!r}: expected true or false, not {value!r}")


class Counters(Collector):
    """A collector of counters read before and after the workload.

    Subclasses define read() (name -> value now) and may define snapshot()
    (counters emitted as their value at stop(), gauges such as nr_dirty)
    and emit() (the deltas as metrics: names, units, totals). stop() before
    start() is a CollectorError.
    """

    def __init__(self) -> None:
        self._before: dict[str, float] | None = None

    @abstractmethod
    def read(self) -> dict[str, float]: ...

    def snapshot(self, key: str) -> bool:
        return False

    def emit(self, deltas: dict[str, float]) -> dict[str, float]:
        return deltas

    def start(self) -> None:
        self._before = self.read()

    def stop(self) -> dict[str, float]:
        if self._before is None:
            raise CollectorError(f"{self.name}: stop() without start()")
        after = self.read()
        deltas = {key: after[key] if self.snapshot(key) else after[key] - before
                  for key, before in self._before.items()}
        return self.emit(deltas)
