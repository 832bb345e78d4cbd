"""The host's root for a guest restored from a saved state (iolab.hosts.vm.saved).

A guest to be saved starts its Python from a copy in the initramfs
(/pyroot), with no 9p share mounted (QEMU saves no guest that has one).
Once the host's go line comes on the console, Python makes the host's root
ready in NEW_ROOT as the initramfs's init does for a cold boot
(iolab.kernels.initramfs: the host's / over 9p, read-only; overlays in the
guest's memory on /usr/lib, where the kernel's module tree is bound, /tmp
and /var/tmp; /run, /proc, /sys, /dev and the rest; the exchange dir over
9p at /run/iolab), by mount(2) itself: after a restore every program the
guest runs is translated again, and init's two dozen busybox forks cost
0.26-0.29 s of QEMU's CPU a boot (bench/data/pace-saved-states-*). Then it
enters that root; what it mapped stays the copy it started from.

Only the standard library and iolab.sysutil (already imported by the
executor) are used: this runs in the guest.
"""

from __future__ import annotations

import ctypes
import os

from iolab.sysutil import LIBC

NEW_ROOT = "/newroot"  # in the start-up root (/pyroot): the init makes /cmdroot point at it (modprobe)
OVERLAYS = "/run/ovl"  # the overlays' upper and work dirs, in the start-up root's /run (a tmpfs)
MS_RDONLY = 1
MS_BIND = 4096
NINEP = "trans=virtio,version=9p2000.L,msize=512000"


def mount(source: str, target: str, fs: str | None, flags: int = 0, data: str = "") -> None:
    if LIBC.mount(source.encode(), target.encode(), fs.encode() if fs else None, flags,
                  data.encode() if data else None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"mount(2) of {source} at {target} ({fs or 'bind'}): {os.strerror(code)}")


def _overlay(root: str, path: str, name: str) -> None:
    """A writable layer in the guest's memory over the read-only host's `path`."""
    upper = f"{OVERLAYS}/{name}"
    os.makedirs(f"{upper}/u", exist_ok=True)
    os.makedirs(f"{upper}/w", exist_ok=True)
    try:
        mount("overlay", root + path, "overlay", 0, f"lowerdir={root + path},upperdir={upper}/u,workdir={upper}/w")
    except OSError as error:  # as init: said, and the boot goes on
        print(f"iolab-guest: no overlay on {path}: {error}", flush=True)


def make_host_root(root: str = NEW_ROOT) -> None:
    """The host's root in `root`, as the init makes it for a cold boot."""
    with open("/proc/cmdline") as handle:
        words = handle.read().split()
    moddir = next((word.split("=", 1)[1] for word in words if word.startswith("iolab.moddir=")), "")
    mount("hostroot", root, "9p", MS_RDONLY, f"{NINEP},cache=loose")
    if moddir:  # an overlay on /usr/lib takes the module tree's mount point
        _overlay(root, "/usr/lib", "usrlib")
        modules = f"{root}/usr/lib/modules/{os.uname().release}"
        os.makedirs(modules, exist_ok=True)
        mount(root + moddir, modules, None, MS_BIND)
    _overlay(root, "/tmp", "tmp")
    if os.path.isdir(f"{root}/var/tmp"):
        _overlay(root, "/var/tmp", "vartmp")
    mount("tmpfs", f"{root}/run", "tmpfs", 0, "mode=755")
    for fs, where in (("proc", "/proc"), ("sysfs", "/sys"), ("devtmpfs", "/dev")):
        mount(fs, root + where, fs)
    for where in ("/dev/pts", "/dev/shm", "/run/iolab"):
        os.makedirs(root + where, exist_ok=True)
    mount("devpts", f"{root}/dev/pts", "devpts")
    mount("tmpfs", f"{root}/dev/shm", "tmpfs")
    for fs, where in (("cgroup2", "/sys/fs/cgroup"), ("tracefs", "/sys/kernel/tracing"),
                      ("debugfs", "/sys/kernel/debug")):
        try:
            mount(fs, root + where, fs)
        except OSError:  # as init: where the kernel has none
            pass
    mount("xchg", f"{root}/run/iolab", "9p", 0, f"{NINEP},cache=none")
