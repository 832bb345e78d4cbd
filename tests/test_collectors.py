"""Collectors against real kernel activity: a loop device attached here, real
tracepoints, real perf. Nothing is mocked except a missing perf binary, and
a stand-in perf (a real process on the same pipes) for the control handshake's
late, missing and failed acks."""

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from iolab.collectors import COLLECTORS, CollectorError, build_collectors, collecting, diskstats, kprobes
from iolab.collectors.diskstats import DiskStats, read_diskstats
from iolab.collectors.perf_counts import ACK_TIMEOUT, GUEST_MARK, PerfCounts, ack_timeout, parse_perf_csv
from iolab.collectors.proc_stat import ProcStat
from iolab.collectors.rusage import Rusage
from iolab.collectors.trace_phase import TracePhase, dev_t, pair_phases, paired_durations, parse_raw_trace
from iolab.collectors.vmstat import VmStat
from iolab.collectors.tracefs import tracefs_acquire, tracefs_release

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root: tracefs, perf -a, loop devices")
needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (Debian package linux-perf)")


def integration(test):
    """On this machine's kernel interfaces: alone among the machine_wide tests (tests/conftest.py)."""
    return pytest.mark.integration(pytest.mark.root(pytest.mark.machine_wide(needs_root(test))))


def dd_write(dev, mib):
    subprocess.run(["dd", "if=/dev/zero", f"of=/dev/{dev}", "bs=1M", f"count={mib}", "oflag=direct"], check=True, capture_output=True)


def dd_read(dev, mib):
    subprocess.run(["dd", f"if=/dev/{dev}", "of=/dev/null", "bs=1M", f"count={mib}", "iflag=direct"], check=True, capture_output=True)


def tracefs_mounted():
    with open("/proc/self/mountinfo") as f:
        return sorted(line.split()[4] for line in f if " - tracefs " in line)


def tracefs_instances():
    root = "/sys/kernel/tracing/instances"
    if not os.path.isdir(root):
        return set()
    return {d for d in os.listdir(root) if d.startswith(f"iolab-{os.getpid()}-")}


# A child that ping-pongs a byte with its own child through two pipes: each
# round trip blocks both sides, so it costs at least two context switches.
PINGPONG = textwrap.dedent(
    """
    import os, sys
    n = int(sys.argv[1])
    a_r, a_w = os.pipe(); b_r, b_w = os.pipe()
    if os.fork() == 0:
        for _ in range(n):
            os.read(a_r, 1); os.write(b_w, b"x")
        os._exit(0)
    for _ in range(n):
        os.write(a_w, b"x"); os.read(b_r, 1)
    os.wait()
    """
)


# ---------------------------------------------------------------- unit tests


def test_registry_and_config_errors():
    assert set(COLLECTORS) == {"proc_stat", "rusage", "vmstat", "diskstats", "perf", "phase"}
    with pytest.raises(ValueError, match="unknown collector"):
        build_collectors({"vmstats": True})
    with pytest.raises(ValueError, match="has none"):
        build_collectors({"diskstats": True}, device=None)
    with pytest.raises(ValueError, match="missing end"):
        build_collectors({"phase": {"name": "x", "start": "a:b"}})
    with pytest.raises(ValueError, match="pair must be"):
        build_collectors({"phase": {"name": "x", "start": "a:b", "end": "a:c", "pair": "tid"}})
    with pytest.raises(ValueError, match="not an event"):
        build_collectors({"perf": ["-a"]})
    built = build_collectors(
        {"proc_stat": True, "rusage": False, "vmstat": ["pgfault"], "diskstats": "vda", "perf": ["sched:sched_switch"]}
    )
    assert [type(c) for c in built] == [PerfCounts, ProcStat, VmStat, DiskStats]  # perf's start-up outside the others


def test_parse_perf_csv():
    text = "# started on x\n\n3,,block:block_rq_complete,2006089456,100.00,,\n<not supported>,,cycles,0,100.00,,\nEvents enabled\n"
    assert parse_perf_csv(text) == {"block:block_rq_complete": ("3", 100.0), "cycles": ("<not supported>", 100.0)}


