"""The modeled device ([vm] disk = "model"): a null_blk whose completions are
guest timers, in instructions mode; its parameters, its boot arguments, its
unit (modeled ns: instructions plus the device's modeled waits) in every
format, and the refusals.

The real boot is in tests/test_vm_boot.py (test_the_modeled_device_repeats).
"""

from dataclasses import replace
import csv
import io
import json

import pytest

from iolab import cli
from iolab.analysis import metrics
from iolab.analysis.reports import compare_report, run_report
from iolab.cell import environment
from iolab.hosts.vm import qemu
from iolab.report import renderer
from iolab.run import runner
from iolab.spec import SpecError
from iolab.store import Store, StoreError
from tests.fakes import ScriptedHost
from tests.helpers import experiment

KERNEL = "debian:6.1.0-56-amd64"
BARE_TIME = {"us", "ns", "ms", "s", "MiB/s", "IOPS"}


def model_experiment(vm_table=None, name="model", **extra):
    """Two variants booting the same kernel on the modeled device, a raw target."""
    return experiment([{"name": v, "kernel": KERNEL} for v in ("nofix", "fix")], name=name,
                      target={"fs": "none", "size": "64MiB"}, run={"seed": 5},
                      vm={"memory": "1GiB", "timing": "instructions", "disk": "model", **(vm_table or {})}, **extra)


def test_the_model_has_its_defaults_and_the_file_s_parameters():
    exp = model_experiment()
    assert exp.clock == "modeled" and exp.timing == "instructions"
    assert exp.vm.device_model is not None and exp.vm.device_model.completion_nsec == 20000
    set_ = model_experiment({"model": {"completion_nsec": 60000}}).vm.device_model
    assert set_ is not None and set_.completion_nsec == 60000
    assert model_experiment({"disk": "ram"}).clock == "instructions"  # the model only where asked


@pytest.mark.parametrize("vm_table, words", [
    ({"timing": "wall"}, ["vm", 'needs timing = "instructions"']),
    ({"disk": "ram", "model": {"completion_nsec": 20000}}, ["vm", 'need disk = "model"']),
    ({"model": {"completion_nsec": 0}}, ["vm.model.completion_nsec", "greater than or equal to 1000"]),
    ({"model": {"mbps": 100}}, ["vm.model", "mbps: a bandwidth cap does not repeat"]),
    ({"model": {"irqmode": 1}}, ["vm.model.irqmode"]),  # the completions are timers: nothing else to choose
])
def test_refusals_name_the_field(vm_table, words):
    with pytest.raises(SpecError) as error:
        model_experiment(vm_table)
    for word in words:
        assert word in str(error.value)


