"""The initramfs a VM guest boots with: busybox, an init script, boot modules.

PID 1 (the init below) stays in the initramfs for the whole boot. It loads
the modules it needs to reach the host, mounts the host's root filesystem
read-only over 9p (cache=loose), mounts what must be writable (tmpfs on
/tmp, /run, /var/tmp; an overlay on /usr/lib so the kernel's own module
tree can be bound at /usr/lib/modules/$(uname -r)), mounts the exchange dir
(9p, read-write, cache=none) at /run/iolab, and runs /run/iolab/cmd.sh
chrooted into the host root. The command's exit status is written to
/run/iolab/rc (via rc.tmp and a rename) before PID 1 powers off, so the
workload's status travels apart from QEMU's.

The kernel's request_module() runs /proc/sys/kernel/modprobe in PID 1's
root (this initramfs), so init points it at a wrapper that enters the host
root, where the host's kmod loads from the kernel's module tree (f2fs,
loop, erofs ... are loaded on demand, not packed here).

Kernel command line parameters read by init: iolab.moddir=<host path of
lib/modules/KVER>, iolab.bus=mmio|pci (which module set to load),
iolab.saved=1 (a guest to be saved after its start-up: Python starts first
from a copy in a second initrd, and mounts the host root itself once the
host's go line comes on the console; iolab.hosts.vm.saved, guest_root).
"""

from __future__ import annotations

import gzip
import io
import lzma
import os
import stat
from pathlib import Path

from iolab.process import run

FORMAT = 9  # bump when the init or the layout changes: cached kernels get one of this format beside theirs

# Modules needed before the host root is reachable, per virtio transport
# (microvm: virtio-mmio; q35: virtio-pci). Built-in ones are skipped.
BOOT_MODULES = {
    "mmio": ["virtio_mmio", "9pnet_virtio", "9p", "virtio_blk", "overlay"],
    "pci": ["virtio_pci", "9pnet_virtio", "9p", "virtio_blk", "overlay"],
}

APPLETS = ("sh", "mount", "umount", "insmod", "mkdir", "cat", "sed", "echo", "chroot",
           "reboot", "sync", "mv", "cut", "sleep", "ls", "grep", "uname", "env", "ln")

