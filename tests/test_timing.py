"""Instructions mode and exact verdicts: the switch and its refusals, the
units every format prints, exact comparisons of values that do not vary.

The real boot under -icount is in tests/test_vm_boot.py.
"""

from dataclasses import replace
import csv
import io
import json
import math

import numpy as np
import pytest

from iolab.cli import gate
from iolab import stats
from iolab.analysis import history, metrics
from iolab.analysis.reports import baseline_report, compare_report, run_report
from iolab.cell import environment
from iolab.hosts.vm import qemu as vm
from iolab.kernels import Kernel
from iolab.report import renderer
from iolab.run import adaptive, runner
from iolab.spec import SpecError
from iolab.store import Store, StoreError
from tests.fakes import ScriptedHost, ShapedHost
from tests.helpers import check_golden, experiment

KERNEL = "debian:6.1.0-56-amd64"
TIME_UNITS = ("us", "ns", "ms", "MiB/s", "IOPS", "µs", "usecs", "latency")


# -- exact comparisons (iolab.stats.exact) ---------------------------------------------


def test_identical_values_are_an_exact_same_with_a_delta_of_zero():
    c = stats.compare_exact([8.66] * 3, [8.66] * 3, higher_is_better=False, paired=True)
    assert c.exact == "identical" and c.verdict == "same" and c.delta == 0.0
    assert math.isnan(c.p) and math.isnan(c.delta_low) and math.isnan(c.delta_high)


def test_identical_but_different_values_are_an_exact_change_in_its_direction():
    c = stats.compare_exact([8.660] * 3, [1.347] * 3, higher_is_better=False)
    assert c.exact == "identical" and c.verdict == "better"
    assert c.delta == pytest.approx(1.347 / 8.660 - 1)
    worse = stats.compare_exact([100.0, 100.0], [90.0, 90.0], higher_is_better=True)
    assert worse.verdict == "worse"


def test_values_within_the_tolerance():
    base, cand = [1000.0, 1004.0, 1002.0], [1500.0, 1503.0, 1501.0]
    assert stats.compare_exact(base, cand, higher_is_better=False) is None  # not identical: tests judge
    c = stats.compare_exact(base, cand, higher_is_better=False, tolerance=0.01)
    assert c.exact == "tolerance" and c.verdict == "worse" and c.tolerance == 0.01
    assert c.resolution == pytest.approx(3 * (4 + 3) / 1002)
    # overlapping values are "same": no change beyond their own spread
    near = stats.compare_exact(base, [1003.0, 1005.0, 1006.0], higher_is_better=False, tolerance=0.01)
    assert near.verdict == "same" and 0 < near.delta < 0.01
    # beyond the tolerance with overlapping values: not exact
    assert stats.compare_exact([100.0, 100.9], [100.5, 102.0], higher_is_better=False, tolerance=0.01) is None


def test_a_change_smaller_than_the_tolerance_is_found_when_the_values_are_apart_beyond_their_spread():
    """Issue 29's pwrite_u10k: 12.444196 kinsn in every base round, 12.4942-12.4946
    patched: +0.4%, spread 0.003%: an exact change, however small beside the 1% tolerance."""
    c = stats.compare_exact([12.444196] * 3, [12.4942, 12.4946, 12.4944], higher_is_better=False, tolerance=0.01)
    assert c.exact == "tolerance" and c.verdict == "worse" and c.delta == pytest.approx(0.004, abs=2e-4)
    tenth = stats.compare_exact([1000.0, 1000.01, 1000.02], [1001.0, 1001.02, 1001.01], higher_is_better=True,
                                tolerance=0.01)
    assert tenth.verdict == "better" and tenth.delta == pytest.approx(0.001, rel=1e-3)
    # identical on each side: any difference is a change, from 2 rounds on
    assert stats.compare_exact([7.61036] * 2, [7.61037] * 2, higher_is_better=False).verdict == "worse"