def test_parse_raw_trace_and_pairing():
    text = "# tracer: nop\n#\n7831 1 1000 type: 2104\n0 1 1500 type: 2107\nCPU:0 [LOST 12 EVENTS]\n"
    events, lost = parse_raw_trace(text)
    assert events == [(1000, 7831), (1500, 0)] and lost == 12
    starts = [(100, 1), (110, 2), (300, 1)]
    ends = [(150, 2), (160, 1), (400, 3)]
    # global: FIFO, 400 closes 300; pid: 300 (pid 1) stays open, 400 (pid 3) has no start
    assert pair_phases(starts, ends, "global") == ((150 - 100) + (160 - 110) + (400 - 300), 3, 0)
    assert pair_phases(starts, ends, "pid") == ((150 - 110) + (160 - 100), 2, 2)
    # the global sum does not depend on which starts and ends pair up
    assert pair_phases([(0, 1), (10, 2)], [(30, 2), (50, 1)], "global")[0] == 70
    assert paired_durations(starts, ends, "global") == ([150 - 100, 160 - 110, 400 - 300], 0)


def test_diskstats_field_mapping():
    line = "   7       1 loop1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"
    stats = read_diskstats("loop1", line)
    assert stats["reads"] == 1 and stats["read_sectors"] == 3 and stats["writes"] == 5
    assert stats["write_sectors"] == 7 and stats["in_flight"] == 9 and stats["io_ms"] == 10
    assert stats["flushes"] == 16 and stats["flush_ms"] == 17
    with pytest.raises(CollectorError, match="no device 'sdz'"):
        read_diskstats("sdz", line)


def test_diskstats_bytes_and_mean_request_size():
    deltas = {field: 0.0 for field in diskstats.FIELDS} | {"reads": 517.0, "read_sectors": 32768.0}
    out = DiskStats("loop1").emit(deltas)
    assert out["disk.ios"] == 517 and out["disk.read_kib"] == 16384 and out["disk.write_kib"] == 0
    assert out["disk.read_req_kib"] == pytest.approx(16384 / 517)
    assert "disk.write_req_kib" not in out  # no write request: no mean size
    assert {k[5:] for k in out} == set(diskstats.FIELDS) | set(diskstats.DERIVED) - {"write_req_kib"}


# ---------------------------------------------------------- integration tests


def test_proc_stat_and_rusage_count_context_switches():
    cs = [ProcStat(), Rusage()]
    with collecting(cs) as m:
        subprocess.run([sys.executable, "-c", PINGPONG, "2000"], check=True)
    assert m["sys_ctx"] >= 4000
    assert m["rusage.ctx"] >= 2000  # the child and its grandchild, both waited for
    assert m["rusage.ctx"] == m["rusage.nvcsw"] + m["rusage.nivcsw"]
    assert m["sys_forks"] >= 2
    assert m["sys_cpu.user_s"] + m["sys_cpu.system_s"] > 0


def test_vmstat_deltas_patterns_and_gauges():
    c = VmStat(["pgfault", "pgscan_*", "nr_dirty"])
    with collecting([c]) as m:
        subprocess.run([sys.executable, "-c", "b = b'x' * (32 << 20)"], check=True)
    assert m["vmstat.pgfault"] >= (32 << 20) // 4096 // 2  # huge pages may serve part of it
    assert "vmstat.pgscan_kswapd" in m and "vmstat.pgscan_direct" in m
    assert m["vmstat.nr_dirty"] >= 0  # a snapshot, not a delta
    with pytest.raises(CollectorError, match="no key 'pgfoo'"):
        VmStat(["pgfoo"]).start()
    with collecting([VmStat()]) as m:
        pass
    assert "vmstat.pgmajfault" in m and "vmstat.workingset_refault_file" in m


@integration
def test_diskstats_on_a_loop_device(loopdev):
    with collecting([DiskStats(f"/dev/{loopdev}")]) as m:
        dd_write(loopdev, 4)
        dd_read(loopdev, 2)
    assert m["disk.write_sectors"] == 4 * 2048
    assert m["disk.read_sectors"] >= 2 * 2048
    assert m["disk.writes"] >= 4 and m["disk.reads"] >= 2
    assert m["disk.ios"] == m["disk.reads"] + m["disk.writes"]
    assert m["disk.write_kib"] == 4 * 1024 and m["disk.write_req_kib"] == 4 * 1024 / m["disk.writes"]
    assert m["disk.in_flight"] == 0


