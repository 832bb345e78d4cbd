#!/usr/bin/env python3
"""Mails per hour on one host, 10 and 100 (issue 39, Pace): the per-mail cost and the queue's own overhead.

    python3 bench/pace_fleet.py --mail-s 290 --mail-rounds 6 [--rounds 8] [--idle-agents 8 --idle-s 60]
        [--store postgresql://...]

(as root: the queue's rounds run fio on loop devices). Without --store it
starts a PostgreSQL of its own for the measurement (initdb into a fresh
directory under /tmp, a unix socket only, as tests/postgres.py does, fsync
off) and removes it after.

1. The queue's overhead, with real agents: `iolab submit` an experiment of
   --rounds rounds of 2 fio cells of 1 s, then one `iolab agent
   --until-idle` (bench/queue_rounds.py's measurement: procrastinate's own
   events give each job's start and end, the round's cells their set-up, run
   and teardown; the overhead is the rest, and the gap between jobs).
2. What the one PostgreSQL spends per round: the server's CPU seconds (the
   postmaster, its reaped children and its live ones, from /proc) from the
   submit to the agent's exit, divided by the rounds. With many hosts this
   is the part they share.
3. With --idle-agents N: N more agents (`iolab agent`, default heartbeat)
   that find nothing to do for --idle-s seconds: the database's CPU they
   cost, per agent and hour (procrastinate polls for jobs and each agent
   sends its heartbeats). With many hosts, most wait most of the time.
4. Mails per hour: a host runs one round at a time (its VMs take both CPUs),
   so a mail costs a host `--mail-s` (`iolab patch` end to end on one host:
   bench/pace.py mail) plus the queue's overhead for each of its
   `--mail-rounds` rounds. N hosts do N times the work of one, until the
   database is busy: at most (3600 / the database's CPU per round) rounds an
   hour on one core of its own, less what N waiting agents cost it. What is not measured here, and said so: the
   step kernel's build is counted once per mail (a fleet builds each kernel
   once and the others fetch it, tests/test_fleet.py; the fetch is not
   measured), and the mail's reading and the robot's own pass (iolab watch,
   bench/data/watch-*.txt) are not counted.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import queue_rounds  # noqa: E402
from iolab.store import Store  # noqa: E402

HOSTS = (1, 10, 100)
TICKS = os.sysconf("SC_CLK_TCK")


class Postgres:
    """A throwaway PostgreSQL on a unix socket under /tmp (as an unprivileged user when root)."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[4]))
        if not found:
            raise SystemExit("pace_fleet: PostgreSQL is not installed (scripts/setup installs it)")
        self.bindir = found[-1].parent
        self.prefix = ["runuser", "-u", self._user(), "--"] if os.geteuid() == 0 else []
        self.root = tempfile.mkdtemp(prefix="iolab-pace-pg-", dir="/tmp")
        os.chmod(self.root, 0o755)
        if self.prefix:
            shutil.chown(self.root, self.prefix[2])
        self.data = os.path.join(self.root, "data")
        subprocess.run([*self.prefix, f"{self.bindir}/initdb", "-D", self.data, "-U", "iolab", "--auth=trust",
                        "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        options = f"-k {self.root} -c listen_addresses='' -c fsync=off -p 5432"
        subprocess.run([*self.prefix, f"{self.bindir}/pg_ctl", "-D", self.data, "-w", "-l",
                        os.path.join(self.root, "log"), "-o", options, "start"], check=True, capture_output=True)
        subprocess.run([*self.prefix, f"{self.bindir}/createdb", "-h", self.root, "-U", "iolab", "pace"], check=True)
        self.url = f"postgresql://iolab@/pace?host={self.root}&port=5432"

    @staticmethod
    def _user() -> str:
        for name in ("postgres", "nobody"):
            try:
                return pwd.getpwnam(name).pw_name
            except KeyError:
                continue
        raise SystemExit("pace_fleet: running as root and no unprivileged user to run PostgreSQL as")

    def postmaster(self) -> int:
        return int(Path(self.data, "postmaster.pid").read_text().split()[0])

    def remove(self) -> None:
        subprocess.run([*self.prefix, f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                       capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def server_cpu(postmaster: int) -> float:
    """CPU seconds of the server: the postmaster's own and its reaped children's, and its live children's."""
    def fields(pid: int) -> list[str]:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2:].split()

    own = fields(postmaster)
    ticks = sum(int(own[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != postmaster:
            try:
                stat = fields(int(entry.name))
            except (OSError, ValueError):
                continue
            if int(stat[1]) == postmaster:  # ppid
                ticks += int(stat[11]) + int(stat[12])
    return ticks / TICKS


def per_hour(mail_s: float, rounds: int, overhead: float, db_per_round: float,
             idle_per_agent_s: float = 0.0) -> list[tuple[int, float, str]]:
    """(hosts, mails an hour, what bounds it): N hosts N times one, while one core of
    the database has the time: each agent's waiting costs it idle_per_agent_s a second."""
    one = 3600.0 / (mail_s + rounds * overhead)
    rows = []
    for n in HOSTS:
        left = 1.0 - n * idle_per_agent_s  # of one database core, a second
        ceiling = 3600.0 * left / (db_per_round * rounds) if db_per_round > 0 and left > 0 else 0.0
        rows.append((n, min(n * one, ceiling), "the database" if n * one > ceiling else "the hosts"))
    return rows


def idle(url: str, agents: int, seconds: float, postmaster: int) -> float:
    """The database's CPU seconds a second that `agents` waiting agents cost it."""
    with tempfile.TemporaryDirectory(prefix="iolab-pace-idle-") as scratch:
        env = {**os.environ, "IOLAB_STORE": url, "XDG_STATE_HOME": str(Path(scratch, "state")),
               "PYTHONPATH": str(HERE.parent)}
        started = [subprocess.Popen([sys.executable, "-m", "iolab.cli", "agent", "--name", f"idle{n}"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for n in range(agents)]
        try:
            time.sleep(10.0)  # connected, listening
            before, begun = server_cpu(postmaster), time.monotonic()
            time.sleep(seconds)
            used = server_cpu(postmaster) - before
            return used / (time.monotonic() - begun)
        finally:
            for agent in started:
                agent.terminate()
            for agent in started:
                agent.wait()


def measure(url: str, rounds: int, postmaster: int | None) -> tuple[float, float, float]:
    """(the queue's overhead per round, median; the gap between jobs, median; the database's CPU per round)."""
    with tempfile.TemporaryDirectory(prefix="iolab-pace-fleet-") as scratch:
        work = Path(scratch)
        env = {**os.environ, "IOLAB_STORE": url, "XDG_STATE_HOME": str(work / "state"),
               "PYTHONPATH": str(HERE.parent)}
        store = Store(url)
        before = server_cpu(postmaster) if postmaster else 0.0
        overhead, gap = queue_rounds.overhead(env, store, work, rounds, 2.0)
        time.sleep(1.0)  # the agent's backend exits and is reaped
        db = (server_cpu(postmaster) - before) / rounds if postmaster else float("nan")
    return overhead, gap, db


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mail-s", type=float, required=True, help="one mail end to end on one host (s)")
    parser.add_argument("--mail-rounds", type=int, required=True, help="the rounds (queue jobs) of that mail")
    parser.add_argument("--rounds", type=int, default=8, help="rounds of the queue's measurement")
    parser.add_argument("--store", help="a PostgreSQL database to use up (default: one of its own)")
    parser.add_argument("--idle-agents", type=int, default=0, help="agents that wait, for the database's cost")
    parser.add_argument("--idle-s", type=float, default=60.0)
    args = parser.parse_args()
    server = None if args.store else Postgres()
    idle_s = 0.0
    try:
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        print(f"load before: {load}; nproc {os.cpu_count()}; "
              f"database: {'given' if args.store else 'a PostgreSQL of its own, fsync off, on this host'}")
        postmaster = server.postmaster() if server else None
        overhead, gap, db = measure(args.store or server.url, args.rounds, postmaster)
        if args.idle_agents and postmaster:
            idle_s = idle(server.url, args.idle_agents, args.idle_s, postmaster) / args.idle_agents
        print(f"load after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    finally:
        if server is not None:
            server.remove()
    print(f"queue + agent overhead per round (median) {overhead:.2f} s; gap between jobs (median) {gap:.2f} s; "
          f"the database's CPU per round {db:.3f} s")
    if args.idle_agents:
        print(f"{args.idle_agents} waiting agents for {args.idle_s:g} s: the database's CPU "
              f"{idle_s * 3600:.1f} s an hour per agent ({idle_s * 100:.3f}% of a core)")
    print(f"a mail: {args.mail_s:g} s on one host, {args.mail_rounds} rounds -> "
          f"{args.mail_s + args.mail_rounds * (overhead + gap):.1f} s of a host through the queue")
    for hosts, rate, bound in per_hour(args.mail_s, args.mail_rounds, overhead + gap, db, idle_s):
        print(f"  {hosts:3d} host(s): {rate:8.1f} mails/hour (bound by {bound})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
