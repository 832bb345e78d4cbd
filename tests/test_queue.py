"""Many machines: iolab submit, then `iolab agent` processes taking rounds from
the queue (procrastinate in the suite's real PostgreSQL), on real loop
devices and fio. Two agents on this machine take turns on the machine lock;
one killed by SIGKILL mid-round leaves nothing behind and its round is
retried by the other and counted once; an `allow` job is refused by an
agent without it; a PostgreSQL server restarted mid-round (a server of the
test's own) loses no sample. Labels map to procrastinate queues (unit tests)."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab.analysis import hosts as hosts_of
from iolab.analysis import analyse
from iolab.process.reclaim import users
from iolab.run import agent, queue, status
from iolab.spec import SpecError
from iolab.store import Sample, Store
from tests.helpers import REPO, attached_loops, iolab_mounts
from tests.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)

EXPERIMENT = """\
name = "queue test"
[target]
kind = "loop"
fs = "ext4"
size = "64MiB"
image_dir = "{image_dir}"
[[variant]]
name = "4k"
fio = {{ bs = "4k" }}
[[variant]]
name = "16k"
fio = {{ bs = "16k" }}
[[workload]]
name = "w"
{allow}job = \"\"\"
[w]
rw=read
size=16M
runtime={runtime}
time_based=1
\"\"\"
[run]
iterations = {rounds}
"""


# -- labels and queues (no database)

def test_labels_map_to_queues_and_agents_take_every_subset():
    assert queue.labels("x86, nvme,nvme") == ("nvme", "x86")
    assert queue.queue_of(()) == "iolab" and queue.queue_of(("nvme", "x86")) == "iolab:nvme,x86"
    taken = queue.queues_for(("big", "nvme", "x86"))
    assert {"iolab", "iolab:nvme", "iolab:nvme,x86", "iolab:big,nvme,x86"} <= set(taken) and len(taken) == 8
    assert "iolab:hdd" not in taken
    with pytest.raises(SpecError, match="label 'NVMe'"):
        queue.labels("NVMe")
    with pytest.raises(SpecError, match="too long"):
        queue.queue_of(tuple(f"label{i:02d}" for i in range(6)))
    with pytest.raises(SpecError, match="at most 8 labels"):
        queue.queues_for(tuple(f"l{i}" for i in range(9)))


def test_an_agent_without_the_allow_names_refuses_and_says_which(tmp_path):
    from iolab import load

    path = tmp_path / "allow.toml"
    path.write_text(EXPERIMENT.format(image_dir=tmp_path, allow='allow = ["exec_prerun"]\n', runtime=1, rounds=1)
                    .replace("rw=read", "rw=read\nexec_prerun=true"))
    experiment = load.load(path)
    assert agent.allowed_names(experiment) == {"exec_prerun"}
    why = agent.refusal(experiment, agent.Settings(url="postgresql:///x"))
    assert why is not None and "--allow exec_prerun" in why


def test_hosts_lines_name_each_round_and_the_superseded_try():
    from iolab.store import Attempt

    def sample(round_, host, attempt=0, status="ok"):
        return Sample(seq=round_ * 2, round=round_, iteration=round_, warmup=False, variant="a", workload="w",
                      status=status, host=host, attempt=attempt)
    attempts = [Attempt(1, 1, 0, 0, "a1", 10, "done", 0.0, 1.0, None, {"kernel": "k", "cpus": 2}),
                Attempt(2, 1, 1, 0, "a2", 11, "killed", 0.0, 1.0, "its agent was killed", {}),
                Attempt(3, 1, 1, 1, "a1", 11, "done", 0.0, 1.0, None, {"kernel": "k", "cpus": 2})]
    found = hosts_of.hosts(attempts, [sample(0, "a1"), sample(1, "a1", 1)], [sample(1, "a2")])
    assert hosts_of.lines(found, 2) == [
        "host a1: rounds 0, 1 (kernel k, 2 CPUs)",
        "round 1: try 1 on a2 killed (its agent was killed) after 1 of 2 cells; kept, superseded by try 2 on a1"]


def test_rounds_from_hosts_that_differ_in_a_checked_key_get_no_verdict():
    from iolab.spec import Experiment
    from iolab.store import RunInfo

    exp = {"name": "x", "variant": [{"name": "a"}, {"name": "b"}],
           "workload": [{"name": "w", "job": "[w]\nrw=read\nsize=1M\n"}], "run": {"iterations": 8}}
    run = RunInfo(1, "x", None, Experiment.model_validate({**exp, "base_dir": "."}).model_dump_json(), 1, 16,
                  "complete", 0.0, None, {}, None, labels="")
    samples = []
    for r in range(8):
        for v, value in (("a", 100.0), ("b", 200.0)):
            host = "h1" if r % 2 else "h2"
            samples.append(Sample(seq=len(samples), round=r, iteration=r, warmup=False, variant=v, workload="w",
                                  status="ok", metrics={"read_bw": value + r}, host=host,
                                  env={"kernel": "6.1" if host == "h1" else "6.2", "cpus": 2}))
    verdicts = {c.verdict for row in analyse(run, samples).rows for c in row.comparisons.values()}
    assert verdicts == {"insufficient"}
    same = [dataclasses.replace(s, env={"kernel": "6.1", "cpus": 2}) for s in samples]
    assert {c.verdict for row in analyse(run, same).rows for c in row.comparisons.values()} != {"insufficient"}


# -- real agents on this machine

@pytest.fixture
def lab(tmp_path, postgres_url):
    images = tmp_path / "images"
    images.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "IOLAB_STORE": postgres_url, "PYTHONPATH": str(REPO)}
    started: list[subprocess.Popen] = []
    yield {"tmp": tmp_path, "images": images, "env": env, "url": postgres_url, "agents": started}
    for process in started:  # a test that failed may leave an agent running, or a killed one's mount
        if process.poll() is None:
            process.kill()
            process.wait()
    subprocess.run([sys.executable, "-m", "iolab.cli", "cleanup"], env=env, capture_output=True, timeout=120)


def write_experiment(lab, rounds=3, runtime="500ms", allow="", job_file=None):
    """The experiment file; with `job_file`, its job in that file beside it."""
    path = lab["tmp"] / "exp.toml"
    text = EXPERIMENT.format(image_dir=lab["images"], allow=allow, runtime=runtime, rounds=rounds)
    if job_file is not None:
        start, end = text.index('job = """\n'), text.index('"""\n[run]')
        (lab["tmp"] / job_file).write_text(text[start + len('job = """\n'):end])
        text = text[:start] + f'job_file = "{job_file}"\n' + text[end + len('"""\n'):]
    path.write_text(text)
    return path