def test_values_apart_by_less_than_their_spread_or_varying_over_two_rounds_are_not_exact():
    # apart (every value beyond the other side's), yet by less than 3 times their ranges: the tests judge
    assert stats.compare_exact([1000.0, 1001.0, 1002.0], [1003.0, 1004.0, 1005.0], higher_is_better=True,
                               tolerance=0.01) is None
    # two rounds that vary: a gap of 3 times their ranges could be chance (1.3% of A/A pairs), so only a gap
    # beyond 100 times decides (0.0015% of A/A pairs); below it a third round is needed
    assert stats.compare_exact([1000.0, 1000.1], [1010.0, 1010.1], higher_is_better=True, tolerance=0.01) is None
    assert stats.compare_exact([1000.0, 1000.0], [1010.0, 1010.2], higher_is_better=True, tolerance=0.01) is None
    two = stats.compare_exact([1000.0, 1000.01], [1010.0, 1010.01], higher_is_better=True, tolerance=0.01)
    assert two.verdict == "better" and two.resolution == pytest.approx(3 * 0.02 / 1000.005)
    # seed 004's pwrite_u10k over two boots (kinsn/call): a timer tick's worth apart in nofix, 28.6% from fix
    seed = stats.compare_exact([16.80907, 16.83516], [12.00307, 12.00307], higher_is_better=False, tolerance=0.01)
    assert seed.verdict == "better" and seed.delta == pytest.approx(12.00307 / 16.822115 - 1)
    # overlapping after two rounds: "same", no change beyond their spread
    assert stats.compare_exact([1000.0, 1000.02], [1000.01, 1000.03], higher_is_better=True,
                               tolerance=0.01).verdict == "same"


@pytest.mark.parametrize("jitter", ["normal", "t3"])
def test_the_separation_rule_almost_never_fires_on_an_a_a_and_always_on_a_tenth_of_a_percent(jitter):
    """Both variants drawn from one jitter (an A/A), 3 rounds each: a change in
    at most 0.05% of 4000 comparisons (normal: 0.01% expected); a 0.1% shift
    with a jitter of 0.003% (issue 29's spread) is found every time."""
    rng = np.random.default_rng(29)
    draw = (lambda size: rng.normal(size=size)) if jitter == "normal" else (lambda size: rng.standard_t(3, size))
    changes = found = 0
    for _ in range(4000):
        a, b = 1e4 + draw(3), 1e4 + draw(3)  # a stddev of 0.01% of the value
        c = stats.compare_exact(a, b, higher_is_better=True, tolerance=0.01)
        changes += c is not None and c.verdict != "same"
    for _ in range(200):
        a, b = 1e6 + 10 * draw(3), 1.001e6 + 10 * draw(3)  # 0.001% stddev, a 0.1% change
        c = stats.compare_exact(a, b, higher_is_better=True, tolerance=0.01)
        found += c is not None and c.verdict == "better"
    assert changes <= 2 and found >= 199


def test_the_candidate_equal_to_the_baseline_in_every_round_is_an_exact_same():
    values = [5.0, 6.0, 5.0, 7.0]
    c = stats.compare_exact(values, values, higher_is_better=False, paired=True)
    assert c.exact == "paired" and c.verdict == "same" and c.delta == 0.0
    assert stats.compare_exact(values, values, higher_is_better=False, paired=False) is None


def test_one_round_or_varying_values_are_not_exact():
    assert stats.compare_exact([1.0], [1.0], higher_is_better=True) is None
    assert stats.compare_exact([1.0, 1.1, 0.9], [1.0, 1.0, 1.0], higher_is_better=True) is None
    with pytest.raises(stats.Refusal):
        stats.compare_exact([1.0, 1.0], [1.0, 1.0], higher_is_better=True, tolerance=-0.1)


def test_decide_keeps_exact_verdicts_out_of_the_family():
    exact = stats.compare_exact([2.0] * 6, [1.0] * 6, higher_is_better=False, paired=True)
    tested = stats.compare_paired([1, 2, 3, 4, 5, 6], [1.1, 2.2, 3.3, 4.4, 5.5, 6.6], higher_is_better=False)
    decided = stats.decide([exact, tested], 0.05, "holm")
    assert decided[0].verdict == "better" and decided[0].exact == "identical"
    assert decided[1].p_adjusted == tested.p  # a family of one: Holm multiplies by 1
    assert adaptive.state(decided[0], 0.01) == "exact"


