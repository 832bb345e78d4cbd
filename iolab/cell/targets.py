"""Where a cell's I/O goes: a fresh filesystem on a loop image or a device.

Every step is a context manager that undoes itself: the image file, the
loop device, the mount. Nothing is formatted before `check_unused` has
shown the device is not mounted, held, swapped on or opened exclusively.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from iolab.cell import blockcalls, kernlog
from iolab.engines import Prepared
from iolab.cell.cellspec import Record
from iolab import journal
from iolab.process.reclaim import kill_users
from iolab.process import interrupts, run_tool
from iolab.sysutil import ToolError


class TargetError(Exception):
    """The target cannot be prepared; the message says why."""


# -- safety ---------------------------------------------------------------


def _dev_numbers(device: str) -> tuple[int, int]:
    try:
        st = os.stat(device)
    except OSError as error:
        raise TargetError(f"{device}: {error.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{device} is not a block device")
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def _partitions(major: int, minor: int) -> list[str]:
    """maj:min of the device and of each of its partitions."""
    numbers = [f"{major}:{minor}"]
    sysdir = Path(f"/sys/dev/block/{major}:{minor}")
    for child in sysdir.glob("*/partition"):
        numbers.append((child.parent / "dev").read_text().strip())
    return numbers


def check_unused(device: str) -> None:
    """Raise TargetError if anything uses the device or one of its partitions."""
    major, minor = _dev_numbers(device)
    numbers = set(_partitions(major, minor))
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[2] in numbers:
            raise TargetError(f"{device} is in use: mounted at {fields[4]}")
    for number in numbers:
        holders = list(Path(f"/sys/dev/block/{number}/holders").glob("*"))
        if holders:
            raise TargetError(f"{device} is in use: held by {', '.join(h.name for h in holders)}")
    name = os.path.basename(os.path.realpath(device))
    for line in Path("/proc/swaps").read_text().splitlines()[1:]:
        if os.path.basename(os.path.realpath(line.split()[0])).startswith(name):
            raise TargetError(f"{device} is in use: swap on {line.split()[0]}")
    try:
        fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    except OSError as error:
        if error.errno == errno.EBUSY:
            raise TargetError(f"{device} is in use: another process has it open exclusively") from None
        raise TargetError(f"{device}: {error.strerror}") from None
    os.close(fd)


# -- loop devices ---------------------------------------------------------


def _journal(label: str, undo: dict[str, str]) -> str | None:
    """Journal how to undo a thing about to be made (iolab.journal)."""
    current = journal.current()
    return current.add(label, undo) if current else None


def _forget(entry: str | None) -> None:
    """The thing is undone (or never came to be): drop its journal entry."""
    current = journal.current()
    if current and entry:
        current.discard(entry)


# The directories iolab makes are named a prefix and RANDOM_HEX random hex
# digits (temp_name); iolab.analysis.failures puts these names in general
# form in a failed cell's error, so that one error of many cells reads once.
RANDOM_HEX = 12
CELL_DIR = "cell"  # a cell's own directory in the run's scratch: cell<seq>-<hex> (cell_dir_prefix)
DIR_CELL = "iolab-cell-"  # a cell's directory in a `dir` target
IMAGE_DIR = "iolab-img-"  # the directory of a cell's loop image
RUN_DIR = "iolab-run-"  # a run's scratch directory (iolab.hosts.local)


def cell_dir_prefix(seq: int) -> str:
    return f"{CELL_DIR}{seq}-"


def temp_name(prefix: str) -> str:
    return f"{prefix}{os.urandom(RANDOM_HEX // 2).hex()}"


@contextmanager
def temp_dir(parent: str | None, prefix: str) -> Iterator[Path]:
    """A fresh directory, journalled before it exists and removed at the end."""
    path = Path(parent or tempfile.gettempdir(), temp_name(prefix))
    entry = _journal(f"directory {path}", {"kind": "path", "path": str(path)})
    try:
        path.mkdir(mode=0o700)
    except OSError:
        _forget(entry)
        raise
    try:
        yield path
    finally:
        with interrupts.deferred():
            shutil.rmtree(path, ignore_errors=True)
            _forget(entry)


@contextmanager
def loop_device(image: Path, *, read_only: bool = False, options: Record | None = None) -> Iterator[str]:
    """A loop device over `image`; direct I/O and sector size read back from sysfs.
    Attached and detached by the system calls (iolab.cell.blockcalls), or by
    losetup where the kernel has no LOOP_CONFIGURE."""
    options = options or Record({"direct_io": False, "sector_size": None})
    entry = _journal(f"loop device over {image}", {"kind": "loop", "image": str(image)})
    try:
        device = _attach(image, read_only, options)
    except (ToolError, OSError):
        _forget(entry)  # nothing attached (an interrupt keeps the entry: it may have been)
        raise
    try:
        _check_loop(device, options)
        yield device
    finally:
        with interrupts.deferred():
            _detach(device)
            _forget(entry)


def _attach(image: Path, read_only: bool, options: Record) -> str:
    try:
        return blockcalls.attach_loop(str(image), read_only=read_only, direct_io=bool(options.direct_io),
                                      block_size=options.sector_size or 0)
    except blockcalls.LoopUnsupported:
        pass
    except OSError as error:
        raise ToolError(f"loop device over {image}: {error.strerror}") from None
    argv = ["losetup", "--find", "--show"]
    if read_only:
        argv.append("--read-only")
    if options.direct_io:
        argv.append("--direct-io=on")
    if options.sector_size:
        argv += ["--sector-size", str(options.sector_size)]
    return run_tool([*argv, str(image)], what="losetup").strip()


def _detach(device: str) -> None:
    try:
        blockcalls.detach_loop(device)
    except OSError:
        run_tool(["losetup", "--detach", device], what="losetup --detach")


def _check_loop(device: str, options: Record) -> None:
    sysdir = Path("/sys/block", os.path.basename(device))
    dio = (sysdir / "loop" / "dio").read_text().strip() == "1"
    if dio != options.direct_io:
        raise TargetError(
            f"{device}: direct I/O is {'on' if dio else 'off'}, wanted {'on' if options.direct_io else 'off'}"
            " (the image's filesystem may not support O_DIRECT)"
        )
    if options.sector_size:
        size = int((sysdir / "queue" / "logical_block_size").read_text())
        if size != options.sector_size:
            raise TargetError(f"{device}: logical block size is {size}, wanted {options.sector_size}")


RAM_DIR = "/dev/shm"
RAM_HEADROOM = 1 << 30  # memory left free beside a full image


def _mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _is_tmpfs(path: str) -> bool:
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[1] == path:
            return fields[2] == "tmpfs"
    return False


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB"


def ram_refusal(size: int) -> str:
    """Why a loop image of ``size`` bytes cannot live in RAM ("" when it can):
    /dev/shm must be a tmpfs with room for the whole image, and the machine
    must keep RAM_HEADROOM available beside it."""
    if not _is_tmpfs(RAM_DIR):
        return f"{RAM_DIR} is not a tmpfs"
    st = os.statvfs(RAM_DIR)
    free = st.f_bavail * st.f_frsize
    if size > free:
        return f"{_gib(size)} image, {_gib(free)} free in {RAM_DIR}"
    available = _mem_available()
    if size + RAM_HEADROOM > available:
        return f"{_gib(size)} image, {_gib(available)} memory available"
    return ""


def image_place(target: Record) -> tuple[str | None, str]:
    """The directory for a loop image (None: the temp dir) and how to say where it is.

    ``image_dir`` when set; else RAM (tmpfs /dev/shm) when the whole image
    fits, so the host's disk and its writeback stay out of the measurement;
    else the temp dir, with the reason."""
    if target.image_dir:
        return target.image_dir, target.image_dir
    why = ram_refusal(target.size)
    if not why:
        return RAM_DIR, f"RAM (tmpfs {RAM_DIR})"
    return None, f"{tempfile.gettempdir()} (not RAM: {why})"


@contextmanager
def sparse_image(directory: Path, size: int) -> Iterator[Path]:
    image = directory / "target.img"
    with open(image, "wb") as handle:
        handle.truncate(size)
    try:
        yield image
    finally:
        with interrupts.deferred():
            image.unlink(missing_ok=True)


# -- filesystems ----------------------------------------------------------

_MKFS = {
    "ext4": ["mkfs.ext4", "-q", "-F"],
    "xfs": ["mkfs.xfs", "-q", "-f"],
    "btrfs": ["mkfs.btrfs", "-q", "-f"],
    "f2fs": ["mkfs.f2fs", "-q", "-f"],
}


# ext4 initialises inode tables and the journal at mkfs time, not lazily by a
# kernel thread (ext4lazyinit) that would write in the background of the
# measured run; merged into the user's own -E options.
EXT4_EAGER = "lazy_itable_init=0,lazy_journal_init=0"


def mkfs_argv(fs: str, options: list[str]) -> list[str]:
    """mkfs options with the defaults iolab adds (ext4: no lazy init)."""
    options = list(options)
    if fs != "ext4":
        return options
    for i, option in enumerate(options):
        if option == "-E" and i + 1 < len(options):
            options[i + 1] = f"{EXT4_EAGER},{options[i + 1]}"
            return options
        if option.startswith("-E") and len(option) > 2:
            options[i] = f"-E{EXT4_EAGER},{option[2:]}"
            return options
    return ["-E", EXT4_EAGER, *options]


def mkfs(device: str, fs: str, options: list[str]) -> None:
    check_unused(device)
    run_tool([*_MKFS[fs], *mkfs_argv(fs, options), device], what=f"mkfs.{fs}")


@contextmanager
def mounted(device: str, mountpoint: Path, fs: str, options: str) -> Iterator[Path]:
    mountpoint.mkdir(parents=True, exist_ok=True)
    argv = ["mount", "-t", fs]
    if options:
        argv += ["-o", options]
    entry = _journal(f"mount of {device} at {mountpoint}", {"kind": "mount", "mountpoint": str(mountpoint)})
    with kernlog.watching() as kernel:
        try:
            _mount(argv, device, mountpoint, fs, options)
        except ToolError as error:
            _forget(entry)
            said = kernlog.about(kernel.lines(), device, fs)
            if not said:
                raise
            raise type(error)(f"{error} / kernel: {' / '.join(said)}") from None
    try:
        yield mountpoint
    finally:
        with interrupts.deferred():
            unmount(mountpoint)
            _forget(entry)


def _mount(argv: list[str], device: str, mountpoint: Path, fs: str, options: str) -> None:
    """mount(2) without options (iolab.cell.blockcalls); mount(8) parses options."""
    if options:
        run_tool([*argv, device, str(mountpoint)], what=f"mount -t {fs}")
        return
    try:
        blockcalls.mount(device, str(mountpoint), fs)
    except OSError as error:
        raise ToolError(error.strerror) from None


def unmount(mountpoint: Path, attempts: int = 10) -> None:
    """Unmount (umount2(2)); a workload process still using the mount (a job
    process that outlived its parent) is killed first."""
    for attempt in range(attempts):
        try:
            try:
                blockcalls.umount(str(mountpoint))
            except OSError as error:
                raise ToolError(error.strerror) from None
            return
        except ToolError:
            if attempt == attempts - 1:
                raise
            kill_users(str(mountpoint))
            time.sleep(0.05 * (attempt + 1))


# -- erofs images ---------------------------------------------------------


def _fill(path: Path, size: int, content: str, seed: int) -> None:
    """Write a file of `size` bytes: random, or about 4:1 compressible."""
    rng = random.Random(seed)
    block = 1 << 20
    with open(path, "wb") as handle:
        left = size
        while left > 0:
            chunk = min(block, left)
            if content == "random":
                handle.write(rng.randbytes(chunk))
            else:
                quarter = chunk // 4
                handle.write(rng.randbytes(quarter) + bytes(chunk - quarter))
            left -= chunk


def build_tree(root: Path, files: list[Record]) -> None:
    for group_index, group in enumerate(files):
        for n in range(group.count):
            path = root / group.name.format(n=n)
            path.parent.mkdir(parents=True, exist_ok=True)
            _fill(path, group.size, group.content, seed=group_index * 100_003 + n)


def erofs_image(cache_dir: Path, files: list[Record], options: list[str]) -> Path:
    """An erofs image of the generated tree, built once per run and option set."""
    import hashlib  # here: a VM guest's imports would load OpenSSL (0.3 s of its clock under TCG)

    key = hashlib.sha256(
        json.dumps([[dict(f) for f in files], options], sort_keys=True).encode()
    ).hexdigest()[:16]
    image = cache_dir / f"erofs-{key}.img"
    if image.exists():
        return image
    tree = cache_dir / f"tree-{key}"
    build_tree(tree, files)
    partial = image.with_suffix(".partial")
    run_tool(["mkfs.erofs", "--quiet", *options, str(partial), str(tree)], what="mkfs.erofs")
    partial.rename(image)
    shutil.rmtree(tree)
    return image


def drop_file_cache(path: Path) -> None:
    """Evict a file's pages, so a loop device over it starts cold."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# -- the target of one cell ------------------------------------------------