def iolab(lab, *args):
    return subprocess.run([sys.executable, "-m", "iolab.cli", *args], env=lab["env"], capture_output=True,
                          text=True, timeout=300)


def start_agent(lab, name, *extra):
    log = open(lab["tmp"] / f"{name}.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "iolab.cli", "agent", "--until-idle", "--name", name,
                                "--heartbeat", "1", *extra], env=lab["env"], stdout=log, stderr=log, text=True)
    lab["agents"].append(process)
    return process


def submit(lab, path, command=False):
    """Queue the experiment's rounds: with `iolab submit` (the command), or in this process (faster)."""
    if command:  # --force: a few rounds are enough for the plumbing, though too few for a verdict
        done = iolab(lab, "submit", "--force", str(path))
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[1].rstrip(":"))
    from iolab import load
    from iolab.run.submit import submit as queue_rounds

    store = Store(lab["url"])
    try:
        return queue_rounds(load.load(path), store).run_id
    finally:
        store.close()


def shown(lab, run_id, fmt="text"):
    """`iolab report RUN --format FMT`, in this process."""
    from iolab.analysis import reports
    from iolab.report import renderer

    store = Store(lab["url"])
    try:
        return renderer(fmt)(reports.run_report(store, run_id))
    finally:
        store.close()


def finish(process, lab, name, timeout=240):
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"agent {name} did not finish: {(lab['tmp'] / f'{name}.log').read_text()[-3000:]}")
    assert code == 0, (lab["tmp"] / f"{name}.log").read_text()[-3000:]


def counted_once(store, run_id, rounds):
    samples = store.samples(run_id)
    assert sorted(s.seq for s in samples) == list(range(2 * rounds))  # every cell of every round, once
    return samples


def leftovers(lab):
    tmp = str(lab["tmp"])
    journal = lab["tmp"] / "state" / "iolab" / "run.journal"
    files = [p.name for p in lab["tmp"].iterdir() if p.name.startswith("iolab-")] + os.listdir(lab["images"])
    return {"loops": attached_loops(tmp), "mounts": iolab_mounts(tmp), "files": files, "processes": users(tmp),
            "journal": journal.read_text().splitlines() if journal.exists() else []}


