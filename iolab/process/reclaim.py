"""What a cell creates besides knobs, and how a dead run's leftovers are reclaimed.

Journal kinds (iolab.journal.journal), each written before the thing exists;
their undo actions are ACTIONS:

    path     {"path"}                  a scratch directory or image: the processes
                                       using it killed, then removed
    loop     {"image"}                 loop devices over that image: detached
    mount    {"mountpoint"}            processes using it killed, then unmounted
    process  {"pid", "start"}          a child (fio, probe, mkfs, make, QEMU,
                                       perf) and its descendants: killed
                                       (iolab.process.kill_tree)

Processes are found through /proc: a process "uses" a path when its cwd,
root, an open file or a mapped file is under it (fio's job processes call
setsid(), so neither a process group nor the parent's death reaches them).
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from typing import Any

from iolab.journal.journal import Undo, UndoError, owner_alive
from iolab.process import all_pids, kill, kill_tree, run


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
    for pid in all_pids():
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


def kill_users(path: str) -> list[int]:
    """Kill every process using `path` (see users); the pids killed."""
    return kill(users(path))


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
    done = run(["umount", mountpoint], journalled=False)  # recover() holds the journal
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
        done = run(["losetup", "--detach", device], journalled=False)
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