@integration
@needs_perf
def test_perf_counts_block_tracepoints(loopdev):
    disk = DiskStats(loopdev)
    perf = PerfCounts(["block:block_rq_issue", "block:block_rq_complete", "sched:sched_switch"])
    mounted = tracefs_mounted()
    with collecting([perf, disk]) as m:
        dd_write(loopdev, 8)
    assert tracefs_mounted() == mounted  # perf's own tracefs mount does not outlive the collector
    assert m["disk.writes"] >= 8
    assert m["perf.block:block_rq_complete"] >= m["disk.writes"]  # system-wide: the loop device and more
    assert m["perf.block:block_rq_issue"] >= m["disk.writes"]
    assert m["perf.sched:sched_switch"] > 0


@integration
@needs_perf
def test_perf_counts_only_inside_the_window():
    # getpriority(2): a syscall nothing else on the machine is likely to make
    perf = PerfCounts(["syscalls:sys_enter_getpriority"])
    try:
        perf.start()
        for _ in range(7):
            os.getpriority(os.PRIO_PROCESS, 0)
        out = perf.stop()
        for _ in range(50):
            os.getpriority(os.PRIO_PROCESS, 0)  # after "disable": not counted
    finally:
        perf.close()
    assert 7 <= out["perf.syscalls:sys_enter_getpriority"] < 50


def host_has_kprobe_events() -> bool:
    if not IS_ROOT:
        return False
    root = tracefs_acquire()
    try:
        return os.path.exists(os.path.join(root, "kprobe_events"))
    finally:
        tracefs_release()


@integration
@needs_perf
def test_a_kprobe_counts_a_kernel_functions_calls_and_is_removed_after():
    if not host_has_kprobe_events():
        pytest.skip("this host's kernel has no kprobe events (CONFIG_KPROBE_EVENTS); iolab's guest kernels have")
    perf = PerfCounts.from_config([{"kprobe": "__x64_sys_getpriority", "name": "iolab_test_getprio"}], None)[0]
    try:
        perf.start()
        root = perf._root
        assert os.path.isdir(os.path.join(root, "events", "iolab", "iolab_test_getprio"))
        for _ in range(7):
            os.getpriority(os.PRIO_PROCESS, 0)
        out = perf.stop()
    finally:
        perf.close()
    assert 7 <= out["perf.iolab_test_getprio"] < 50
    with open(os.path.join(root, "kprobe_events")) as f:
        assert "iolab_test_getprio" not in f.read()


@integration
@needs_perf
def test_a_kprobe_on_no_function_fails_with_the_kernels_words():
    perf = PerfCounts.from_config([{"kprobe": "no_such_function_iolab", "name": "nope"}], None)[0]
    words = ("kprobe on no_such_function_iolab: the kernel refused it" if host_has_kprobe_events()
             else r"no kprobe_events in tracefs \(CONFIG_KPROBE_EVENTS is off\)")
    with pytest.raises(CollectorError, match=words):
        with collecting([perf]):
            pass


# tracefs' error_log after a refused kprobe, as Linux 7.3 wrote it in a guest
ERROR_LOG = """[   13.046134] trace_kprobe: error: Invalid probed address or symbol
  Command: p:iolab/nope no_such_function_iolab
                        ^
"""


def test_a_refused_kprobe_names_the_kernels_reason_not_the_command(tmp_path):
    (tmp_path / "kprobe_events").write_text("")
    (tmp_path / "error_log").write_text(ERROR_LOG)
    assert kprobes._last_error(str(tmp_path)) == "Invalid probed address or symbol"
    (tmp_path / "error_log").write_text("")
    assert kprobes._last_error(str(tmp_path)) == ""


def test_a_kprobe_is_written_as_one_appended_line_and_removed(tmp_path):
    events = tmp_path / "kprobe_events"
    events.write_text("p:other/x y\n")
    kprobes.add(str(tmp_path), "bio_in_task", "__bio_complete_in_task")
    kprobes.remove(str(tmp_path), "bio_in_task")
    assert events.read_text() == "p:other/x y\np:iolab/bio_in_task __bio_complete_in_task\n-:iolab/bio_in_task\n"


def test_a_kprobe_entry_needs_a_function_and_a_name():
    with pytest.raises(ValueError, match="a kprobe is"):
        PerfCounts.from_config([{"kprobe": "f; rm -rf /", "name": "x"}], None)
    with pytest.raises(ValueError, match="an event is a name"):
        PerfCounts.from_config([{"kprobe": "f"}], None)


