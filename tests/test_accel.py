"""The accelerator VMs run under (iolab.hosts.vm.accel), decided on machines
that describe themselves (tests.fakes.DescribedMachine): KVM only where it
boots Linux, the verdict cached per host boot, "kvm" refused where KVM
stalls, a mid-run fall-back to TCG; doctor's line, the run header, and a
run whose rounds ran under two accelerators."""

import dataclasses
import json

import pytest

from iolab import analysis
from iolab.analysis import reports
from iolab.cli import doctor
from iolab.hosts.vm import accel
from iolab.hosts.vm.accel import Choice, LinuxBoot, VerdictCache, decide
from iolab.report import renderer
from iolab.run import runner
from iolab.store import Store
from tests.fakes import DescribedMachine
from tests.test_vm import ScriptedVMHosts, experiment

BOOTS = LinuxBoot(True, 1.4, "6.1.0-56-amd64")
STALLS = LinuxBoot(False, 30.0, "6.1.0-56-amd64", "console: [    8.8] setup_percpu: NR_CPUS:8192")


def test_no_kvm_device_is_tcg_and_kvm_set_is_refused():
    machine = DescribedMachine(kvm=False)
    verdict = decide("auto", machine)
    assert (verdict.accel, verdict.found) == ("tcg", "no-kvm") and machine.probes == 0
    with pytest.raises(accel.AccelError, match=r'accel = "kvm": no usable /dev/kvm'):
        decide("kvm", machine)
    assert decide("tcg", DescribedMachine()).found == "set"


def test_a_kvm_that_runs_the_probe_but_stalls_linux_runs_vms_under_tcg(tmp_path):
    """The 14-byte probe runs; a Linux guest does not come up: TCG, and why,
    cached for this host boot (the next decision boots nothing)."""
    cache = VerdictCache(tmp_path / "accel.json")
    machine = DescribedMachine(linux=STALLS, verdicts=cache)
    verdict = decide("auto", machine)
    assert verdict.accel == "tcg" and verdict.found == "linux-stalls" and not verdict.cached
    assert verdict.reason == ("KVM runs the 14-byte probe but a Linux guest (6.1.0-56-amd64) stalled after 30 s: "
                              "VMs run under TCG")
    assert "setup_percpu" in verdict.detail
    assert machine.boots == [accel.LINUX_PROBE_S] and machine.probes == 1
    again = decide("auto", machine)
    assert again.cached and again.reason == verdict.reason and machine.boots == [accel.LINUX_PROBE_S]
    with pytest.raises(accel.AccelError, match="a Linux guest .* stalled after 30 s"):
        decide("kvm", machine)


def test_kvm_that_boots_linux_is_used():
    verdict = decide("auto", DescribedMachine(linux=BOOTS))
    assert verdict.accel == "kvm" and verdict.found == "linux-boots"
    assert verdict.reason == "KVM runs the 14-byte probe and boots Linux 6.1.0-56-amd64 to iolab's init in 1.4 s"
    assert decide("kvm", DescribedMachine(linux=STALLS)).accel == "kvm"  # the user's word: no boot asked
    failing = DescribedMachine(probe=False, linux=BOOTS)
    assert decide("auto", failing).found == "probe-fails" and failing.boots == []


def test_without_a_kernel_to_boot_kvm_is_tried_and_nothing_is_cached(tmp_path):
    cache = VerdictCache(tmp_path / "accel.json")
    verdict = decide("auto", DescribedMachine(linux=None, verdicts=cache))
    assert (verdict.accel, verdict.found) == ("kvm", "no-linux") and "falls back to TCG" in verdict.reason
    assert not (tmp_path / "accel.json").exists()


def test_the_cache_holds_per_boot_kernel_and_qemu(tmp_path):
    cache = VerdictCache(tmp_path / "accel.json")
    decide("auto", DescribedMachine(linux=STALLS, verdicts=cache))
    newer = DescribedMachine(linux=BOOTS, verdicts=cache, qemu="8.2.0")
    assert decide("auto", newer).accel == "kvm" and newer.boots  # another QEMU: decided again
    entries = json.loads((tmp_path / "accel.json").read_text())["entries"]
    assert [e["identity"]["qemu"] for e in entries] == ["7.2.22", "8.2.0"]
    old = {**entries[0], "identity": {**entries[0]["identity"], "boot_id": "an earlier boot"}}
    (tmp_path / "accel.json").write_text(json.dumps({"entries": [old, entries[1]]}))
    assert cache.get(DescribedMachine().identity()) is None  # an earlier host boot's verdict does not hold
    cache.put(newer.identity(), decide("tcg", newer))
    assert [e["identity"]["boot_id"] for e in json.loads((tmp_path / "accel.json").read_text())["entries"]] == [
        "described-boot"]
    (tmp_path / "accel.json").write_text("not json")
    assert cache.get(newer.identity()) is None


