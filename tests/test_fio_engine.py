"""The fio engine's job placement and json+ parsing, on real fio 3.33 output."""

import json
import shutil
import subprocess

import pytest

from iolab import histogram
from iolab.engines import EngineError
from iolab.engines import fio
from iolab.engines.fio import fio_error, load_report, parse_report, place_job
from tests.helpers import FIXTURES, experiment

FIO = FIXTURES / "fio"


def fixture(name):
    return load_report((FIO / name).read_text())


def test_single_job_metrics_match_fio_figures():
    report = fixture("randread-4k-psync-ext4.json")
    result = parse_report(report)
    read = report["jobs"][0]["read"]
    assert result.metrics["read_bw"] == pytest.approx(read["bw_bytes"] / 2**20)
    assert result.metrics["read_iops"] == pytest.approx(read["iops"])
    assert result.metrics["ios"] == read["total_ios"]
    assert result.metrics["ctx"] == report["jobs"][0]["ctx"]
    assert "write_bw" not in result.metrics  # no writes, no write rows
    # Histogram percentiles use fio's own rule, so they equal fio's printed ones.
    printed = read["clat_ns"]["percentile"]
    assert result.metrics["read_p50"] == pytest.approx(printed["50.000000"] / 1e3)
    assert result.metrics["read_p99"] == pytest.approx(printed["99.000000"] / 1e3)
    assert result.metrics["read_p99.9"] == pytest.approx(printed["99.900000"] / 1e3)
    assert histogram.total(result.histograms["read_clat"]) == read["clat_ns"]["N"]


def test_jobs_are_summed_and_histograms_merged():
    report = fixture("mixed-3jobs-ext4.json")
    result = parse_report(report)
    jobs = report["jobs"]
    assert len(jobs) == 3
    assert result.metrics["read_bw"] == pytest.approx(sum(j["read"]["bw_bytes"] for j in jobs) / 2**20)
    assert result.metrics["write_iops"] == pytest.approx(sum(j["write"]["iops"] for j in jobs))
    reads = sum(j["read"]["clat_ns"]["N"] for j in jobs)
    assert histogram.total(result.histograms["read_clat"]) == reads
    assert result.metrics["cs_per_io"] == pytest.approx(result.metrics["ctx"] / result.metrics["ios"])


def test_fsync_and_fdatasync_latency_from_the_sync_section():
    # fio 3.33 --output-format=json+ on ext4 (a 128 MiB loop image): numjobs=2, rw=write, bs=4k,
    # size=8M, fdatasync=8
    report = fixture("fdatasync-2jobs-ext4.json")
    result = parse_report(report)
    syncs = [job["sync"]["lat_ns"] for job in report["jobs"]]
    assert result.metrics["syncs"] == sum(s["N"] for s in syncs) == 510
    assert histogram.total(result.histograms["sync_lat"]) == 510
    mean = sum(s["mean"] * s["N"] for s in syncs) / 510 / 1e3
    assert result.metrics["sync_lat_mean"] == pytest.approx(mean)
    assert result.metrics["sync_p50"] <= result.metrics["sync_p99"] <= result.metrics["sync_p99.9"]
    one = parse_report({**report, "jobs": report["jobs"][:1]})  # one job: fio's own printed percentiles
    assert one.metrics["sync_p99"] == pytest.approx(syncs[0]["percentile"]["99.000000"] / 1e3)
    assert "sync_p50" not in parse_report(fixture("mixed-3jobs-ext4.json")).metrics  # no sync calls: no rows


def test_failed_job_is_an_error_with_fio_text():
    text = (FIO / "error-direct-bs100.json").read_text()
    report = load_report(text)  # error lines precede the JSON
    with pytest.raises(EngineError, match="error 22"):
        parse_report(report)
    stderr = (FIO / "error-direct-bs100.stderr").read_text()
    assert "Invalid argument" in fio_error(stderr, text)


