"""The script engine: a shell script the user allowed by name, run once per cell.

A patch mail's recipe that iolab cannot map onto fio or iolab-probe (its
steps are commands iolab does not know) runs only this way, and only when
the user says so (``iolab patch --allow script``, or ``allow = ["script"]``
in the workload): a script runs any program, so it is never run by default.

    [[workload]]
    name = "recipe"
    engine = "script"
    allow = ["script"]
    job = '''
    mkdir d && for i in $(seq 1 1000); do : > d/f$i; done
    sync
    '''

The script runs under ``/bin/sh -e`` in the target's mount point (the
cell's scratch directory for a raw target), with ``IOLAB_TARGET`` (that
directory) and ``IOLAB_DEVICE`` (the target's device, if any) set. Metric:
``phase_ns``, the script's whole run on the clock of the host the cell runs
on (instructions in instructions mode); a [[collect.phase]] times what
happens inside it. A non-zero exit fails the cell with the script's own
error output.
"""

from __future__ import annotations

import time

from iolab import process
from iolab.engines.base import EngineError, EngineResult, WorkloadRun

NAME = "script"
METRICS = ("phase_ns",)
ALLOW = "script"  # the name the user allows it by


class ScriptEngine:
    name = NAME

    def version(self) -> str:
        return "/bin/sh"

    def run(self, work: WorkloadRun) -> EngineResult:
        where = work.target.mountpoint or str(work.workdir)
        argv = ["/usr/bin/env", f"IOLAB_TARGET={where}", f"IOLAB_DEVICE={work.target.device or ''}",
                "/bin/sh", "-e", "-c", work.job]
        start = time.monotonic_ns()
        done = process.run(argv, cwd=where, preexec=work.preexec)
        elapsed = time.monotonic_ns() - start
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise EngineError(f"script exit {done.returncode}: {' / '.join(tail) or 'no output'}")
        result = EngineResult({"phase_ns": float(elapsed)})
        result.artefacts = {"script.sh": work.job, "script.stdout": done.stdout}
        if done.stderr.strip():
            result.artefacts["script.stderr"] = done.stderr
        return result


def for_instructions(job: str) -> str:
    """A script runs as written in instructions mode too (its work is its own)."""
    return job
