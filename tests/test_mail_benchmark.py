"""A patch mail's benchmark as workloads: every form, from the seed mails as
given and from mails written here; what is refused or not reproduced is
listed, and nothing a mail names is run or opened."""

import shutil
from pathlib import Path

import pytest

from iolab.engines import fio_jobs
from iolab.mail.benchmark import MAX_FILES, MAX_JOB_SIZE, MAX_JOBS, benchmark
from iolab.mail.fio_text import fio_command
from iolab.mail.environment import environment
from iolab.mail.claimed import claims

SEEDS = Path(__file__).parent / "fixtures" / "seeds"
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def _bench(text: str, subject: str, allow: tuple[str, ...] = ()):
    return benchmark(text, subject, claims(text), allow)


def _options(job: str) -> dict[str, str]:
    return {k: v for line in job.splitlines() if not line.startswith("[")
            for k, _, v in [line.partition("=")]}


def test_libmicro_cases_become_the_probe_batch_mode():
    bench = _bench((SEEDS / "ext4-write-begin-large-folio.txt").read_text(),
                   "[PATCH v3 2/2] ext4: avoid tail write_begin walk for uptodate folios")
    assert [(w.name, w.probe["mode"], w.probe["case"]) for w in bench.workloads] == [
        (case, "batch", case) for case in ("write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k")]
    assert bench.environment.fs == "ext4"
    assert any("batches" in note for note in bench.scaled)


def test_prose_parameters_and_the_claims_rows_name_the_operations():
    bench = _bench((SEEDS / "f2fs-dio-iostat.txt").read_text(),
                   "[PATCH] f2fs: skip direct I/O iostat work when disabled")
    assert [(w.name, w.probe) for w in bench.workloads] == [
        ("direct_read", {"mode": "lat", "op": "pread", "bs": "4k", "file_size": "64M", "direct": True, "ops": 50000}),
        ("direct_write", {"mode": "lat", "op": "pwrite", "bs": "4k", "file_size": "64M", "direct": True,
                          "ops": 50000})]
    assert bench.environment.fs == "f2fs"


def test_a_shell_recipe_of_metadata_churn_becomes_the_probe_churn_with_the_checkpoint_timed():
    bench = _bench((SEEDS / "f2fs-nat-readahead.txt").read_text(),
                   "[PATCH] f2fs: optimize NAT block loading during checkpoint write")
    (churn,) = bench.workloads
    assert churn.origin == "recipe"
    assert churn.probe == {"mode": "churn", "phases": "create,sync,delete,drop_caches,sync", "report_phase": "sync",
                           "files": MAX_FILES, "workers": 16, "delete_every": 455}
    assert churn.primary == ("phase.flush_last_ns",)
    assert bench.environment.checkpoint
    assert f"files 650000 -> {MAX_FILES} (the VM: emulated, 1-2 vCPUs)" in bench.scaled


MAIL = """Subject: [PATCH] io_uring/sqpoll: raise the task_work batch

Tested with:

  $ fio --name=randread --ioengine=io_uring --direct=1 --iodepth=128 \\
        --bs=4k --rw=randread --sqthread_poll --filename=/dev/nullb0 \\
        --runtime=30 --time_based --numjobs=16 --output-format=json \\
        --exec_prerun=/bin/true

which goes from 562K -> 574K IOPS. On a 512-CPU box will-it-scale shows
nothing either way.
"""


@needs_fio
def test_a_fio_command_line_runs_its_job_scaled_with_what_is_refused_and_left_out_listed():
    bench = _bench(MAIL, "[PATCH] io_uring/sqpoll: raise the task_work batch")
    (job,) = bench.workloads
    assert job.name == "io_uring-sqpoll-raise-the-task_work-batc"[:40]
    assert job.origin == "fio command line"
    assert job.job.splitlines()[0] == "[randread]"
    options = _options(job.job)
    assert options["sqthread_poll"] == "" and options["iodepth"] == "128" and options["rw"] == "randread"
    assert options["numjobs"] == str(MAX_JOBS)
    assert "filename" not in options and "runtime" not in options and "exec_prerun" not in options
    assert "output-format" not in options
    assert fio_jobs.jobs(job.job)[0].size == MAX_JOB_SIZE
    assert bench.environment.device == "null_blk" and bench.environment.device_source == "/dev/nullb0"
    # the SQ thread shares the VM's 1 vCPU with fio, which polls: said (bench/data/sqpoll-aa-2026-11-28.txt)
    assert any(item.startswith("[randread] sqthread_poll: the SQ thread and fio") and "1 vCPU" in item
               for item in bench.scaled)
    assert bench.refused == ("[randread] exec_prerun=/bin/true: runs a program (iolab patch --allow exec_prerun "
                             "runs it)",)
    assert "will-it-scale: not a benchmark iolab runs" in bench.not_reproduced
    assert any(item.startswith("a 512-CPU machine") for item in bench.not_reproduced)