def test_a_stalled_boot_switches_an_auto_run_to_tcg_and_is_cached(tmp_path):
    cache = VerdictCache(tmp_path / "accel.json")
    machine = DescribedMachine(linux=BOOTS, verdicts=cache)
    choice = Choice("auto", machine)
    assert choice.accel == "kvm"
    assert choice.stalled(LinuxBoot(False, 20.0, "7.2.13"), "[vm] boot_timeout 20 s")
    assert choice.accel == "tcg" and "(not up within [vm] boot_timeout 20 s)" in choice.verdict.reason
    assert cache.get(machine.identity()).found == "linux-stalls"
    user = Choice("kvm", DescribedMachine(linux=BOOTS, verdicts=VerdictCache(tmp_path / "other.json")))
    assert not user.stalled(LinuxBoot(False, 20.0, "7.2.13"), "20 s") and user.accel == "kvm"
    with pytest.raises(accel.AccelError):  # the next run is refused with the reason
        Choice("kvm", user.machine)


@pytest.mark.parametrize("machine, mark, words", [
    (DescribedMachine(linux=STALLS), "warn", "a Linux guest (6.1.0-56-amd64) stalled after 30 s: VMs run under TCG"),
    (DescribedMachine(linux=BOOTS), "ok", "boots Linux 6.1.0-56-amd64 to iolab's init in 1.4 s"),
    (DescribedMachine(linux=None), "warn", "no Linux kernel is cached to try"),
    (DescribedMachine(probe=False), "warn", "cannot run the 14-byte probe"),
])
def test_doctor_names_what_it_found(machine, mark, words):
    text = doctor.render([doctor._kvm(machine)])
    assert text.split()[:2] == [mark, "kvm"] and words in text
    if machine.linux is STALLS:
        assert "setup_percpu" in text


def test_vm_hosts_record_the_verdict(monkeypatch):
    from tests.test_vm import fake_vm_hosts

    hosts = fake_vm_hosts(monkeypatch, experiment())
    assert hosts.describe()["vm"]["accel"] == "tcg"
    assert hosts.describe()["vm"]["accel_reason"].startswith("no usable /dev/kvm")


class ReasonedVMHosts(ScriptedVMHosts):
    def describe(self):
        found = super().describe()
        return {**found, "vm": {**found["vm"], "accel_reason": decide("auto", DescribedMachine(linux=STALLS)).reason}}


def test_the_run_header_says_why_tcg(tmp_path):
    exp = experiment(run={"iterations": 2, "order": "alternate", "seed": 1}, report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    run_id = runner.run(exp, store, host=ReasonedVMHosts())
    # the whole header is --verbose's (the default header is at most 6 lines)
    text = renderer("text")(dataclasses.replace(reports.run_report(store, run_id), verbose=True))
    head = " ".join(text.split("\n\n")[0].split())
    assert ("emulated (TCG): numbers comparable only with each other; VM boot time (vm.boot_s) is not in the "
            "figures accelerator: KVM runs the 14-byte probe but a Linux guest (6.1.0-56-amd64) stalled after 30 s: "
            "VMs run under TCG") in head


class SwitchingVMHosts(ScriptedVMHosts):
    """A VM run whose accelerator falls back to TCG after its first batch."""

    def __init__(self):
        super().__init__()
        self.accel = "kvm"

    def describe(self):
        found = super().describe()
        return {**found, "vm": {**found["vm"], "accel": self.accel}}

    def run_batch(self, cells):
        for sample in super().run_batch(cells):
            yield sample.with_more(env={"vm": {**sample.env["vm"], "accel": self.accel}})
        self.accel = "tcg"


def test_rounds_under_two_accelerators_get_no_verdict_and_the_header_says_tcg(tmp_path):
    exp = experiment(run={"iterations": 3, "seed": 1}, report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    run_id = runner.run(exp, store, host=SwitchingVMHosts())
    assert store.run(run_id).host["vm"]["accel"] == "tcg"  # the facts as the run ended
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    (row,) = result.rows
    comparison = row.comparisons["new"]
    assert comparison.verdict == "insufficient" and comparison.refusal == "hosts"
    assert any("the VMs ran under different accelerators (KVM in rounds 0; TCG in rounds 1, 2)" in w
               for w in comparison.warnings), comparison.warnings
    assert "emulated (TCG)" in renderer("text")(dataclasses.replace(reports.run_report(store, run_id), verbose=True))
