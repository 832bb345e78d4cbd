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
from pathlib import Path

import pytest

from iolab.process.reclaim import users
from iolab.process import descendants
from tests.helpers import REPO, attached_loops, iolab, iolab_mounts, wait_while_running

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

pytestmark = [pytest.mark.root, pytest.mark.machine_wide, pytest.mark.usefixtures("needs_root_tools")]


@pytest.fixture
def lab(tmp_path):
    """An experiment file and the environment of iolab processes run on it
    (machine_wide: no other such test, of any worker or checkout, changes
    SYSCTL meanwhile)."""
    yield from _lab(tmp_path)


def _lab(tmp_path):
    original = SYSCTL.read_text().strip()
    value = int(original) + 1000 + os.getpid() % 997  # its own (a checkout without the lock sets another)
    path = tmp_path / "kill.toml"
    path.write_text(EXPERIMENT.format(value=value, runtime=1, image_dir=tmp_path))  # not in RAM: seen below
    env = {**os.environ, "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "IOLAB_STORE": str(tmp_path / "store.db"), "PYTHONPATH": str(REPO)}
    yield {"path": path, "env": env, "tmp": tmp_path, "original": original, "value": str(value)}
    SYSCTL.write_text(original)  # whatever happened, the machine gets its value back


def start(lab):
    return subprocess.Popen([sys.executable, "-m", "iolab.cli", "run", "--quiet", "--force", str(lab["path"])],
                            env=lab["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def child_running(process, name, at_least=1):
    """At least `at_least` processes below the run named `name`: mkfs, or
    fio's measured run (not the load's fio --parse-only) and its job processes."""
    def running():
        found = 0
        for pid in descendants(process.pid):
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            found += comm.startswith(name) and (name != "fio" or b"json+" in cmdline)
        return found >= at_least

    return running


def leftovers(lab):
    tmp = str(lab["tmp"])
    files = [p.name for p in lab["tmp"].iterdir() if p.name.startswith("iolab-")]
    return {"loops": attached_loops(tmp), "mounts": iolab_mounts(tmp), "files": files,
            "processes": [_described(pid) for pid in users(tmp)],
            "knob": SYSCTL.read_text().strip() != lab["original"]}


def _described(pid: int) -> str:
    """A leftover process as a failure should show it: pid, state and command line."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} {stat} {argv}"


NOTHING = {"loops": set(), "mounts": [], "files": [], "processes": [], "knob": False}


def test_sigkill_during_mkfs_then_cleanup_reclaims_everything(lab):
    # mkfs.ext4 on a loop device takes about 10 ms, too short a window to see
    # reliably; -c (its badblocks read scan of the device, about 2 s for
    # 256 MiB) keeps the real mkfs running long enough to be killed in.
    lab["path"].write_text(lab["path"].read_text().replace('fs = "ext4"\n', 'fs = "ext4"\nmkfs_options = ["-c"]\n'))
    process = start(lab)
    wait_while_running(process, child_running(process, "mkfs"), what="mkfs")
    process.kill()
    process.wait()
    assert leftovers(lab)["loops"]  # the killed run left its loop device (and image) behind
    done = iolab("cleanup", env=lab["env"])
    assert done.returncode == 0, done.stderr
    assert "detached /dev/loop" in done.stdout and "marked run 1 interrupted" in done.stdout
    assert leftovers(lab) == NOTHING
    runs = iolab("runs", env=lab["env"]).stdout
    assert "interrupted" in runs


def test_sigkill_during_fio_with_a_knob_changed_then_resume_completes(lab):
    process = start(lab)
    # fio's measured run and its two job processes are up
    wait_while_running(process, lambda: SYSCTL.read_text().strip() == lab["value"]
                       and child_running(process, "fio", 3)(), what="fio with the knob set")
    process.kill()
    process.wait()
    left = leftovers(lab)
    assert left["knob"] and left["mounts"] and left["loops"]
    resumed = iolab("resume", "--quiet", "1", env=lab["env"])
    assert resumed.returncode == 0, resumed.stderr
    assert "restored" in resumed.stderr or "wrote" in resumed.stderr  # it said what it reclaimed
    assert "run 1: 2 of 2 rounds" in resumed.stdout
    assert leftovers(lab) == NOTHING
    assert "complete           4/4" in iolab("runs", env=lab["env"]).stdout


def test_sigterm_during_fio_is_a_clean_interrupt(lab):
    process = start(lab)
    wait_while_running(process, child_running(process, "fio", 3), what="fio")  # the measured run and its 2 jobs
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert leftovers(lab) == NOTHING  # no cleanup run needed
    assert "interrupted" in err and "(interrupted)" in out
    assert "0 of 2 rounds (0 of 4 cells)" in out
    assert "interrupted" in iolab("runs", env=lab["env"]).stdout


def test_two_runs_at_once_the_second_is_refused(lab):
    first = start(lab)
    wait_while_running(first, lambda: list((lab["tmp"] / "state" / "iolab" / "holders").glob("*.json")),
                       what="the first run's hold on the machine lock")
    second = iolab("run", "--quiet", "--force", str(lab["path"]), env=lab["env"])
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
    wait_while_running(process, child_running(process, "fio"), what="fio")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert leftovers(lab) == NOTHING
