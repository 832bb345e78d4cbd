"""Real fio on real loop devices with real mkfs and mount (needs root)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from iolab import analysis
from iolab.process import reclaim
from iolab.report import headers
from iolab.run import runner
from iolab.store import Store
from tests.helpers import REPO, attached_loops, experiment, iolab, iolab_mounts, wait_while_running

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.usefixtures("needs_root_tools", "clean_system")]

SHORT_JOB = """
[global]
ioengine=psync
rw=randread
bs=4k
size=32M
runtime=300ms
time_based=1
[r]
"""


def loop_experiment(fs="ext4", variants=None, iterations=2, job=SHORT_JOB, **target):
    """On a loop device of 320 MiB: buffered against direct reads (or the variants given), seed 1."""
    return experiment(
        variants or [{"name": "buffered", "fio": {"direct": 0}}, {"name": "direct", "fio": {"direct": 1}}],
        name=f"integration {fs}", target={"fs": fs, "size": "320MiB", **target},
        workload=[{"name": "randread", "job": job}], run={"iterations": iterations, "seed": 1}, report=None)


def run(tmp_path, exp):
    store = Store(tmp_path / "store.db")
    run_id = runner.run(exp, store)
    return store, run_id


@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs"])
def test_fresh_filesystem_each_cell(tmp_path, fs):
    if fs == "btrfs" and not os.path.exists("/usr/bin/mkfs.btrfs") and not os.path.exists("/sbin/mkfs.btrfs"):
        pytest.skip("mkfs.btrfs not installed")
    store, run_id = run(tmp_path, loop_experiment(fs))
    samples = store.samples(run_id)
    assert [s.status for s in samples] == ["ok"] * 4, [s.error for s in samples]
    for sample in samples:
        assert sample.metrics["read_iops"] > 0 and sample.metrics["read_p99"] > 0
        assert sample.env["prepared"]["fs"] == fs
        assert sample.env["fio"].startswith("fio-")
        assert "directory=" in store.artefact(run_id, sample.seq, "job.fio")
    assert store.run(run_id).status == "complete"
    # the block size mkfs chose is measured (statvfs) and said: mke2fs takes 1 KiB under 512 MiB
    result = analysis.analyse(store.run(run_id), samples)
    size = {"ext4": 1024, "xfs": 4096, "btrfs": 4096}[fs]
    assert result.block_sizes == {fs: [size]}
    assert f"{fs} ({size // 1024}KiB blocks) on loop" in "\n".join(headers.header(result))
    assert any("mke2fs chooses them" in note for note in result.notes) == (fs == "ext4")


def test_erofs_image_plain_and_lz4(tmp_path):
    job = "[global]\nrw=read\nbs=1M\nsize=8M\n[r]\nfilename=f0\n"
    exp = loop_experiment(
        "erofs",
        variants=[{"name": "plain", "mkfs_options": []}, {"name": "lz4", "mkfs_options": ["-zlz4"]}],
        job=job,
        files=[{"name": "f{n}", "count": 2, "size": "8MiB", "content": "compressible"}],
    )
    store, run_id = run(tmp_path, exp)
    samples = store.samples(run_id)
    assert [s.status for s in samples] == ["ok"] * 4, [s.error for s in samples]
    assert {s.env["prepared"]["fs"] for s in samples} == {"erofs"}
    assert all(s.metrics["read_bw"] > 0 for s in samples)


def test_fio_error_is_a_failed_sample_with_its_text(tmp_path):
    exp = loop_experiment(variants=[{"name": "ok"}, {"name": "bad", "fio": {"direct": 1, "bs": 100}}], iterations=1)
    store, run_id = run(tmp_path, exp)
    by_variant = {s.variant: s for s in store.samples(run_id)}
    assert by_variant["ok"].status == "ok"
    assert by_variant["bad"].status == "failed" and by_variant["bad"].metrics == {}
    assert "Invalid argument" in by_variant["bad"].error
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert result.failures and result.rows[0].figures["bad"].n == 0


def test_a_failed_mount_says_the_kernels_reason_once_for_its_cells(tmp_path):
    """mount says only "wrong fs type, bad option, ...": the kernel's line
    (xfs: Unknown parameter 'noatimee') comes with it, and the two cells'
    errors, which differ in their directories (and may in their loop
    devices), make one note. (Declared to fail, so that the run does not stop
    early: iolab.run.early.)"""
    exp = loop_experiment("xfs", variants=[{"name": "ok"}, {"name": "typo", "mount_options": "noatimee",
                                                            "fails": {"randread": "a typo"}}])
    store, run_id = run(tmp_path, exp)
    bad = [s for s in store.samples(run_id) if s.variant == "typo"]
    assert [s.status for s in bad] == ["failed"] * 2
    for sample in bad:
        assert "mount -t xfs failed" in sample.error and "kernel: xfs: Unknown parameter 'noatimee'" in sample.error
    [failure] = analysis.analyse(store.run(run_id), store.samples(run_id)).failures
    assert failure.cells == sorted(s.seq for s in bad)
    assert "mount: <cell dir>/mnt: wrong fs type" in failure.error and "/dev/loopN" in failure.error


def test_a_mistyped_mount_option_stops_the_run_early(tmp_path):
    """As a user runs it: exit 1, the header names the variant and the
    kernel's reason, two rounds measured of 6 (one cell a round: two judged)."""
    exp_file = tmp_path / "typo.toml"
    exp_file.write_text(textwrap.dedent(f"""
        name = "typo"
        [target]
        fs = "xfs"
        size = "320MiB"
        [[variant]]
        name = "ok"
        [[variant]]
        name = "typo"
        mount_options = "noatimee"
        [[workload]]
        name = "randread"
        job = \"\"\"{SHORT_JOB}\"\"\"
        [run]
        iterations = 6
        """))
    done = iolab("run", "--quiet", "--verbose", str(exp_file), store=tmp_path / "store.db")  # the header in full
    assert done.returncode == 1, done.stderr
    header = " ".join(done.stdout.split("\n\n")[0].split())
    assert "run 1 (failed): 2 of 6 rounds (4 of 12 cells)" in header
    assert "failed: variant 'typo' failed its 2 cells of rounds 0-1 alike, so the run stopped there" in header
    assert "mount: <cell dir>/mnt: wrong fs type" in header and "kernel: xfs: Unknown parameter 'noatimee'" in header


