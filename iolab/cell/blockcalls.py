"""Loop devices and mounts by their system calls, not by losetup(8) and mount(8).

What losetup --find --show, losetup --detach, mount -t FS DEVICE DIR (no
-o options) and umount DIR ask of the kernel, asked directly: LOOP_CTL_GET_FREE
on /dev/loop-control, LOOP_CONFIGURE (Linux 5.8) on the free device (the
backing file, read-only and direct I/O flags, the logical block size in one
call, as util-linux does), LOOP_CLR_FD, mount(2) with no data (read-only on
a read-only device, as mount(8)), umount2(2). The loop devices and mounts
are the same; what is saved is four programs started per cell: in a VM under
TCG each is an exec, a dynamic link of util-linux's libraries and their code
translated by QEMU (bench/pace.py, bench/data/pace-*.txt).

Mount options (-o) stay mount(8)'s: it parses them into flags and data;
iolab.cell.targets calls it for them. A kernel without LOOP_CONFIGURE
raises LoopUnsupported, and targets falls back to losetup(8).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import struct

from iolab.sysutil import LIBC

LOOP_CTL_GET_FREE = 0x4C82
LOOP_CONFIGURE = 0x4C0A
LOOP_CLR_FD = 0x4C01
LO_FLAGS_READ_ONLY = 1
LO_FLAGS_DIRECT_IO = 16
LO_NAME_SIZE = 64
BLKROGET = 0x125E
MS_RDONLY = 1
# struct loop_config: fd, block_size, struct loop_info64 (232 bytes), 8 reserved u64
_INFO64 = struct.Struct(f"=QQQQQIIII{LO_NAME_SIZE}s{LO_NAME_SIZE}s32sQQ")
_CONFIG = struct.Struct(f"=II{_INFO64.size}s64x")
ATTEMPTS = 20  # a free device taken by another process between the two calls: ask again



class LoopUnsupported(OSError):
    """This kernel has no LOOP_CONFIGURE (before Linux 5.8)."""


def _config(fd: int, image: str, read_only: bool, direct_io: bool, block_size: int) -> bytes:
    flags = (LO_FLAGS_READ_ONLY if read_only else 0) | (LO_FLAGS_DIRECT_IO if direct_io else 0)
    name = os.fsencode(image)[: LO_NAME_SIZE - 1]
    info = _INFO64.pack(0, 0, 0, 0, 0, 0, 0, 0, flags, name, b"", b"", 0, 0)
    return _CONFIG.pack(fd, block_size, info)


def attach_loop(image: str, *, read_only: bool = False, direct_io: bool = False, block_size: int = 0) -> str:
    """A free loop device over `image` (losetup --find --show); its path.
    OSError with the call that failed; LoopUnsupported without LOOP_CONFIGURE."""
    backing = os.open(image, os.O_RDONLY if read_only else os.O_RDWR)
    try:
        control = os.open("/dev/loop-control", os.O_RDWR)
        try:
            for _ in range(ATTEMPTS):
                device = f"/dev/loop{fcntl.ioctl(control, LOOP_CTL_GET_FREE)}"
                loop = os.open(device, os.O_RDONLY if read_only else os.O_RDWR)
                try:
                    fcntl.ioctl(loop, LOOP_CONFIGURE, _config(backing, image, read_only, direct_io, block_size))
                    return device
                except OSError as error:
                    if error.errno in (errno.ENOTTY, errno.EINVAL):  # also a size it cannot take: losetup says
                        raise LoopUnsupported(error.errno, f"LOOP_CONFIGURE on {device}: {error.strerror}") from None
                    if error.errno != errno.EBUSY:
                        raise OSError(error.errno, f"LOOP_CONFIGURE on {device}: {error.strerror}") from None
                finally:
                    os.close(loop)
            raise OSError(errno.EBUSY, f"no free loop device after {ATTEMPTS} attempts")
        finally:
            os.close(control)
    finally:
        os.close(backing)


def detach_loop(device: str) -> None:
    """losetup --detach: the device lets its backing file go (once no one has it open)."""
    fd = os.open(device, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, LOOP_CLR_FD)
    except OSError as error:
        raise OSError(error.errno, f"LOOP_CLR_FD on {device}: {error.strerror}") from None
    finally:
        os.close(fd)


def read_only(device: str) -> bool:
    """Whether the block device is read-only (BLKROGET)."""
    fd = os.open(device, os.O_RDONLY)
    try:
        return struct.unpack("=i", fcntl.ioctl(fd, BLKROGET, bytes(4)))[0] != 0
    finally:
        os.close(fd)


def mount(device: str, mountpoint: str, fs: str) -> None:
    """mount -t FS DEVICE MOUNTPOINT, without options: mount(2) with no data,
    read-only (MS_RDONLY) where the device is, as mount(8) does, else no flags."""
    flags = MS_RDONLY if read_only(device) else 0
    if LIBC.mount(os.fsencode(device), os.fsencode(mountpoint), fs.encode(), flags, None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"mount(2) of {device} at {mountpoint} ({fs}): {os.strerror(code)}")


def umount(mountpoint: str) -> None:
    """umount MOUNTPOINT: umount2(2) without flags (EBUSY while in use)."""
    if LIBC.umount2(os.fsencode(mountpoint), 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"umount2(2) of {mountpoint}: {os.strerror(code)}")