@contextmanager
def prepared(target: Record, workdir: Path, cache_dir: Path) -> Iterator[Prepared]:
    """A fresh target for one cell, torn down when the cell ends.

    `target` is the variant's effective target (Variant.target_of);
    `workdir` is the cell's own scratch directory; `cache_dir` lives for
    the whole run (erofs images are immutable and built once).
    """
    mkfs_options = list(target.mkfs_options)
    place = ""
    with ExitStack() as stack:
        if target.kind == "dir":
            assert target.path is not None
            if not os.path.isdir(target.path):
                raise TargetError(f"target.path: no such directory: {target.path}")
            cell_dir = stack.enter_context(temp_dir(target.path, DIR_CELL))
            yield Prepared(fs="none", device=None, mountpoint=str(cell_dir), block_size=os.statvfs(cell_dir).f_bsize)
            return
        if target.fs == "erofs":
            image = erofs_image(cache_dir, target.files, mkfs_options)
            if target.loop.image_cache == "drop":
                drop_file_cache(image)
            device = stack.enter_context(loop_device(image, read_only=True, options=target.loop))
        elif target.kind == "loop":
            parent, place = image_place(target)
            image_dir = stack.enter_context(temp_dir(parent, IMAGE_DIR))
            image = stack.enter_context(sparse_image(image_dir, target.size))
            device = stack.enter_context(loop_device(image, options=target.loop))
            if target.fs != "none":
                mkfs(device, target.fs, mkfs_options)
        else:
            assert target.device is not None
            device = target.device
            check_unused(device)
            if target.fs != "none":
                mkfs(device, target.fs, mkfs_options)
        loop = target.loop.to_dict() if target.kind == "loop" else {}
        if target.fs == "none":
            check_unused(device)
            yield Prepared(fs="none", device=device, mountpoint=None, loop=loop, image_place=place)
            return
        mountpoint = stack.enter_context(
            mounted(device, workdir / "mnt", target.fs, target.mount_options)
        )
        yield Prepared(
            fs=target.fs,
            device=device,
            mountpoint=str(mountpoint),
            mkfs_options=mkfs_options,
            mount_options=target.mount_options,
            loop=loop,
            image_place=place,
            block_size=os.statvfs(mountpoint).f_bsize,
        )
