"""Running programs: the one runner for every stage (mkfs, losetup, mount,
fio, iolab-probe, apt-get, dpkg-deb, git, tar ...).

Every child dies with iolab (PR_SET_PDEATHSIG), is journalled while it runs
when a run's journal is open (iolab.journal.current), and on any
exception while it runs (Ctrl-C, SIGTERM, a timeout) is killed with every
process below it before the exception goes on. ``run`` returns what the
child did; ``run_tool`` is for tools that must succeed: their stdout, or
an error (ToolError, or the caller's subclass) that names the tool, its
exit status and the end of its error output.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence

from iolab.journal import current, process_start
from iolab.journal.reclaim import kill_tree
from iolab.sysutil import ToolError, die_with_parent, error_lines, require


def run(
    argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, preexec: Callable[[], None] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a program to completion, its output captured (text)."""
    process = subprocess.Popen(
        list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=die_with_parent(preexec),
    )
    journal = current()
    undo = {"kind": "process", "pid": process.pid, "start": process_start(process.pid)}
    entry = journal.add(f"{os.path.basename(argv[0])} (pid {process.pid})", undo) if journal else None
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        kill_tree(process.pid)
        process.wait()
        if journal and entry:
            journal.discard(entry)
        raise
    if journal and entry:
        journal.discard(entry)
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


def run_tool(
    argv: Sequence[str], *, what: str | None = None, cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = 600, error: type[ToolError] = ToolError,
) -> str:
    """Run a tool that must succeed; its stdout, or `error` saying what failed."""
    require(argv[0], error)
    try:
        done = run(argv, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise error(f"{what or argv[0]} did not finish in {timeout:.0f} s: {' '.join(argv)}") from None
    if done.returncode != 0:
        raise error(f"{what or argv[0]} failed (exit {done.returncode}): {error_lines(done.stderr or done.stdout)}")
    return done.stdout
