"""`iolab patch` on a mail: its benchmark becomes the experiment's primary
workloads, the library's stay as exploratory rows, and its claim becomes
[claims] rows naming the workload and metric that measure each (the seed
mails as given, and a mail written here whose benchmark is a fio command)."""

import shutil
from pathlib import Path

import pytest

from iolab import load
from iolab.kernels import diff
from iolab.workloads import patch_pipeline
from tests.helpers import source_tarball

SEEDS = Path(__file__).parent / "fixtures" / "seeds"


def _experiment(tmp_path, monkeypatch, *paths: Path, timing="instructions", allow=(), files=None):
    """The experiment iolab patch's pipeline writes for these mails, on the
    Linux 7.2 excerpts (tests/fixtures/mail/linux-7.2) or on ``files``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    request = patch_pipeline.PatchRequest(tuple(map(str, paths)), source=str(source_tarball(tmp_path, files)),
                                          timing=timing, allow=tuple(allow), write=tmp_path / "exp.toml")
    written = patch_pipeline.experiment(request, lambda _: None)
    (tmp_path / "exp.toml").write_text(written.text)
    return load.load(tmp_path / "exp.toml"), written.text


def _old_side(mail: str) -> dict[str, str]:
    """The files a mail's one hunk each applies to: the hunk's old side at its line."""
    files = {}
    for file in diff.parse(mail).files:
        (hunk,) = file.hunks
        before = [f"/* line {n} */" for n in range(1, hunk.old_start)]
        files[file.path] = "\n".join(before + [line[1:] for line in hunk.lines if line[:1] != "+"]) + "\n"
    return files


def test_the_libmicro_seed_runs_its_four_cases_with_the_table_beside(tmp_path, monkeypatch):
    experiment, text = _experiment(tmp_path, monkeypatch, SEEDS / "ext4-write-begin-large-folio.txt",
                                   allow=["partial-series"])  # its [PATCH 2/2] alone
    cases = ["write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k"]
    assert [w.name for w in experiment.workload if not w.exploratory] == cases
    assert all(w.primary == ["per_call"] and w.fs == "ext4" for w in experiment.workload[:4])
    assert "left out 'ext4 write_u1k': the mail's benchmark runs it" in text
    assert [(r.label, r.workload, r.metric, r.better) for r in experiment.claims.row] == [
        (case, case, "per_call", "lower") for case in cases]


def test_the_dio_seed_runs_its_two_rows_as_per_op_latency(tmp_path, monkeypatch):
    experiment, _ = _experiment(tmp_path, monkeypatch, SEEDS / "f2fs-dio-iostat.txt")
    assert experiment.target.fs == "f2fs"
    mail = [w for w in experiment.workload if not w.exploratory]
    assert [(w.name, w.probe["op"], w.probe["ops"]) for w in mail] == [("direct_read", "pread", 50000),
                                                                       ("direct_write", "pwrite", 50000)]
    assert [(r.label, r.workload, r.metric) for r in experiment.claims.row] == [
        ("direct_read median", "direct_read", "lat_p50"), ("direct_read recheck", "direct_read", "lat_p50"),
        ("direct_write median", "direct_write", "lat_p50"), ("direct_write recheck", "direct_write", "lat_p50")]


def test_the_nat_seed_times_the_checkpoint_flush_and_lists_the_counts_it_does_not_measure(tmp_path, monkeypatch):
    # the seed is one line, its diff too: repaired against the source
    experiment, _ = _experiment(tmp_path, monkeypatch, SEEDS / "f2fs-nat-readahead.txt")
    churn = experiment.workload_named("churn")
    assert churn.probe["mode"] == "churn" and churn.primary == ["phase.flush_last_ns"]
    assert [p.name for p in experiment.collect.phase] == ["cp", "flush"]
    rows = {r.label: r for r in experiment.claims.row}
    assert (rows["Flush time (ms)"].workload, rows["Flush time (ms)"].metric) == ("churn", "phase.flush_last_ns")
    assert rows["NAT blocks read"].workload == "" and "count" in rows["NAT blocks read"].reason
    assert any("650000" in s for s in experiment.claims.scaled)
    assert experiment.run.iterations == 6  # 16 workers: counts vary from boot to boot, a paired test decides


MAIL = """From: A Developer <a@example.org>
Subject: [PATCH] io_uring/sqpoll: raise the task_work batch

Raising the batch lets the SQPOLL thread complete more per loop. With

  fio --ioengine=io_uring --direct=1 --iodepth=128 --bs=4k \\
      --rw=randread --sqthread_poll --filename=/dev/nullb0 --exec_prerun=/bin/true

reads go from 562K -> 574K IOPS. On a 512-CPU box will-it-scale shows no change.

Signed-off-by: A Developer <a@example.org>
---
 io_uring/sqpoll.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/io_uring/sqpoll.c b/io_uring/sqpoll.c
--- a/io_uring/sqpoll.c
+++ b/io_uring/sqpoll.c
@@ -20,7 +20,7 @@ static int __io_sq_thread(struct io_ring_ctx *ctx, bool cap_entries)
 	unsigned int to_submit;
 	int ret = 0;
 
