"""The stored runs: ``iolab runs`` lists them (a queued run's rounds per
host too), ``iolab baseline`` names runs to compare later ones with,
``iolab history`` follows a metric across the runs of an experiment."""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any, get_args

from iolab.cli_common import EXIT_OK, open_store, parse_run_id
from iolab.spec import SpecError, Timing
from iolab.stats import VIEWS


def add_runs(commands: Any) -> None:
    commands.add_parser("runs", help="list stored runs",
                        description="List the runs in the store; a queued run's rounds: queued, running "
                        "and done per host.")


def add_baseline(commands: Any) -> None:
    base = commands.add_parser("baseline", help="name runs to compare later runs with",
                               description="Saved baselines: a name for a run (saving a name again "
                               "moves it). Use with run/report --baseline NAME.")
    actions = base.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    save = actions.add_parser("save", help="save RUN as baseline NAME", description="Save RUN as baseline NAME.")
    save.add_argument("name", help="e.g. main, v6.18")
    save.add_argument("run", help="run id, or 'latest'")
    actions.add_parser("list", help="list saved baselines", description="List saved baselines.")


def add_history(commands: Any) -> None:
    hist = commands.add_parser("history", help="a metric across the runs of an experiment",
                               description="The central value of METRIC in each stored run of an "
                               "experiment (default: the latest run's), per workload and variant.")
    hist.add_argument("metric", help="metric name, e.g. read_bw, read_p99, lat_p50")
    hist.add_argument("--experiment", metavar="NAME", help="experiment name (default: the latest run's)")
    hist.add_argument("--last", type=int, metavar="N", help="only the last N runs")
    hist.add_argument("--format", choices=("text", "json", "html"), default="text",
                      help="report format (default: text)")
    hist.add_argument("--timing", choices=get_args(Timing),
                      help="the runs of this timing mode (default: the latest run's mode)")
    hist.add_argument("--view", choices=VIEWS, default="median",
                      help="central value (default: median)")


def cmd_baseline(args: argparse.Namespace) -> int:
    store = open_store(args, exists=True)
    if args.baseline_command == "save":
        run_id = parse_run_id(store, args.run)
        store.save_baseline(args.name, run_id)
        print(f"baseline {args.name!r} is run {run_id} ({store.run(run_id).name})")
        return EXIT_OK
    saved = store.baselines()
    if not saved:
        print("no baselines saved (save one: iolab baseline save NAME RUN)")
    for item in saved:
        when = datetime.datetime.fromtimestamp(item.saved).strftime("%Y-%m-%d %H:%M")
        print(f"{item.name:<24}  run {item.run_id:<5}  saved {when}  {store.run(item.run_id).name}")
    return EXIT_OK


def cmd_history(args: argparse.Namespace) -> int:
    from iolab.analysis import history
    from iolab.report.history import RENDERERS as HISTORY_RENDERERS

    if args.last is not None and args.last < 1:
        raise SpecError(f"--last must be at least 1, got {args.last}")
    found = history.history(open_store(args, exists=True), args.metric, experiment=args.experiment, last=args.last,
                            view=args.view, timing=args.timing)
    sys.stdout.write(HISTORY_RENDERERS[args.format](found))
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    from iolab.run import recovery, status

    store = open_store(args, exists=True)
    live = recovery.live_runs()
    print(f"{'id':>4}  {'started':<16}  {'status':<11}  {'cells':>9}  name")
    for run in store.runs():
        ok, failed = store.sample_counts(run.id)
        started = datetime.datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M")
        cells = f"{ok + failed}/{run.planned_cells}"
        note = f" ({failed} failed)" if failed else ""
        if run.status == "running" and not run.queued and (recovery.store_name(store), run.id) not in live:
            note += " (its process is gone: iolab cleanup marks it interrupted, iolab resume continues it)"
        print(f"{run.id:>4}  {started:<16}  {run.status:<11}  {cells:>9}  {run.name}{note}")
        if run.queued:
            for line in status.round_lines(store, run):
                print(f"{'':>6}{line}")
    return EXIT_OK


COMMANDS = {"runs": cmd_runs, "baseline": cmd_baseline, "history": cmd_history}
