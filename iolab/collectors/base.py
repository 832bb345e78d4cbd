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
