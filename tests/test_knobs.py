"""Knobs against real kernel interfaces: a loop device attached here, real
sysctls, a real memory cgroup. Every test reads the values back afterwards."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from iolab import knobs as K
from iolab.knobs import (
    CpuPin,
    Journal,
    KnobError,
    LoopDirectIO,
    MemoryLimit,
    SysctlKnob,
    SysfsKnob,
    applied,
    build_knobs,
    detect_memory_cgroup,
    normalise,
    placement_for,
    recover,
)

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="needs root: writes sysfs and sysctls, attaches loop devices, makes cgroups"
)


def integration(test):
    """On this machine's kernel interfaces: alone among the machine_wide tests (tests/conftest.py)."""
    return pytest.mark.integration(pytest.mark.root(pytest.mark.machine_wide(needs_root(test))))


def read(path):
    with open(path) as f:
        return f.read().strip()


def queue(dev, attr):
    return f"/sys/block/{dev}/queue/{attr}"


def snapshot(dev):
    """Everything the knob tests touch, as read from the kernel."""
    out = {p: read(p) for p in (queue(dev, "read_ahead_kb"), queue(dev, "nomerges"), queue(dev, "scheduler"))}
    out[f"/sys/block/{dev}/loop/dio"] = read(f"/sys/block/{dev}/loop/dio")
    for key in ("dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio"):
        out[key] = read(f"/proc/sys/vm/{key}")
    return out


def other_scheduler(dev):
    text = read(queue(dev, "scheduler"))
    current = normalise(text)
    choices = [w.strip("[]") for w in text.split() if w.strip("[]") != current]
    assert choices, f"only one scheduler available: {text}"
    return current, choices[0]


def own_memory_cgroup_children():
    cg = K.memory_cgroup()
    return {d for d in os.listdir(cg.own) if d.startswith("iolab-")}


# ---------------------------------------------------------------- unit tests


def test_normalise_reads_the_selected_choice():
    assert normalise("[mq-deadline] kyber bfq none\n") == "mq-deadline"
    assert normalise("none [bfq]") == "bfq"
    assert normalise("[none]") == "none"
    assert normalise("4096\t131072\t6291456\n") == "4096 131072 6291456"
    assert normalise("2560\n") == "2560"


V1_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_CGROUPS = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t30\t1\n"
V2_CGROUPS = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t0\t1\t1\nmemory\t0\t30\t1\n"
V2_MOUNTINFO = "25 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def test_detect_memory_cgroup_v1():
    cg = detect_memory_cgroup(V1_CGROUPS, V1_MOUNTINFO, "4:memory:/process_api/abc\n0::/\n")
    assert cg == K.MemoryCgroup(1, "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/process_api/abc")
    assert cg.limit_file == "memory.limit_in_bytes"


def test_detect_memory_cgroup_v2_and_container_root():
    cg = detect_memory_cgroup(V2_CGROUPS, V2_MOUNTINFO, "0::/user.slice/session-1.scope\n")
    assert cg == K.MemoryCgroup(2, "/sys/fs/cgroup", "/sys/fs/cgroup/user.slice/session-1.scope")
    assert cg.limit_file == "memory.max"
    # a container sees its own cgroup as the mount root
    mi = "25 20 0:22 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    cg = detect_memory_cgroup(V2_CGROUPS, mi, "0::/lxc/c1/init\n")
    assert cg.own == "/sys/fs/cgroup/init"


def test_detect_memory_cgroup_disabled():
    disabled = V1_CGROUPS.replace("memory\t4\t30\t1", "memory\t4\t30\t0")
    with pytest.raises(KnobError, match="disabled"):
        detect_memory_cgroup(disabled, V1_MOUNTINFO, "0::/\n")


def test_detect_memory_cgroup_v2_only_kernel():
    """7.x without CONFIG_MEMCG_V1 leaves memory out of /proc/cgroups: v2 decides."""
    v2_only = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t0\t1\t1\ncpu\t0\t1\t1\n"
    cg = detect_memory_cgroup(v2_only, V2_MOUNTINFO, "0::/\n")
    assert cg == K.MemoryCgroup(2, "/sys/fs/cgroup", "/sys/fs/cgroup")