-	to_submit = io_sqring_entries(ctx);
+	to_submit = io_sqring_entries(ctx) + 0;
 	/* if we're handling multiple rings, cap submit size for fairness */
 	if (cap_entries && to_submit > IORING_SQPOLL_CAP_ENTRIES_VALUE)
 		to_submit = IORING_SQPOLL_CAP_ENTRIES_VALUE;
"""


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_fio_command_mail_runs_that_job_named_after_the_subject(tmp_path, monkeypatch):
    path = tmp_path / "sqpoll.patch"
    path.write_text(MAIL)
    experiment, text = _experiment(tmp_path, monkeypatch, path, files=_old_side(MAIL))
    job = experiment.workload[0]
    assert job.name == "io_uring-sqpoll-raise-the-task_work-batc" and not job.exploratory
    assert "sqthread_poll" in job.job and "exec_prerun" not in job.job
    assert job.primary == ["read_iops"] and job.job.startswith("[io_uring-sqpoll-raise-the-task_work-batc]\n")
    # the mail's words chose the library's uring sqpoll, but its counts spread 37% over an A/A: left out, named
    assert [w.name for w in experiment.workload[1:]] == []
    assert "#   left out 'uring sqpoll' does not repeat in instructions mode" in text
    assert experiment.run.iterations == 6  # the SQPOLL thread interleaves with fio: its counts vary
    (row,) = experiment.claims.row
    assert (row.before, row.after, row.unit, row.workload, row.metric) == (562e3, 574e3, "IOPS", job.name,
                                                                         "read_iops")
    assert "will-it-scale: not a benchmark iolab runs" in experiment.claims.not_reproduced
    assert experiment.vm.disk == "null_blk" and any("null_blk" in item for item in experiment.claims.scaled)
    assert experiment.claims.refused == [
        "[io_uring-sqpoll-raise-the-task_work-batc] exec_prerun=/bin/true: runs a program "
        "(iolab patch --allow exec_prerun runs it)"]
    allowed, _ = _experiment(tmp_path, monkeypatch, path, allow=("exec_prerun",), files=_old_side(MAIL))
    assert "exec_prerun=/bin/true" in allowed.workload[0].job and allowed.claims.refused == []


def test_a_diff_without_a_description_is_the_library_alone(tmp_path, monkeypatch):
    path = tmp_path / "plain.patch"
    path.write_text(MAIL[MAIL.index("diff --git"):])
    experiment, text = _experiment(tmp_path, monkeypatch, path, files=_old_side(MAIL))
    assert experiment.claims is None and not any(w.exploratory for w in experiment.workload)
    assert "The workloads iolab's library" in text


POLLED = MAIL.replace("""  fio --ioengine=io_uring --direct=1 --iodepth=128 --bs=4k \\
      --rw=randread --sqthread_poll --filename=/dev/nullb0 --exec_prerun=/bin/true
""", """  sudo taskset -c 0 ./t/io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1 -n1 /dev/nvme0n1
""")


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("timing, disk, poll_queues", [("instructions", "model", 1), ("wall", "null_blk", None)])
def test_a_polled_job_on_the_mails_nvme_gets_a_device_that_polls(tmp_path, monkeypatch, timing, disk, poll_queues):
    # the plug-batch-tags mail (tests/corpus/mails/linux-block-plug-batch-tags.eml): t/io_uring -p1 on NVMe;
    # a loop device does not poll, and iolab patch refused the experiment it had written itself
    path = tmp_path / "polled.patch"
    path.write_text(POLLED)
    experiment, text = _experiment(tmp_path, monkeypatch, path, timing=timing, files=_old_side(POLLED))
    assert "hipri" in experiment.workload[0].job
    assert experiment.vm.disk == disk
    model = experiment.vm.device_model
    assert (model.poll_queues if model is not None else None) == poll_queues


ROTATIONAL = MAIL.replace("""  fio --ioengine=io_uring --direct=1 --iodepth=128 --bs=4k \\
      --rw=randread --sqthread_poll --filename=/dev/nullb0 --exec_prerun=/bin/true
""", """  With files stored on a SATA HDD, 8 readers reading files with 1MB buffered
  I/Os go from 122 MB/s to 167 MB/s:
  fio --ioengine=psync --rw=read --bs=1M --numjobs=8 --size=1G
""")


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("timing, disk", [("instructions", "model"), ("wall", "ram")])
def test_a_mail_about_an_hdd_gets_a_rotational_modeled_device(tmp_path, monkeypatch, timing, disk):
    # the rotational readahead mail (tests/corpus/mails/linux-block-ra-rotational.eml): its throughput on an
    # HDD is a disk's time, which instructions mode sees only on the modeled device (before: a RAM image)
    path = tmp_path / "hdd.patch"
    path.write_text(ROTATIONAL)
    experiment, text = _experiment(tmp_path, monkeypatch, path, timing=timing, files=_old_side(ROTATIONAL))
    assert experiment.vm.disk == disk
    model = experiment.vm.device_model
    if timing == "instructions":
        assert model is not None and model.rotational and model.mib_per_s == 160 and model.seek_nsec
        assert "a rotational disk" in text
    else:
        assert model is None
