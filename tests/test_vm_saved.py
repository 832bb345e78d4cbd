"""Saved guest states (iolab.hosts.vm.saved) without a VM: the Python root's
files and links, the state's key, the cache's reclaiming, QEMU's command line
for a saved and a restored boot. The boots themselves: tests/test_vm_boot.py."""

import dataclasses
import os
import time
from pathlib import Path

from iolab.hosts.vm import saved
from iolab.hosts.vm.qemu import Disk, Saving, qemu_argv
from iolab.kernels import Kernel
from iolab.kernels.initramfs import INIT


def read_cpio(data: bytes) -> dict[str, tuple[int, int, bytes]]:
    """name -> (mode, mtime, data) of a newc archive."""
    out, offset = {}, 0
    while offset < len(data):
        fields = [int(data[offset + 6 + 8 * i: offset + 14 + 8 * i], 16) for i in range(13)]
        name_size, size = fields[11], fields[6]
        name = data[offset + 110: offset + 110 + name_size - 1].decode()
        start = offset + 110 + name_size
        start += -start % 4
        if name == "TRAILER!!!":
            break
        out[name] = (fields[1], fields[5], data[start: start + size])
        offset = start + size + (-(start + size) % 4)
    return out


def test_the_python_root_holds_each_file_and_every_link_on_the_way(tmp_path):
    real = tmp_path / "real" / "lib"
    real.mkdir(parents=True)
    (real / "libx.so.1.2").write_bytes(b"not an elf")
    (real / "libx.so.1").symlink_to("libx.so.1.2")  # the name the loader asks for
    (tmp_path / "lib").symlink_to("real/lib")
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    os.utime(source, (1_700_000_000, 1_700_000_000))
    entries = saved._entries([str(tmp_path / "lib" / "libx.so.1.2"), str(source)])
    assert entries[str(tmp_path / "lib")] == ("link", "real/lib")
    assert entries[str(real / "libx.so.1.2")] == ("file", "")
    assert entries[str(real / "libx.so.1")] == ("link", "libx.so.1.2")
    archive = read_cpio(saved.pyroot([str(source)], "/usr/bin/python3", ["/src"]))
    mode, mtime, data = archive["pyroot" + str(source)]
    # the source's time as on the host: its bytecode (which records it) is then used, not recompiled
    assert data == b"x = 1\n" and mtime == 1_700_000_000
    command = archive["saved.sh"][2].decode()
    assert "chroot /pyroot /usr/bin/python3 -S -c" in command and "--saved /run/iolab" in command
    assert saved.FAILED_MARK in command
    assert {"pyroot/run", "pyroot/proc", "pyroot/newroot"} <= set(archive)


def test_a_guest_to_be_saved_has_no_9p_mount_from_its_init():
    """Its Python mounts the host's root itself, after the go line (iolab.hosts.vm.guest_root)."""
    saved_part = INIT[INIT.index('if [ -n "$SAVED" ]; then'):]
    assert saved_part.index("finish $? /pyroot/newroot/run/iolab") < saved_part.index("mount -t 9p")


def kernel(tmp_path: Path, content: bytes = b"vmlinux") -> Kernel:
    image = tmp_path / f"vmlinux-{content.decode()}"
    image.write_bytes(content)
    (tmp_path / "initramfs.cpio").write_bytes(b"")
    return Kernel(name="k", directory=tmp_path, kver="7.2", image=image, initramfs=tmp_path / "initramfs.cpio",
                  moddir=None, manifest={}, pvh=True)


def argv(kernel: Kernel, saving: Saving | None, memory: int = 1024) -> list[str]:
    return qemu_argv(kernel, memory_mib=memory, cpus=1, machine="microvm", accel="tcg", xchg=Path("/x"),
                     console=Path("/x/console.log"), disks=[], tsc_khz=None, timing="instructions", saved=saving)


def test_a_state_is_keyed_by_the_kernel_the_command_line_and_qemu(tmp_path):
    one = kernel(tmp_path)
    saving = Saving(tmp_path / "initrd.cpio", Path("c.sock"), Path("q.sock"))
    key = saved.state_key(one, argv(one, saving), [], "qemu-system-x86_64")
    assert key == saved.state_key(one, argv(one, saving), [], "qemu-system-x86_64")
    assert key != saved.state_key(one, argv(one, saving, memory=2048), [], "qemu-system-x86_64")
    other = kernel(tmp_path, b"other")
    assert key != saved.state_key(other, argv(other, saving), [], "qemu-system-x86_64")


def test_qemu_saves_on_a_socket_console_and_restores_with_incoming(tmp_path):
    one = kernel(tmp_path)
    cold = argv(one, None)
    assert "file:/x/console.log" in cold and "-incoming" not in cold and "iolab.saved=1" not in cold[-1]
    state = tmp_path / "s.state"
    restored = argv(one, Saving(tmp_path / "initrd.cpio", Path("c.sock"), Path("q.sock"), state))
    assert "socket,id=console,path=c.sock,server=on,wait=off,logfile=/x/console.log" in restored
    assert restored[restored.index("-qmp") + 1] == "unix:q.sock,server=on,wait=off"
    assert restored[restored.index("-incoming") + 1] == f"exec:cat {state}"
    assert restored[restored.index("-initrd") + 1] == str(tmp_path / "initrd.cpio")
    assert restored[-1].endswith("iolab.saved=1")