def test_constructor_checks():
    with pytest.raises(ValueError, match="under /sys"):
        SysfsKnob("/etc/passwd", "x")
    with pytest.raises(ValueError, match="under /sys"):
        SysfsKnob("/sys/../etc/passwd", "x")
    with pytest.raises(ValueError, match="sysctl key"):
        SysctlKnob("../../etc/passwd", "1")
    assert SysctlKnob("vm.dirty_bytes", 1).path == "/proc/sys/vm/dirty_bytes"
    with pytest.raises(ValueError, match="page size"):
        MemoryLimit(1000)
    with pytest.raises(ValueError, match="loop device"):
        LoopDirectIO("vda", True)
    with pytest.raises(ValueError):
        CpuPin([])


def test_build_knobs_from_config():
    knobs = build_knobs(
        {
            "cpus": [0],
            "sysfs": {"/sys/block/{dev}/queue/rq_affinity": 2},
            "sysctl": {"vm.dirty_bytes": 64 << 20},
            "memory_max": 256 << 20,
            "loop_dio": True,
        },
        dev="/dev/loop7",
    )
    assert [k.kind for k in knobs] == ["sysctl", "sysfs", "loop_dio", "memory_max", "cpus"]
    assert knobs[1].path == "/sys/block/loop7/queue/rq_affinity" and knobs[1].value == "2"
    with pytest.raises(ValueError, match="unknown knob"):
        build_knobs({"sysfz": {}})
    with pytest.raises(ValueError, match="needs a block device"):
        build_knobs({"sysfs": {"/sys/block/{dev}/queue/nomerges": 1}})


class Failing(K.Knob):
    """A knob whose restore fails: to test that the others are still restored."""

    kind = "test"
    label = "failing test knob"

    def show(self):
        return "x"

    def apply(self, journal=None):
        self._applied = True

    def restore(self):
        if self._applied:
            raise KnobError("failing test knob: restore refused")


# ---------------------------------------------------------- integration tests


@integration
@pytest.mark.parametrize("attr,value", [("read_ahead_kb", "64"), ("nomerges", "2")])
def test_sysfs_apply_and_restore(loopdev, attr, value, tmp_path):
    path = queue(loopdev, attr)
    before = read(path)
    assert before != value
    knob = SysfsKnob(path, value)
    with applied([knob], tmp_path / "journal") as env:
        assert read(path) == value
        assert env == {f"sysfs {path}": (before, value)}
        assert len(Journal(tmp_path / "journal").entries()) == 1
    assert read(path) == before
    assert not (tmp_path / "journal").exists()
    knob.restore()  # idempotent
    assert read(path) == before


@integration
def test_sysfs_scheduler_choice_format(loopdev):
    current, other = other_scheduler(loopdev)
    knob = SysfsKnob(queue(loopdev, "scheduler"), other)
    with applied([knob]) as env:
        assert normalise(read(queue(loopdev, "scheduler"))) == other
        assert f"[{other}]" in knob.show()
        assert env[knob.label] == (current, other)
    assert normalise(read(queue(loopdev, "scheduler"))) == current


@integration
def test_sysfs_rounded_value_is_an_error_and_restored(loopdev):
    path = queue(loopdev, "read_ahead_kb")
    before = read(path)
    with pytest.raises(KnobError) as err:
        with applied([SysfsKnob(path, 5)]):  # the kernel keeps whole pages: 5 KiB reads back as 4
            pass
    msg = str(err.value)
    assert path in msg and "'5'" in msg and "'4'" in msg
    assert read(path) == before


@integration
def test_rejected_value_names_knob_path_and_errno(loopdev):
    path = queue(loopdev, "scheduler")
    before = read(path)
    earlier = SysfsKnob(queue(loopdev, "nomerges"), 1)
    nomerges_before = read(queue(loopdev, "nomerges"))
    with pytest.raises(KnobError) as err:
        with applied([earlier, SysfsKnob(path, "no-such-elevator")]):
            pytest.fail("the block must not run")
    msg = str(err.value)
    assert f"sysfs {path}" in msg and "'no-such-elevator'" in msg and "Invalid argument" in msg
    assert read(path) == before
    assert read(queue(loopdev, "nomerges")) == nomerges_before  # the knob applied before it is restored


@integration
def test_sysctl_dirty_bytes_restores_the_ratio_pair():
    orig = {k: read(f"/proc/sys/vm/{k}") for k in ("dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio")}
    knobs = [SysctlKnob("vm.dirty_bytes", 64 << 20), SysctlKnob("vm.dirty_background_bytes", 32 << 20)]
    with applied(knobs):
        assert read("/proc/sys/vm/dirty_bytes") == str(64 << 20)
        assert read("/proc/sys/vm/dirty_ratio") == "0"  # the kernel zeroed the other unit
        assert read("/proc/sys/vm/dirty_background_bytes") == str(32 << 20)
        assert read("/proc/sys/vm/dirty_background_ratio") == "0"
    after = {k: read(f"/proc/sys/vm/{k}") for k in orig}
    assert after == orig


