"""The run journal, reclaiming, the machine lock and interrupts during teardown."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab import process
from iolab.process import interrupts
from iolab.journal import Journal, owner_alive, process_start, using
from iolab.process import reclaim
from iolab.knobs import recover
from iolab.load import check_here
from iolab.run import lock, recovery
from iolab.store import Store
from tests.helpers import experiment, wait_for


def dead_pid():
    """A pid that existed and is gone (a finished child)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def write_entry(path, pid, start, label, undo):
    import json

    with open(path, "a") as f:
        f.write(json.dumps({"id": label, "pid": pid, "start": start, "label": label, "undo": undo}) + "\n")


def test_a_recycled_pid_is_no_live_owner():
    me = os.getpid()
    assert owner_alive(me, process_start(me))
    assert not owner_alive(me, process_start(me) - 1)  # same pid, another process (started earlier)
    assert owner_alive(me, None)  # an old entry without a start time: the pid decides
    assert not owner_alive(dead_pid(), None)


def test_recovery_undoes_newest_first_and_keeps_live_and_unknown(tmp_path):
    path = tmp_path / "run.journal"
    gone = dead_pid()
    order = []
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write_entry(path, gone, None, "first", {"kind": "path", "path": str(first)})
    write_entry(path, gone, None, "second", {"kind": "path", "path": str(second)})
    write_entry(path, gone, None, "stored run", {"kind": "run", "store": "x", "run_id": 1})
    write_entry(path, os.getppid(), None, "live", {"kind": "path", "path": str(tmp_path / "live")})
    write_entry(path, gone, None, "probe", {"kind": "probe"})
    done = recover(path, extra={"probe": lambda undo, label: order.append(label) or "ok"})
    assert [item.text.split(":")[0] for item in done if item.outcome == "restored"] == ["probe", "second", "first"]
    assert not first.exists() and not second.exists()
    kept = [entry["label"] for entry in Journal(path).entries()]
    assert kept == ["stored run", "live"]  # another layer's kind, and a live process's entry


def test_a_run_left_running_by_a_dead_process_is_marked_interrupted(tmp_path):
    store = Store(tmp_path / "store.db")
    run_id = store.begin_run(name="x", experiment_path=None, experiment_json="{}", seed=1, planned_cells=4,
                             host={}, recheck_of=None)
    path = tmp_path / "run.journal"
    write_entry(path, dead_pid(), None, f"run {run_id}",
                {"kind": "run", "store": str(tmp_path / "store.db"), "run_id": run_id})
    done = recovery.reclaim(path)
    assert [item.outcome for item in done] == ["restored"] and "iolab resume" in done[0].text
    assert Store(tmp_path / "store.db").run(run_id).status == "interrupted"
    assert not path.exists()


def test_a_directory_is_reclaimed_with_the_processes_working_in_it(tmp_path):
    """fio's job processes outlive a killed fio (they left its session) and
    wait for it for ever in the cell's directory: reclaiming the directory
    kills them."""
    cell = tmp_path / "cell"
    cell.mkdir()
    orphan = subprocess.Popen(["sleep", "60"], cwd=cell, start_new_session=True)
    path = tmp_path / "run.journal"
    write_entry(path, dead_pid(), None, "cell", {"kind": "path", "path": str(cell)})
    done = recover(path)
    assert [item.outcome for item in done] == ["restored"] and "after killing 1 process" in done[0].text
    assert orphan.wait(timeout=5) == -9 and not cell.exists()


def test_kill_tree_reaches_processes_that_left_their_group(tmp_path):
    # a child that starts a grandchild in a session of its own, as fio's job processes do
    script = "import os,subprocess,time; subprocess.Popen(['sleep','60'], start_new_session=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", script])
    below = wait_for(lambda: process.descendants(child.pid), 30, "the grandchild")
    killed = process.kill_tree(child.pid)
    assert set(killed) >= {child.pid, *below}
    child.wait(timeout=5)
    assert all(not owner_alive(pid, None) or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
               for pid in below)