# -- the switch and its refusals ---------------------------------------------------------


def vm_experiment(vm_table=None, run=None, kernel=KERNEL, target=None, **extra):
    """Two variants booting the same kernel, a probe workload; the run table given, else the defaults."""
    return experiment([{"name": "nofix", "kernel": kernel}, {"name": "fix", "kernel": kernel}], name="icount",
                      target=target or {"fs": "ext4", "size": "64MiB"}, run=run, report=None,
                      workload=[{"name": "w1k", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}],
                      vm={"memory": "1GiB", **(vm_table or {})}, **extra)


def test_instructions_mode_defaults_to_3_rounds_1_vcpu_and_the_image_in_memory():
    wall = vm_experiment()
    assert wall.timing == "wall" and wall.run.iterations == 8 and wall.vm.cpus == 2 and wall.tolerance == 0
    assert wall.vm.disk == "virtio"
    exact = vm_experiment({"timing": "instructions"})
    assert exact.timing == "instructions" and exact.run.iterations == 3 and exact.vm.cpus == 1
    assert exact.tolerance == 0.01 and exact.vm.disk == "ram"
    assert vm_experiment({"timing": "instructions"}, {"iterations": 5}).run.iterations == 5
    assert vm_experiment({"timing": "instructions", "disk": "virtio"}).vm.disk == "virtio"  # as the file says


def test_instructions_mode_needs_two_rounds_to_call_anything_exact():
    from iolab.run import dryrun

    assert dryrun.undecidable(vm_experiment({"timing": "instructions"}, {"iterations": 2})) == ""
    refusal = dryrun.undecidable(vm_experiment({"timing": "instructions"}, {"iterations": 1}))
    assert "takes 2 rounds or more (--iterations 2)" in refusal


def test_an_image_in_memory_needs_twice_its_size_of_vm_memory():
    assert vm_experiment({"disk": "ram", "memory": "256MiB"}).vm.disk == "ram"  # 64 MiB image
    with pytest.raises(SpecError) as error:
        vm_experiment({"timing": "instructions", "memory": "256MiB"}, target={"fs": "ext4", "size": "200MiB"})
    message = str(error.value)
    assert "vm.memory: 256 MiB is too little for a 200 MiB image" in message
    assert 'memory = "400MiB"' in message and 'disk = "virtio"' in message
    assert vm_experiment({"timing": "instructions", "memory": "256MiB", "disk": "virtio"},
                         target={"fs": "ext4", "size": "200MiB"}).vm.disk == "virtio"


@pytest.mark.parametrize("vm_table, words", [
    ({"timing": "instructions", "accel": "kvm"}, ["vm", "KVM", "TCG"]),
    ({"timing": "instructions", "icount_shift": "auto"}, ["icount_shift", "adaptive"]),
    ({"timing": "instructions", "icount_shift": 3}, ["icount_shift", "must be 0"]),
    ({"timing": "cycles"}, ["vm.timing"]),
])
def test_refusals_say_why(vm_table, words):
    with pytest.raises(SpecError) as error:
        vm_experiment(vm_table)
    for word in words:
        assert word in str(error.value)


def test_instructions_mode_needs_a_vm():
    with pytest.raises(SpecError, match="every variant needs a kernel"):
        experiment(("a", "b"), vm={"timing": "instructions"},
                   workload=[{"name": "w", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}])