@needs_fio
def test_a_refused_option_runs_when_the_user_allows_it_by_name():
    bench = _bench(MAIL, "[PATCH] io_uring/sqpoll: raise the task_work batch", allow=("exec_prerun",))
    assert bench.refused == ()
    assert _options(bench.workloads[0].job)["exec_prerun"] == "/bin/true"


@needs_fio
def test_fio_itself_judges_the_job():
    bench = _bench("fio --name=x --rw=randread --iodepth=lots --bs=4k\n", "[PATCH] block: x")
    assert bench.workloads == ()
    assert len(bench.not_reproduced) == 1 and "fio refuses the job" in bench.not_reproduced[0]


@needs_fio
def test_a_quoted_job_file_and_inline_option_lists():
    text = """Subject: [PATCH] xfs: faster buffered writes

The job:

[global]
ioengine=psync
size=1g
[seqwrite]
rw=write
bs=64k
filename=/mnt/test/f

Also (all `fsync=1`):
A: rw=randwrite bs=4k iodepth=1 ioengine=pvsync2 # XFS
"""
    bench = _bench(text, "[PATCH] xfs: faster buffered writes")
    assert [w.origin for w in bench.workloads] == ["fio job", "fio job"]
    quoted, inline = bench.workloads
    assert quoted.job == "[global]\nioengine=psync\nsize=64MiB\n[seqwrite]\nrw=write\nbs=64k\n"
    assert "size=1g -> 64MiB" in " ".join(bench.scaled)
    assert inline.name.endswith("-A") and _options(inline.job)["fsync"] == "1"
    assert bench.environment.fs == "xfs"


@needs_fio
def test_t_io_uring_is_fio_io_uring_engine_with_its_defaults():
    bench = _bench("Peak: t/io_uring -d64 -s16 -c16 -p0 -B1 -F1 -n2 /dev/nvme0n1 gives 1.2M IOPS\n",
                   "[PATCH] nvme: x")
    (job,) = bench.workloads
    options = _options(job.job)
    assert options == {"ioengine": "io_uring", "thread": "", "iodepth": "64", "iodepth_batch_submit": "16",
                       "iodepth_batch_complete_min": "16", "bs": "4096", "fixedbufs": "", "registerfiles": "",
                       "numjobs": "2", "direct": "1", "rw": "randread", "size": "64MiB"}
    assert bench.environment.device == "raw" and job.raw


@needs_fio
def test_t_io_uring_on_a_file_runs_on_a_file_of_the_target_and_says_so():
    bench = _bench("t/io_uring -d32 -p0 /mnt/testfile\n", "[PATCH] ext4: x")
    (job,) = bench.workloads
    assert _options(job.job)["iodepth"] == "32" and bench.not_reproduced == ()
    assert "t/io_uring's file /mnt/testfile: a file on iolab's target" in bench.scaled


@needs_fio
def test_dd_is_a_sequential_job():
    bench = _bench("dd if=/dev/zero of=/mnt/f bs=1M count=4096 oflag=direct conv=fsync\n", "[PATCH] ext4: x")
    (job,) = bench.workloads
    assert _options(job.job) == {"rw": "write", "bs": "1M", "ioengine": "psync", "direct": "1", "end_fsync": "1",
                                 "size": "64MiB"}
    copy = _bench("dd if=/mnt/a of=/mnt/b bs=1M\n", "[PATCH] ext4: x")
    assert copy.workloads == () and "copy" in copy.not_reproduced[0]


@needs_fio
def test_t_io_uring_modes_explicitly_off_are_its_defaults_and_on_are_not_fio():
    off = _bench("t/io_uring -d32 -N0 -a0 -S0 /dev/nvme0n1\n", "[PATCH] nvme: x")
    assert [_options(w.job)["iodepth"] for w in off.workloads] == ["32"] and off.not_reproduced == ()
    on = _bench("t/io_uring -d32 -N1 /dev/nvme0n1\n", "[PATCH] nvme: x")
    assert on.workloads == () and on.not_reproduced == (
        "t/io_uring -N 1: no-op, aio or sync modes are not fio's io_uring",)


