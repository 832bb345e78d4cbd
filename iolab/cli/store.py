"""The stored runs: ``iolab runs`` lists them (a queued run's rounds per
host too), ``iolab baseline`` names runs to compare later ones with,
``iolab history`` follows a metric across the runs of an experiment."""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any, get_args

from iolab.cli.common import EXIT_OK, open_store, parse_run_id
from iolab.spec import Clock, Experiment, SpecError
from iolab.stats import VIEWS
from iolab.store import Store, StoreError


def add_runs(commands: Any) -> None:
    commands.add_parser("runs", help="list stored runs",
                        description="List the runs in the store; a queued run's rounds: queued, running "
                        "and done per host.")


def add_baseline(commands: Any) -> None:
    base = commands.add_parser("baseline", help="name runs to compare later runs with",
                               description="Saved baselines: a name for a run (saving a name again "
                               "moves it). Use with run/report --baseline NAME.")
    actions = base.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    save = actions.add_parser("save", help="save RUN as baseline NAME",
                              description="Save RUN as baseline NAME: a complete run of an experiment (not an "
                              "interrupted, failed or still running one, nor a calibration).")
    save.add_argument("name", help="e.g. main, v6.18")
    save.add_argument("run", help="run id, or 'latest'")
    actions.add_parser("list", help="list saved baselines", description="List saved baselines.")
    delete = actions.add_parser("delete", help="forget baseline NAME (its run stays)",
                                description="Forget the name; the run and its samples stay in the store.")
    delete.add_argument("name")


def _can_be_baseline(store: Store, run_id: int) -> None:
    """A baseline is a complete run of an experiment: what later runs are set against."""
    run = store.run(run_id)
    if Experiment.model_validate_json(run.experiment_json).report.kind == "calibration":
        raise StoreError(f"run {run_id} is a calibration (A/A), not a baseline: save a run of the experiment")
    if run.status != "complete":
        ok, failed = store.sample_counts(run_id)
        hint = f"; iolab resume {run_id} completes it" if run.status == "interrupted" else ""
        raise StoreError(f"run {run_id} is {run.status} ({ok} of {run.planned_cells} cells measured, {failed} failed): "
                         f"a baseline is a complete run{hint}")


def add_history(commands: Any) -> None:
    hist = commands.add_parser("history", help="a metric across the runs of an experiment",
                               description="The central value of METRIC in each stored run of an "
                               "experiment (default: the latest run's), per workload and variant.")
    hist.add_argument("metric", help="metric name, e.g. read_bw, read_p99, lat_p50")
    hist.add_argument("--experiment", metavar="NAME", help="experiment name (default: the latest run's)")
    hist.add_argument("--last", type=int, metavar="N", help="only the last N runs")
    hist.add_argument("--format", choices=("text", "json", "html"), default="text",
                      help="report format (default: text)")
    hist.add_argument("--timing", choices=get_args(Clock),
                      help="the runs of this timing mode (modeled: instructions with [vm] disk = \"model\"; "
                           "default: the latest run's mode)")
    hist.add_argument("--view", choices=VIEWS, default="median",
                      help="central value (default: median)")


def cmd_baseline(args: argparse.Namespace) -> int:
    store = open_store(args, exists=True)
    if args.baseline_command == "save":
        run_id = parse_run_id(store, args.run)
        _can_be_baseline(store, run_id)
        store.save_baseline(args.name, run_id)
        print(f"baseline {args.name!r} is run {run_id} ({store.run(run_id).name})")
        return EXIT_OK
    if args.baseline_command == "delete":
        run_id = store.baseline(args.name).run_id  # refuses a name not saved, naming the saved ones
        store.delete_baseline(args.name)
        print(f"baseline {args.name!r} forgotten (run {run_id} stays)")
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
        if Experiment.model_validate_json(run.experiment_json).report.kind == "calibration":
            note += " [A/A calibration]"
        if run.recheck_of is not None:
            note += f" [recheck of run {run.recheck_of}]"
        if run.stop_reason and run.status == "complete":  # an adaptive run that stopped before its most rounds
            note += f" [stopped: {run.stop_reason}]"
        if run.status == "running" and not run.queued and (recovery.store_name(store), run.id) not in live:
            note += " (its process is gone: iolab cleanup marks it interrupted, iolab resume continues it)"
        print(f"{run.id:>4}  {started:<16}  {run.status:<11}  {cells:>9}  {run.name}{note}")
        if run.queued:
            for line in status.round_lines(store, run):
                print(f"{'':>6}{line}")
    return EXIT_OK


COMMANDS = {"runs": cmd_runs, "baseline": cmd_baseline, "history": cmd_history}