def test_the_cli_switch_keeps_what_the_file_set(tmp_path, capsys):
    from iolab import cli

    path = tmp_path / "exp.toml"
    path.write_text(f'name = "x"\n[[variant]]\nname = "a"\nkernel = "{KERNEL}"\n[[variant]]\nname = "b"\n'
                    f'kernel = "{KERNEL}"\n[[workload]]\nname = "w"\nengine = "probe"\n'
                    'probe = { mode = "batch", case = "write_u1k" }\n[target]\nsize = "256MiB"\n'
                    '[vm]\nmemory = "1GiB"\n')
    assert cli.main(["run", str(path), "--timing", "instructions", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("x: 6 cells")  # 3 rounds x 2 variants
    assert "  w: primary kinsn/call" in out and "us/call" not in out  # the plan's rows in its units
    assert cli.main(["run", str(path), "--dry-run"]) == 0
    assert "  w: primary us/call" in capsys.readouterr().out
    path.write_text(path.read_text() + "accel = \"kvm\"\n")
    assert cli.main(["run", str(path), "--timing", "instructions", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "--timing instructions: " in err and "vm: timing" in err and "KVM" in err
    assert vm_experiment({"timing": "instructions", "cpus": 2}).vm.cpus == 2  # as the file says


def kernel(tmp_path) -> Kernel:
    return Kernel(name=KERNEL, kver="6.1.0-56-amd64", directory=tmp_path, image=tmp_path / "vmlinux", pvh=True,
                  initramfs=tmp_path / "initramfs.cpio", moddir=None, manifest={})


def test_qemu_argv_in_instructions_mode(tmp_path):
    common = dict(memory_mib=1024, cpus=1, machine="microvm", accel="tcg", xchg=tmp_path, console=tmp_path / "c",
                  disks=[], tsc_khz=vm.guest_tsc_khz("instructions"))
    argv = vm.qemu_argv(kernel(tmp_path), **common, timing="instructions")
    assert argv[argv.index("-accel") + 1] == "tcg,thread=single"
    assert argv[argv.index("-icount") + 1] == "shift=0,sleep=off"
    append = argv[argv.index("-append") + 1].split()
    assert "tsc_early_khz=1000000" in append and "norandmaps" in append
    assert "iolab.sched=NO_DELAY_DEQUEUE" in append  # the guest sets it (guest.sched_features)
    wall = vm.qemu_argv(kernel(tmp_path), **{**common, "tsc_khz": 2_000_000})
    assert "-icount" not in wall and "norandmaps" not in wall[wall.index("-append") + 1]
    assert "iolab.sched" not in wall[wall.index("-append") + 1]
    with pytest.raises(ValueError, match="single-threaded TCG"):
        vm.qemu_argv(kernel(tmp_path), **{**common, "accel": "kvm"}, timing="instructions")
    with pytest.raises(ValueError, match="single-threaded TCG"):
        vm.qemu_argv(kernel(tmp_path), **common, tcg_thread="multi", timing="instructions")
    assert vm_experiment({"timing": "instructions"}).vm.accel_setting == "tcg"
    assert vm.tcg_threading(1, "instructions") == "single"


def test_the_timing_mode_is_a_checked_key_of_the_environment():
    for key in ("vm.timing", "vm.icount_shift", "vm.qemu"):
        assert key in environment.CHECKED
    assert environment.lookup({"vm": {"timing": "instructions"}}, "vm.timing") == "instructions"
    assert environment.lookup({"vm": None}, "vm.timing") is None
    settings = vm_experiment({"timing": "instructions"}).vm
    assert vm.timing_env(settings) == {"timing": "instructions", "icount_shift": 0, "guest_tsc_khz": 1_000_000}


# -- units -----------------------------------------------------------------------------


def test_no_instruction_count_is_called_a_time():
    names = [*metrics.KNOWN, "phase.flush_last_ns", "sys_cpu.user_s", "rusage.utime_us", "x_ms"]
    for name in names:
        metric = metrics.lookup(name, "instructions")
        words = metric.label.replace("/", " ").split() + [metric.unit]
        assert not set(words) & {"us", "ns", "ms", "s", "MiB/s", "IOPS"}, (name, metric)
    assert metrics.lookup("per_call", "instructions").label == "kinsn/call"
    assert metrics.lookup("lat_p50", "instructions").label == "median insn/op"
    assert metrics.lookup("read_bw", "instructions").unit == "MiB/Ginsn"
    assert metrics.lookup("phase.flush_last_ns", "instructions").label == "flush_last insn"
    assert metrics.lookup("vm.boot_s", "instructions").unit == "s"  # the host's clock: a real time
    assert metrics.lookup("per_call") == metrics.KNOWN["per_call"]  # wall mode unchanged


# what each metric outside the catalogue measures, and its unit in (wall, instructions) mode
MEASURED = {
    "host.settle_s": ("s", "guest s"),  # a wait (pauses of 0.1 s): the guest clock's jumps, not instructions
    "host.other_cpu_s": ("s", "guest s"),  # other processes' CPU, in clock ticks: never the workload's instructions
    "host.steal_s": ("s", "guest s"),
    "disk.read_ms": ("ms", "guest ms"),  # the device's time
    "host.disk_busy_ms": ("ms", "guest ms"),
    "sys_cpu.idle_s": ("s", "guest s"),
    "vm.boot_s": ("s", "s"),  # the host's real time
    "sys_cpu.user_s": ("s", "Ginsn"),  # the guest's CPU at work: instructions
    "rusage.utime_s": ("s", "Ginsn"),
    "host.dirty_kib": ("KiB", "KiB"),
    "cgroup.memory_peak_bytes": ("B", "B"),
    "disk.reads": ("count", "count"),  # a count
}


def test_no_format_gives_a_wait_or_a_host_time_an_instruction_unit(tmp_path, monkeypatch):
    for name, units in MEASURED.items():
        assert (metrics.lookup(name).unit, metrics.lookup(name, "instructions").unit) == units, name
        assert metrics.counts_instructions(units[1]) == (name in ("sys_cpu.user_s", "rusage.utime_s"))
    extra = {name: 1.0 + i for i, name in enumerate(MEASURED)}
    host = ShapedHost({"nofix": 100.0, "fix": 125.0}, lambda cell, m: m.update(extra), noise=0.0)
    shown = ["read_bw", "host.settle_s", "disk.read_ms", "sys_cpu.user_s"]
    exp = experiment([{"name": v, "kernel": KERNEL} for v in ("nofix", "fix")], name="units",
                     run={"seed": 5, "iterations": 3}, vm={"timing": "instructions", "disk": "ram"},
                     report={"metrics": shown}, collect={"proc_stat": True})
    store = Store(tmp_path / "units.db")
    report = run_report(store, runner.run(exp, store, host=host))
    rows = list(csv.DictReader(io.StringIO(renderer("csv")(report))))
    assert {(r["metric"], r["unit"]) for r in rows if r["metric"] in MEASURED} == {
        (name, units[1]) for name, units in MEASURED.items()}
    document = json.loads(renderer("json")(report))
    assert {(c["metric"], c["unit"]) for c in document["comparisons"]} >= {
        ("host.settle_s", "guest s"), ("disk.read_ms", "guest ms"), ("sys_cpu.user_s", "Ginsn")}
    text = renderer("text")(replace(report, verbose=True))  # the header in full says the units
    assert "host.settle guest s" in text and "settle Ginsn" not in text and "read Minsn" not in text
    assert "a wait's unit is the guest clock's" in " ".join(text.split())
    bench = renderer("benchstat")(report)
    assert "guest_s-host.settle_s" in bench and "Ginsn-host.settle_s" not in bench


def scripted_run(tmp_path, monkeypatch, levels, *, timing="instructions", noise=0.0, iterations=None,
                 store=None, name="exact"):
    exp = experiment([{"name": v, "kernel": KERNEL} for v in levels], name=name,
                     run={"seed": 5, **({"iterations": iterations} if iterations else {})},
                     vm={"timing": timing, "disk": "ram", **({} if timing == "instructions" else {"cpus": 1})})
    store = store or Store(tmp_path / "timing.db")
    run_id = runner.run(exp, store, host=ScriptedHost(levels, noise=noise))
    return store, run_id


def test_every_format_says_instructions(tmp_path, monkeypatch):
    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0})
    report = run_report(store, run_id)
    text = renderer("text")(report)
    check_golden("instructions.txt", text)
    assert "instructions mode" in text and "rd p50 kinsn" in text and "rd BW MiB/Ginsn" in text
    flat = " ".join(text.split())
    assert "=* an exact change" in flat and "deterministic over 2 rounds" in flat
    for fmt in ("text", "markdown", "html"):
        output = renderer(fmt)(report)
        assert " us " not in output and "p50 us" not in output and "MiB/s" not in output, fmt
        assert "instructions mode" in output
    document = json.loads(renderer("json")(report))
    assert document["timing"] == {"mode": "instructions", "icount_shift": 0, "sleep": "off", "io_changed": [],
                                  "warnings": []}
    assert {c["unit"] for c in document["comparisons"]} == {"MiB/Ginsn", "kinsn", "count"}
    assert {c["exact"] for c in document["comparisons"]} == {"identical"}
    assert all(c["p"] is None and c["delta_ci"] == [None, None] for c in document["comparisons"])
    rows = list(csv.DictReader(io.StringIO(renderer("csv")(report))))
    assert {r["unit"] for r in rows if r["metric"] in ("read_bw", "read_p50")} == {"MiB/Ginsn", "kinsn"}
    bench = renderer("benchstat")(report)
    assert "timing: instructions" in bench and "kinsn-read_p50" in bench and "us-" not in bench
    assert "CDF of instructions per I/O" in renderer("html")(report)


def test_an_exact_change_and_an_exact_aa(tmp_path, monkeypatch):
    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0, "fix2": 100.0})
    result = run_report(store, run_id).analysis
    rows = {row.metric.name: row for row in result.rows}
    assert rows["read_bw"].comparisons["fix"].verdict == "better"
    assert rows["read_bw"].comparisons["fix"].delta == pytest.approx(0.25)
    aa = rows["read_bw"].comparisons["fix2"]
    assert aa.verdict == "same" and aa.delta == 0.0 and aa.exact == "identical"
    text = renderer("text")(result)
    assert "+25.0% =*" in text and "+0.0% =\n" in text  # an exact change is told from an exact same
    flat = " ".join(text.split())
    assert "=* an exact change" in flat and "= exact, no change beyond the values' spread" in flat
    outcome = gate.check(result, gate.parse("regression"))
    assert outcome.passed and outcome.checked == 4