def test_no_json_at_all():
    with pytest.raises(EngineError, match="no JSON"):
        load_report("fio: something broke\n")


def test_place_job_appends_to_every_job_section():
    job = "[global]\nrw=read\n; comment\n[a]\nbs=4k\n[b]\ndirect=0\n"
    placed = place_job(job, {"direct": 1, "invalidate": True}, "/mnt/x", None)
    sections = placed.split("[")
    assert "directory=/mnt/x" not in sections[1]  # not in [global]
    for section in sections[2:]:
        assert "directory=/mnt/x\ndirect=1\ninvalidate=1" in section
    # The user's own lines are kept as written.
    assert "; comment" in placed and "direct=0\n; added by iolab\ndirectory=/mnt/x\ndirect=1" in placed


def test_place_job_raw_device():
    placed = place_job("[j]\nrw=read\n", {}, None, "/dev/loop7")
    assert "filename=/dev/loop7" in placed and "directory" not in placed


@pytest.mark.parametrize(
    "job, message",
    [
        ("[j]\nfilename=/dev/sda\n", "outside the target"),
        ("[global]\ndirectory=/home\n[j]\n", "puts the job.s files on the target"),
        ("rw=read\n[j]\n", "before the first"),
        ("[global]\nrw=read\n", "no job section"),
        ("[j]\ninclude other.fio\n", "include"),
    ],
)
def test_place_job_refuses(job, message):
    with pytest.raises(EngineError, match=message):
        place_job(job, {}, "/mnt/x", "/dev/loop0")


def test_relative_filename_is_kept():
    placed = place_job("[j]\nfilename=data\nfilename_format=f$jobnum\n", {}, "/mnt/x", "/dev/loop0")
    assert "filename=data" in placed and "filename_format=f$jobnum" in placed


def test_fixture_is_real_fio_output():
    data = json.loads((FIO / "randread-4k-psync-ext4.json").read_text())
    assert data["fio version"].startswith("fio-3")


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_uncached_under_a_fio_without_rwf_dontcache_is_refused():
    """This host's fio 3.33 takes io_uring's uncached=1 as RWF_UNCACHED (0x40),
    which 7.x reads as RWF_ATOMIC: never cached (or atomic) I/O under the seed's name."""
    from iolab import load
    from iolab.spec import SpecError

    done = subprocess.run(["fio", "--enghelp=io_uring"], capture_output=True, text=True, check=False).stdout
    if "RWF_DONTCACHE" in done:
        pytest.skip("this fio's uncached is RWF_DONTCACHE")
    # the schema and structure hold; this machine's fio does not
    parsed = experiment(workload=[{"name": "w", "job": "[j]\nrw=write\nioengine=io_uring\nsize=1M\nuncached=1\n"}],
                        report=None)  # a job that only writes has no read rows
    with pytest.raises(SpecError, match="this fio \\(fio\\) sets RWF_UNCACHED"):
        load.check_here(parsed)


def test_fio_from_source_names():
    from iolab.kernels import fio_source

    assert fio_source.parse("debian:fio") == "" and fio_source.parse("debian:fio=3.41-2") == "3.41-2"
    assert fio_source.parse("fio") is None and fio_source.parse("debian:fio=") is None


def test_jobs_that_fail_alike_give_one_text_whatever_their_order():
    # seed 002 on 7.2 (fio 3.33, numjobs > 1, direct=1 on erofs lz4 files, which 7.2 refuses): each job prints
    # its refusal as it fails, so two cells' stderr differ only in order and repetition
    one = ("fio: looks like your file system does not support direct=1/buffered=0\n"
           "fio: destination does not support O_DIRECT\nfio: destination does not support O_DIRECT\n")
    two = ("fio: destination does not support O_DIRECT\n"
           "fio: looks like your file system does not support direct=1/buffered=0\n"
           "fio: destination does not support O_DIRECT\nfio: destination does not support O_DIRECT\n")
    assert fio_error(one, "") == fio_error(two, "") == (
        "fio: destination does not support O_DIRECT / "
        "fio: looks like your file system does not support direct=1/buffered=0")



