"""The command line as a user meets it: help, bad input, exit status."""

import subprocess
import sys

import pytest

from tests.helpers import REPO, iolab


def test_help_teaches_the_workflow():
    done = iolab("--help")
    assert done.returncode == 0
    for word in ("iolab run", "iolab report", "iolab doctor", "exit status"):
        assert word in done.stdout


def test_python_m_iolab_is_the_same_command_line():
    done = subprocess.run([sys.executable, "-m", "iolab", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: iolab ")


@pytest.mark.parametrize(
    "content, expected",
    [
        ('name = "x"\n[[variant]]\nname = "a"\n', "variant: List should have at least 2 items"),
        ("name = ", "not valid TOML"),
        ('name = "x"\n[target]\nfs = "zfs"\n', "target.fs"),
    ],
)
def test_bad_experiment_is_one_clear_error_and_exit_2(tmp_path, content, expected):
    path = tmp_path / "bad.toml"
    path.write_text(content)
    done = iolab("run", str(path), store=tmp_path / "s.db")
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.db").exists() or "running" not in iolab("runs", store=tmp_path / "s.db").stdout


def test_missing_experiment_file(tmp_path):
    done = iolab("run", str(tmp_path / "nope.toml"), store=tmp_path / "s.db")
    assert done.returncode == 2 and "cannot read the experiment file" in done.stderr


def test_report_of_unknown_run(tmp_path):
    from iolab.store import Store

    Store(tmp_path / "s.db").close()
    done = iolab("report", "7", store=tmp_path / "s.db")
    assert done.returncode == 2 and "no run 7" in done.stderr


@pytest.mark.parametrize("command", [["report"], ["runs"], ["compare", "1", "2"], ["history", "read_bw"],
                                     ["baseline", "list"]])
def test_a_mistyped_store_is_refused_with_the_nearest_one(tmp_path, command):
    from iolab.store import Store

    Store(tmp_path / "runs.db").close()
    done = iolab(*command, "--store", str(tmp_path / "rusn.db"))  # --store after the subcommand
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"no store at {tmp_path / 'rusn.db'}; did you mean {tmp_path / 'runs.db'}?" in done.stderr
    assert not (tmp_path / "rusn.db").exists()


def test_store_after_the_subcommand(tmp_path):
    from iolab.store import Store

    Store(tmp_path / "s.db").close()
    done = iolab("runs", "--store", str(tmp_path / "s.db"))
    assert done.returncode == 0 and done.stdout.startswith("  id  started")


def test_missing_fio_says_what_to_install(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text('name = "x"\n[[variant]]\nname = "a"\n[[variant]]\nname = "b"\n'
                    '[[workload]]\nname = "w"\njob = "[j]\\nrw=read\\n"\n')
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path)}
    done = iolab("run", str(path), env=env, store=tmp_path / "s.db")
    assert done.returncode == 2
    assert "fio not found: install it with 'apt-get install fio'" in done.stderr


def test_dry_run_prints_the_plan(tmp_path):
    done = iolab("run", str(REPO / "scenarios" / "demo.toml"), "--dry-run", "--seed", "3", store=tmp_path / "s.db")
    assert done.returncode == 0
    assert "16 cells, seed 3" in done.stdout


def test_dry_run_names_the_planned_test_and_the_time(tmp_path):
    done = iolab("run", str(REPO / "scenarios" / "demo.toml"), "--dry-run", "--iterations", "5",
                 store=tmp_path / "s.db")
    assert done.returncode == 0, done.stderr
    assert "test: exact Mann-Whitney U (unpaired), 5 + 5 values a row: smallest p 0.00794, below 0.025" \
        in done.stdout
    # 2 primary rows: the signed-rank's smallest p 2/2^n passes 0.025 from 7 rounds
    assert "the signed-rank test needs 7 rounds to reach that level: --iterations 7 uses it" in done.stdout
    assert "seqread: 4s a cell (the job's runtime" in done.stdout and "all 10 cells: at least 40s" in done.stdout
    assert not (tmp_path / "s.db").exists()  # a dry run makes no store


def test_a_plan_that_can_never_decide_is_refused_unless_forced(tmp_path):
    demo = str(REPO / "scenarios" / "demo.toml")
    done = iolab("run", demo, "--dry-run", "--iterations", "4", store=tmp_path / "s.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "smallest possible p is 0.0286, not below 0.025" in done.stderr
    assert "it needs 5 rounds (--iterations 5)" in done.stderr
    forced = iolab("run", demo, "--dry-run", "--iterations", "4", "--force", store=tmp_path / "s.db")
    assert forced.returncode == 0 and "test: none can decide" in forced.stdout
    queued = iolab("submit", demo, "--iterations", "4", store=tmp_path / "s.db")  # refused before any store
    assert queued.returncode == 2 and "it needs 5 rounds (--iterations 5)" in queued.stderr
    assert "--force" in iolab("submit", "--help").stdout


FIO_RAND_READ = """; fio's examples/fio-rand-read.fio, as fio ships it
[global]
name=fio-rand-read
filename=fio-rand-read
rw=randread
bs=4K
direct=0
numjobs=1
time_based
runtime=900

[file1]
size=10G
ioengine=libaio
iodepth=16
"""


def test_a_job_whose_files_do_not_fit_is_refused_with_the_numbers(tmp_path):
    (tmp_path / "fio-rand-read.fio").write_text(FIO_RAND_READ)
    path = tmp_path / "exp.toml"
    path.write_text('name = "x"\n[target]\nsize = "2GiB"\n[[variant]]\nname = "a"\n[[variant]]\nname = "b"\n'
                    '[[workload]]\nname = "rr"\njob_file = "fio-rand-read.fio"\n[run]\niterations = 8\n')
    done = iolab("run", str(path), "--dry-run", store=tmp_path / "s.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "fio's files need 10GiB (file1: 10GiB in fio-rand-read), more than the target's 2GiB" in done.stderr
    assert "as it is, each cell would run 15m, 16 cells: 4h without setup" in done.stderr


def test_dry_run_into_a_closed_pipe_prints_no_traceback(tmp_path):
    argv = [sys.executable, "-m", "iolab.cli", "--store", str(tmp_path / "s.db"), "run", "--dry-run",
            str(REPO / "scenarios" / "demo.toml"), "--iterations", "3000"]
    process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("readahead")
    process.stdout.close()  # as `| head -1` does
    stderr = process.stderr.read()
    assert process.wait() == 141 and stderr == ""


@pytest.mark.integration
@pytest.mark.root
def test_doctor_reports_this_machine(needs_root_tools):
    done = iolab("doctor")
    assert done.returncode == 0, done.stdout
    assert "ok    fio" in done.stdout and "memory cgroup" in done.stdout
    assert "mkfs.f2fs" in done.stdout and "iolab-probe" in done.stdout
