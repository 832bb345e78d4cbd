"""One build per fleet (iolab.run.fleet): two real `iolab agent` processes on
one queue in the suite's real PostgreSQL, each with a kernel cache of its own
(two machines), run an experiment whose two variants boot kernels built from
source (the stand-in tree of tests/stand_in_kernel.py, built by real make).
Each kernel is built once between them: the agent that needs it first builds
and publishes it, the other fetches it. The stand-in image does not boot, so
the cells fail fast (a short boot limit): what is shown here is the kernels'
way, not a measurement. The claim itself (one waits while another builds)
is shown with two processes on the real server."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab.run import fleet
from iolab.store import Store
from tests.helpers import REPO
from tests.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.stand_in_kernel import LINES, cache, diff, fake_source  # noqa: F401 (fixtures)
from tests.test_queue import finish, start_agent

EXPERIMENT = """\
name = "fleet test"
[kernel]
source = "{source}"
[target]
kind = "loop"
fs = "ext4"
size = "64MiB"
[[variant]]
name = "plain"
[[variant]]
name = "patched"
kernel = {{ patches = ["fix.patch"] }}
[[workload]]
name = "w"
engine = "probe"
probe = {{ mode = "batch", case = "write_u1k", batches = 2 }}
[run]
iterations = 2
[vm]
boot_timeout = "3s"
timeout = "5s"
"""


def machine(tmp_path: Path, name: str, busybox: Path) -> Path:
    """A kernel cache of its own (another machine's), with the busybox its initramfs takes."""
    root = tmp_path / f"cache-{name}"
    tools = root / "iolab" / "kernels" / "tools" / "busybox-1"
    tools.mkdir(parents=True)
    (tools / "busybox").write_bytes(busybox.read_bytes())
    return root


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools")
def test_two_agents_build_each_kernel_once_between_them(tmp_path, postgres_url, fake_source, cache):
    from iolab import load
    from iolab.run.submit import submit

    diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    path = tmp_path / "exp.toml"
    path.write_text(EXPERIMENT.format(source=fake_source))
    store = Store(postgres_url)
    queued = submit(load.load(path), store)
    keys = store.db.execute("SELECT args->'kernels' FROM procrastinate_jobs LIMIT 1").fetchone()[0]
    assert set(keys) == {"plain", "patched"} and len(set(keys.values())) == 2
    busybox = next((cache / "kernels" / "tools").glob("*/busybox"))
    lab = {"tmp": tmp_path, "agents": [], "url": postgres_url}
    agents = {}
    for name in ("agent-a", "agent-b"):
        lab["env"] = {**os.environ, "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / f"state-{name}"),
                      "XDG_CACHE_HOME": str(machine(tmp_path, name, busybox)), "IOLAB_STORE": postgres_url,
                      "PYTHONPATH": str(REPO)}
        agents[name] = start_agent(lab, name)
    try:
        for name, process in agents.items():
            finish(process, lab, name, timeout=300)
    finally:
        for process in agents.values():
            if process.poll() is None:
                process.kill()
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in agents}
    shared = fleet.published(postgres_url)
    assert set(shared) == set(keys.values()), logs
    for key, builder in shared.items():
        other = next(name for name in agents if name != builder)
        assert logs[builder].count(f"built build-{key}") == 1, logs[builder]
        assert f"built build-{key}" not in logs[other] and f"fetched build-{key}" in logs[other], logs[other]
        images = set()
        for name in agents:  # both machines have it, the same bytes
            manifest = json.loads((tmp_path / f"cache-{name}" / "iolab" / "kernels" / f"build-{key}" /
                                   "manifest.json").read_text())
            images.add(manifest["image_sha256"])
        assert len(images) == 1
    samples = store.samples(queued.run_id)
    assert {s.host for s in samples} == {"agent-a", "agent-b"}  # each agent ran a round, so each needed both kernels


WAITER = """
import sys, time
from iolab.run.fleet import PostgresFleet
said = []
def say(text):
    said.append(text)
    print(text, file=sys.stderr, flush=True)  # the test holds the claim until the waiter says it waits
fleet = PostgresFleet(sys.argv[1], "waiter", say)
began = time.monotonic()
with fleet.claimed("k1"):
    waited = time.monotonic() - began
print(f"{waited:.1f} {said}")
"""


def test_a_claim_waits_while_another_machine_builds_then_fetches_what_it_published(tmp_path, postgres_url):
    holder = fleet.PostgresFleet(postgres_url, "builder")
    with holder.claimed("k1"):
        waiter = subprocess.Popen([sys.executable, "-c", WAITER, postgres_url], text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
        ready, _, _ = select.select([waiter.stderr], [], [], 120)  # the waiter's start is slow on a loaded host
        assert ready, "the waiter never said it waits"
        waiting = waiter.stderr.readline()
        time.sleep(1)
        assert waiter.poll() is None, waiting  # still waiting: the build is under way
    out, err = waiter.communicate(timeout=60)
    err = waiting + err
    waited, said = out.split(" ", 1)
    assert float(waited) > 0.5 and "another agent is building it; waiting for it" in said, err
    with holder.claimed("k2"):  # another key is not held up
        pass
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "vmlinux").write_bytes(b"\x7fELF image")
    (kernel / "manifest.json").write_text('{"name": "build-k1"}\n')
    holder.publish("k1", kernel)
    fetched = tmp_path / "fetched"
    fetched.mkdir()
    assert fleet.PostgresFleet(postgres_url, "other").fetch("k1", fetched)
    assert (fetched / "vmlinux").read_bytes() == b"\x7fELF image"
    assert json.loads((fetched / "manifest.json").read_text())["built_by"] == "builder"
    assert not holder.fetch("k2", tmp_path)


@pytest.mark.integration
def test_a_queued_series_stores_the_workloads_each_step_can_reach(tmp_path, postgres_url, fake_source, cache):
    """iolab submit plans a series as iolab run does: a step whose patch
    changes only ext4's code runs no workload on f2fs ([series] unreached
    stored with the run, which the agents' plan reads)."""
    from iolab import load
    from iolab.run.submit import submit

    (tmp_path / "ext4.patch").write_text("ext4\n--- a/fs/ext4/inode.c\n+++ b/fs/ext4/inode.c\n@@ -1 +1 @@\n-a\n+b\n")
    path = tmp_path / "series.toml"
    path.write_text(
        f'name = "queued series"\n[kernel]\nsource = "{fake_source}"\n'
        '[series]\npatches = ["ext4.patch"]\nstrategy = "every"\n'
        '[target]\nkind = "loop"\nfs = "ext4"\nsize = "64MiB"\n'
        '[[workload]]\nname = "on_ext4"\nengine = "probe"\nprobe = { mode = "batch", case = "write_u1k" }\n'
        '[[workload]]\nname = "on_f2fs"\nengine = "probe"\nfs = "f2fs"\nprobe = { mode = "batch", case = "write_u1k" }\n'
        '[run]\niterations = 2\n')
    store = Store(postgres_url)
    queued = submit(load.load(path), store)
    stored = json.loads(store.run(queued.run_id).experiment_json)
    assert stored["series"]["unreached"] == {"1 ext4": ["on_f2fs"]}
    assert store.run(queued.run_id).planned_cells == 2 * 3  # base: both workloads; the step: ext4's only
    from iolab.run import agent, inputs

    again = agent.checked(store.run(queued.run_id).experiment_json, inputs.of_run(store, queued.run_id))
    assert [v.name for v in again.variant] == ["base", "1 ext4"]  # an agent reads the stored steps (it refused them)
