"""The guest side of a VM host: run the cells of one boot, write their samples.

Started by the initramfs's init as ``python -m iolab.hosts.vm.guest /run/iolab``
(the exchange dir, shared read-write with the host over 9p). It reads
``cells.json``, runs each cell through the same executor as the host
(iolab.cell.executor.execute), on the VM's virtio disk, and appends each sample to
``samples.jsonl`` as one line, flushed and fsynced, the moment it exists.
``guest.json`` says when the guest was ready (after the executor's
imports) and what those imports cost.

Only the standard library is imported before the executor: what this
module costs under emulation is what the boot costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iolab.cell.cellspec import CellSpec

SAMPLES = "samples.jsonl"
MARK = "iolab-guest:"  # guest.log's lines that say where the guest's start-up is (iolab.hosts.vm.host)
SAVE_MARK = f"{MARK} save"  # on the console: a guest to be saved is ready for it (iolab.hosts.vm.saved)


RAM_DIR = "/run/iolab-disk"  # [vm] disk = "ram": the target's image, in the guest's memory
NULL_BLK = "/dev/nullb0"  # [vm] disk = "null_blk": the built-in null_blk's device (kernel command line)


def program(path: list[str]) -> str:
    """The program the guest's ``python -S -c`` runs: iolab's and the
    site-packages' directories (``path``) after the standard library, then
    this module's main."""
    return (f"import sys; sys.path += {json.dumps(list(path))}; "
            "from iolab.hosts.vm import guest; sys.exit(guest.main(sys.argv))")


def uptime() -> float:
    with open("/proc/uptime") as handle:
        return float(handle.read().split()[0])


def find_disk(serial: str) -> str:
    """The guest's block device whose virtio serial is `serial` (no udev here)."""
    for entry in sorted(Path("/sys/block").iterdir()):
        try:
            if (entry / "serial").read_text().strip() == serial:
                return f"/dev/{entry.name}"
        except OSError:
            continue
    raise OSError(f"no disk with serial {serial!r} in the guest (/sys/block/*/serial)")