@integration
def test_sysctl_pair_restore_when_bytes_were_in_force():
    orig = {k: read(f"/proc/sys/vm/{k}") for k in ("dirty_bytes", "dirty_ratio")}
    with applied([SysctlKnob("vm.dirty_bytes", 100 << 20)]):  # the host state a ratio knob meets
        with applied([SysctlKnob("vm.dirty_ratio", 30)]):
            assert read("/proc/sys/vm/dirty_ratio") == "30"
            assert read("/proc/sys/vm/dirty_bytes") == "0"
        assert read("/proc/sys/vm/dirty_bytes") == str(100 << 20)
        assert read("/proc/sys/vm/dirty_ratio") == "0"
    assert {k: read(f"/proc/sys/vm/{k}") for k in orig} == orig


def all_knobs(dev):
    _, other = other_scheduler(dev)
    return [
        SysctlKnob("vm.dirty_bytes", 64 << 20),
        SysctlKnob("vm.dirty_background_bytes", 32 << 20),
        SysfsKnob(queue(dev, "read_ahead_kb"), 64),
        SysfsKnob(queue(dev, "nomerges"), 2),
        SysfsKnob(queue(dev, "scheduler"), other),
        LoopDirectIO(dev, True),
        MemoryLimit(128 << 20, "test"),
        CpuPin({0}),
    ]


@integration
def test_exception_mid_cell_restores_every_knob(loopdev, tmp_path):
    before = snapshot(loopdev)
    cgroups_before = own_memory_cgroup_children()
    knobs = all_knobs(loopdev)
    journal = tmp_path / "journal"
    with pytest.raises(RuntimeError, match="workload blew up"):
        with applied(knobs, journal) as env:
            assert snapshot(loopdev) != before
            assert read(f"/sys/block/{loopdev}/loop/dio") == "1"
            assert len(env) == len(knobs)
            assert len(Journal(journal).entries()) == len(knobs) - 1  # CpuPin changes no kernel state
            raise RuntimeError("workload blew up")
    assert snapshot(loopdev) == before
    assert own_memory_cgroup_children() == cgroups_before
    assert not journal.exists()


@integration
def test_ctrl_c_mid_cell_restores_every_knob(loopdev, tmp_path):
    before = snapshot(loopdev)
    cgroups_before = own_memory_cgroup_children()
    with pytest.raises(KeyboardInterrupt):
        with applied(all_knobs(loopdev), tmp_path / "journal"):
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered by the default handler
            time.sleep(5)
            pytest.fail("SIGINT did not interrupt")
    assert snapshot(loopdev) == before
    assert own_memory_cgroup_children() == cgroups_before


@integration
def test_failing_restore_still_restores_the_others(loopdev):
    path = queue(loopdev, "nomerges")
    before = read(path)
    with pytest.raises(KnobError) as err:
        with applied([SysfsKnob(path, 2), Failing(), SysfsKnob(queue(loopdev, "read_ahead_kb"), 64)]):
            pass
    assert "restore refused" in str(err.value) and "NOT as before" in str(err.value)
    assert read(path) == before


@integration
def test_failing_restore_after_ctrl_c_keeps_the_interrupt(loopdev):
    path = queue(loopdev, "nomerges")
    before = read(path)
    with pytest.raises(KeyboardInterrupt) as err:
        with applied([SysfsKnob(path, 2), Failing()]):
            raise KeyboardInterrupt
    assert any("restore refused" in note for note in err.value.__notes__)
    assert read(path) == before


ALLOC = "import sys; b = b'x' * (int(sys.argv[1]) << 20); print(len(b))"


@integration
def test_memory_limit_caps_the_workload_and_is_removed():
    limit = 64 << 20
    knob = MemoryLimit(limit, "test")
    swap = any(line.split()[1] != "0" for line in open("/proc/meminfo") if line.startswith("SwapTotal"))
    with applied([knob]) as env:
        cgroup = os.path.dirname(knob.procs_path)
        assert os.path.isdir(cgroup)
        assert read(os.path.join(cgroup, knob.cg.limit_file)) == str(limit)
        assert env[knob.label][1] == str(limit)
        place = placement_for([knob])
        place.check()
        small = subprocess.run([sys.executable, "-c", ALLOC, "16"], preexec_fn=place.preexec, capture_output=True)
        assert small.returncode == 0
        big = subprocess.run([sys.executable, "-c", ALLOC, "256"], preexec_fn=place.preexec, capture_output=True)
        usage = knob.usage()
        assert usage["cgroup.memory_peak_bytes"] <= limit
        if not swap:
            assert big.returncode == -signal.SIGKILL, big
            assert usage["cgroup.oom_kill"] >= 1
    assert not os.path.exists(cgroup)