NOTHING = {"loops": set(), "mounts": [], "files": [], "processes": [], "journal": []}


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_two_agents_complete_the_run_each_round_once_and_the_report_names_both(lab):
    run_id = submit(lab, write_experiment(lab, rounds=3, job_file="w.fio"), command=True)
    submitted = (lab["tmp"] / "w.fio").read_bytes()
    (lab["tmp"] / "w.fio").write_text("[w]\nrw=nonsense\n")  # edited after submitting: the agents run the stored copy
    agents = {name: start_agent(lab, name) for name in ("agent-a", "agent-b")}
    for name, process in agents.items():
        finish(process, lab, name)
    store = Store(lab["url"])
    assert store.run(run_id).status == "complete"
    samples = counted_once(store, run_id, 3)
    assert {s.status for s in samples} == {"ok"} and store.run_files(run_id) == {"w.fio": submitted}
    assert {s.host for s in samples} == {"agent-a", "agent-b"}  # they took turns on the machine lock
    assert all(len({s.host for s in samples if s.round == r}) == 1 for r in range(3))  # a round on one host
    assert store.samples(run_id, superseded=True) == []
    text = shown(lab, run_id)
    assert "host agent-a: round" in text and "host agent-b: round" in text, text
    document = json.loads(shown(lab, run_id, "json"))
    assert {s["host"] for s in document["samples"]} == {"agent-a", "agent-b"}
    listed = iolab(lab, "runs").stdout
    assert "complete           6/6" in listed and "0 queued, 0 running, 3 done" in listed
    agents = "\n".join(status.agent_lines(store))
    assert "agent-a" in agents and "agent-b" in agents and "stopped" in agents
    assert leftovers(lab) == NOTHING


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_an_agent_killed_mid_round_its_round_is_retried_once_and_nothing_is_left(lab):
    run_id = submit(lab, write_experiment(lab, rounds=3))
    victim, survivor = start_agent(lab, "victim"), start_agent(lab, "survivor")
    store = Store(lab["url"])
    deadline = time.monotonic() + 180
    while not mid_round(store, "victim"):
        assert time.monotonic() < deadline and victim.poll() is None, "the victim never got mid-round"
        time.sleep(0.05)
    time.sleep(0.5)  # its second cell is under way (mount, fio)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    finish(survivor, lab, "survivor")  # it waits for the silent victim's round, gives it back, runs it
    assert store.run(run_id).status == "complete"
    counted_once(store, run_id, 3)
    [killed] = [a for a in store.attempts(run_id) if a.host == "victim" and a.status != "done"]
    assert killed.status in ("killed", "stalled")
    superseded = store.samples(run_id, superseded=True)
    assert [(s.host, s.round, s.attempt) for s in superseded] == [("victim", killed.round, killed.attempt)]
    retried = [a for a in store.attempts(run_id) if a.round == killed.round and a.attempt > killed.attempt]
    assert [a.status for a in retried] == ["done"] and retried[0].host == "survivor"
    text = shown(lab, run_id)
    assert f"round {killed.round}: try {killed.attempt + 1} on victim {killed.status}" in text, text
    assert leftovers(lab) == NOTHING
    log = (lab["tmp"] / "survivor.log").read_text()
    assert "back to the queue" in log and "reclaimed" in log, log[-3000:]


