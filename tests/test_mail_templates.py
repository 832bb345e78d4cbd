"""A claimed row is checked only by a job that gives its metric: a fio command written as a template
(``-rw=$rw``) becomes a job per value the mail gives (a loop, or the rows that name one), each tied to
its rows; a template without values is said to be one; and a mail's one benchmark command, even given
twice, checks the rows. Fixtures: real list mails of the corpus (tests/corpus/mails/)."""

import shutil
from pathlib import Path

import pytest

from iolab import mail as mails
from iolab.engines import fio_jobs
from iolab.mail.benchmark import benchmark
from iolab.mail.claimed import claims
from iolab.mail.reading import reading
from iolab.workloads import mail as from_mail

MAILS = Path(__file__).parent / "corpus" / "mails"
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
JBD2 = MAILS / "linux-ext4-jbd2-transaction-committed-v2.eml"


def _read(path: Path):
    return reading(mails.read([path], cover_alone=True))


def _gives(workload, metric: str) -> bool:
    """Whether the workload's fio job gives the metric (a read job gives no write IOPS)."""
    directions = set().union(*(job.directions for job in fio_jobs.jobs(workload.job)))
    return metric.split("_")[0] in directions


@needs_fio
def test_a_template_command_runs_a_job_per_value_its_rows_name_each_checking_only_its_rows():
    # the jbd2 mail: "fio ... -rw=$rw ... -overwrite=1" over rows overwrite, read, rand overwrite, randread
    read = _read(JBD2)
    bench = read.benchmark
    rws = {w.name: fio_jobs.jobs(w.job)[0].rw for w in bench.workloads}
    assert sorted(rws.values()) == ["randread", "randwrite", "read", "write"]
    assert all(w.template == "rw=$rw" for w in bench.workloads)
    assert not any("template" in item for item in bench.not_reproduced)
    write = next(w for w in bench.workloads if rws[w.name] == "write")
    assert write.rows == ("overwrite IOPS", "overwrite BW") and "$rw=write" in write.source
    assert "overwrite=1" in write.source  # why an overwrite row is a write, said
    matched = {m.claim.label: m for m in from_mail.match(list(read.claims), bench.workloads)}
    want = {"overwrite IOPS": ("write", "write_iops"), "read BW": ("read", "read_bw"),
            "rand overwrite IOPS": ("randwrite", "write_iops"), "randread BW": ("randread", "read_bw")}
    for label, (rw, metric) in want.items():
        assert (rws[matched[label].workload], matched[label].metric) == (rw, metric)
    workloads = {w.name: w for w in bench.workloads}
    assert all(_gives(workloads[m.workload], m.metric) for m in matched.values())
    assert len(matched) == 8 and all(m.workload for m in matched.values())


@needs_fio
def test_a_row_is_never_checked_by_a_metric_its_job_cannot_give():
    # the same mail with its template filled in as one read job: the write rows are not checked by it
    text = JBD2.read_text(errors="replace").replace("-rw=$rw", "-rw=read")
    bench = benchmark(text, "[PATCH v2] jbd2: speed up jbd2_transaction_committed()", claims(text))
    (job,) = bench.workloads
    matched = {m.claim.label: m for m in from_mail.match(claims(text), bench.workloads)}
    assert (matched["read IOPS"].workload, matched["read IOPS"].metric) == (job.name, "read_iops")
    for label in ("overwrite IOPS", "overwrite BW", "rand overwrite IOPS"):
        assert (matched[label].workload, matched[label].metric) == ("", "")
        assert matched[label].reason.startswith("a write row:") and "only reads (rw=read)" in matched[label].reason


@needs_fio
def test_a_template_the_mail_gives_no_value_for_is_said_and_checks_nothing():
    command = JBD2.read_text(errors="replace").split("fio -filename", 1)[1].split("\n\n")[0]
    text = f"fio -filename{command}\n\nBefore: IOPS=88.2k\nAfter: IOPS=105k\n"
    found = claims(text)
    bench = benchmark(text, "[PATCH] jbd2: x", found)
    assert bench.workloads == ()
    assert any("a template (rw=$rw): the mail gives no value for $rw" in item for item in bench.not_reproduced)
    assert all(m.workload == "" for m in from_mail.match(found, bench.workloads))


@needs_fio
def test_a_loop_over_the_variable_gives_its_values_and_a_row_naming_none_is_not_checked():
    text = ("for rw in read randwrite; do\n  fio --name=t --ioengine=psync --bs=4k --rw=$rw --size=16M\ndone\n\nResults:\n\n"
            "            before      after\nrandwrite   100 MiB/s   120 MiB/s\nlatency     10 us       9 us\n")
    found = claims(text)
    bench = benchmark(text, "[PATCH] ext4: x", found)
    assert [fio_jobs.jobs(w.job)[0].rw for w in bench.workloads] == ["read", "randwrite"]
    assert "the mail's loop" in bench.workloads[0].source
    matched = {m.claim.label: m for m in from_mail.match(found, bench.workloads)}
    assert matched["randwrite"].metric == "write_bw"
    assert matched["latency"].workload == "" and "template (rw=$rw)" in matched["latency"].reason
    assert any("'latency' name none of these values" in item for item in bench.not_reproduced)