@integration
def test_memory_limit_moves_leftover_processes_out():
    knob = MemoryLimit(64 << 20, "test")
    with applied([knob]):
        cgroup = os.path.dirname(knob.procs_path)
        leftover = subprocess.Popen(["sleep", "30"], preexec_fn=placement_for([knob]).preexec)
        time.sleep(0.05)
        assert str(leftover.pid) in read(knob.procs_path).split()
    try:
        assert not os.path.exists(cgroup)
        assert leftover.poll() is None  # moved, not killed
        own = read("/proc/self/cgroup")
        assert [line for line in read(f"/proc/{leftover.pid}/cgroup").splitlines() if ":memory:" in line] == [
            line for line in own.splitlines() if ":memory:" in line
        ]
    finally:
        leftover.kill()
        leftover.wait()


@integration
def test_cpu_pin_placement():
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    knob = CpuPin({cpu})
    with applied([knob]) as env:
        place = placement_for([knob])
        out = subprocess.run(
            ["grep", "Cpus_allowed_list", "/proc/self/status"], preexec_fn=place.preexec, capture_output=True, text=True
        )
        assert out.stdout.split()[-1] == str(cpu)
        assert env[knob.label] == (K.format_cpus(allowed), str(cpu))
    with pytest.raises(KnobError, match="not available"):
        with applied([CpuPin({4095})]):
            pass
    assert K.format_cpus({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"


CRASH = textwrap.dedent(
    """
    import os, sys
    from iolab import knobs as K
    dev, journal = sys.argv[1], sys.argv[2]
    knobs = [
        K.SysctlKnob("vm.dirty_bytes", 64 << 20),
        K.SysfsKnob(f"/sys/block/{dev}/queue/nomerges", 2),
        K.SysfsKnob(f"/sys/block/{dev}/queue/read_ahead_kb", 64),
        K.LoopDirectIO(dev, True),
        K.MemoryLimit(64 << 20, "crash"),
    ]
    cm = K.applied(knobs, journal)
    cm.__enter__()
    print(knobs[-1].procs_path, flush=True)
    os.kill(os.getpid(), 9)  # killed mid-cell: no restore runs
    """
)


@integration
def test_journal_recovery_after_a_killed_run(loopdev, tmp_path):
    before = snapshot(loopdev)
    journal = tmp_path / "journal.jsonl"
    crashed = subprocess.run([sys.executable, "-c", CRASH, loopdev, str(journal)], capture_output=True, text=True)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    cgroup = os.path.dirname(crashed.stdout.strip())
    assert os.path.isdir(cgroup)
    assert snapshot(loopdev) != before
    assert len(Journal(journal).entries()) == 5

    done = recover(journal)
    assert len(done) == 5, done
    assert {r.outcome for r in done} == {"restored"}, done
    assert any("removed cgroup" in r.text for r in done)
    assert snapshot(loopdev) == before
    assert not os.path.exists(cgroup)
    assert not journal.exists()
    assert recover(journal) == []


@integration
def test_recover_leaves_entries_of_a_live_process(tmp_path, loopdev):
    path = queue(loopdev, "nomerges")
    journal = Journal(tmp_path / "journal")
    alive = subprocess.Popen(["sleep", "30"])
    try:
        journal.path.write_text(
            '{"id": "a", "pid": %d, "label": "sysfs %s", "undo": {"kind": "write", "path": "%s", "value": "1"}}\n'
            % (alive.pid, path, path)
        )
        done = recover(journal.path)
        assert done and done[0].outcome == "left" and "still running" in done[0].text
        assert len(journal.entries()) == 1
        assert read(path) == "0"
    finally:
        alive.kill()
        alive.wait()
    done = recover(journal.path)  # now its process is gone: undo it
    assert read(path) == "1" and done[0].outcome == "restored" and "wrote '1'" in done[0].text
    SysfsKnob(path, 0).apply()  # put the loop device back as it was