def mid_round(store, name):
    """`name` stored a round's first cell and runs its second."""
    rows = store.db.execute(
        "SELECT count(*) FROM samples s JOIN attempts a ON a.run_id = s.run_id AND a.round = s.round"
        " AND a.attempt = s.attempt WHERE s.host = %s AND a.status = 'running'", (name,)).fetchone()
    return rows[0] == 1


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_a_frozen_agent_that_wakes_after_its_round_was_given_away_writes_no_counted_sample(lab):
    """The zombie: an agent whose heartbeats stop while it lives on (SIGSTOP
    here; a suspended VM or a cut network in the field). Its round goes to
    another agent; woken, it finishes the cell it was in (kept, superseded)
    and exits at its next check, before another cell."""
    run_id = submit(lab, write_experiment(lab, rounds=2))
    zombie, survivor = start_agent(lab, "zombie"), start_agent(lab, "survivor")
    store = Store(lab["url"])
    store.db.autocommit = True  # each poll sees the agents' latest commits
    deadline = time.monotonic() + 180
    while not mid_round(store, "zombie"):
        assert time.monotonic() < deadline and zombie.poll() is None, "the zombie never got mid-round"
        time.sleep(0.05)
    zombie.send_signal(signal.SIGSTOP)
    log = lab["tmp"] / "survivor.log"
    try:
        while "back to the queue" not in log.read_text():  # silent for 3 heartbeats: its round is given away
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
    finally:
        zombie.send_signal(signal.SIGCONT)  # it holds the machine lock the survivor waits for
    assert zombie.wait(timeout=120) == agent.EXIT_LOST, (lab["tmp"] / "zombie.log").read_text()[-3000:]
    assert "gave this round to another agent; exiting" in (lab["tmp"] / "zombie.log").read_text()
    finish(survivor, lab, "survivor")
    assert store.run(run_id).status == "complete"
    samples = counted_once(store, run_id, 2)
    [lost] = [a for a in store.attempts(run_id) if a.host == "zombie" and a.status != "done"]
    assert lost.status in ("killed", "stalled")  # reclaimed from the zombie's journal, or marked by the next try
    assert {s.host for s in samples if s.round == lost.round} == {"survivor"}
    superseded = store.samples(run_id, superseded=True)
    assert {(s.host, s.round, s.attempt) for s in superseded} == {("zombie", lost.round, lost.attempt)}
    assert len(superseded) <= 2  # the cell it was in when frozen, and none after
    subprocess.run([sys.executable, "-m", "iolab.cli", "cleanup"], env=lab["env"], capture_output=True, timeout=120)
    assert leftovers(lab) == NOTHING


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_a_job_that_needs_allow_is_refused_by_an_agent_without_it(lab):
    path = write_experiment(lab, rounds=2, allow='allow = ["exec_prerun"]\n')
    path.write_text(path.read_text().replace("rw=read", "rw=read\nexec_prerun=true"))
    run_id = submit(lab, path)
    process = start_agent(lab, "plain")
    finish(process, lab, "plain", timeout=120)
    store = Store(lab["url"])
    run = store.run(run_id)
    assert run.status == "failed" and "--allow exec_prerun" in (run.stop_reason or "")
    refused = [a for a in store.attempts(run_id) if a.status == "refused"]
    assert len(refused) == 1 and "--allow exec_prerun" in refused[0].error
    assert store.samples(run_id) == [] and store.samples(run_id, superseded=True) == []
    listed = "\n".join(status.round_lines(store, run))
    assert "refused" in listed and "1 cancelled" in listed
    assert leftovers(lab) == NOTHING


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_postgres_restarted_mid_round_the_agent_reconnects_and_no_sample_is_lost(tmp_path):
    import psycopg

    from tests.postgres import Server, url

    server = Server()
    try:
        server.start()
        with psycopg.connect(url(server.address, "postgres"), autocommit=True) as admin:
            admin.execute("CREATE DATABASE restart")
        images = tmp_path / "images"
        images.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
               "IOLAB_STORE": url(server.address, "restart"), "PYTHONPATH": str(REPO)}
        lab = {"tmp": tmp_path, "images": images, "env": env, "url": env["IOLAB_STORE"], "agents": []}
        run_id = submit(lab, write_experiment(lab, rounds=1))
        process = start_agent(lab, "steady")
        deadline = time.monotonic() + 180
        while not list(tmp_path.glob("iolab-run-*/cell*")):  # the agent's first cell is under way
            assert time.monotonic() < deadline and process.poll() is None, "the agent never started a cell"
            time.sleep(0.05)
        server.restart()  # every connection is cut; the round goes on
        finish(process, lab, "steady")
        store = Store(lab["url"])
        assert store.run(run_id).status == "complete"
        counted_once(store, run_id, 1)
        assert store.samples(run_id, superseded=True) == []  # no sample lost, none written twice, no retry
        assert [a.status for a in store.attempts(run_id)] == ["done"]
        assert "the store is away" in (tmp_path / "steady.log").read_text() or \
            "lost the store" in (tmp_path / "steady.log").read_text()
        store.close()
        assert leftovers(lab) == NOTHING
    finally:
        subprocess.run([sys.executable, "-m", "iolab.cli", "cleanup"], env={**os.environ,
                       "XDG_STATE_HOME": str(tmp_path / "state")}, capture_output=True, timeout=120)
        server.remove()
