"""Running programs: the one runner for every stage (mkfs, losetup, mount,
umount, fio, iolab-probe, make, QEMU, perf, zstd, apt-get, git, tar ...),
and killing a process with everything below it. (The VM guest's early
modprobe is the one exception: it starts before any iolab import.)

Every child dies with iolab (PR_SET_PDEATHSIG), is journalled while it runs
when a run's journal is open (iolab.journal.current), and on any exception
while it runs (Ctrl-C, SIGTERM, a timeout) is killed with every process
below it before the exception goes on.

- ``run``: a program to completion, its output captured (or written to a
  log file), with data on its stdin if given.
- ``run_tool``: a tool that must succeed: its stdout, or an error (ToolError,
  or the caller's subclass) that names the tool, its exit status and the end
  of its error output.
- ``start`` and ``end``: a child that runs beside iolab (QEMU, ``perf stat``,
  make whose lines are read as they come); ``started`` is the two as a
  ``with`` block.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from iolab.journal import Journal, current, process_start
from iolab.process import interrupts
from iolab.sysutil import ToolError, die_with_parent, error_lines, require


class Child(subprocess.Popen[Any]):
    """A child made by `start`; `end` reaps it and drops its journal entry."""

    journal: Journal | None = None
    entry: str | None = None
    own_group = False  # started in a session (and process group) of its own


def start(argv: Sequence[str], *, preexec: Callable[[], None] | None = None, journalled: bool = True,
          **popen: Any) -> Child:
    """Start a program that runs beside iolab (Popen's keyword arguments:
    stdin, stdout, stderr, cwd, text, pass_fds, start_new_session ...);
    journalled until `end` (not with journalled=False: the reclaiming of a
    journal, which holds its lock). Call `end` when done with it, also on error.

    Ctrl-C or SIGTERM while the child is made and journalled is held back
    until both are done, then the child is ended and the interrupt goes on:
    one that came between the fork and the journal entry (or inside Popen,
    while it waited for the exec) left a child that nothing would end; fio's
    job processes, which do not die with iolab, then ran on after it."""
    child = None
    try:
        with interrupts.deferred():
            child = Child(list(argv), preexec_fn=die_with_parent(preexec), **popen)
            child.own_group = bool(popen.get("start_new_session"))
            child.journal = current() if journalled else None
            if child.journal is not None:
                undo = {"kind": "process", "pid": child.pid, "start": process_start(child.pid)}
                child.entry = child.journal.add(f"{os.path.basename(argv[0])} (pid {child.pid})", undo)
    except BaseException:
        if child is not None:
            end(child)
        raise
    return child


def end(child: Child, *, grace: float = 0.0) -> int:
    """Reap a child of `start`: if it still runs, SIGTERM first (to its whole
    process group if it has its own) and `grace` seconds to exit, then it,
    its group and everything below it are killed. Its exit status; called
    again, nothing more."""
    if child.poll() is None and grace > 0:
        try:
            (os.killpg if child.own_group else os.kill)(child.pid, signal.SIGTERM)
            child.wait(grace)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            pass
    if child.poll() is None:
        if child.own_group:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        kill_tree(child.pid)
    child.wait()
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            stream.close()
    if child.journal is not None and child.entry is not None:
        child.journal.discard(child.entry)
    child.entry = None
    return child.returncode


@contextmanager
def started(argv: Sequence[str], *, grace: float = 0.0, **popen: Any) -> Iterator[Child]:
    """`start` for a block; whatever of the child still runs when the block
    ends (an exception, Ctrl-C) is stopped by `end`."""
    child = start(argv, **popen)
    try:
        yield child
    finally:
        end(child, grace=grace)


def run(
    argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, preexec: Callable[[], None] | None = None,
    timeout: float | None = None, input: str | bytes | None = None, text: bool = True, output: IO[Any] | None = None,
    journalled: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """Run a program to completion: its output captured (text, or bytes with
    text=False), or stdout and stderr both written to `output` (a log file);
    `input` on its stdin."""
    streams: dict[str, Any] = ({"stdout": output, "stderr": subprocess.STDOUT} if output is not None
                               else {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE})
    if input is not None:
        streams["stdin"] = subprocess.PIPE
    with started(argv, preexec=preexec, journalled=journalled, cwd=cwd, text=text, **streams) as child:
        out, err = child.communicate(input, timeout=timeout)
    return subprocess.CompletedProcess(list(argv), child.returncode, out, err)


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


# -- killing a process and what is below it -----------------------------------------


def all_pids() -> list[int]:
    """Every process on the machine."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    """The processes below `root` (children first found, then theirs)."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def kill(pids: Iterable[int]) -> list[int]:
    """SIGKILL each process (stopped first, so none forks a replacement) and
    wait until they are gone; the ones that were signalled."""
    pids = [pid for pid in pids if pid != os.getpid()]
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                continue
    _wait_gone(pids)
    return pids


def _wait_gone(pids: Iterable[int], timeout: float = 30.0) -> None:
    """Until each is gone or a zombie: a process killed in the middle of I/O
    (fio on a loop device) still holds its files until the I/O ends, which
    on a loaded machine can take seconds; only then may its target go."""
    _wait_state(pids, ("Z", "X", None), timeout)  # a zombie is gone enough: its parent reaps it


def _wait_state(pids: Iterable[int], states: tuple[str | None, ...], timeout: float) -> None:
    """Until each process is in one of `states` (None: gone), or `timeout` seconds have passed
    (one in uninterruptible I/O takes the signal only when the I/O ends)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while _state(pid) not in states and time.monotonic() < deadline:
            time.sleep(0.002)


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def kill_tree(pid: int) -> list[int]:
    """Kill a process and everything below it; the pids killed.

    Each process is stopped, and seen stopped, before its children are
    looked for, so that none forks a child unseen (fio starting its job
    processes as Ctrl-C comes): SIGSTOP does not cut a fork in progress
    short, so a child can appear after the signal was sent and before the
    parent stops; once it is stopped, every child it made is in /proc."""
    tree: list[int] = []
    todo = [pid]
    while todo:
        for stopping in todo:
            try:
                os.kill(stopping, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                continue
        _wait_state(todo, ("T", "t", "Z", "X", None), timeout=10.0)
        tree += todo
        todo = [found for found in descendants(pid) if found not in tree]
    return kill(tree)
