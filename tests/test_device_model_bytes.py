"""The modeled device with bytes, seeks and poll queues (issue 38): null_blk
with iolab's change (iolab/kernels/carry/null_blk-model.patch) serves one
request at a time, each taking completion_nsec + B / mib_per_s (+ seek_nsec).

Here: the arithmetic the change does, the spec's fields and refusals, the
guest's command line and its check of null_blk's parameters, the carried
patch in the build request (and applying to Linux 7.2 where its source is
unpacked), the device a benchmark needs (polled I/O) and the dry run's
device line. The real boot is tests/test_vm_boot.py
(test_the_modeled_device_charges_bytes_one_request_at_a_time).
"""

import json
import subprocess

import pytest

from iolab import cli
from iolab.hosts.vm import guest, qemu
from iolab.hosts.vm.host import _request
from iolab.kernels import build, carry, sources
from iolab.load import device
from iolab.report.headers import model_lines
from iolab.spec import SpecError
from tests.helpers import experiment

BUILT = {"source": "debian:linux-source-7.2"}
PACKAGED = "debian:6.1.0-56-amd64"
POLLED_JOB = "[p]\nrw=randread\nbs=4k\ndirect=1\nioengine=io_uring\nhipri=1\nsize=16M\n"


def modeled(model=None, kernel=None, job="[j]\nrw=randread\n", disk="model", timing="instructions", **vm):
    table = {"memory": "1GiB", "timing": timing, "disk": disk, **vm}
    if model is not None:
        table["model"] = model
    return experiment([{"name": v, "kernel": kernel or BUILT} for v in ("a", "b")],
                      target={"fs": "none", "size": "64MiB"}, workload=[{"name": "w", "job": job}], vm=table)


def test_a_request_takes_its_fixed_time_plus_its_bytes_at_the_rate():
    model = modeled({"completion_nsec": 20000, "mib_per_s": 500}).vm.device_model
    assert model.service_nsec(1 << 20) == 20000 + 2_000_000  # 1 MiB at 500 MiB/s: 2 ms
    assert model.service_nsec(4096) == 20000 + 7812  # 7812.5 ns, rounded down as the kernel's div64_u64
    assert model.service_nsec(0) == 20000  # a flush: the request's time alone
    # one at a time: 1 MiB reads back to back give at most 2^20 B / 2.02 ms = 495.05 MiB per modeled s
    assert (1 << 20) / model.service_nsec(1 << 20) * 1e9 / (1 << 20) == pytest.approx(495.05, abs=0.01)
    # 4 KiB reads at any depth: at most 1 / 27812 ns = 35955 a modeled s
    assert int(1e9 / model.service_nsec(4096)) == 35955
    seeking = modeled({"completion_nsec": 100000, "mib_per_s": 200, "seek_nsec": 4_000_000}).vm.device_model
    assert seeking.service_nsec(128 << 10, seek=True) == 100000 + 625_000 + 4_000_000
    assert seeking.service_nsec(128 << 10) == 100000 + 625_000


def test_requests_wait_for_the_device_one_at_a_time_or_k_at_a_time():
    serial = modeled({"completion_nsec": 20000, "mib_per_s": 500}).vm.device_model
    # eight 4 KiB reads arriving at once (depth 8) end 27812 ns apart; one arriving after an idle gap
    # starts when it arrives
    assert serial.deadlines([(0, 4096, 8 * k, 8) for k in range(8)]) == [27812 * (k + 1) for k in range(8)]
    assert serial.deadlines([(0, 4096, 0, 8), (100000, 4096, 8, 8)]) == [27812, 127812]
    two = modeled({"completion_nsec": 20000, "mib_per_s": 500, "parallel": 2}).vm.device_model
    assert two.deadlines([(0, 4096, 0, 8)] * 4) == [27812, 27812, 55624, 55624]
    # a small request after a large one on the other server ends first
    assert two.deadlines([(0, 1 << 20, 0, 2048), (0, 4096, 0, 8)]) == [2020000, 27812]
    hdd = modeled({"completion_nsec": 50000, "mib_per_s": 160, "seek_nsec": 2_000_000}).vm.device_model
    window = 128 << 10  # 781250 ns at 160 MiB/s
    # two readers' 128 KiB windows in turn: every request away from the last one's end pays the seek
    done = hdd.deadlines([(0, window, 0, 256), (0, window, 1 << 20, 256), (0, window, 256, 256)])
    assert done == [50000 + 781250, 2 * (50000 + 781250) + 2_000_000, 3 * (50000 + 781250) + 4_000_000]
    assert hdd.deadlines([(0, window, 0, 256), (0, window, 256, 256)]) == [831250, 1662500]  # in sequence: none


