"""The VM host without booting anything: QEMU's argument list (golden),
the guest's command, batching by kernel and cells_per_boot, the ABAB plan,
outcomes of a boot, the guest's target rewrite, the experiment file's
kernel fields, and the report header of a VM run.

Regenerate the golden argument lists after an intended change with:
    UPDATE_GOLDEN=1 pytest tests/test_vm.py
"""

import json
import os
import shlex
import threading
from pathlib import Path

import pytest

from iolab import analysis, load, plan, spec
from iolab.analysis.model import Report
from iolab.hosts.vm import guest
from iolab.run import runner
from iolab.hosts.vm import host as vm
from iolab.hosts.vm import qemu, variants
from iolab.kernels import Kernel, kernel_ref
from iolab.analysis import history, reports
from iolab.report import renderer
from iolab.report.history import RENDERERS as HISTORY
from iolab.cell.sample import Sample
from iolab.store import Store
from tests.fakes import FIXED_HOST, DescribedMachine
from tests import helpers
from tests.helpers import check_golden

def kernel(name: str = "debian:6.1.0-56-amd64", directory: str = "/cache/kernels/6.1.0-56-amd64") -> Kernel:
    root = Path(directory)
    return Kernel(
        name=name, directory=root, kver="6.1.0-56-amd64", image=root / "vmlinux", pvh=True,
        initramfs=root / "initramfs.cpio", moddir=root / "pkg/lib/modules/6.1.0-56-amd64",
        manifest={"package": "linux-image-6.1.0-56-amd64", "version": "6.1.192-2", "image_sha256": "ab" * 32},
    )


# -- qemu_argv ---------------------------------------------------------------------


def test_qemu_argv_microvm_tcg():
    argv = qemu.qemu_argv(
        kernel(), memory_mib=2048, cpus=2, machine="microvm", accel="tcg", xchg=Path("/run/x/xchg"),
        console=Path("/run/x/xchg/console.log"), disks=[qemu.Disk("/run/x/disk.img", "iolab0")],
        tsc_khz=2596124, tcg_thread="single",
    )
    assert argv[0] == "qemu-system-x86_64" and all(isinstance(a, str) for a in argv)
    check_golden("qemu-microvm-tcg.txt", shlex.join(argv) + "\n")


def test_qemu_argv_q35_kvm():
    argv = qemu.qemu_argv(
        kernel(), memory_mib=1024, cpus=4, machine="q35", accel="kvm", xchg=Path("/run/x/xchg"),
        console=Path("/run/x/xchg/console.log"), disks=[qemu.Disk("/dev/sdz", "iolab0")], tsc_khz=2596124,
    )
    check_golden("qemu-q35-kvm.txt", shlex.join(argv) + "\n")


def test_a_null_blk_disk_is_the_guest_kernels_null_blk_and_no_disk_image():
    """[vm] disk = "null_blk": the built-in null_blk's parameters on the kernel
    command line (memory-backed, half the VM's memory in whole GiB), no -drive."""
    assert qemu.null_blk_args(2048 << 20) == ["null_blk.nr_devices=1", "null_blk.memory_backed=1", "null_blk.gb=1"]
    assert qemu.null_blk_args(6 << 30)[-1] == "null_blk.gb=3"
    argv = qemu.qemu_argv(
        kernel(), memory_mib=2048, cpus=1, machine="microvm", accel="tcg", xchg=Path("/run/x/xchg"),
        console=Path("/run/x/xchg/console.log"), disks=[], tsc_khz=None, kernel_args=qemu.null_blk_args(2 << 30),
    )
    assert "-drive" not in argv
    assert argv[argv.index("-append") + 1].endswith(" null_blk.nr_devices=1 null_blk.memory_backed=1 null_blk.gb=1")