def test_a_a_experiment_finds_no_change(tmp_path):
    same = {"fio": {"direct": 1}}
    exp = loop_experiment(variants=[{"name": "A", **same}, {"name": "A2", **same}], iterations=9)
    # alpha 0.01 keeps this test's own false-alarm rate near 1%; the A/A
    # calibration at alpha 0.05 is measured in bench/, not asserted here.
    exp = exp.model_copy(update={"report": exp.report.model_copy(update={"alpha": 0.01})})
    store, run_id = run(tmp_path, exp)
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    verdicts = {row.metric.name: row.comparisons["A2"].verdict for row in result.rows}
    # no change found anywhere; a binned percentile whose tied pairs leave too
    # few to test is refused ("insufficient"), never called a change
    assert not {"better", "worse"} & set(verdicts.values()), verdicts
    assert verdicts["read_bw"] == "same", verdicts
    # and it could have failed: 9 paired rounds of bandwidth (a continuous
    # metric, no tied pairs) can reach Holm's 0.01/2 (2/2**9 = 0.0039); a
    # percentile read from histogram bins often ties in A/A and cannot
    bw = next(row for row in result.rows if row.metric.name == "read_bw")
    assert bw.comparisons["A2"].min_p < 0.005


def test_large_real_effect_is_significant(tmp_path):
    # O_DIRECT 4 KiB vs 1 MiB reads of the same file: many times the
    # bandwidth, whatever else the machine is doing meanwhile.
    variants = [{"name": "4k", "fio": {"direct": 1, "bs": "4k"}}, {"name": "1m", "fio": {"direct": 1, "bs": "1m"}}]
    # paired by round: 7 rounds are the fewest at which p can pass Holm's alpha/2 for the 2 primary rows
    store, run_id = run(tmp_path, loop_experiment(variants=variants, iterations=7))
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    bw = next(row for row in result.rows if row.metric.name == "read_bw")
    assert bw.comparisons["1m"].verdict == "better", bw.comparisons["1m"]


def test_ctrl_c_keeps_samples_and_leaves_nothing(tmp_path):
    exp_file = tmp_path / "long.toml"
    exp_file.write_text(textwrap.dedent("""
        name = "interrupted"
        [target]
        size = "256MiB"
        [[variant]]
        name = "a"
        [[variant]]
        name = "b"
        [[workload]]
        name = "w"
        job = "[global]\\nrw=randread\\nsize=32M\\nruntime=1\\ntime_based=1\\n[r]\\n"
        [run]
        iterations = 20
    """))
    store_path = tmp_path / "store.db"
    env = {**os.environ, "IOLAB_STORE": str(store_path), "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "iolab.cli", "run", str(exp_file)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    wait_while_running(process, lambda: store_path.exists() and Store(store_path).sample_counts(1)[0] >= 2,
                       what="two samples")
    wait_while_running(process, lambda: fio_in(tmp_path), what="a running cell's fio")  # inside a running cell
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    store = Store(store_path)
    assert store.run(1).status == "interrupted"
    ok, failed = store.sample_counts(1)
    assert ok >= 2
    assert f"interrupted; the {ok + failed} samples taken so far are in run 1 (iolab resume 1 continues it)" in err
    assert attached_loops(str(tmp_path)) == set()
    assert iolab_mounts(str(tmp_path)) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("iolab-")] == []
    report = subprocess.run([sys.executable, "-m", "iolab.cli", "report", "1", "--format", "json"],
                            cwd=REPO, env=env, capture_output=True, text=True, check=True)
    document = json.loads(report.stdout)
    assert document["run"]["status"] == "interrupted"
    assert document["rows"][0]["figures"]["a"]["n"] + document["rows"][0]["figures"]["b"]["n"] == ok


def fio_in(directory) -> list[int]:
    """fio processes whose working directory or open files are under `directory`."""
    found = []
    for pid in reclaim.users(str(directory)):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "fio":
                found.append(pid)
        except OSError:
            continue
    return found