def test_the_fields_say_how_requests_share_the_device():
    plain = modeled().vm.device_model
    assert not plain.carried and plain.served == "overlapped"
    assert plain.recorded() == {"completion_nsec": 20000, "irqmode": "timer"}  # as stored before issue 38
    full = modeled({"mib_per_s": 500, "rotational": True, "poll_queues": 2}).vm.device_model
    assert full.carried and full.served == "one at a time"
    assert full.recorded() == {"completion_nsec": 20000, "mib_per_s": 500, "rotational": True, "poll_queues": 2,
                               "irqmode": "timer", "served": "one at a time"}
    assert full.words() == ("rotational, 20000 ns a request + its bytes at 500 MiB/s, served one at a time, "
                            "2 poll queues")
    four = modeled({"parallel": 4}).vm.device_model
    assert four.carried and four.served == "4 at a time" and four.recorded()["parallel"] == 4
    assert qemu.null_blk_params(four)["iolab_parallel"] == "4"
    assert "iolab_parallel" not in qemu.null_blk_params(full)
    largest = modeled({"max_kb": 1024}).vm.device_model
    assert not largest.carried and qemu.null_blk_params(largest)["max_sectors"] == "2048"  # null_blk's own
    assert largest.words() == "non-rotational, 20000 ns a request, served overlapped, requests of 1024 KiB at most"
    rotational = modeled({"rotational": True}).vm.device_model
    assert not rotational.carried  # null_blk's own rotational flag needs no change


@pytest.mark.parametrize("model, kernel, words", [
    ({"mib_per_s": 0}, None, ["vm.model.mib_per_s", "greater than or equal to 1"]),
    ({"poll_queues": 0}, None, ["vm.model.poll_queues"]),
    ({"seek_nsec": -1}, None, ["vm.model.seek_nsec"]),
    ({"mbps": 100}, None, ["vm.model", "give mib_per_s"]),
    ({"mib_per_s": 500}, PACKAGED, ["vm.model", "variant 'a' boots a kernel as it came", "built from source"]),
    ({"poll_queues": 1}, PACKAGED, ["iolab's change to null_blk"]),
    ({"parallel": 2}, PACKAGED, ["iolab's change to null_blk"]),
    ({"parallel": 65}, None, ["vm.model.parallel"]),
])
def test_refusals_name_the_field(model, kernel, words):
    with pytest.raises(SpecError) as error:
        modeled(model, kernel=kernel)
    for word in words:
        assert word in str(error.value)


def test_completion_nsec_alone_still_boots_a_packaged_kernel():
    assert modeled({"completion_nsec": 60000, "rotational": True}, kernel=PACKAGED).vm.device_model is not None


def test_the_guest_boots_null_blk_with_the_model_s_parameters():
    settings = modeled({"completion_nsec": 20000, "mib_per_s": 500, "seek_nsec": 3000, "rotational": True,
                        "poll_queues": 2}).vm
    assert qemu.disk_args(settings)[3:] == [
        "null_blk.irqmode=2", "null_blk.completion_nsec=20000", "null_blk.iolab_model=1",
        "null_blk.iolab_mib_per_s=500", "null_blk.iolab_seek_nsec=3000", "null_blk.poll_queues=2",
        "null_blk.rotational=1"]
    assert qemu.timing_env(settings)["device_model"]["served"] == "one at a time"
    request = json.loads(_request([], settings.disk, qemu.null_blk_params(settings.device_model)))
    assert request["null_blk"]["iolab_model"] == "Y" and request["null_blk"]["rotational"] == "Y"
    assert qemu.null_blk_params(None) == {}


def sysfs(tmp_path, params, rotational="1"):
    where = tmp_path / "module/null_blk/parameters"
    where.mkdir(parents=True)
    for name, value in params.items():
        (where / name).write_text(value + "\n")
    flag = tmp_path / "block/nullb0/queue"
    flag.mkdir(parents=True)
    (flag / "rotational").write_text(rotational + "\n")
    return tmp_path


def test_the_guest_refuses_a_null_blk_that_is_not_the_model(tmp_path):
    expected = {"irqmode": "2", "iolab_model": "Y", "rotational": "Y"}
    assert guest.null_blk_problem(expected, sysfs(tmp_path / "ok", expected)) == ""
    unpatched = sysfs(tmp_path / "unpatched", {"irqmode": "2", "rotational": "Y"})
    assert "no parameter iolab_model (iolab's change to null_blk" in guest.null_blk_problem(expected, unpatched)
    wrong = sysfs(tmp_path / "wrong", {**expected, "irqmode": "0"})
    assert guest.null_blk_problem(expected, wrong) == "the guest's null_blk has irqmode=0, not 2"
    flat = sysfs(tmp_path / "flat", expected, rotational="0")
    assert "/dev/nullb0 is not rotational" in guest.null_blk_problem(expected, flat)