@integration
@needs_perf
def test_perf_unknown_and_unsupported_events_fail():
    perf = PerfCounts(["block:no_such_tracepoint"])
    with pytest.raises(CollectorError) as err:
        with collecting([perf]):
            pass
    assert "block:no_such_tracepoint" in str(err.value)
    hw = PerfCounts(["cycles"])
    try:
        with collecting([hw]) as m:
            pass
    except CollectorError as exc:
        assert "cycles" in str(exc)
    else:
        pytest.skip(f"hardware counters work on this machine ({m})")


def test_perf_missing_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    perf = PerfCounts(["block:block_rq_complete"])
    with pytest.raises(CollectorError, match="linux-perf"):
        perf.start()
    perf.close()


# A stand-in for perf stat: the same control protocol over the same pipes
# (--control fd:CTL,ACK; counts as CSV to -o on SIGINT), and a behaviour
# chosen by FAKE_PERF: "late" acks each command after 0.3 s, "silent" never
# acks, "exit" exits 3 at the first command without an ack.
FAKE_PERF = textwrap.dedent(
    """\
    import os, signal, sys, time
    argv = sys.argv[1:]
    ctl, ack = (int(fd) for fd in argv[argv.index("--control") + 1][3:].split(","))
    out = argv[argv.index("-o") + 1]
    def counts(*_):
        with open(out, "w") as f:
            f.write("5,,cycles,1000,100.00,,\\n")
        sys.exit(0)
    signal.signal(signal.SIGINT, counts)
    mode = os.environ["FAKE_PERF"]
    while True:
        os.read(ctl, 64)
        if mode == "exit":
            sys.stderr.write("fake perf: cannot open the counters\\n")
            sys.exit(3)
        if mode == "silent":
            time.sleep(60)
        time.sleep(0.3)
        os.write(ack, b"ack\\n")
    """
)


@pytest.fixture
def fake_perf(tmp_path, monkeypatch):
    script = tmp_path / "perf"
    script.write_text(f"#!{sys.executable}\n{FAKE_PERF}")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    return lambda mode: monkeypatch.setenv("FAKE_PERF", mode)


def test_perf_waits_for_a_late_ack_without_a_limit(fake_perf):
    fake_perf("late")
    perf = PerfCounts(["cycles"])
    perf.ack_timeout = None  # as in a VM guest
    with collecting([perf]) as m:
        pass
    assert m == {"perf.cycles": 5.0}


def test_perf_exit_ends_the_wait_with_its_words(fake_perf):
    # no timer polls perf: its exit closes the ack pipe, which ends the wait
    fake_perf("exit")
    perf = PerfCounts(["cycles"])
    perf.ack_timeout = 30.0  # a limit only so that a wait the exit does not end fails instead of hanging
    started = time.monotonic()
    with pytest.raises(CollectorError, match=r"perf stat failed \(exit 3\).*cannot open the counters"):
        perf.start()
    perf.close()
    assert time.monotonic() - started < 10


def test_perf_silent_runs_out_of_the_hosts_limit(fake_perf):
    fake_perf("silent")
    perf = PerfCounts(["cycles"])
    perf.ack_timeout = 0.5
    with pytest.raises(CollectorError, match="perf did not acknowledge 'enable' within 0.5 s"):
        perf.start()
    perf.close()


def test_ack_timeout_none_in_an_iolab_guest(tmp_path):
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("console=ttyS0 rdinit=/init 8250.nr_uarts=1 iolab.bus=mmio tsc=reliable\n")
    assert ack_timeout(str(cmdline)) is None
    cmdline.write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n")
    assert ack_timeout(str(cmdline)) == ACK_TIMEOUT
    assert ack_timeout(str(tmp_path / "missing")) == ACK_TIMEOUT
    # the mark is on the command line iolab's VM host gives its guests (the golden file is that command line)
    golden = Path(__file__).parent / "golden" / "qemu-microvm-tcg.txt"
    assert GUEST_MARK in golden.read_text()