@needs_fio
@pytest.mark.parametrize("flags, synced", [
    ("conv=notrunc oflag=dsync", {"sync": "dsync"}),  # O_DSYNC: each write waits for its data
    ("oflag=sync", {"sync": "1"}),  # O_SYNC
    ("conv=fsync,notrunc", {"end_fsync": "1"}),  # one fsync before dd ends
    ("conv=fdatasync", {"end_fsync": "1"}),
    ("conv=notrunc", {}),
])
def test_dd_syncs_as_dd_does(flags, synced):
    (job,) = _bench(f"dd if=/dev/zero of=/mnt/f bs=4k count=16 {flags}\n", "[PATCH] ext4: x").workloads
    options = _options(job.job)
    assert {k: v for k, v in options.items() if k in ("sync", "end_fsync", "fsync", "fdatasync")} == synced


def test_buffered_prose_is_a_buffered_probe_as_it_is_a_buffered_fio_job():
    text = "4KiB buffered reads of a 64MiB file, 50,000 ops; O_DIRECT shows no change.\n"
    (probe,) = _bench(text, "[PATCH] ext4: x").workloads
    assert probe.probe is not None and probe.probe["direct"] is False


def test_the_environment_the_mail_names():
    text = """mkfs.btrfs -f -O no-holes /dev/sdb; mount -o compress-force=zstd:3 /dev/sdb /mnt
with vm.dirty_bytes=64MB and vm.dirty_background_bytes = 32MB, inside a 244MB memcg,
on a SATA HDD."""
    env, missing = environment(text, "[PATCH] btrfs: read compressed extents in one go", [])
    assert env.fs == "btrfs" and env.mkfs_options == ("-f", "-O", "no-holes")
    assert env.mount_options == "compress-force=zstd:3"
    assert env.sysctl == {"vm.dirty_bytes": 64 << 20, "vm.dirty_background_bytes": 32 << 20}
    assert env.memory_max == 244 << 20
    assert env.device == "rotational" and missing == []
    low, _ = environment("8 threads in the low memory scenario on a memory-backed disk", "erofs: x", [])
    assert low.memory_max == 256 << 20 and low.device == "ram" and low.fs == "erofs"


def test_a_mail_without_a_benchmark_gives_no_workload():
    bench = _bench("This fixes a leak on the error path.\n", "[PATCH] ext4: fix a leak")
    assert bench.workloads == () and bench.not_reproduced == ()


@needs_fio
def test_a_job_file_quoted_last_and_prose_that_mentions_fio_without_a_command():
    text = """Results (fio, 4k randwrite, qd=32, 4 jobs) with this fio job:

[global]
ioengine=io_uring
direct=1
numjobs=4
runtime=60
time_based
filename=/dev/nvme0n1

[randwrite]
rw=randwrite"""
    bench = _bench(text, "[PATCH v2 3/5] block: plug small writes harder")
    (job,) = bench.workloads
    assert job.origin == "fio job" and job.raw and bench.environment.device == "raw"
    assert job.job == "[global]\nioengine=io_uring\ndirect=1\nnumjobs=4\n[randwrite]\nrw=randwrite\nsize=64MiB\n"
    assert bench.not_reproduced == ()  # "fio, 4k randwrite" is no command line


@needs_fio
def test_only_a_job_that_names_a_device_runs_on_the_raw_device():
    text = ("fio --name=raw --rw=randread --bs=4k --direct=1 --filename=/dev/nvme0n1\n\n"
            "dd if=/dev/zero of=/mnt/test/file bs=1M count=64\n")
    bench = _bench(text, "[PATCH] nvme: x")
    assert [(w.origin, w.raw) for w in bench.workloads] == [("fio command line", True), ("dd", False)]


RECIPE = """Reproduce the punch-heavy case with:

1. fallocate -l 64M big
2. for i in $(seq 0 1023); do fallocate -p -o $((i*65536)) -l 4096 big; done
3. sync
4. look at the time the sync took

        before    after
punch    812 ms   798 ms
"""


