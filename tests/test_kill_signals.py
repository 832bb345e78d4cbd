"""iolab killed or signalled mid-run, on real loop devices, mkfs and fio.

SIGKILL during mkfs or fio (a sysctl changed), then `iolab cleanup` or
`iolab resume`: nothing left (loop devices, mounts, images, processes,
changed knobs) and the run completes. SIGTERM to the PID: exit 130, clean,
the run interrupted with its samples. Two runs at once: the second is
refused while the first changes a sysctl, which ends as it was.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab.knobs.resources import descendants, users
from tests.conftest import REPO, attached_loops, iolab_mounts

SYSCTL = Path("/proc/sys/vm/dirty_expire_centisecs")  # a sysctl no other test changes

EXPERIMENT = """\
name = "kill test"
[target]
kind = "loop"
fs = "ext4"
size = "256MiB"
image_dir = "{image_dir}"
[[variant]]
name = "base"
[[variant]]
name = "knob"
sysctl = {{ "vm.dirty_expire_centisecs" = {value} }}
[[workload]]
name = "w"
job = \"\"\"
[global]
rw=randwrite
bs=4k
size=32M
runtime={runtime}
time_based=1
[w]
[w2]
\"\"\"
[run]
iterations = 2
order = "sequential"
"""

pytestmark = pytest.mark.usefixtures("needs_root_tools")


@pytest.fixture
def lab(tmp_path):
    """An experiment file and the environment of iolab processes run on it."""
    original = SYSCTL.read_text().strip()
    value = int(original) + 1234
    path = tmp_path / "kill.toml"
    path.write_text(EXPERIMENT.format(value=value, runtime=2, image_dir=tmp_path))  # not in RAM: seen below
    env = {**os.environ, "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "IOLAB_STORE": str(tmp_path / "store.db"), "PYTHONPATH": str(REPO)}
    yield {"path": path, "env": env, "tmp": tmp_path, "original": original, "value": str(value)}
    SYSCTL.write_text(original)  # whatever happened, the machine gets its value back


def iolab(lab, *args, **kwargs):
    return subprocess.run([sys.executable, "-m", "iolab.cli", *args], env=lab["env"], capture_output=True,
                          text=True, timeout=300, **kwargs)


def start(lab):
    return subprocess.Popen([sys.executable, "-m", "iolab.cli", "run", "--quiet", "--force", str(lab["path"])],
                            env=lab["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def child_running(process, name):
    """A child of the run: mkfs, or fio's measured run (not the load's fio --parse-only)."""
    def running():
        for pid in descendants(process.pid):
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if comm.startswith(name) and (name != "fio" or b"json+" in cmdline):
                return True
        return False

    return running


def leftovers(lab):
    tmp = str(lab["tmp"])
    files = [p.name for p in lab["tmp"].iterdir() if p.name.startswith("iolab-")]
    return {"loops": attached_loops(tmp), "mounts": iolab_mounts(tmp), "files": files,
            "processes": users(tmp), "knob": SYSCTL.read_text().strip() != lab["original"]}


NOTHING = {"loops": set(), "mounts": [], "files": [], "processes": [], "knob": False}


def test_sigkill_during_mkfs_then_cleanup_reclaims_everything(lab):
    process = start(lab)
    wait_for(child_running(process, "mkfs"))
    process.kill()
    process.wait()
    assert leftovers(lab)["loops"]  # the killed run left its loop device (and image) behind
    done = iolab(lab, "cleanup")
    assert done.returncode == 0, done.stderr
    assert "detached /dev/loop" in done.stdout and "marked run 1 interrupted" in done.stdout
    assert leftovers(lab) == NOTHING
    runs = iolab(lab, "runs").stdout
    assert "interrupted" in runs


def test_sigkill_during_fio_with_a_knob_changed_then_resume_completes(lab):
    process = start(lab)
    wait_for(lambda: SYSCTL.read_text().strip() == lab["value"] and child_running(process, "fio")())
    time.sleep(0.5)  # fio's job processes are up
    process.kill()
    process.wait()
    left = leftovers(lab)
    assert left["knob"] and left["mounts"] and left["loops"]
    resumed = iolab(lab, "resume", "--quiet", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "restored" in resumed.stderr or "wrote" in resumed.stderr  # it said what it reclaimed
    assert "run 1: 2 of 2 rounds" in resumed.stdout
    assert leftovers(lab) == NOTHING
    assert "complete           4/4" in iolab(lab, "runs").stdout


def test_sigterm_during_fio_is_a_clean_interrupt(lab):
    process = start(lab)
    wait_for(child_running(process, "fio"))
    time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert leftovers(lab) == NOTHING  # no cleanup run needed
    assert "interrupted" in err and "(interrupted)" in out
    assert "0 of 2 rounds (0 of 4 cells)" in out
    assert "interrupted" in iolab(lab, "runs").stdout


def test_two_runs_at_once_the_second_is_refused(lab):
    first = start(lab)
    wait_for(lambda: list((lab["tmp"] / "state" / "iolab" / "holders").glob("*.json")))
    second = iolab(lab, "run", "--quiet", "--force", str(lab["path"]))
    assert second.returncode == 2
    assert f"pid {first.pid}" in second.stderr and "sysctl vm.dirty_expire_centisecs" in second.stderr
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert leftovers(lab) == NOTHING


def test_sigint_to_the_pid_of_a_background_run_is_a_clean_interrupt(lab):
    # a script's `iolab run ... &` starts with SIGINT ignored; iolab listens anyway
    process = subprocess.Popen(
        [sys.executable, "-c", "import signal, runpy, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
         "sys.argv = ['iolab', 'run', '--quiet', '--force', sys.argv[1]]; runpy.run_module('iolab.cli', run_name='__main__')",
         str(lab["path"])],
        env=lab["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(child_running(process, "fio"))
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert leftovers(lab) == NOTHING