def test_an_exact_calibration_names_no_test(tmp_path, monkeypatch):
    from iolab.report.calibration import render_text
    from iolab.run import calibrate

    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "nofix'": 100.0}, noise=0.001)
    samples = store.samples(run_id)
    found = calibrate.calibrate(run_report(store, run_id).analysis, samples)
    assert {row.aa.exact for row in found.rows} == {"identical", "tolerance"}
    assert all(row.detectable == row.aa.resolution and row.false_positive is None for row in found.rows)
    assert {row.detectable > 0 for row in found.rows} == {True, False}  # identical rows: any change shows
    text = " ".join(render_text(found).split())
    assert "= exact: every row's values repeat" in text and "> ±0." in text and " any " in text
    assert "Wilcoxon" not in text and "A/A FP:" not in text  # no test named, no A/A rate


def test_an_exact_regression_fails_the_gate(tmp_path, monkeypatch):
    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 125.0, "fix": 100.0})
    outcome = gate.check(run_report(store, run_id).analysis, gate.parse("regression:5%"))
    assert not outcome.passed
    assert any("exact (deterministic over 2 rounds)" in line for line in outcome.regressions)


def test_values_that_vary_get_the_usual_test(tmp_path, monkeypatch):
    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0}, noise=0.05,
                                 iterations=8)
    row = next(r for r in run_report(store, run_id).analysis.rows if r.metric.name == "read_bw")
    assert row.comparisons["fix"].exact is None and row.comparisons["fix"].test == "signed-rank"