def test_a_recipe_iolab_cannot_map_runs_only_as_a_script_the_user_allows():
    bench = _bench(RECIPE, "[PATCH] ext4: x")
    assert bench.workloads == ()  # never run by default
    assert bench.not_reproduced == ("the recipe 'fallocate -l 64M big' (4 steps): its commands map onto no iolab "
                                    "workload; iolab patch --allow script runs it as a shell script",)
    (script,) = _bench(RECIPE, "[PATCH] ext4: x", allow=("script",)).workloads
    assert script.script == ("fallocate -l 64M big\nfor i in $(seq 0 1023); do fallocate -p -o $((i*65536)) -l 4096 "
                             "big; done\nsync\n") and script.job is None and script.probe is None
    assert _bench(RECIPE, "[PATCH] ext4: x", allow=("script",)).not_reproduced == (
        "recipe step 4 'look at the time the sync took': prose, not a command: left out of the script",)


def test_a_numbered_list_of_prose_is_no_recipe():
    text = "Changes since v2:\n\n1. rename the helper\n2. fix the comment\n3. rebase on 7.2\n"
    assert _bench(text, "[PATCH v3] ext4: x").not_reproduced == ()
    assert _bench(text, "[PATCH v3] ext4: x", allow=("script",)).workloads == ()


@needs_fio
def test_a_fio_command_line_with_one_dash_options_is_read_as_fio_reads_it():
    # fio takes its long options with one dash too (getopt_long_only): the xfs i_rwsem mail's command,
    # tests/corpus/mails/linux-xfs-buffered-read-no-rwsem.eml, line 79
    text = 'Use the following command to test:\nfio -ioengine=libaio -filename=testfile -bs=4k -rw=randrw ' \
           '-numjobs=16 -name="randrw"\n'
    bench = _bench(text, "[PATCH] xfs: Remove i_rwsem lock in buffered read")
    (job,) = bench.workloads
    assert job.origin == "fio command line" and "[randrw]" in job.job.splitlines()  # options before it: global
    options = _options(job.job)
    assert options["rw"] == "randrw" and options["ioengine"] == "libaio" and options["bs"] == "4k"
    assert options["numjobs"] == str(MAX_JOBS)
    assert bench.not_reproduced == ()
    # the VM iolab patch writes has 1 vCPU: the 4 jobs share it, they are not "the VM's vCPUs"
    assert "[global] numjobs=16 -> 4 (taking turns on the VM's 1 vCPU)" in bench.scaled
    # a flag without a value (-group_reporting) and a word that is no option (a job file) stay apart
    sections, ignored = fio_command("fio -direct=1 -group_reporting jobs.fio", "x")
    assert sections == [("x", {"direct": "1", "group_reporting": ""})]
    assert ignored == ["jobs.fio: a job file the mail does not quote"]


@needs_fio
def test_one_file_that_the_mails_jobs_share_stays_shared_on_the_target():
    # the xfs i_rwsem mail's 16 jobs all read and write -filename=testfile: the lock it removes is that
    # one inode's, so jobs with a file each would measure something else
    text = "fio -ioengine=libaio -filename=testfile -bs=4k -rw=randrw -numjobs=16 -name=randrw\n"
    (job,) = _bench(text, "[PATCH] xfs: Remove i_rwsem lock in buffered read").workloads
    assert _options(job.job)["filename"] == "testfile"
    # the jbd2 mail's 10 jobs on /mnt/foo: the same file, on the target
    bench = _bench("fio -filename=/mnt/foo -direct=1 -rw=write -bs=4k -size=10G -numjobs=10 -name=test\n",
                   "[PATCH] jbd2: speed up jbd2_transaction_committed()")
    (job,) = bench.workloads
    assert _options(job.job)["filename"] == "foo" and not job.raw
    assert "[global] filename=/mnt/foo -> foo (on the target: its jobs share it, as the mail's do)" in bench.scaled
    assert fio_jobs.jobs(job.job)[0].filename == "foo"
    # one job's own file is iolab's to place; a device stays the VM's
    (alone,) = _bench("fio --name=w --rw=write --bs=4k --filename=/mnt/f\n", "[PATCH] ext4: x").workloads
    assert "filename" not in _options(alone.job)
    (device,) = _bench("fio --name=w --rw=write --numjobs=2 --filename=/dev/nvme0n1\n", "[PATCH] nvme: x").workloads
    assert "filename" not in _options(device.job) and device.raw