INIT = r"""#!/bin/busybox sh
# iolab guest init: PID 1 stays here; the command runs chrooted in the host root.
# Every fork is an emulated exec under TCG: the shell's builtins (read, case,
# echo) do what they can.
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
read -r T_INIT _ < /proc/uptime
# the host timestamps this line (console.log): the kernel's boot ends here
echo "iolab-init: up $T_INIT" > /dev/console
log() { echo "iolab-init: $*" > /dev/kmsg; }
# the guest ends by a reset, which QEMU's -no-reboot turns into its exit: a VM
# without ACPI ([vm] boot = "lean" under TCG) cannot power off
die() { log "$*"; sync; reboot -f; }
MODDIR=; BUS=mmio; SAVED=
read -r CMDLINE < /proc/cmdline
for a in $CMDLINE; do case $a in iolab.moddir=*) MODDIR=${a#*=};; iolab.bus=*) BUS=${a#*=};; iolab.saved=1) SAVED=1;; esac; done
log "modules $T_INIT"
# a module's parameters on the kernel command line (name.param=value) go to its
# insmod, as modprobe would pass them: virtio_mmio's devices on a VM without ACPI
while read m; do
  [ -n "$m" ] || continue
  n=${m##*/}; n=${n%%.ko*}; P=
  for a in $CMDLINE; do case $a in $n.*) P="$P ${a#*.}";; esac; done
  insmod /$m $P || log "insmod $m failed"
done < /modules.$BUS
# iolab.saved=1 (iolab.hosts.vm.saved): Python starts first, from /pyroot (this
# initramfs's copy of what it maps and reads at its start), with no 9p share
# mounted (QEMU saves no guest that has one); once the host's go line comes
# on the console it mounts the host's root itself (iolab.hosts.vm.guest_root)
early() { mount -t tmpfs -o mode=755 tmpfs $1/run
  mount -t proc proc $1/proc; mount -t sysfs sysfs $1/sys; mount -t devtmpfs devtmpfs $1/dev; }
finish() {
  read -r T_END _ < /proc/uptime
  log "end rc=$1 $T_END"
  echo $1 > $2/rc.tmp && mv $2/rc.tmp $2/rc
  sync
  reboot -f
}
if [ -n "$SAVED" ]; then
  early /pyroot; ln -s /pyroot/newroot /cmdroot
  [ -e /proc/sys/kernel/modprobe ] && echo /bin/modprobe-chroot > /proc/sys/kernel/modprobe
  env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/sh /saved.sh < /dev/null > /dev/console 2>&1
  finish $? /pyroot/newroot/run/iolab
fi
R=/newroot
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot $R || die "cannot mount the host root (9p)"
# writable layers in the guest's memory over the read-only host root
mkdir /ovl; mount -t tmpfs tmpfs /ovl
overlay() { mkdir -p /ovl/$2/u /ovl/$2/w
  mount -t overlay overlay -o lowerdir=$R$1,upperdir=/ovl/$2/u,workdir=/ovl/$2/w $R$1 || log "no overlay on $1"; }
if [ -n "$MODDIR" ]; then
  # an overlay on /usr/lib takes the module tree's mount point
  overlay /usr/lib usrlib
  mkdir -p $R/usr/lib/modules/$(uname -r)
  mount --bind $R$MODDIR $R/usr/lib/modules/$(uname -r) || log "cannot bind $MODDIR"
fi
# /tmp and /var/tmp show the host's files (iolab, a kernel cache or a checkout
# may live there) and take the guest's writes
overlay /tmp tmp
[ -d $R/var/tmp ] && overlay /var/tmp vartmp
early $R
mkdir -p $R/dev/pts $R/dev/shm $R/run/iolab; mount -t devpts devpts $R/dev/pts; mount -t tmpfs tmpfs $R/dev/shm
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
X=/run/iolab
mount -t 9p -o rw,trans=virtio,version=9p2000.L,msize=512000,cache=none xchg $R$X || die "cannot mount the exchange dir (9p)"
# a kernel without loadable modules has no /proc/sys/kernel/modprobe; the wrapper enters $R
ln -s $R /cmdroot
[ -e /proc/sys/kernel/modprobe ] && echo /bin/modprobe-chroot > /proc/sys/kernel/modprobe
read -r T_START _ < /proc/uptime
echo "{\"init_uptime\": $T_INIT, \"command_uptime\": $T_START}" > $R$X/init.json
log "start $T_START"
# busybox's env, not the host's: one program less to load and translate under TCG
env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    chroot $R /bin/sh $X/cmd.sh < /dev/null > /dev/console 2>&1
finish $? $R$X
"""

MODPROBE_WRAPPER = '#!/bin/busybox sh\nexec /bin/busybox chroot /cmdroot /sbin/modprobe "$@"\n'


class InitramfsError(Exception):
    """The initramfs cannot be built; the message says why."""


def _modname(path: str) -> str:
    return os.path.basename(path).split(".ko")[0].replace("-", "_")


def module_index(moddir: Path) -> tuple[dict[str, list[str]], dict[str, str], set[str]]:
    """(dependencies by module path, module path by name, built-in names) of a module tree."""
    dep_file = moddir / "modules.dep"
    if not dep_file.exists():
        raise InitramfsError(f"{dep_file} is missing: run depmod (make modules_install runs it)")
    deps: dict[str, list[str]] = {}
    byname: dict[str, str] = {}
    for line in dep_file.read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
        byname[_modname(path)] = path
    builtin: set[str] = set()
    builtin_file = moddir / "modules.builtin"
    if builtin_file.exists():
        builtin = {_modname(line) for line in builtin_file.read_text().splitlines() if line.strip()}
    return deps, byname, builtin


