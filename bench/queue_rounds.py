#!/usr/bin/env python3
"""What the queue costs: overhead per round, and the time of a kill and retry.

Needs root (loop devices) and a PostgreSQL database to use up (a throwaway
one: the benchmark queues its own runs in it):

    .venv/bin/python bench/queue_rounds.py --store postgresql:///scratch?host=/run/postgresql \\
        [--rounds 8] [--heartbeat 2]

1. Overhead per round: `iolab submit` an experiment of 2 variants x 1 fio
   cell of 1 s, then one `iolab agent --until-idle`. For each round,
   procrastinate's own events give the job's start and end; the round's
   cells give their set-up + run + teardown times. Overhead = the job's span
   minus its cells (checking the experiment again, fio's parse, the lock,
   reclaiming, the attempt's rows), and the gap between one job's end and
   the next one's start (fetching). Printed as median and max.
2. Kill and retry: two agents (--heartbeat H); one is SIGKILLed in the
   middle of a round; the time from the kill to the round's next attempt
   starting on the other agent (about 3 heartbeats: the silence after which
   a round is given back), and to that attempt being done.

Wall-clock figures on a shared machine: print `uptime` beside them.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab.store import Store

REPO = Path(__file__).resolve().parent.parent

EXPERIMENT = """\
name = "queue benchmark"
[target]
kind = "loop"
fs = "ext4"
size = "128MiB"
image_dir = "{images}"
[[variant]]
name = "4k"
fio = {{ bs = "4k" }}
[[variant]]
name = "16k"
fio = {{ bs = "16k" }}
[[workload]]
name = "w"
job = \"\"\"
[w]
rw=read
size=16M
runtime={runtime}
time_based=1
\"\"\"
[run]
iterations = {rounds}
"""


def iolab(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iolab.cli", *args], env=env, capture_output=True, text=True,
                          check=True)


def agent(env: dict[str, str], name: str, heartbeat: float, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "iolab.cli", "agent", "--until-idle", "--name", name,
                             "--heartbeat", str(heartbeat)], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)


def submit(env: dict[str, str], work: Path, rounds: int, runtime: int) -> int:
    path = work / f"exp-{rounds}-{runtime}.toml"
    path.write_text(EXPERIMENT.format(images=work, rounds=rounds, runtime=runtime))
    return int(iolab(env, "submit", str(path)).stdout.split()[1].rstrip(":"))


def overhead(env: dict[str, str], store: Store, work: Path, rounds: int, heartbeat: float) -> tuple[float, float]:
    """Prints the figures; returns the median overhead per round and the median gap between rounds."""
    run_id = submit(env, work, rounds, 1)
    started = time.monotonic()
    agent(env, "bench", heartbeat, work / "overhead.log").wait()
    wall = time.monotonic() - started
    events = store.db.execute(
        "SELECT (j.args->>'round')::int, e.type::text, extract(epoch FROM e.at) FROM procrastinate_events e"
        " JOIN procrastinate_jobs j ON j.id = e.job_id WHERE (j.args->>'run_id')::bigint = %s"
        " AND e.type IN ('started', 'succeeded') ORDER BY e.at", (run_id,)).fetchall()
    span: dict[int, dict[str, float]] = {}
    for round_index, kind, at in events:
        span.setdefault(round_index, {})[kind] = float(at)
    cells: dict[int, float] = {}
    for sample in store.samples(run_id, with_histograms=False):
        cells[sample.round] = cells.get(sample.round, 0.0) + (sample.setup_s or 0) + (sample.run_s or 0) + (
            sample.teardown_s or 0)
    jobs = [span[r]["succeeded"] - span[r]["started"] for r in sorted(span)]
    extra = [span[r]["succeeded"] - span[r]["started"] - cells[r] for r in sorted(span)]
    ends = sorted((span[r]["started"], span[r]["succeeded"]) for r in span)
    gaps = [b[0] - a[1] for a, b in zip(ends, ends[1:])]
    fio = [s.run_s or 0 for s in store.samples(run_id, with_histograms=False)]
    print(f"overhead: run {run_id}, {rounds} rounds x 2 cells (fio 1 s), one agent, heartbeat {heartbeat} s; "
          f"{wall:.1f} s from the agent's start to its exit")
    print(f"  job span per round     median {statistics.median(jobs):6.2f} s  max {max(jobs):6.2f} s")
    print(f"  cells per round        median {statistics.median(cells.values()):6.2f} s  "
          f"(fio run per cell median {statistics.median(fio):.2f} s)")
    print(f"  queue + agent overhead median {statistics.median(extra):6.2f} s  max {max(extra):6.2f} s  per round")
    print(f"  gap between rounds     median {statistics.median(gaps):6.2f} s  max {max(gaps):6.2f} s")
    return statistics.median(extra), statistics.median(gaps)


def kill_and_retry(env: dict[str, str], store: Store, work: Path, heartbeat: float) -> None:
    run_id = submit(env, work, 2, 2)
    victim = agent(env, "victim", heartbeat, work / "victim.log")
    survivor = agent(env, "survivor", heartbeat, work / "survivor.log")
    query = ("SELECT count(*) FROM samples s JOIN attempts a ON a.run_id = s.run_id AND a.round = s.round"
             " AND a.attempt = s.attempt WHERE s.run_id = %s AND s.host = 'victim' AND a.status = 'running'")
    deadline = time.monotonic() + 300
    while store.db.execute(query, (run_id,)).fetchone()[0] != 1:
        if time.monotonic() > deadline or victim.poll() is not None:
            survivor.kill()
            victim.kill()
            raise SystemExit("the victim never got into the middle of a round")
        time.sleep(0.05)
    time.sleep(0.5)
    killed_at = time.time()
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    [killed] = [a for a in store.attempts(run_id) if a.host == "victim" and a.status != "done"]
    retry = None
    while retry is None or retry.finished is None:
        found = [a for a in store.attempts(run_id) if a.round == killed.round and a.attempt > killed.attempt]
        retry = found[0] if found else None
        if time.time() - killed_at > 300:
            raise SystemExit("no retry within 300 s")
        time.sleep(0.1)
    survivor.wait()
    status = store.run(run_id).status
    print(f"kill and retry: run {run_id}, heartbeat {heartbeat} s (a silent agent's round goes back after "
          f"{3 * heartbeat:.0f} s); the run is {status}")
    print(f"  kill -> retry started on {retry.host}: {retry.started - killed_at:6.2f} s")
    print(f"  kill -> retry done:                {retry.finished - killed_at:6.2f} s (the round's cells again)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True, help="a PostgreSQL database to use up (postgresql://...)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--heartbeat", type=float, default=2.0)
    parser.add_argument("--skip-kill", action="store_true", help="only the overhead per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iolab-bench-queue-") as scratch:
        work = Path(scratch)
        env = {**os.environ, "IOLAB_STORE": args.store, "XDG_STATE_HOME": str(work / "state"),
               "PYTHONPATH": str(REPO)}
        store = Store(args.store)
        print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        overhead(env, store, work, args.rounds, args.heartbeat)
        if not args.skip_kill:
            kill_and_retry(env, store, work, args.heartbeat)
        print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