@integration
def test_phase_pid_pairs_fsync_enter_exit(tmp_path):
    pid = os.getpid()
    mounted = tracefs_mounted()
    phase = TracePhase(
        "fsync",
        "syscalls:sys_enter_fsync",
        "syscalls:sys_exit_fsync",
        start_filter=f"common_pid == {pid}",
        end_filter=f"common_pid == {pid}",
        pair="pid",
    )
    fd = os.open(tmp_path / "f", os.O_CREAT | os.O_WRONLY)
    try:
        with collecting([phase]) as m:
            for _ in range(10):
                os.write(fd, b"x" * 4096)
                os.fsync(fd)
            assert len(tracefs_instances()) == 2
    finally:
        os.close(fd)
    assert m["phase.fsync_count"] == 10
    assert m["phase.fsync_unmatched"] == 0
    assert m["phase.fsync_ns"] > 0
    assert tracefs_instances() == set()
    assert tracefs_mounted() == mounted  # mounted for the window only if it was not before


@integration
def test_phase_closed_when_the_workload_fails():
    phase = TracePhase("x", "block:block_rq_issue", "block:block_rq_complete")
    with pytest.raises(RuntimeError):
        with collecting([ProcStat(), phase]):
            assert len(tracefs_instances()) == 2
            raise RuntimeError("workload failed")
    assert tracefs_instances() == set()


@integration
def test_phase_same_event_told_apart_by_filters():
    """Start and end are one tracepoint with different filters: the phase is
    the time from a write to fd A to the next write to fd B (20 ms apart)."""
    import time

    pid = os.getpid()
    a, b = os.open("/dev/null", os.O_WRONLY), os.open("/dev/null", os.O_WRONLY)
    phase = TracePhase(
        "gap",
        "syscalls:sys_enter_write",
        "syscalls:sys_enter_write",
        start_filter=f"common_pid == {pid} && fd == {a}",
        end_filter=f"common_pid == {pid} && fd == {b}",
    )
    try:
        with collecting([phase]) as m:
            for _ in range(5):
                os.write(a, b"s")
                time.sleep(0.02)
                os.write(b, b"e")
    finally:
        os.close(a)
        os.close(b)
    assert m["phase.gap_count"] == 5 and m["phase.gap_unmatched"] == 0
    assert 5 * 20e6 <= m["phase.gap_ns"] < 5 * 20e6 + 100e6


@integration
def test_phase_block_requests_on_a_loop_device(loopdev):
    flt = "dev == {devt}"
    phase = TracePhase(
        "rq", "block:block_rq_issue", "block:block_rq_complete", start_filter=flt, end_filter=flt, device=loopdev
    )
    assert f"dev == {dev_t(loopdev)}" == phase.ends[0][2]
    disk = DiskStats(loopdev)
    with collecting([disk, phase]) as m:
        dd_write(loopdev, 4)
        dd_read(loopdev, 2)
    assert m["phase.rq_count"] == m["disk.ios"] > 0
    assert m["phase.rq_unmatched"] == 0
    assert m["phase.rq_ns"] > 0


@integration
def test_phase_lost_events_fail_the_sample():
    pid = os.getpid()
    phase = TracePhase(
        "getppid",
        "syscalls:sys_enter_getppid",
        "syscalls:sys_exit_getppid",
        start_filter=f"common_pid == {pid}",
        end_filter=f"common_pid == {pid}",
        pair="pid",
        buffer_size_kb=4,  # one page per CPU: overflows after a few hundred events
    )
    with pytest.raises(CollectorError) as err:
        with collecting([phase]):
            for _ in range(50_000):
                os.getppid()
    msg = str(err.value)
    assert "tracefs lost" in msg and "events on cpu" in msg and "enlarge buffer_size_kb" in msg
    assert tracefs_instances() == set()  # closed although stop() failed


@integration
def test_phase_bad_filter_and_unknown_tracepoint():
    bad = TracePhase("x", "block:block_rq_issue", "block:block_rq_complete", start_filter="no_such_field == 1")
    with pytest.raises(CollectorError, match="Field not found|Invalid argument"):
        with collecting([bad]):
            pass
    missing = TracePhase("x", "nosys:nothing", "block:block_rq_complete")
    with pytest.raises(CollectorError, match="no tracepoint nosys:nothing"):
        with collecting([missing]):
            pass
    assert tracefs_instances() == set()


def test_collecting_rejects_duplicate_metrics():
    with pytest.raises(CollectorError, match="two collectors emit"):
        with collecting([ProcStat(), ProcStat()]):
            pass