def test_wall_mode_identical_values_are_exact_too(tmp_path, monkeypatch):
    """An A/A whose every value is equal is an exact "same" in wall mode, no refusal."""
    store, run_id = scripted_run(tmp_path, monkeypatch, {"a": 100.0, "b": 100.0}, timing="wall", iterations=8)
    result = run_report(store, run_id).analysis
    assert all(c.exact == "identical" and c.verdict == "same" and c.delta == 0
               for row in result.rows for c in row.comparisons.values())
    assert gate.check(result, gate.parse("regression")).passed
    assert "instructions" not in renderer("text")(result)


def test_compare_history_and_baseline_refuse_to_mix_modes(tmp_path, monkeypatch):
    store, wall = scripted_run(tmp_path, monkeypatch, {"a": 100.0, "b": 110.0}, timing="wall", iterations=4)
    _, exact = scripted_run(tmp_path, monkeypatch, {"a": 100.0, "b": 110.0}, store=store)
    with pytest.raises(StoreError, match="not comparable"):
        compare_report(store, wall, exact)
    store.save_baseline("main", wall)
    with pytest.raises(StoreError, match="run 1 wall, run 2 instructions"):
        baseline_report(store, "main", exact)
    found = history.history(store, "read_bw", experiment="exact")
    assert [r.id for r in found.runs] == [exact] and found.metric.unit == "MiB/Ginsn"
    assert "run 1 left out" in found.notes[0]
    assert [r.id for r in history.history(store, "read_bw", experiment="exact", timing="wall").runs] == [wall]
    _, again = scripted_run(tmp_path, monkeypatch, {"a": 100.0, "b": 110.0}, store=store)
    both = compare_report(store, exact, again)
    assert "instructions mode" in renderer("text")(both)
    assert "a wait's unit is the guest clock's" in " ".join(renderer("text")(replace(both, verbose=True)).split())
    assert both.analysis.experiment.timing == "instructions"