def test_instructions_mode_stops_each_job_after_the_ios_a_count_needs(tmp_path):
    """number_ios in each job section without one, and a time-based job looping over its region until
    then (io_size; fio does not stop a time-based job at number_ios); a job or [global] that sets its own
    number_ios or io_size keeps it; real fio runs the job and stops there."""
    job = "[global]\nrw=randread\nbs=4k\nsize=1M\n[a]\n[b]\nnumber_ios=10\n"
    cut = fio.for_instructions(job)
    assert fio.sections(cut)[2] == ("a", ["; iolab: instructions mode", f"number_ios={fio.INSTRUCTIONS_IOS}",
                                          "write_iolog=iolab-clock.0.log"])
    assert fio.sections(cut)[3] == ("b", ["number_ios=10", "; iolab: instructions mode",
                                          "write_iolog=iolab-clock.1.log"])
    untouched = "[global]\nnumber_ios=5\nnumjobs=2\n[a]\nrw=read\n"  # clones would share a clock log: none
    assert fio.for_instructions(untouched) == untouched
    # a group of one job (the SQPOLL mail's -numjobs=1 -group_reporting=1) reports that job alone: clocked;
    # two jobs in a group are reported as one: not
    grouped = "[global]\ngroup_reporting=1\nnumber_ios=5\n[a]\nnumjobs=1\n"
    assert fio.sections(fio.for_instructions(grouped))[2][1][-1] == "write_iolog=iolab-clock.0.log"
    two = "[global]\ngroup_reporting=1\nnumber_ios=5\n[a]\n[b]\n"
    assert fio.for_instructions(two) == two
    timed = fio.sections(fio.for_instructions("[global]\ntime_based\nruntime=3\nnumber_ios=5\n[a]\n"))
    assert timed[2] == ("a", ["; iolab: instructions mode", "time_based=0", f"io_size={fio.LOOPING_IO_SIZE}",
                              "write_iolog=iolab-clock.0.log"])
    own = fio.sections(fio.for_instructions("[global]\ntime_based\nruntime=3\nio_size=2M\n[a]\n"))
    assert own[2] == ("a", ["; iolab: instructions mode", f"number_ios={fio.INSTRUCTIONS_IOS}", "time_based=0",
                            "write_iolog=iolab-clock.0.log"])
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    small = cut.replace(f"number_ios={fio.INSTRUCTIONS_IOS}", "number_ios=7").replace("[b]\nnumber_ios=10\n", "")
    for ios in (7, 300):  # 300: more than the 256 4 KiB I/Os of the 1 MiB region, as a time-based job loops
        job_ios = small.replace("number_ios=7", f"number_ios={ios}").replace("[a]\n", "[a]\ntime_based=1\nruntime=30\n")
        placed = place_job(fio.for_instructions(job_ios), {}, str(tmp_path), None)
        (tmp_path / "job.fio").write_text(placed)
        done = subprocess.run(["fio", "--output-format=json", str(tmp_path / "job.fio")], capture_output=True,
                              text=True, check=True, timeout=60, cwd=tmp_path)  # its clock log goes there
        assert json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]["read"]["total_ios"] == ios


