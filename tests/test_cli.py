"""The command line as a user meets it: help, bad input, exit status."""

import pytest

from tests.helpers import REPO, iolab


def test_help_teaches_the_workflow():
    done = iolab("--help")
    assert done.returncode == 0
    for word in ("iolab run", "iolab report", "iolab doctor", "exit status"):
        assert word in done.stdout


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
    done = iolab("report", "7", store=tmp_path / "s.db")
    assert done.returncode == 2 and "no run 7" in done.stderr


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


@pytest.mark.integration
@pytest.mark.root
def test_doctor_reports_this_machine(needs_root_tools):
    done = iolab("doctor")
    assert done.returncode == 0, done.stdout
    assert "ok    fio" in done.stdout and "memory cgroup" in done.stdout
