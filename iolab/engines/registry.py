"""The engines by name: the one table a workload's `engine = "..."` picks from."""

from __future__ import annotations

from iolab.engines.base import Engine


def get(name: str, fio_binary: str = "fio") -> Engine:
    """The engine of a workload; ``fio_binary``: the fio the fio engine runs."""
    from iolab.engines import fio, probe, script

    engines: dict[str, Engine] = {"fio": fio.FioEngine(fio_binary), "probe": probe.ProbeEngine(),
                                  "script": script.ScriptEngine()}
    return engines[name]


def for_instructions(name: str, job: str) -> str:
    """The job of a workload of engine ``name`` with its op count cut to
    what instructions mode needs (iolab.engines.fio / probe .for_instructions)."""
    from iolab.engines import fio, probe, script

    return {"fio": fio.for_instructions, "probe": probe.for_instructions,
            "script": script.for_instructions}[name](job)