def built_kernel(tmp_path: Path, cmdline_devices: bool = True) -> Kernel:
    """A kernel of iolab's build, whose .config is kept beside it as `config`."""
    (tmp_path / "config").write_text("CONFIG_VIRTIO_MMIO=y\n" + (
        "CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES=y\n" if cmdline_devices else
        "# CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES is not set\n"))
    return Kernel(name="build-x", directory=tmp_path, kver="7.2.13", image=tmp_path / "vmlinux", pvh=True,
                  initramfs=tmp_path / "initramfs.cpio", moddir=None, manifest={})


def test_a_lean_tcg_boot_skips_the_enum_update_and_on_one_vcpu_the_apic_timers_calibration(tmp_path):
    """[vm] boot = "lean" (the default): under TCG the trace events' enum update
    is skipped; a 1-vCPU microvm whose kernel takes virtio-mmio's devices from
    its command line also has no ACPI and no local APIC timer (the PIT ticks)."""
    built = built_kernel(tmp_path)
    one = spec.VM(cpus=1)
    assert qemu.lean_boot(one, "tcg", built) == (False, [*qemu.LEAN_TCG, "acpi=off", "noapictimer", "no_timer_check"])
    assert qemu.lean_boot(spec.VM(cpus=2), "tcg", built) == (True, qemu.LEAN_TCG)
    assert qemu.lean_boot(spec.VM(cpus=1, machine="q35"), "tcg", built) == (True, qemu.LEAN_TCG)
    assert qemu.lean_boot(one, "kvm", built) == (True, [])
    assert qemu.lean_boot(spec.VM(cpus=1, boot="full"), "tcg", built) == (True, [])
    # the modeled device's completions are timers finer than the PIT's 12.6 us
    modeled = spec.VM(cpus=1, timing="instructions", disk="model")
    assert qemu.lean_boot(modeled, "tcg", built) == (True, qemu.LEAN_TCG)
    # Debian's packages: virtio_mmio takes no devices from the command line
    assert qemu.lean_boot(one, "tcg", built_kernel(tmp_path, cmdline_devices=False)) == (True, qemu.LEAN_TCG)
    assert qemu.lean_boot(one, "tcg", kernel()) == (True, qemu.LEAN_TCG)  # no .config at hand


def test_qemu_argv_without_acpi_is_a_microvm_with_acpi_off(tmp_path):
    argv = qemu.qemu_argv(
        built_kernel(tmp_path), memory_mib=1024, cpus=1, machine="microvm", accel="tcg", xchg=Path("/x"),
        console=Path("/x/c.log"), disks=[], tsc_khz=None, acpi=False, kernel_args=["acpi=off", "noapictimer"],
    )
    assert argv[argv.index("-M") + 1].startswith("microvm,acpi=off,pit=on,")
    assert argv[argv.index("-append") + 1].endswith(" acpi=off noapictimer")
    assert "-no-reboot" in argv  # the guest's reset ends QEMU: without ACPI it cannot power off


def test_qemu_argv_essentials():
    argv = qemu.qemu_argv(
        kernel(), memory_mib=512, cpus=1, machine="microvm", accel="tcg", xchg=Path("/x"),
        console=Path("/x/c.log"), disks=[qemu.Disk("/d.img", "iolab0")], tsc_khz=None, tcg_thread="multi",
    )
    joined = shlex.join(argv)
    assert "-accel tcg,thread=multi" in joined and "-m 512M" in joined and "-smp 1" in joined
    assert "cache=none,aio=native" in joined and "serial=iolab0" in joined
    assert "readonly=on" in joined and "mount_tag=hostroot" in joined and "mount_tag=xchg" in joined
    append = argv[argv.index("-append") + 1].split()
    assert "tsc=reliable" in append and not any(a.startswith("tsc_early_khz") for a in append)
    assert "panic=-1" in append and "-no-reboot" in argv  # a panic ends QEMU instead of hanging
    assert "iolab.moddir=/cache/kernels/6.1.0-56-amd64/pkg/lib/modules/6.1.0-56-amd64" in append


