"""What a cell creates besides knobs, and how a dead run's leftovers are reclaimed.

Journal kinds (iolab.journal.journal), each written before the thing exists;
their undo actions are ACTIONS:

    path     {"path"}                  a scratch directory or image: the processes
                                       using it killed, then removed
    loop     {"image"}                 loop devices over that image: detached
    mount    {"mountpoint"}            processes using it killed, then unmounted
    process  {"pid", "start"}          a child (fio, probe, mkfs) and its
                                       descendants: killed

Processes are found through /proc: a process "uses" a path when its cwd,
root, an open file or a mapped file is under it (fio's job processes call
setsid(), so neither a process group nor the parent's death reaches them).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from typing import Any

from iolab.journal.journal import Undo, UndoError, owner_alive


def _pids() -> list[int]:
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
    for pid in _pids():
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _under(link: str, path: str) -> bool:
    try:
        target = os.readlink(link)
    except OSError:
        return False
    return target == path or target.startswith(path.rstrip("/") + "/")


def users(path: str) -> list[int]:
    """Processes (other than this one) whose cwd, root, open files or mapped
    files are under `path`."""
    path = os.path.realpath(path)
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        base = f"/proc/{pid}"
        links = [f"{base}/cwd", f"{base}/root"]
        try:
            links += [f"{base}/fd/{fd}" for fd in os.listdir(f"{base}/fd")]
            links += [f"{base}/map_files/{m}" for m in os.listdir(f"{base}/map_files")]
        except OSError:
            pass
        if any(_under(link, path) for link in links):
            found.append(pid)
    return found


def kill(pids: Iterable[int]) -> list[int]:
    """SIGKILL each process (stopped first, so none forks a replacement); the
    ones that were signalled."""
    pids = [pid for pid in pids if pid != os.getpid()]
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                continue
    return pids


def _wait_gone(pids: Iterable[int], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    for pid in pids:
        while _state(pid) not in ("Z", "X", None) and time.monotonic() < deadline:
            time.sleep(0.01)  # a zombie is gone enough: its parent reaps it


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def kill_tree(pid: int) -> list[int]:
    """Kill a process and everything below it; the pids killed.

    Each process is stopped before its children are looked for, so that
    none forks a child unseen (fio starting its job processes as Ctrl-C
    comes): a child made before the stop is found by the next look."""
    tree: list[int] = []
    todo = [pid]
    while todo:
        for stopping in todo:
            try:
                os.kill(stopping, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                continue
        tree += todo
        todo = [found for found in descendants(pid) if found not in tree]
    killed = kill(tree)
    _wait_gone(killed)
    return killed


def kill_users(path: str) -> list[int]:
    """Kill every process using `path` (see users); the pids killed."""
    killed = kill(users(path))
    _wait_gone(killed)
    return killed


def _mountpoints() -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].replace("\\040", " ") for line in f if len(line.split()) > 4]


def _mounted(mountpoint: str) -> bool:
    return mountpoint in _mountpoints()


def _undo_process(undo: dict[str, Any], label: str) -> str:
    pid = int(undo["pid"])
    if not owner_alive(pid, undo.get("start")):
        return f"process {pid} is gone"
    killed = kill_tree(pid)
    return f"killed {len(killed)} process(es): {', '.join(map(str, killed))}"


def _undo_mount(undo: dict[str, Any], label: str) -> str:
    mountpoint = undo["mountpoint"]
    if not _mounted(mountpoint):
        return "not mounted"
    killed = kill_users(mountpoint)
    done = subprocess.run(["umount", mountpoint], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UndoError(f"{label}: umount {mountpoint} failed: {done.stderr.strip()[-200:]}")
    return "unmounted" + (f" after killing {len(killed)} process(es) using it" if killed else "")


def loops_over(image: str) -> list[str]:
    """Loop devices whose backing file is `image` (also once it is deleted)."""
    found = []
    for sysdir in sorted(os.listdir("/sys/block")):
        backing = f"/sys/block/{sysdir}/loop/backing_file"
        try:
            with open(backing) as f:
                name = f.read().strip()
        except OSError:
            continue
        if name.removesuffix(" (deleted)") == image:
            found.append(f"/dev/{sysdir}")
    return found


def _undo_loop(undo: dict[str, Any], label: str) -> str:
    image = undo["image"]
    devices = loops_over(image)
    for device in devices:
        kill_users(device)
        done = subprocess.run(["losetup", "--detach", device], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise UndoError(f"{label}: losetup --detach {device} failed: {done.stderr.strip()[-200:]}")
    return f"detached {', '.join(devices)}" if devices else "none attached"


def _undo_path(undo: dict[str, Any], label: str) -> str:
    path = undo["path"]
    if not os.path.lexists(path):
        return "gone already"
    if any(m == path or m.startswith(path.rstrip("/") + "/") for m in _mountpoints()):
        raise UndoError(f"{label}: {path} still has a mount in it; not removed")
    # fio's job processes outlive a killed fio (they leave its session) and
    # wait for it for ever, their working directory in the cell's directory
    killed = kill_users(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)
    return "removed" + (f" after killing {len(killed)} process(es) using it" if killed else "")


def _undo_tracefs_instance(undo: dict[str, Any], label: str) -> str:
    instance = undo["path"]
    if not os.path.isdir(instance):
        return f"{instance} is gone"
    try:
        with open(os.path.join(instance, "tracing_on"), "w") as f:
            f.write("0")
    except OSError:
        pass  # removing it stops it too
    deadline = time.monotonic() + 5.0
    while True:
        try:
            os.rmdir(instance)
            return "removed"
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise UndoError(f"{label}: cannot remove {instance}: {os.strerror(exc.errno or 0)}") from None
            time.sleep(0.05)


ACTIONS: dict[str, Undo] = {
    "process": _undo_process,
    "mount": _undo_mount,
    "loop": _undo_loop,
    "path": _undo_path,
    "tracefs_instance": _undo_tracefs_instance,
}