def closure(moddir: Path, wanted: list[str]) -> list[str]:
    """Module paths (relative to moddir) in load order, dependencies first;
    built-in modules are left out; a module neither built in nor in the tree
    is an InitramfsError."""
    deps, byname, builtin = module_index(moddir)
    order: list[str] = []

    def visit(path: str) -> None:
        for dep in reversed(deps.get(path, [])):  # modules.dep lists the deepest last
            if dep not in order:
                visit(dep)
        if path not in order:
            order.append(path)

    for name in wanted:
        if name in builtin:
            continue
        if name not in byname:
            raise InitramfsError(f"module {name} is neither built into the kernel nor in {moddir}")
        visit(byname[name])
    return order


def _plain(path: Path) -> bytes:
    """A module as plain ELF: busybox insmod cannot decompress."""
    raw = path.read_bytes()
    if path.name.endswith(".xz"):
        return lzma.decompress(raw)
    if path.name.endswith(".gz"):
        return gzip.decompress(raw)
    if path.name.endswith(".zst"):
        done = run(["zstd", "-dc"], input=raw, text=False)
        if done.returncode != 0:
            raise InitramfsError(f"zstd -dc {path} failed (install zstd): {done.stderr.decode(errors='replace')}")
        return done.stdout
    return raw


class Cpio:
    """A newc cpio archive writer (what the kernel unpacks as an initramfs)."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.inode = 1
        self.dirs: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"", mtime: int = 0) -> None:
        encoded = name.encode() + b"\0"
        fields = (self.inode, mode, 0, 0, 1, mtime, len(data), 0, 0, 0, 0, len(encoded), 0)
        header = b"070701" + b"".join(b"%08X" % value for value in fields)
        self.inode += 1
        self.buffer.write(header + encoded)
        self.buffer.write(b"\0" * (-(len(header) + len(encoded)) % 4))
        self.buffer.write(data)
        self.buffer.write(b"\0" * (-len(data) % 4))

    def directory(self, name: str) -> None:
        parts = name.split("/")
        for i in range(1, len(parts) + 1):
            path = "/".join(parts[:i])
            if path not in self.dirs:
                self.dirs.add(path)
                self._entry(path, stat.S_IFDIR | 0o755)

    def file(self, name: str, data: bytes, perm: int = 0o644, mtime: int = 0) -> None:
        """A file; ``mtime`` in seconds (the kernel keeps it: a Python source's
        matches the time in its bytecode's header, which is then used)."""
        if "/" in name:
            self.directory(name.rsplit("/", 1)[0])
        self._entry(name, stat.S_IFREG | perm, data, mtime)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return self.buffer.getvalue()


def build(moddir: Path | None, busybox: Path, out: Path) -> dict[str, list[str]]:
    """Write the initramfs to `out`; the boot modules packed, per bus.

    `moddir` is the kernel's lib/modules/KVER (None: a kernel with
    everything built in)."""
    archive = Cpio()
    for name in ("bin", "dev", "proc", "sys", "newroot"):
        archive.directory(name)
    archive.file("bin/busybox", busybox.read_bytes(), 0o755)
    for applet in APPLETS:
        archive.symlink(f"bin/{applet}", "busybox")
    packed: dict[str, list[str]] = {}
    written: set[str] = set()
    for bus, wanted in BOOT_MODULES.items():
        order = closure(moddir, wanted) if moddir is not None else []
        for path in order:
            if moddir is not None and path not in written:  # modules only where the kernel has them
                written.add(path)
                plain = path.rsplit(".ko", 1)[0] + ".ko"
                archive.file(plain, _plain(moddir / path))
        packed[bus] = [path.rsplit(".ko", 1)[0] + ".ko" for path in order]
        archive.file(f"modules.{bus}", ("\n".join(packed[bus]) + "\n").encode())
    archive.file("init", INIT.encode(), 0o755)
    archive.file("bin/modprobe-chroot", MODPROBE_WRAPPER.encode(), 0o755)
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(archive.finish())
    partial.rename(out)
    return packed