def test_tcg_threading_follows_the_host(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert qemu.tcg_threading(2) == "single" and qemu.tcg_threading(1) == "multi"
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert qemu.tcg_threading(4) == "multi"


def test_the_kvm_probe_guest_is_a_pvh_elf():
    from iolab.kernels.images import has_pvh_note

    elf = qemu._probe_elf()
    assert elf[:4] == b"\x7fELF" and len(elf) < 200
    assert b"Xen\0" in elf
    assert not has_pvh_note(elf)  # a 32-bit ELF: the 64-bit reader does not apply, QEMU's does


def test_guest_command():
    text = vm.guest_command("/venv/bin/python", ["/src/iolab repo", "/venv/site-packages"])
    assert "export PYDANTIC_DISABLE_PLUGINS=__all__ PYTHONDONTWRITEBYTECODE=1\n" in text
    assert text.endswith(
        "exec /venv/bin/python -S -c 'import sys; sys.path += [\"/src/iolab repo\", \"/venv/site-packages\"]; "
        "from iolab.hosts.vm import guest; sys.exit(guest.main(sys.argv))' /run/iolab > /run/iolab/guest.log 2>&1\n")
    path = vm.guest_python_path()
    assert path[0] == str(Path(vm.iolab.__file__).resolve().parent.parent)



def test_the_guests_executor_loads_no_openssl_bz2_or_lzma():
    """What the guest imports costs every boot under TCG (bench/pace_boot.py): the
    executor and the probe's engine, imported as the guest does, load no OpenSSL, bz2 or lzma."""
    import subprocess
    import sys

    program = (f"import sys; sys.path += {json.dumps(vm.guest_python_path())}; "
               "from iolab.hosts.vm import guest; guest.unused_in_guest(); "
               "from iolab.cell import executor; from iolab.engines import probe; import hashlib; "
               "print(hashlib.sha256(b'').hexdigest()[:8], "
               "sorted(m for m in ('_hashlib', 'bz2', '_bz2', 'lzma', '_lzma') if sys.modules.get(m)))")
    done = subprocess.run([sys.executable, "-S", "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "e3b0c442 []"  # sha256 without OpenSSL, as the probe's build id needs


def test_qemu_in_instructions_mode_runs_without_huge_pages():
    """QEMU's preexec in instructions mode (qemu.small_pages): the host's transparent
    huge pages off for it and what it execs; wall mode keeps them."""
    import subprocess

    assert qemu.small_pages("instructions") and not qemu.small_pages("wall")
    done = subprocess.run(["grep", "THP_enabled", "/proc/self/status"], preexec_fn=qemu.without_huge_pages,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip("this kernel's /proc/PID/status has no THP_enabled line")
    assert done.stdout.split() == ["THP_enabled:", "0"]

# -- outcomes of a boot ------------------------------------------------------------------


def test_boot_outcomes(tmp_path):
    boot = vm.Boot([], tmp_path)
    boot.timed_out = True
    assert "killed" in boot.outcome()
    boot = vm.Boot([], tmp_path, guest_rc=3)
    assert boot.outcome() == "the guest's iolab exited with status 3"
    (tmp_path / "qemu.stderr").write_text("qemu-system-x86_64: cannot open disk\n")
    assert "QEMU failed (exit 1): qemu-system-x86_64: cannot open disk" in vm.Boot([], tmp_path, qemu_rc=1).outcome()
    assert "crash or panic" in vm.Boot([], tmp_path, qemu_rc=0).outcome()


def test_console_tail(tmp_path):
    (tmp_path / "console.log").write_text("".join(f"line {i}\n" for i in range(100)) + "\n\n")
    (tmp_path / "guest.log").write_text("Traceback: boom\n")
    tail = vm.Boot([], tmp_path).console_tail(5)
    assert tail == ["line 96", "line 97", "line 98", "line 99", "Traceback: boom"]


# -- experiments with kernels -----------------------------------------------------------------


def experiment(**changes):
    """Two variants, each in a VM of its Debian kernel (nothing is fetched: parse only)."""
    tables = {"name": "kernels", "target": {"fs": "f2fs", "size": "256MiB"},
              "workload": [{"name": "w", "job": "[j]\nrw=randread\n"}], "run": {"iterations": 4},
              "report": None, "vm": {"cells_per_boot": 2}, **changes}
    variants = tables.pop("variant", [{"name": "old", "kernel": "debian:6.1.0-47-amd64"},
                                      {"name": "new", "kernel": "debian:6.1.0-56-amd64"}])
    return helpers.experiment(variants, **tables)


def test_vm_table_defaults_and_durations():
    settings = experiment(vm={"timeout": "2m", "memory": "1GiB"}).vm
    assert (settings.timeout, settings.memory, settings.cpus, settings.cells_per_boot) == (120.0, 1 << 30, 2, 1)
    assert (settings.machine, settings.accel) == ("microvm", "auto")


@pytest.mark.parametrize("vm_table, words", [
    ({"memory": "100MiB"}, "at least 256MiB"),
    ({"timeout": "soon"}, "not a duration"),
    ({"cells_per_boot": 0}, "greater than or equal to 1"),
    ({"machine": "pc"}, "microvm"),
])
def test_bad_vm_table(vm_table, words):
    with pytest.raises(spec.SpecError, match=words):
        experiment(vm=vm_table)


def test_every_variant_or_none_names_a_kernel():
    with pytest.raises(spec.SpecError, match="give every variant a kernel"):
        experiment(variant=[{"name": "old", "kernel": "debian:6.1.0-47-amd64"}, {"name": "host"}])


def test_dir_targets_cannot_go_into_a_vm(tmp_path):
    with pytest.raises(spec.SpecError, match="cannot be used in a VM"):
        experiment(target={"kind": "dir", "path": str(tmp_path), "fs": "none"})


def test_kernel_paths_are_checked_relative_to_the_file(tmp_path):
    (tmp_path / "bzImage").write_bytes(b"x")
    (tmp_path / "exp.toml").write_text(
        'name = "own"\n[[variant]]\nname = "a"\nkernel = "debian:6.1.0-47-amd64"\n'
        '[[variant]]\nname = "b"\nkernel = "./bzImage"\nmodules = "./mods"\n'
        '[[workload]]\nname = "w"\njob = "[j]"\n')
    with pytest.raises(spec.SpecError, match=r'variant\["b"\].modules: no such file: .*/mods'):
        load.load(tmp_path / "exp.toml")
    (tmp_path / "mods").mkdir()
    loaded = load.load(tmp_path / "exp.toml")
    ref = kernel_ref.for_variant(loaded.variant[1].kernel, loaded.variant[1].modules, loaded.base_dir)
    assert ref.name == str(tmp_path / "bzImage") and ref.modules == str(tmp_path / "mods")


def test_alternate_order_runs_each_kernel_a_boot_at_a_time():
    cells = plan.plan(experiment(run={"iterations": 5, "order": "alternate"}), seed=1)
    assert [(c.round, c.variant) for c in cells] == [
        (0, "old"), (1, "old"), (0, "new"), (1, "new"), (2, "old"), (3, "old"), (2, "new"), (3, "new"),
        (4, "old"), (4, "new")]
    assert [c.seq for c in cells] == list(range(10))


def fake_vm_hosts(monkeypatch, exp):
    monkeypatch.setattr(variants, "compile_iolab", lambda: None)
    refs = {v.name: kernel(str(ref), f"/cache/{ref.name}")
            for v in exp.variant for ref in [kernel_ref.parse(v.kernel)]}
    return variants.VMHosts(refs, exp.vm, machine=DescribedMachine(kvm=False))


def test_batches_group_consecutive_cells_of_one_kernel(monkeypatch):
    exp = experiment(run={"iterations": 5, "order": "alternate"}, vm={"cells_per_boot": 2})
    cells = runner.cell_specs(exp, plan.plan(exp, 1))
    with fake_vm_hosts(monkeypatch, exp) as hosts:
        batches = hosts.batches(cells)
    assert [[c.seq for c in batch] for batch in batches] == [[0, 1], [2, 3], [4, 5], [6, 7], [8], [9]]
    assert {c.variant.name for c in batches[0]} == {"old"}


def test_in_instructions_mode_a_boot_holds_one_variants_round(monkeypatch):
    """Each round of a variant boots apart (its spread includes the boot's), even
    an A/A's two copies of one kernel; the cells of one round share that boot."""
    exp = experiment(variant=[{"name": "a", "kernel": "debian:6.1.0-56-amd64"},
                              {"name": "b", "kernel": "6.1.0-56-amd64"}],
                     workload=[{"name": "w1", "job": "[j]\nrw=read\nsize=1M\n"},
                               {"name": "w2", "job": "[j]\nrw=write\nsize=1M\n"}],
                     run={"order": "alternate"}, vm={"timing": "instructions", "memory": "1GiB"})
    assert exp.vm.cells_per_boot > 4 and exp.run.iterations == 3
    cells = runner.cell_specs(exp, plan.plan(exp, 7))
    with fake_vm_hosts(monkeypatch, exp) as hosts:
        batches = hosts.batches(cells)
    assert [{(c.variant.name, c.round) for c in batch} for batch in batches] == [
        {("a", 0)}, {("a", 1)}, {("a", 2)}, {("b", 0)}, {("b", 1)}, {("b", 2)}]
    assert all(len(batch) == 2 for batch in batches)


def test_variants_of_one_kernel_share_a_boot(monkeypatch):
    exp = experiment(variant=[{"name": "a", "kernel": "debian:6.1.0-56-amd64"},
                              {"name": "b", "kernel": "6.1.0-56-amd64"}], vm={"cells_per_boot": 3})
    cells = runner.cell_specs(exp, plan.plan(exp, 7))
    with fake_vm_hosts(monkeypatch, exp) as hosts:
        sizes = [len(batch) for batch in hosts.batches(cells)]
    assert sizes == [3, 3, 2]


# -- inside the guest ------------------------------------------------------------------


def test_the_guest_moves_the_target_to_the_virtio_disk():
    exp = experiment()
    cell = runner.cell_specs(exp, plan.plan(exp, 1))[0]
    moved = guest.in_guest(cell, "/dev/vda")
    assert (moved.target.kind, moved.target.device, moved.target.allow_destroy) == ("device", "/dev/vda", True)
    assert moved.target.fs == "f2fs" and moved.seq == cell.seq and cell.target.kind == "loop"


def test_a_ram_disk_keeps_the_target_a_loop_image_in_the_guests_memory(monkeypatch):
    exp = experiment()
    cell = runner.cell_specs(exp, plan.plan(exp, 1))[0]
    made = []
    monkeypatch.setattr(guest.os, "makedirs", lambda path, exist_ok: made.append(path))
    moved = guest.in_guest(cell, guest.RAM_DIR, ram=True)
    assert (moved.target.kind, moved.target.image_dir, moved.target.fs) == ("loop", "/run/iolab-disk", "f2fs")
    assert made == ["/run/iolab-disk"]
    request = json.loads(vm._request([cell], "ram"))
    assert request["disk"] == "ram" and len(request["cells"]) == 1


def test_the_guest_finds_its_disk_by_serial(tmp_path, monkeypatch):
    for name, serial in (("vda", "other"), ("vdb", "iolab0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "serial").write_text(serial + "\n")
    real = Path

    monkeypatch.setattr(guest, "Path", lambda p: real(tmp_path) if p == "/sys/block" else real(p))
    assert guest.find_disk("iolab0") == "/dev/vdb"
    with pytest.raises(OSError, match="no disk with serial 'nope'"):
        guest.find_disk("nope")


def test_samples_travel_as_one_line_each(tmp_path):
    sample = Sample(seq=3, round=1, iteration=1, warmup=False, variant="a", workload="w", status="ok",
                    metrics={"lat_p50": 1.5}, histograms={"lat": {100: 2}}, env={"kernel": "6.1"})
    guest.append_sample(tmp_path / "samples.jsonl", sample.to_json())
    guest.append_sample(tmp_path / "samples.jsonl", sample.to_json())
    lines = (tmp_path / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 2 and Sample.from_json(lines[0]) == sample


# -- the runner and the report of a VM run (a scripted VM host) -----------------------------------


class ScriptedVMHosts:
    """Looks like VMHosts to the runner: batches, run_batch, describe."""

    KVER = {"old": "6.1.0-47-amd64", "new": "6.1.0-56-amd64"}

    parallel = 1  # the runner's Host: one batch at a time

    def __init__(self, cpus=2, guest_cpu=None):
        self.stopping = threading.Event()
        self.batches_seen = []
        self.cpus = cpus
        self.guest_cpu = guest_cpu  # the CPU model the guest recorded (None: a sample without one)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def describe(self):
        return {**FIXED_HOST, "vm": {"accel": "tcg", "qemu": "7.2.22", "machine": "microvm", "cpus": self.cpus, "memory_mib": 1024,
                       "cells_per_boot": 2, "kernels": dict(self.KVER)}}

    def batches(self, cells):
        return [cells[i:i + 2] for i in range(0, len(cells), 2)]

    def run_batch(self, cells):
        self.batches_seen.append([c.seq for c in cells])
        for cell in cells:
            level = 100.0 if cell.variant.name == "old" else 90.0
            yield Sample(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                         variant=cell.variant.name, workload=cell.workload.name, status="ok",
                         metrics={"read_bw": level + (cell.seq * 7 % 5) * 0.1, "vm.boot_s": 6.5},
                         env={"kernel": self.KVER[cell.variant.name], "cpus": self.cpus, "fio": "fio-3.33",
                              **({"cpu_model": self.guest_cpu} if self.guest_cpu else {}),
                              "vm": {"accel": "tcg", "kver": self.KVER[cell.variant.name]}},
                         started=1_700_000_000.0 + cell.seq)


def test_runner_stores_batches_and_the_report_says_tcg(tmp_path, monkeypatch):
    exp = experiment(run={"iterations": 6, "order": "alternate", "seed": 1},
                     report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    host = ScriptedVMHosts()
    run_id = runner.run(exp, store, host=host)
    assert host.batches_seen == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]
    assert store.run(run_id).host["vm"]["accel"] == "tcg"
    samples = store.samples(run_id)
    assert len(samples) == 12 and all(s.metrics["vm.boot_s"] == 6.5 for s in samples)
    result = analysis.analyse(store.run(run_id), samples)
    text = renderer("text")(result)
    check_golden("vm-tcg.txt", text)
    assert "VM: microvm, 2 vCPUs, 1024 MiB, TCG\n" in text  # the header in short; in full, what TCG means:
    full = renderer("text")(Report(result, verbose=True))
    assert "emulated (TCG): numbers comparable only with each other" in full
    assert json.loads(renderer("json")(result))["run"]["host"]["vm"]["machine"] == "microvm"


def test_a_vm_run_names_its_guest_kernels_and_the_host_as_the_host(tmp_path):
    """history, compare and benchstat name the kernels the cells booted; the
    host's kernel only as the host's; benchstat's cpu the guest's, or says whose."""
    exp = experiment(run={"iterations": 2, "order": "alternate", "seed": 1}, report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    first = runner.run(exp, store, host=ScriptedVMHosts(guest_cpu="QEMU TCG CPU version 2.5+"))
    second = runner.run(exp, store, host=ScriptedVMHosts())
    found = history.history(store, "read_bw")
    text = " ".join(HISTORY["text"](found).split())
    assert text.count("kernels 6.1.0-47-amd64 | 6.1.0-56-amd64; host 6.18.0-test") == 2
    runs = json.loads(HISTORY["json"](found))["runs"]
    assert runs[0]["kernels"] == {"old": "6.1.0-47-amd64", "new": "6.1.0-56-amd64"}
    assert runs[0]["host_kernel"] == "6.18.0-test" and not runs[0]["kernel"].startswith("6.18")
    report = reports.compare_report(store, first, second)
    head = " ".join(renderer("text")(report).split("\n\n")[0].split())
    assert (f"A = run {first}, " in head and "kernels 6.1.0-47-amd64 | 6.1.0-56-amd64; VM: microvm, 2 vCPUs, "
            "1024 MiB, QEMU 7.2.22; host kernel 6.18.0-test" in head)
    assert "kernel 6.18.0-test," not in head  # never as the cells' kernel
    bench = renderer("benchstat")(reports.run_report(store, first)).splitlines()
    assert {"kernel: 6.1.0-47-amd64 | 6.1.0-56-amd64", "cpu: QEMU TCG CPU version 2.5+",
            "host-kernel: 6.18.0-test", "host-cpu: Test CPU"} <= set(bench)
    bench = renderer("benchstat")(reports.run_report(store, second)).splitlines()
    assert "cpu: Test CPU (the host's; the guest's was not recorded)" in bench


def test_the_reply_says_what_was_measured_and_each_variants_kernel(tmp_path):
    exp = experiment(run={"iterations": 2, "order": "alternate", "seed": 1}, report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    host = ScriptedVMHosts(cpus=1)
    host.KVER = {"old": "7.2.13 -R fix.patch", "new": "7.2.13"}
    run_id = runner.run(exp, store, host=host)
    reply = renderer("reply")(reports.run_report(store, run_id))
    assert max(len(line) for line in reply.splitlines()) <= 72
    assert "\nkernels:   7.2.13 -R fix.patch | 7.2.13\n" in reply
    assert "\ndevice:    f2fs on a virtio disk (256MiB); VM: 1 vCPU, 1GiB\n" in reply
    assert "\nmode:      wall clock (VM, tcg, QEMU 7.2.22); 2 rounds, alternate\n" in reply
    assert "6.18.0-test" not in reply  # the host's kernel is not the cells'


def test_one_vcpu_is_one_vcpu(tmp_path):
    exp = experiment(run={"iterations": 2, "order": "alternate", "seed": 1}, report={"metrics": ["read_bw"]})
    store = Store(tmp_path / "vm.db")
    run_id = runner.run(exp, store, host=ScriptedVMHosts(cpus=1))
    text = renderer("text")(analysis.analyse(store.run(run_id), store.samples(run_id)))
    assert "microvm, 1 vCPU, 1024 MiB" in text.replace("\n  ", " ")


def test_a_boot_notes_when_the_host_first_saw_each_step_of_the_guests_start_up(tmp_path):
    """Host seconds from QEMU's start (env.vm.boot_host): each marker at
    the first look that found it, none for a step not yet reached."""
    boot = vm.Boot(argv=[], xchg=tmp_path, started=100.0)
    (tmp_path / "console.log").write_text("PCI: Fatal: No config space access function found\n")
    boot.see_marks(101.0)
    assert boot.marks == {}
    (tmp_path / "console.log").write_text("iolab-init: up 0.78\n")
    (tmp_path / "init.json").write_text("{}")
    boot.see_marks(102.5)
    (tmp_path / "guest.log").write_text(f"{guest.MARK} python 3.1\n")
    boot.see_marks(104.0)
    (tmp_path / "guest.log").write_text(f"{guest.MARK} python 3.1\n{guest.MARK} imported 4.0\n")
    (tmp_path / "guest.json").write_text("{}")
    boot.see_marks(106.25)
    assert boot.marks == {"init": 2.5, "command": 2.5, "python": 4.0, "imported": 6.25, "ready": 6.25}
    assert list(boot.marks) == list(vm.MARKS)