def test_reclaim_removes_a_dead_runs_partial_files_and_the_oldest_states(tmp_path, monkeypatch):
    monkeypatch.setattr(saved, "KEEP_STATES", 2)
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    (tmp_path / f"k-0.state.partial-{dead}-1").write_bytes(b"x")
    (tmp_path / f"k-1.state.partial-{os.getpid()}-1").write_bytes(b"x")  # this process's: still being written
    for index, age in enumerate((300, 200, 100)):
        path = tmp_path / f"k-{index}.state"
        path.write_bytes(b"s")
        os.utime(path, (time.time() - age, time.time() - age))
    saved.reclaim(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "k-1.state", f"k-1.state.partial-{os.getpid()}-1", "k-2.state"]


def test_a_kernel_whose_state_cannot_be_made_boots_cold_and_says_so(tmp_path, capsys, monkeypatch):
    def fails(*args):
        raise saved.SavedError("no python here")

    monkeypatch.setattr(saved, "initrd", fails)
    states = saved.SavedStates(dataclasses.replace(kernel(tmp_path)), "/nonexistent/python", [], "qemu")
    assert states.plan(tmp_path / "xchg", [], lambda xchg, disks, saving: []) is None
    assert states.plan(tmp_path / "xchg", [], lambda xchg, disks, saving: []) is None
    err = capsys.readouterr().err
    assert err.count("cold boots for k in this run") == 1 and "no python here" in err


def test_a_boot_keys_its_state_without_its_own_disk_image_and_a_device_is_never_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(saved, "initrd", lambda *args: tmp_path / "initrd.cpio")
    monkeypatch.setattr(saved, "cache_dir", lambda: tmp_path / "states")
    one = kernel(tmp_path)

    def argv_for(xchg, disks, saving):
        return qemu_argv(one, memory_mib=1024, cpus=1, machine="microvm", accel="tcg", xchg=xchg,
                         console=xchg / "console.log", disks=disks, tsc_khz=None, timing="instructions",
                         saved=saving)

    plans = []
    for name in ("a.img", "b.img"):  # two runs' fresh images of one size
        (tmp_path / name).write_bytes(bytes(4096))
        states = saved.SavedStates(one, "/usr/bin/python3", [], "qemu-system-x86_64")
        plans.append(states.plan(tmp_path / f"xchg-{name}", [Disk(str(tmp_path / name), "iolab0", image=True)],
                                 argv_for))
    assert plans[0].state == plans[1].state and not plans[0].restoring
    states = saved.SavedStates(one, "/usr/bin/python3", [], "qemu-system-x86_64")
    assert states.plan(tmp_path / "x", [Disk("/dev/sdz", "iolab0")], argv_for) is None
    assert "device" in states.broken


def test_the_guests_files_are_listed_again_only_when_one_of_them_changed(tmp_path, monkeypatch):
    import subprocess
    import sys

    import iolab

    monkeypatch.setattr(saved, "cache_dir", lambda: tmp_path / "states")
    path = (str(Path(iolab.__file__).parent.parent),)
    saved.guest_files.cache_clear()
    files = saved.guest_files(sys.executable, path)
    assert any(name.endswith("iolab/cell/executor.py") for name in files) and sys.executable in files
    runs = []
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: runs.append(args) or real_run(*args, **kwargs))
    saved.guest_files.cache_clear()
    assert saved.guest_files(sys.executable, path) == files and runs == []  # the list kept, no Python started
    (listed,) = (tmp_path / "states").glob("files-*.json")
    data = __import__("json").loads(listed.read_text())
    data[next(iter(data))][1] += 1  # a file whose size changed since
    listed.write_text(__import__("json").dumps(data))
    saved.guest_files.cache_clear()
    assert saved.guest_files(sys.executable, path) == files and len(runs) == 1
    saved.guest_files.cache_clear()


def sample(boot: int, start: dict, seq: int = 0) -> "Sample":
    from iolab.cell.sample import Sample

    return Sample(seq=seq, round=boot, iteration=boot, warmup=False, variant="a", workload="w", status="ok",
                  env={"vm": {"kernel": "k", "boot": boot, "start": start}})


def test_the_report_says_how_the_guests_started_and_why_a_boot_was_cold():
    from iolab.report.footnotes import guest_starts

    restored = [sample(1, {"kind": "restored", "state": "k-0.state"}, 0),
                sample(1, {"kind": "restored", "state": "k-0.state"}, 1),  # one boot, two cells: counted once
                sample(2, {"kind": "restored", "state": "k-1.state"}, 2)]
    assert guest_starts(tuple(restored)) == [
        "guests: of 2 boots 2 restored, 0 saved after their start-up and run on, 0 cold; from 2 saved states"]
    one = [sample(1, {"kind": "restored", "state": "k-0.state"}), sample(2, {"kind": "restored", "state": "k-0.state"})]
    assert guest_starts(tuple(one))[0].endswith("from 1 saved states (every boot from the same state)")
    fallback = [sample(1, {"kind": "saved", "state": "k-0.state"}),
                sample(2, {"kind": "cold", "not_saved": "the guest's saved state (k-1.state) was not made: X"})]
    assert guest_starts(tuple(fallback)) == [
        "guests: of 2 boots 0 restored, 1 saved after their start-up and run on, 1 cold; from 1 saved states; "
        "cold: the guest's saved state (k-1.state) was not made: X"]
    assert guest_starts((sample(1, {"kind": "cold"}),)) == []  # cold boots as asked: nothing to say