@needs_fio
def test_a_mails_one_command_given_twice_is_one_workload_that_checks_its_rows():
    # the plug-batch-tags mail pastes the same t/io_uring command under "one thread" and "two thread"
    read = _read(MAILS / "linux-block-plug-batch-tags.eml")
    (workload,) = read.benchmark.workloads
    matched = from_mail.match(list(read.claims), read.benchmark.workloads)
    iops = [m for m in matched if m.claim.unit == "IOPS"]
    assert len(iops) == 5 and {(m.workload, m.metric) for m in iops} == {(workload.name, "read_iops")}
    (share,) = [m for m in matched if m.claim.unit == "%"]  # a profile's share: no metric of the job
    assert share.workload == "" and "does not measure" in share.reason


@needs_fio
def test_a_t_io_uring_template_behind_taskset_is_read_whole_and_filled_from_the_rows():
    # the ublk batch cover letter: "taskset -c 0-31 fio/t/io_uring -p0 -n $JOBS -r 30 /dev/ublkb0" over rows
    # "16 jobs IO" and "single job IO" (the reader gives the first as 'jobs IO': its figure is lost there).
    # On /dev/ublkb0 it is not run: the VM has no ublk server, and a job on its own target measures no ublk
    read = _read(MAILS / "linux-block-ublk-batch-io-cover.eml")
    assert read.benchmark.workloads == ()
    (why,) = [item for item in read.benchmark.not_reproduced if "/dev/ublkb0" in item]
    assert "a ublk device" in why and why.endswith("not run")
    # the same mail on a device the VM has: read whole (it was cut at $JOBS), -n $JOBS filled from the rows
    text = (MAILS / "linux-block-ublk-batch-io-cover.eml").read_text(errors="replace").replace("/dev/ublkb0",
                                                                                              "/dev/nullb0")
    found = claims(text)
    bench = benchmark(text, "[PATCH V6 00/24] ublk: add UBLK_F_BATCH_IO", found)
    (job,) = bench.workloads
    assert job.source.endswith("fio/t/io_uring -p0 -n $JOBS -r 30 /dev/nullb0") and job.raw
    assert job.template == "numjobs=$JOBS" and job.rows == ("single job IO",) and "$JOBS=1" in job.source
    assert fio_jobs.jobs(job.job)[0].numjobs == 1
    (loose,) = [item for item in bench.not_reproduced if "a template (numjobs=$JOBS)" in item]
    assert "'jobs IO'" in loose and "not checked" in loose
    matched = {m.claim.label: m for m in from_mail.match(found, bench.workloads)}
    assert (matched["single job IO"].workload, matched["single job IO"].metric) == (job.name, "read_iops")
    assert matched["jobs IO"].workload == "" and "template (numjobs=$JOBS)" in matched["jobs IO"].reason


@needs_fio
def test_a_command_carried_on_over_one_dash_lines_is_read_whole_its_cpus_left_out():
    # the ext4 endio cover letter: "fio -direct=1 ... -bs=4k" then lines "-size=2G -numjobs=1 ..." and
    # "-filename=/test/test -name=Rand_write_Testing --cpus_allowed=1": read to its end (the lines were
    # lost), and CPU 1 of the mail's machine is not pinned on the VM's 1 vCPU, where fio would fail
    read = _read(MAILS / "linux-ext4-dio-overwrite-irq-endio-cover.eml")
    (job,) = read.benchmark.workloads
    (fio_job,) = fio_jobs.jobs(job.job)
    assert fio_job.numjobs == 1 and fio_job.filename == "test" and "cpus_allowed" not in job.job
    assert "[Rand_write_Testing] cpus_allowed=1 -> left out (the mail's CPUs; the VM has 1 vCPU)" in \
        read.benchmark.scaled
    # the exact-nr-segs mail: "sudo taskset -c 0,1 ./t/io_uring ... -n2" carried on by "-r4 /dev/nvme0n1
    # /dev/nvme1n1": its devices read (a raw device job)
    (uring,) = _read(MAILS / "io-uring-exact-nr-segs.eml").benchmark.workloads
    assert uring.raw and uring.source.endswith("/dev/nvme0n1 /dev/nvme1n1")


def test_a_job_on_a_device_no_vm_here_has_is_not_run_on_another():
    # the NVMe passthrough IOPOLL mail: "fio/t/io_uring ... -u1 -n1 /dev/ng0n1" (io_uring passthrough to
    # an NVMe controller): it ran as a plain random read of iolab's target, which measures nothing of it
    read = _read(MAILS / "io-uring-nvme-iopoll-local.eml")
    assert read.benchmark.workloads == ()
    (why,) = [item for item in read.benchmark.not_reproduced if "/dev/ng0n1" in item]
    assert "NVMe generic character device" in why and why.endswith("not run")
    # a fio job whose filename= is such a device, likewise
    bench = benchmark("fio --name=u --ioengine=io_uring --rw=randread --filename=/dev/ublkb0\n",
                      "[PATCH] ublk: x", [])
    assert bench.workloads == () and any("(fio command line) on /dev/ublkb0: a ublk device" in item
                                         for item in bench.not_reproduced)
