"""Many machines: ``iolab submit`` queues an experiment's rounds in the
PostgreSQL store, ``iolab agent`` runs them on a test host (a procrastinate
worker, iolab.run.agent), ``iolab agents`` lists the agents."""

from __future__ import annotations

import argparse
from typing import Any

from iolab.cli.common import (
    EXIT_OK,
    checked_experiment,
    iterations_type,
    open_store,
    timing_option,
    with_iterations,
)
from iolab.spec import SpecError
from iolab.store import default_path


def add_parsers(commands: Any) -> None:
    """submit, agent, agents: many machines pulling rounds from a queue in the PostgreSQL store."""
    sub = commands.add_parser(
        "submit", help="queue an experiment's rounds for test hosts (agents) to run",
        description="Check the experiment as 'iolab run' does, store the run in the PostgreSQL store and "
        "queue one job per round; print the run id and exit. Agents (iolab agent) with the labels take the "
        "rounds; 'iolab runs' shows them, 'iolab report RUN' prints the table.")
    sub.add_argument("experiment", help="experiment file (TOML)")
    sub.add_argument("--labels", metavar="A,B", default="",
                     help="only agents with all these labels take the rounds (e.g. nvme,x86)")
    sub.add_argument("--iterations", type=iterations_type, metavar="N", help="override [run].iterations")
    sub.add_argument("--seed", type=int, help="seed of the interleaving order (default: [run].seed or random)")
    timing_option(sub)
    sub.add_argument("--force", action="store_true",
                     help="queue a plan under which no primary comparison can be decided (too few rounds)")
    agent = commands.add_parser(
        "agent", help="run on a test host: take rounds from the queue and run them",
        description="A worker with concurrency 1 on this machine: take a round from the queue, hold the "
        "machine lock, run the round's cells, write each sample to the shared store. SIGTERM (or Ctrl-C) "
        "lets the current cell finish, gives the round back and exits. A round whose agent is killed goes "
        "to another agent once that agent's heartbeats stop (after 3 heartbeats); its samples so far are "
        "kept, superseded.")
    agent.add_argument("--name", default=None, help="this agent's name in reports (default: the host name)")
    agent.add_argument("--labels", metavar="A,B", default="",
                       help="what this host is (e.g. nvme,x86): it takes rounds queued for a subset of these")
    agent.add_argument("--until-idle", action="store_true",
                       help="exit when no round for these labels is queued or running on another agent "
                       "(tests, cron)")
    agent.add_argument("--allow", action="append", default=[], metavar="NAME",
                       help="run experiments that allow this fio option (allow = [...]); refused otherwise")
    agent.add_argument("--heartbeat", type=float, default=10.0, metavar="S",
                       help="seconds between heartbeats (default 10); a round whose agent is silent for 3 "
                       "heartbeats goes back to the queue")
    commands.add_parser("agents", help="list the agents of the store: labels, heartbeat, current round",
                        description="The agents that have taken rounds from this store's queue.")


def cmd_submit(args: argparse.Namespace) -> int:
    from iolab.run import queue, submit

    labels = queue.labels(args.labels)
    from iolab.run import dryrun

    experiment = with_iterations(checked_experiment(args.experiment, args.timing), args.iterations)
    why = dryrun.undecidable(experiment)
    if why and not args.force:
        raise SpecError(why)
    store = open_store(args)
    done = submit.submit(experiment, store, labels=labels, seed=args.seed, experiment_path=args.experiment)
    who = f"agents with labels {','.join(labels)}" if labels else "any agent"
    print(f"run {done.run_id}: {done.rounds} rounds queued for {who} (queue {done.queue})")
    print(f"  watch: iolab runs; iolab agents    table: iolab report {done.run_id}")
    return EXIT_OK


def cmd_agent(args: argparse.Namespace) -> int:
    import platform

    from iolab.run import agent, queue

    where = str(args.store or default_path())
    if not where.startswith(("postgresql://", "postgres://")):
        raise SpecError(f"--store: an agent takes rounds from a PostgreSQL store; {where} is not a "
                             "postgresql:// URL")
    if args.heartbeat <= 0 or args.heartbeat > 3600:
        raise SpecError(f"--heartbeat: seconds between 0 and 3600, got {args.heartbeat}")
    name = args.name or platform.node()
    if not name or len(name) > 64 or any(c.isspace() for c in name):
        raise SpecError("--name: 1 to 64 characters, no blanks")
    settings = agent.Settings(url=where, name=name, labels=queue.labels(args.labels),
                              allow=tuple(sorted(set(args.allow))), until_idle=args.until_idle,
                              heartbeat=args.heartbeat)
    return agent.Agent(settings).serve()


def cmd_agents(args: argparse.Namespace) -> int:
    from iolab.run import status

    for line in status.agent_lines(open_store(args)):
        print(line)
    return EXIT_OK


COMMANDS = {"submit": cmd_submit, "agent": cmd_agent, "agents": cmd_agents}