def test_values_within_the_tolerance_are_exact_and_the_legend_names_them(tmp_path, monkeypatch):
    store, run_id = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0}, noise=0.001)
    result = run_report(store, run_id).analysis
    bw = next(r for r in result.rows if r.metric.name == "read_bw").comparisons["fix"]
    assert bw.exact == "tolerance" and bw.verdict == "better" and bw.tolerance == 0.01
    text = " ".join(renderer("text")(result).split())
    assert "within ±1.0% of each other, a change seen beyond ±" in text and ": randread rd BW MiB/Ginsn" in text
    assert "(identical values: randread rd p50 kinsn" in text  # the others, by name
    assert "every value of each variant identical" not in text


# -- the rounds an instructions run pays for ---------------------------------------------


def test_two_rounds_when_every_primary_comparison_is_exact_a_third_when_values_vary(tmp_path, monkeypatch):
    store, exact = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0})
    assert store.run(exact).stop_reason == adaptive.ALL_EXACT
    assert {s.round for s in store.samples(exact)} == {0, 1}
    # values that vary (within the tolerance) cannot be decided after two rounds: the third runs
    store, varying = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0}, noise=0.001,
                                  store=store)
    assert store.run(varying).stop_reason is None and {s.round for s in store.samples(varying)} == {0, 1, 2}
    bw = next(r for r in run_report(store, varying).analysis.rows if r.metric.name == "read_bw")
    assert bw.comparisons["fix"].exact == "tolerance" and bw.comparisons["fix"].verdict == "better"
    # rounds asked for are all run
    store, asked = scripted_run(tmp_path, monkeypatch, {"nofix": 100.0, "fix": 125.0}, iterations=3, store=store)
    assert {s.round for s in store.samples(asked)} == {0, 1, 2}


def test_exact_stop_is_the_default_only_where_the_file_sets_no_rounds():
    assert vm_experiment({"timing": "instructions"}).run.exact_stop
    assert not vm_experiment({"timing": "instructions"}, {"iterations": 3}).run.exact_stop
    assert not vm_experiment().run.exact_stop
    with pytest.raises(SpecError, match="exact_stop"):
        vm_experiment({"timing": "instructions"}, {"iterations": 2, "exact_stop": True})


def test_the_guest_sets_the_scheduler_features_its_command_line_names(tmp_path):
    """In instructions mode the guest turns EEVDF's delayed dequeue off (a SQPOLL job on 1 vCPU flipped
    between 24 and 29-106 guest ms with it: bench/data/sqpoll-aa-2026-11-28.txt); each feature is
    written to sched/features, and one a kernel does not have is said, not fatal."""
    from iolab.hosts.vm import guest

    features = tmp_path / "features"
    features.write_text("")
    assert guest.sched_features("console=ttyS0 norandmaps", features) == {}
    assert guest.sched_features("quiet iolab.sched=NO_DELAY_DEQUEUE loglevel=4", features) == {
        "NO_DELAY_DEQUEUE": "set"}
    assert features.read_text() == "NO_DELAY_DEQUEUE"
    missing = guest.sched_features("iolab.sched=NO_DELAY_DEQUEUE", tmp_path / "no-debugfs" / "features")
    assert missing["NO_DELAY_DEQUEUE"].startswith("not set: ")