FORKER = """
import os, sys, time
memory = bytearray(512 << 20)  # a large parent forks slowly (fio's main, with its shared memory)
for page in range(0, len(memory), 4096):
    memory[page] = 1
print("up", flush=True)
for _ in range(1000):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
"""


def test_kill_tree_misses_no_child_forked_as_the_stop_lands():
    # SIGSTOP does not cut a fork in progress short: a child can appear after the stop was sent and
    # before the parent stops. Looked for before the parent was seen stopped, such a child was missed,
    # left to init and ran on (13 of 100 trials of this, and a fio job process under CI's load)
    for trial in range(40):
        mark = f"iolab-forker-{os.getpid()}-{trial}"
        forker = subprocess.Popen([sys.executable, "-c", FORKER, mark], stdout=subprocess.PIPE, text=True)
        assert forker.stdout.readline() == "up\n"
        process.kill_tree(forker.pid)
        forker.wait(timeout=10)
        left = [pid for pid in process.all_pids() if _has_argument(pid, mark)]
        process.kill(left)
        assert left == [], f"trial {trial}: {len(left)} children outlived kill_tree"


def _has_argument(pid: int, argument: str) -> bool:
    try:
        return argument.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def test_a_child_beside_iolab_is_journalled_until_it_ends_then_stopped_with_its_tree(tmp_path):
    # as QEMU or perf stat: started, read from, then stopped (SIGTERM, a grace, then SIGKILL to the tree)
    journal = Journal(tmp_path / "run.journal")
    script = ("import signal, subprocess, time; signal.signal(signal.SIGTERM, lambda *a: print('term', flush=True)); "
              "subprocess.Popen(['sleep', '60']); print('up', flush=True); time.sleep(60)")
    with using(journal):
        child = process.start([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert [e["undo"] for e in journal.entries()] == [{"kind": "process", "pid": child.pid,
                                                     "start": process_start(child.pid)}]
    assert child.stdout.readline() == "up\n"
    (sleeper,) = wait_for(lambda: process.descendants(child.pid), 30, "the grandchild")
    assert process.end(child, grace=0.5) == -9  # it ignored the SIGTERM: killed after the grace
    assert journal.entries() == []
    wait_for(lambda: not owner_alive(sleeper, None), 10, "the grandchild's death")
    assert process.end(child) == -9  # ending it again changes nothing


def test_ctrl_c_between_the_fork_and_the_journal_entry_still_ends_the_child(tmp_path, monkeypatch):
    """A Ctrl-C that comes while a child is made (here: right after Popen's
    fork and exec) is held back until the child is journalled, then the child
    is ended and the interrupt goes on. Before, the child ran on: nothing had
    it to end (under CI's load, a fio job process outlived a SIGINT'd run)."""
    import signal

    from iolab.process import children

    made: list[int] = []
    plain_init = children.Child.__init__

    def interrupted_after_fork(self, *args, **kwargs):
        plain_init(self, *args, **kwargs)
        made.append(self.pid)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(children.Child, "__init__", interrupted_after_fork)
    journal = Journal(tmp_path / "run.journal")
    with using(journal), pytest.raises(KeyboardInterrupt):
        process.start(["sleep", "60"])
    assert len(made) == 1 and not owner_alive(made[0], None)  # ended and reaped
    assert journal.entries() == []


def test_run_gives_input_takes_bytes_and_writes_a_log(tmp_path):
    journal = Journal(tmp_path / "run.journal")
    assert process.run(["cat"], input=b"\x00raw", text=False).stdout == b"\x00raw"
    with open(tmp_path / "build.log", "w") as log, using(journal):
        done = process.run(["sh", "-c", "echo out; echo err >&2; exit 3"], output=log, journalled=False)
    assert done.returncode == 3 and (tmp_path / "build.log").read_text() == "out\nerr\n"
    assert not (tmp_path / "run.journal").exists()  # not journalled: as reclaim's umount, under recover's lock


def test_users_of_a_directory_are_found_by_cwd_and_open_files(tmp_path):
    by_cwd = subprocess.Popen(["sleep", "60"], cwd=tmp_path)
    by_file = subprocess.Popen(["sh", "-c", f"exec 3>{tmp_path}/held; sleep 60"])
    try:
        wait_for(lambda: {by_cwd.pid, by_file.pid} <= set(reclaim.users(str(tmp_path))), 30, "both users")
        reclaim.kill_users(str(tmp_path))
        assert by_cwd.wait(timeout=5) == -9 and by_file.wait(timeout=5) == -9
    finally:
        by_cwd.kill()
        by_file.kill()


def test_children_die_with_iolab(tmp_path):
    # a python "iolab" runs a tool through run_tool and is SIGKILLed: the tool dies too
    script = ("import sys; sys.path.insert(0, %r); from iolab.process import run_tool; "
              "run_tool(['sleep', '60'])") % str(Path(__file__).resolve().parent.parent)
    parent = subprocess.Popen([sys.executable, "-c", script])
    (sleeper,) = wait_for(lambda: process.descendants(parent.pid), 30, "the tool")
    parent.kill()
    parent.wait()
    wait_for(lambda: not owner_alive(sleeper, None), 10, "the tool's death")


KNOB = {"name": "b", "sysctl": {"vm.dirty_expire_centisecs": 1000}}  # a machine-wide change


def test_machine_wide_changes_take_the_lock_alone(tmp_path):
    changing = experiment(["a", KNOB], name="lock")
    plain = experiment(["a", {"name": "b", "fio": {"direct": 1}}])
    assert lock.machine_wide(changing) == "sysctl vm.dirty_expire_centisecs"
    assert lock.machine_wide(plain) is None
    in_vms = experiment([{"name": "a", "kernel": "debian:6.1.0-56-amd64"}, {**KNOB, "kernel": "debian:6.1.0-56-amd64"}])
    assert lock.machine_wide(in_vms) is None  # the guests' sysctls, not this machine's
    script = ("import sys, time; sys.path.insert(0, %r); from pathlib import Path; from iolab.spec import Experiment; "
              "from iolab.run import lock; e = Experiment.model_validate_json(sys.argv[1]); "
              "cm = lock.machine_lock(e, Path(sys.argv[2])); cm.__enter__(); print('held', flush=True); time.sleep(60)"
              ) % str(Path(__file__).resolve().parent.parent)
    other = subprocess.Popen([sys.executable, "-c", script, changing.model_dump_json(), str(tmp_path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(lock.Busy, match=f"pid {other.pid} .*'lock', changes sysctl"):
            with lock.machine_lock(plain, tmp_path):
                pass
    finally:
        other.kill()
        other.wait()
    with lock.machine_lock(changing, tmp_path):  # its holder is dead: the kernel dropped the flock
        with lock.machine_lock(changing, tmp_path / "elsewhere"):
            pass
    # two runs that change nothing machine-wide run side by side
    with lock.machine_lock(plain, tmp_path), lock.machine_lock(plain, tmp_path):
        pass


def test_a_teardown_error_during_an_interrupt_is_a_note():
    with pytest.raises(KeyboardInterrupt) as caught:
        try:
            raise KeyboardInterrupt
        finally:
            with interrupts.deferred():
                raise OSError("umount: target is busy")
    assert "target is busy" in " ".join(caught.value.__notes__)
    with pytest.raises(OSError):  # without an interrupt, the error is the error
        with interrupts.deferred():
            raise OSError("umount: target is busy")


@pytest.mark.parametrize(
    "path",
    ["/", "/etc", "/etc/", "/usr/lib", "/var", "/root", "/proc/self", "/sys/kernel", "/dev/shm", "/boot"],
)
def test_dir_targets_refuse_system_directories(path):
    from iolab.spec import SpecError

    parsed = experiment(target={"kind": "dir", "fs": "none", "path": path})  # the schema takes any path
    with pytest.raises(SpecError, match="system or home directory"):  # this machine's directories are checked here
        check_here(parsed)


def test_a_dir_target_of_its_own_is_fine(tmp_path):
    parsed = experiment(target={"kind": "dir", "fs": "none", "path": str(tmp_path)})
    check_here(parsed)
    assert parsed.target.path == str(tmp_path)


def test_allow_opts_in_by_name():
    from iolab.spec import SpecError

    job = {"name": "w", "job": "[w]\nrw=read\nwrite_bw_log=/tmp/bw\n"}
    with pytest.raises(SpecError, match=r'allow = \["write_bw_log"\]'):
        experiment(workload=[job])
    assert experiment(workload=[{**job, "allow": ["write_bw_log"]}])


class InterruptingHost:
    """A scripted host that is 'interrupted' (Ctrl-C) after `after` cells."""

    def __init__(self, after):
        from tests.fakes import ScriptedHost

        self.inner = ScriptedHost({"a": 100.0, "b": 120.0})
        self.after = after

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run_batch(self, cells):
        for cell in cells:
            if self.after is not None and len(self.inner.seen) >= self.after:
                raise KeyboardInterrupt
            yield self.inner.run_cell(cell)


@pytest.mark.parametrize("iterations", [3, "auto"])
def test_resume_runs_only_the_cells_left_and_the_header_says_how_many_ran(tmp_path, monkeypatch, iterations):
    from iolab.analysis import reports
    from iolab.report import renderer
    from iolab.run import runner

    run = {"iterations": iterations, "seed": 5, **({"min_iterations": 4, "max_iterations": 5} if iterations == "auto" else {})}
    exp = experiment(("a", "b"), run=run)
    store = Store(tmp_path / "s.db")
    with pytest.raises(runner.Interrupted) as stopped:
        runner.run(exp, store, host=InterruptingHost(after=3))
    run_id = stopped.value.run_id
    assert store.run(run_id).status == "interrupted" and len(store.samples(run_id)) == 3
    header = renderer("text")(reports.run_report(store, run_id))
    assert "(interrupted): 1 " in header and "(3 of " in header  # one complete round, three cells
    host = InterruptingHost(after=None)
    assert runner.run(exp, store, host=host, resume=run_id) == run_id
    samples = store.samples(run_id)
    assert sorted(s.seq for s in samples) == list(range(len(samples)))  # no cell twice, none missing
    assert min(c.seq for c in host.inner.seen) == 3  # the three stored cells did not run again
    assert store.run(run_id).status == "complete" and store.run(run_id).seed == 5


@pytest.mark.parametrize("path, message", [
    ("/sys/../etc/passwd", "leads out of /sys"),
    ("/sys/block/{dev}/../../../etc/x", "leads out of /sys"),
    ("/sys/kernel/no_such_knob_here", "no such file"),
])
def test_sysfs_knobs_stay_in_sys_and_exist(path, message):
    from iolab.spec import SpecError

    exp = experiment(["a", {"name": "b", "sysfs": {path: 1}}])
    with pytest.raises(SpecError, match=message):
        check_here(exp)


def test_allowed_options_are_named_in_the_report(tmp_path, monkeypatch):
    from iolab.analysis import reports
    from iolab.report import renderer
    from iolab.run import runner
    from tests.fakes import ScriptedHost

    job = {"name": "w", "job": "[w]\nrw=read\nwrite_bw_log=/tmp/bw\n", "allow": ["write_bw_log"]}
    exp = experiment(("a", "b"), iterations=2, workload=[job])
    store = Store(tmp_path / "s.db")
    run_id = runner.run(exp, store, host=ScriptedHost({"a": 100.0, "b": 100.0}))
    text = renderer("text")(reports.run_report(store, run_id))
    assert "fio options allowed past iolab's check: workload 'w': write_bw_log" in text.replace("\n  ", " ")
