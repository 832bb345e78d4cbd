"""The quiet default target: image in RAM when it fits, eager ext4 init, settle, host noise."""

import time

import pytest

from iolab.cell import executor, targets
from iolab.collectors import host_noise
from iolab.spec import Target
from iolab.store import Sample
from iolab.analysis import diagnostics


def test_ext4_gets_eager_init_merged_with_user_options():
    eager = targets.EXT4_EAGER
    assert targets.mkfs_argv("ext4", []) == ["-E", eager]
    assert targets.mkfs_argv("ext4", ["-b", "4096"]) == ["-E", eager, "-b", "4096"]
    assert targets.mkfs_argv("ext4", ["-E", "stride=4"]) == ["-E", f"{eager},stride=4"]
    assert targets.mkfs_argv("ext4", ["-Estride=4"]) == [f"-E{eager},stride=4"]
    assert targets.mkfs_argv("xfs", ["-f"]) == ["-f"]


def test_image_place_prefers_ram_and_says_why_not(monkeypatch):
    small = Target(kind="loop", fs="ext4", size=64 << 20)
    monkeypatch.setattr(targets, "ram_refusal", lambda size: "")
    assert targets.image_place(small) == ("/dev/shm", "RAM (tmpfs /dev/shm)")
    monkeypatch.setattr(targets, "ram_refusal", lambda size: "64.0 GiB image, 2.0 GiB memory available")
    parent, place = targets.image_place(small)
    assert parent is None and "not RAM: 64.0 GiB image" in place
    mine = Target(kind="loop", fs="ext4", size=64 << 20, image_dir="/var/tmp")
    assert targets.image_place(mine) == ("/var/tmp", "/var/tmp")


def test_ram_refusal_on_this_machine():
    assert targets.ram_refusal(1 << 50).startswith(("1048576.0 GiB image", "/dev/shm is not"))
    if targets._is_tmpfs("/dev/shm") and targets._mem_available() > 2 << 30:
        assert targets.ram_refusal(64 << 20) == ""


def test_settle_waits_for_writeback_and_is_bounded(monkeypatch):
    levels = iter([500_000, 300_000, 100_000, 2_000] + [2_000] * 100)
    monkeypatch.setattr(executor, "_dirty_kib", lambda: next(levels))
    monkeypatch.setattr(executor.os, "sync", lambda: None)
    now = [0.0]
    out = executor.settle(clock=lambda: now[0], pause=lambda s: now.__setitem__(0, now[0] + s))
    assert out["host.dirty_kib"] == 2000 and out["host.settle_s"] == pytest.approx(0.3)
    stuck = iter([900_000] * 1000)
    monkeypatch.setattr(executor, "_dirty_kib", lambda: next(stuck))
    now[0] = 0.0
    out = executor.settle(timeout=2.0, clock=lambda: now[0], pause=lambda s: now.__setitem__(0, now[0] + s))
    assert out["host.settle_s"] == pytest.approx(2.0, abs=0.11) and out["host.dirty_kib"] == 900_000


def test_host_noise_sees_another_process_and_not_its_own():
    """A spinning child of ours is the workload's, not "other"; a spinning
    process that is not ours (a shell's orphan, reparented away from us) is,
    with at least the CPU it used meanwhile. Other load on the host only adds."""
    import os
    import signal
    import subprocess

    spin = "while :; do :; done"
    collector = host_noise.HostNoise(None)
    collector.start()
    ours = subprocess.Popen(["sh", "-c", spin])
    orphaner = subprocess.run(["sh", "-c", f"sh -c '{spin}' >/dev/null 2>&1 & echo $!"], capture_output=True,
                              text=True, check=True)
    theirs = int(orphaner.stdout)
    try:
        deadline = time.monotonic() + 60  # each gets 0.3 s of CPU, however loaded the host
        while min(_cpu_s(ours.pid), _cpu_s(theirs)) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen = host_noise._other_ticks(host_noise._processes())
        used = _cpu_s(theirs)
        out = collector.stop()
    finally:
        ours.kill()
        os.kill(theirs, signal.SIGKILL)
        ours.wait()
    assert set(out) == {"host.steal_s", "host.other_cpu_s"}
    assert out["host.steal_s"] >= 0
    assert ours.pid not in seen and theirs in seen
    assert used >= 0.3 and out["host.other_cpu_s"] >= used - 0.05


def _cpu_s(pid):
    """user + system CPU seconds of a running process."""
    import os

    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_disturbed_rounds_follow_the_rule():
    def sample(round_, **metrics):
        return Sample(seq=round_, round=round_, iteration=round_, warmup=False, variant="a", workload="w",
                      status="ok", metrics=metrics, run_s=10.0)
    quiet = sample(0, **{"host.other_cpu_s": 1.0, "host.steal_s": 0.1})
    busy = sample(1, **{"host.other_cpu_s": 6.0})
    disk = sample(2, **{"host.disk_busy_ms": 2500.0})
    found = diagnostics.disturbed_rounds([quiet, busy, disk])
    assert set(found) == {1, 2}
    assert "other processes 60% of a CPU" in found[1] and "host disk busy 25%" in found[2]
    assert diagnostics.disturbed(sample(3)) == ""  # not measured: not marked