def test_the_build_carries_the_change_only_where_the_model_needs_it():
    carried = modeled({"mib_per_s": 500})
    request = build.request_for(carried.variant[0].kernel, carried)
    assert request.patches[0].path == carry.NULL_BLK_MODEL and not request.patches[0].reverse
    assert "null_blk-model.patch" in request.describe()
    plain = modeled({"completion_nsec": 20000})
    assert build.request_for(plain.variant[0].kernel, plain).patches == ()
    text = carry.NULL_BLK_MODEL.read_text()
    assert "+static bool g_iolab_model;" in text and "HRTIMER_MODE_ABS" in text


def test_the_carried_change_applies_to_linux_7_2():
    root = sources.unpacked(sources.parse("debian:linux-source-7.2"))
    if root is None:
        pytest.skip("Linux 7.2's source is not unpacked here (iolab kernel build scenarios/ext4-write-begin-7.2.toml)")
    done = subprocess.run(["patch", "-p1", "--dry-run", "-F0", "-i", str(carry.NULL_BLK_MODEL)], cwd=root,
                          capture_output=True, text=True)
    already = subprocess.run(["patch", "-p1", "-R", "--dry-run", "-F0", "-i", str(carry.NULL_BLK_MODEL)], cwd=root,
                             capture_output=True, text=True)
    assert done.returncode == 0 or already.returncode == 0, done.stdout + already.stdout


def test_a_polled_job_needs_a_device_that_polls():
    assert device.polls(POLLED_JOB) and not device.polls("[j]\nrw=read\n")
    assert not device.polls("[global]\nhipri=0\n[j]\nrw=read\n")
    assert device.polls("[j]\nrw=read\n", {"hipri": True})  # a variant's fio option
    on_ram = modeled(disk="ram", job=POLLED_JOB)
    assert "workload 'w' polls for its completions" in device.refusal(on_ram)
    assert "poll_queues = 1" in device.refusal(on_ram)
    assert "without poll_queues" in device.refusal(modeled({"mib_per_s": 500}, job=POLLED_JOB))
    assert device.refusal(modeled({"poll_queues": 1}, job=POLLED_JOB)) == ""
    assert device.refusal(modeled(disk="null_blk", timing="wall", job=POLLED_JOB)) == ""
    assert 'disk = "null_blk"' in device.refusal(modeled(disk="virtio", timing="wall", job=POLLED_JOB))


def test_a_mail_s_device_becomes_the_vm_s_disk():
    hdd = device.need_of("rotational", ["[j]\nrw=read\n"])
    assert hdd == device.DeviceNeed(kind="rotational")
    assert device.vm_table(hdd, "instructions") == {"disk": "model", "model": device.HDD}
    assert device.HDD["rotational"] and device.HDD["mib_per_s"] and device.HDD["seek_nsec"]
    polled = device.need_of("raw", [POLLED_JOB])
    assert polled.polled and device.vm_table(polled, "instructions") == {"disk": "model",
                                                                         "model": {"poll_queues": 1}}
    assert device.vm_table(polled, "wall") == {"disk": "null_blk"}
    assert device.vm_table(device.need_of(None), "instructions") == {}
    assert device.vm_table(device.need_of("null_blk"), "instructions") == {"disk": "model"}
    assert device.need_of("rotational", [POLLED_JOB]).words() == "a rotational disk, polled I/O (poll queues)"


def test_the_dry_run_names_the_device_and_a_polled_job_is_refused_before_a_build(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    head = ('name = "x"\n[kernel]\nsource = "debian:linux-source-7.2"\n[[variant]]\nname = "a"\n'
            '[[variant]]\nname = "b"\n[target]\nfs = "none"\nsize = "64MiB"\n'
            '[[workload]]\nname = "w"\njob = """\n' + POLLED_JOB + '"""\n')
    path.write_text(head + '[vm]\nmemory = "1GiB"\ntiming = "instructions"\ndisk = "model"\n'
                    'model = { mib_per_s = 500, poll_queues = 1, rotational = true }\n')
    assert cli.main(["run", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert ("device: modeled null_blk in the VM (rotational, 20000 ns a request + its bytes at 500 MiB/s, "
            "served one at a time, 1 poll queue; unit: modeled); iolab's change to null_blk carried") in out
    path.write_text(head + '[vm]\nmemory = "1GiB"\ntiming = "instructions"\n')
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "workload 'w' polls for its completions (fio hipri)" in err and "Traceback" not in err


def test_the_header_names_the_carried_change():
    line = " ".join(model_lines(modeled({"mib_per_s": 500})))
    assert "with iolab's change (iolab/kernels/carry/null_blk-model.patch)" in line
    assert "20000 ns + B / (500 MiB/s) from when the device is free" in line
    assert "completion_nsec=20000" in " ".join(model_lines(modeled()))