def test_completion_latencies_that_exceed_the_total_are_not_given():
    # fio 3.33 in a TCG guest (instructions mode), io_uring with sqthread_poll, iodepth=128,
    # 2000 random 4k reads of the guest's null_blk: every clat is the time since fio's
    # clock began (mean 16.0 guest s against a mean total latency of 3.2 guest ms), and all
    # 2000 fall in one histogram bin; the percentiles would read 16 s
    report = fixture("io_uring-sqthread_poll-3.33.json")
    read = report["jobs"][0]["read"]
    assert read["clat_ns"]["mean"] > 1000 * read["lat_ns"]["mean"]
    result = parse_report(report)
    assert not {"read_p50", "read_p99", "read_p99.9"} & set(result.metrics)
    assert "read_clat" not in result.histograms
    assert set(result.unmeasured) == {"read_p50", "read_p99", "read_p99.9"}
    assert "sqthread_poll" in result.unmeasured["read_p50"]
    assert result.metrics["read_bw"] == pytest.approx(read["bw_bytes"] / 2**20)  # the rest stands
    assert result.metrics["read_lat_mean"] == pytest.approx(read["lat_ns"]["mean"] / 1e3)
    assert not parse_report(fixture("randread-4k-psync-ext4.json")).unmeasured  # where clat <= lat


def test_the_report_says_which_rows_were_not_measured_and_why():
    from iolab.analysis.table import _unmeasured_note
    from iolab.cell.sample import Sample

    why = parse_report(fixture("io_uring-sqthread_poll-3.33.json")).unmeasured

    def cell(seq: int, env: dict) -> Sample:
        return Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant="base", workload="sqpoll",
                      status="ok", metrics={"read_bw": 1.0}, env=env)

    notes = _unmeasured_note(experiment(), [cell(0, {"unmeasured": why}), cell(1, {}), cell(2, {"unmeasured": why})])
    assert len(notes) == 1
    assert notes[0].startswith("sqpoll: rd p50 us, rd p99 us, rd p99.9 us not measured in 2 of 3 cells: fio's")
    assert _unmeasured_note(experiment(), [cell(1, {})]) == []


def test_instructions_mode_rates_come_from_each_job_s_io_span_in_us(tmp_path):
    """fio's bandwidth and IOPS are over its runtime in whole milliseconds, rounded up (a 10 ms job's rates
    fall on levels 10% apart); in instructions mode each one-process job writes fio's I/O log (version 3,
    us), and its rates are its bytes and I/Os over the span from its first I/O's issue to its files' close.
    Real fio writes the log; the rates differ from fio's by the rounding alone."""
    log = ("fio version 3 iolog\n19 /t/f add\n119 /t/f open\n123 /t/f read 249856 4096\n"
           "5660 /t/my file read 3104768 4096\n10123 /t/f close\n")
    assert fio.io_span_us(log) == 10000  # the first read at 123 us, the close at 10123 us
    assert fio.io_span_us("fio version 2 iolog\n/t/f add\n") is None
    assert fio.io_span_us("fio version 3 iolog\n19 /t/f add\n20 /t/f close\n") is None  # no I/O
    report = fixture("randread-4k-psync-ext4.json")
    read = report["jobs"][0]["read"]
    name = report["jobs"][0]["jobname"]
    span = read["runtime"] * 1000 - 600  # fio rounds the span up to its runtime's whole milliseconds
    fine = parse_report(report, {name: span}).metrics
    assert fine["read_bw"] == pytest.approx(read["io_bytes"] * 1e6 / span / 2**20, rel=1e-12)
    assert fine["read_iops"] == pytest.approx(read["total_ios"] * 1e6 / span, rel=1e-12)
    assert fine["read_bw"] > parse_report(report).metrics["read_bw"]
    assert parse_report(report, {"another job": span}).metrics["read_bw"] == pytest.approx(read["bw_bytes"] / 2**20)
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    job = fio.for_instructions(f"[r]\nrw=randread\nbs=4k\nsize=1M\nfilename={tmp_path / 'data'}\n")
    (tmp_path / "job.fio").write_text(job)
    subprocess.run(["fio", "--output-format=json", "--output=out.json", "job.fio"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=60)
    report = fio.load_report((tmp_path / "out.json").read_text())
    spans = fio.spans(job, tmp_path)
    assert set(spans) == {"r"} and spans["r"] > 0
    assert abs(spans["r"] - report["jobs"][0]["read"]["runtime"] * 1000) <= 2000  # fio's rounding, and its close