def load_modules(names: set[str]) -> subprocess.Popen[str] | None:
    """Start loading the modules the cells need (modprobe -a), so the kernel
    links them while Python imports the executor; failures are kept in
    guest.json (a module may be built in; the cell then says if one is
    really missing). None for a kernel without loadable modules (no
    /proc/modules: everything it has is built in), where a modprobe would
    only cost its start under emulation. Plain Popen, before any iolab
    import (iolab.process would import the journal first); the guest is
    PID 1's only child and the VM powers off after it, so nothing of it
    can be left."""
    if not os.path.exists("/proc/modules"):
        return None
    return subprocess.Popen(["modprobe", "-a", *sorted(names)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def mark(text: str) -> None:
    """A line in guest.log, where the host sees it at once (the exchange dir
    is not cached): the host times the guest's start-up by these lines."""
    print(f"{MARK} {text} {uptime()}", flush=True)


def append_sample(path: Path, line: str) -> None:
    with open(path, "a") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _failed(raw: dict[str, Any], error: str, env: dict[str, Any]) -> str:
    from iolab.cell.sample import Sample

    sample = Sample(
        seq=raw.get("seq", -1), round=raw.get("round", -1), iteration=raw.get("iteration", -1),
        warmup=raw.get("warmup", False), variant=raw.get("variant", {}).get("name", "?"),
        workload=raw.get("workload", {}).get("name", "?"), status="failed", error=error,
        env=env, started=time.time(),
    )
    return sample.to_json()


def sched_features(cmdline: str, features: Path = Path("/sys/kernel/debug/sched/features")) -> dict[str, str]:
    """Set the scheduler features the kernel command line names (``iolab.sched=NO_DELAY_DEQUEUE``:
    instructions mode, iolab.hosts.vm.qemu.DETERMINISTIC_GUEST) through debugfs, before any cell;
    each with "set", or why not (a kernel without that feature: Invalid argument)."""
    done = {}
    for word in cmdline.split():
        for name in word.removeprefix("iolab.sched=").split(",") if word.startswith("iolab.sched=") else ():
            try:
                features.write_text(name)
                done[name] = "set"
            except OSError as error:
                done[name] = f"not set: {error.strerror or error}"
    return done


def null_blk_problem(expected: dict[str, str], root: Path = Path("/sys")) -> str:
    """Why the guest's null_blk is not the device asked for, or "": each
    parameter as /sys/module/null_blk/parameters shows it (a kernel without
    iolab's change to null_blk has no iolab_model; an older null_blk no
    rotational), and the rotational flag on the disk itself."""
    for name, value in expected.items():
        path = root / "module/null_blk/parameters" / name
        try:
            found = path.read_text().strip()
        except OSError:
            carried = " (iolab's change to null_blk, carried into the kernels it builds)" if name.startswith(
                "iolab_") else ""
            return f"the guest's null_blk has no parameter {name}{carried}: this kernel cannot be the modeled device"
        if found != value:
            return f"the guest's null_blk has {name}={found}, not {value}"
    if expected.get("rotational") == "Y":
        flag = root / "block" / Path(NULL_BLK).name / "queue/rotational"
        if flag.exists() and flag.read_text().strip() != "1":
            return f"{NULL_BLK} is not rotational ({flag} is {flag.read_text().strip()})"
    return ""


# Modules a cell never uses that the executor's imports would load: shutil
# imports bz2 and lzma at its start only to know whether it can make such
# archives, and hashlib loads OpenSSL (_hashlib) where Python's own sha256
# does what a cell asks of it (the probe's build id). Each is an extension
# module whose library the guest's dynamic loader maps and relocates under
# emulation (bz2 about 0.1 s of a boot, OpenSSL 0.3 s: bench/pace_boot.py).
UNUSED_IN_GUEST = ("bz2", "lzma", "_hashlib")


def unused_in_guest() -> None:
    """Make the modules of UNUSED_IN_GUEST fail to import (shutil then says it
    cannot make such archives, hashlib uses its own digests); a module
    already imported stays."""
    for name in UNUSED_IN_GUEST:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def import_executor() -> float:
    """The executor's imports (what a cell needs), their seconds."""
    t0 = time.perf_counter()
    unused_in_guest()
    from iolab.cell import executor  # noqa: F401
    from iolab.cell.cellspec import CellSpec  # noqa: F401

    import_s = time.perf_counter() - t0
    mark("imported")
    return import_s


def wait_for_go(xchg: Path) -> None:
    """A guest started to be saved (iolab.hosts.vm.saved), its imports done:
    say so on the console (the host saves the guest there, or restored it
    from there), wait for the host's go line on the console, make the
    host's root ready and enter it (iolab.hosts.vm.guest_root), and write
    on to guest.log as a cold boot does."""
    from iolab.hosts.vm import guest_root  # from the start-up root, as the rest (saved.FILES_PROGRAM)

    print(SAVE_MARK, flush=True)
    with open("/dev/console", "rb", buffering=0) as console:
        console.readline()
    guest_root.make_host_root()
    os.chroot(guest_root.NEW_ROOT)  # what Python mapped stays the copy it started from
    os.chdir("/")
    (xchg / "init.json").write_text(json.dumps({"init_uptime": None, "command_uptime": uptime()}))
    sys.stderr.flush()
    log = os.open(xchg / "guest.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    mark("go")


def main(argv: list[str]) -> int:
    saved = len(argv) > 2 and argv[1] == "--saved"  # a guest to be saved after its imports (wait_for_go)
    xchg = Path(argv[-1] if len(argv) > 1 else "/run/iolab")
    python_started = uptime()
    mark("python")
    import_s = import_executor() if saved else 0.0
    if saved:
        wait_for_go(xchg)
    request = json.loads((xchg / "cells.json").read_text())
    needed = {"loop"} | {c["target"]["fs"] for c in request["cells"] if c["target"]["fs"] != "none"}
    null_blk = request.get("disk") in ("null_blk", "model")  # spec.NULL_BLK_DISKS (only the stdlib is imported here)
    if null_blk:  # a module where not built in: modprobe takes its options from the command line
        needed.add("null_blk")
    modprobe = load_modules(needed)
    import_s = import_s if saved else import_executor()
    from iolab.cell import executor
    from iolab.cell.cellspec import CellSpec

    ram = request.get("disk") == "ram"
    device = RAM_DIR if ram else NULL_BLK if null_blk else find_disk(request["disk_serial"])
    loaded: dict[str, Any]
    if modprobe is None:
        loaded = {"modules": sorted(needed), "status": None, "output": "no loadable modules (no /proc/modules)"}
    else:
        output, _ = modprobe.communicate()
        loaded = {"modules": sorted(needed), "status": modprobe.returncode, "output": output.strip()}
    with open("/proc/cmdline") as handle:
        sched = sched_features(handle.read())
    guest = {
        **({"sched_features": sched} if sched else {}),
        "python_started_uptime": python_started,
        "import_s": round(import_s, 3),
        **({"saved": True} if saved else {}),
        "modprobe": loaded,
        "device": device,
        "ready_uptime": uptime(),
    }
    (xchg / "guest.json.tmp").write_text(json.dumps(guest))
    os.rename(xchg / "guest.json.tmp", xchg / "guest.json")
    scratch = Path("/tmp/iolab-guest")
    cache = scratch / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    journal = scratch / "knobs.journal"
    device_problem = null_blk_problem(request.get("null_blk") or {}) if null_blk else ""
    for index, raw in enumerate(request["cells"]):
        env = {"guest": {**guest, "cell_index": index, "cell_uptime": uptime()}}
        if device_problem:  # no cell runs on a device other than the one asked for
            append_sample(xchg / SAMPLES, _failed(raw, f"in the guest: {device_problem}", env))
            continue
        try:
            cell = CellSpec.from_dict(raw)
        except Exception as error:  # a cell the guest cannot take must not lose the others
            append_sample(xchg / SAMPLES, _failed(raw, f"in the guest: {type(error).__name__}: {error}", env))
            continue
        sample = executor.execute(in_guest(cell, device, ram), scratch, cache, journal).with_more(env=env)
        append_sample(xchg / SAMPLES, sample.to_json())
    return 0


def in_guest(cell: CellSpec, device: str, ram: bool = False) -> CellSpec:
    """The cell with its target on the VM's disk: a device target, formatted
    fresh per cell (erofs images stay on a loop device inside the guest);
    with [vm] disk = "ram", a loop image in the guest's memory (RAM_DIR)."""
    if cell.target.fs == "erofs":
        return cell
    if ram:
        os.makedirs(RAM_DIR, exist_ok=True)  # /run is a tmpfs in the guest
        return cell.with_target(kind="loop", image_dir=RAM_DIR)
    return cell.with_target(kind="device", device=device, allow_destroy=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