def test_a_bad_value_in_the_file_exits_2_naming_the_field(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_text(f'name = "x"\n[[variant]]\nname = "a"\nkernel = "{KERNEL}"\n[[variant]]\nname = "b"\n'
                    f'kernel = "{KERNEL}"\n[[workload]]\nname = "w"\nengine = "probe"\n'
                    'probe = { mode = "lat", op = "pread", direct = true, ops = 100 }\n'
                    '[target]\nfs = "none"\nsize = "64MiB"\n'
                    '[vm]\nmemory = "1GiB"\ntiming = "instructions"\ndisk = "model"\n'
                    'model = { completion_nsec = "20us" }\n')
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert "vm.model.completion_nsec" in captured.err and "Traceback" not in captured.err
    path.write_text(path.read_text().replace('"20us"', "20000"))
    assert cli.main(["run", str(path), "--dry-run"]) == 0
    assert "w: primary median modeled ns/op" in capsys.readouterr().out


def test_the_guest_boots_null_blk_with_timer_completions():
    settings = model_experiment({"model": {"completion_nsec": 60000}}).vm
    assert qemu.disk_args(settings) == [
        "null_blk.nr_devices=1", "null_blk.memory_backed=1", "null_blk.gb=1",
        "null_blk.irqmode=2", "null_blk.completion_nsec=60000",
        "null_blk.poll_queues=0"]  # a polled request would skip the overlapped model's wait: none polls
    assert "null_blk.irqmode" not in " ".join(qemu.disk_args(model_experiment({"disk": "null_blk"}).vm))
    assert qemu.disk_args(model_experiment({"disk": "ram"}).vm) == []
    assert qemu.timing_env(settings) == {
        "timing": "instructions", "icount_shift": 0, "guest_tsc_khz": 1_000_000,
        "device_model": {"completion_nsec": 60000, "irqmode": "timer"}}
    assert "vm.device_model" in environment.CHECKED  # a modeled run never set against an instructions run


def test_a_workload_s_durations_are_modeled_time_and_cpu_time_stays_instructions():
    for name in [*metrics.KNOWN, "phase.flush_last_ns"]:
        metric = metrics.lookup(name, "modeled")
        words = metric.label.replace("/", " ").split()
        assert not set(words) & BARE_TIME or "modeled" in metric.label, (name, metric)
        assert metric.unit not in BARE_TIME, (name, metric)
    assert metrics.lookup("lat_mean", "modeled").unit == "modeled ns"
    assert metrics.lookup("lat_p50", "modeled").label == "median modeled ns/op"
    assert metrics.lookup("read_bw", "modeled").unit == "MiB/modeled s"
    assert metrics.lookup("read_p50", "modeled").label == "rd p50 modeled us"
    assert metrics.lookup("phase.flush_last_ns", "modeled").unit == "modeled ns"
    assert metrics.lookup("rusage.utime_s", "modeled").unit == "Ginsn"  # the CPU at work: instructions
    assert metrics.lookup("disk.read_ms", "modeled").unit == "guest ms"  # a wait on the guest clock
    assert metrics.lookup("vm.boot_s", "modeled").unit == "s"  # the host's real time


def scripted(tmp_path, vm_table=None, store=None, name="model"):
    exp = model_experiment(vm_table, name=name)
    store = store or Store(tmp_path / "model.db")
    return store, runner.run(exp, store, host=ScriptedHost({"nofix": 100.0, "fix": 125.0}, noise=0.0))


def test_every_format_names_the_model_and_its_unit(tmp_path):
    store, run_id = scripted(tmp_path, {"model": {"completion_nsec": 60000}})
    report = run_report(store, run_id)
    text = renderer("text")(replace(report, verbose=True))  # the header in full names the model
    flat = " ".join(text.split())
    assert "modeled time (instructions + null_blk's timer waits)" in " ".join(renderer("text")(report).split())
    assert "modeled device: null_blk" in flat and "completion_nsec=60000" in flat and "irqmode=2" in flat
    assert "rd p50 modeled us" in text and "rd BW MiB/modeled s" in text
    for fmt in ("text", "markdown", "html"):
        output = renderer(fmt)(report)
        bare = output.replace("modeled us", "").replace("modeled ns", "")
        assert " us " not in bare and "p50 us" not in bare and "MiB/s" not in bare, fmt
        assert "p50 kinsn" not in output and "MiB/Ginsn" not in output, fmt  # not instruction counts
    document = json.loads(renderer("json")(report))
    assert document["timing"]["clock"] == "modeled"
    assert document["timing"]["device_model"] == {"completion_nsec": 60000, "irqmode": "timer"}
    assert {c["unit"] for c in document["comparisons"]} == {"MiB/modeled s", "modeled us", "count"}
    rows = list(csv.DictReader(io.StringIO(renderer("csv")(report))))
    assert {r["unit"] for r in rows if r["metric"] in ("read_bw", "read_p50")} == {"MiB/modeled s", "modeled us"}
    bench = renderer("benchstat")(report)
    assert "timing: modeled" in bench and "us-read_p50" not in bench.replace("modeled_us-read_p50", "")
    assert "CDF of modeled time per I/O" in renderer("html")(report)
    assert ("\nmode:      modeled (TCG icount + null_blk: non-rotational, 60000 ns a\n"
            "           request, served overlapped)") in renderer("reply")(report)


def test_modeled_time_is_never_compared_with_an_instruction_count(tmp_path):
    store, modeled = scripted(tmp_path, name="same")
    exp = experiment([{"name": v, "kernel": KERNEL} for v in ("nofix", "fix")], name="same",
                     target={"fs": "none", "size": "64MiB"}, run={"seed": 5},
                     vm={"memory": "1GiB", "timing": "instructions", "disk": "ram"})
    counted = runner.run(exp, store, host=ScriptedHost({"nofix": 100.0, "fix": 125.0}, noise=0.0))
    with pytest.raises(StoreError, match="run 1 modeled, run 2 instructions"):
        compare_report(store, modeled, counted)
    _, again = scripted(tmp_path, store=store, name="same")
    assert compare_report(store, modeled, again).analysis.experiment.clock == "modeled"
