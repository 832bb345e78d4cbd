"""The iolab command line: run, report, runs, doctor."""

from __future__ import annotations

import argparse
import datetime
import sys
import textwrap

from iolab import analysis, doctor, interrupts, progress, runner, spec
from iolab.report import FORMATS, renderer
from iolab.store import Store, StoreError, default_path
from iolab.sysutil import ToolError

EXIT_OK, EXIT_FAILED_CELLS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = """\
iolab runs a storage workload against a baseline and candidates, many
times, interleaved, on a fresh filesystem each time, stores every sample
and prints the comparison a reviewer trusts.

workflow:
  iolab doctor                      what this machine can do
  iolab run scenarios/demo.toml     run an experiment, print the table
  iolab runs                        list stored runs
  iolab report 3 --format json      show run 3 again, as JSON

An experiment file names the target (a loop image by default), two or more
variants (the first is the baseline) and one or more workloads (fio jobs).
See README.md and scenarios/ for examples.
"""

EPILOG = """\
exit status: 0 all cells succeeded; 1 some cells failed (they are stored
and shown as failures); 2 bad usage or experiment file; 130 interrupted.
The store is %(store)s unless --store or $IOLAB_STORE says otherwise.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iolab",
        description=DESCRIPTION,
        epilog=EPILOG % {"store": default_path()},
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--store", metavar="FILE", help="SQLite file holding runs and samples")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser("run", help="run an experiment and print its comparison",
                              description="Plan, run, store and report an experiment.")
    run.add_argument("experiment", help="experiment file (TOML)")
    run.add_argument("--iterations", type=int, metavar="N", help="override [run].iterations")
    run.add_argument("--seed", type=int, help="seed of the interleaving order (default: [run].seed or random)")
    run.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--dry-run", action="store_true", help="validate and print the plan, run nothing")

    report = commands.add_parser("report", help="print the comparison of a stored run",
                                 description="Re-render a stored run from its samples.")
    report.add_argument("run", nargs="?", default="latest", help="run id (default: the latest)")
    report.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")

    commands.add_parser("runs", help="list stored runs", description="List the runs in the store.")
    commands.add_parser("doctor", help="check what this machine can do",
                        description="Check tools, kernel features and permissions iolab needs.")
    return parser


def _store(args: argparse.Namespace) -> Store:
    return Store(args.store or default_path())


def _print_plan(experiment: spec.Experiment, seed: int) -> None:
    from iolab.plan import plan

    cells = plan(experiment, seed)
    print(f"{experiment.name}: {len(cells)} cells, seed {seed}")
    for cell in cells:
        kind = "warmup" if cell.warmup else f"iteration {cell.iteration}"
        print(f"  {cell.seq:4d}  round {cell.round:3d}  {cell.variant:<24} {cell.workload:<20} {kind}")


def cmd_run(args: argparse.Namespace) -> int:
    experiment = spec.load(args.experiment)
    if args.iterations is not None:
        experiment = experiment.model_copy(
            update={"run": experiment.run.model_copy(update={"iterations": args.iterations})}
        )
    if args.dry_run:
        _print_plan(experiment, args.seed if args.seed is not None else (experiment.run.seed or 0))
        return EXIT_OK
    store = _store(args)
    interrupts.sigterm_interrupts()
    shown = progress.for_terminal(args.quiet)
    try:
        run_id = runner.run(
            experiment, store, experiment_path=args.experiment, seed=args.seed, progress=shown
        )
    except runner.Interrupted as interrupted:
        run_id = interrupted.run_id
        print(f"iolab: interrupted; the samples taken so far are in run {run_id}:", file=sys.stderr)
        _print_report(store, run_id, args.format)
        return EXIT_INTERRUPTED
    return _print_report(store, run_id, args.format)


def _print_report(store: Store, run_id: int, fmt: str) -> int:
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    sys.stdout.write(renderer(fmt)(result))
    return EXIT_FAILED_CELLS if result.failures else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.run == "latest":
        run_id = store.latest_run_id()
    elif args.run.isdigit():
        run_id = int(args.run)
    else:
        raise StoreError(f"run must be a number or 'latest', got {args.run!r}")
    _print_report(store, run_id, args.format)
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    store = _store(args)
    print(f"{'id':>4}  {'started':<16}  {'status':<11}  {'cells':>9}  name")
    for run in store.runs():
        ok, failed = store.sample_counts(run.id)
        started = datetime.datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M")
        cells = f"{ok + failed}/{run.planned_cells}"
        note = f" ({failed} failed)" if failed else ""
        print(f"{run.id:>4}  {started:<16}  {run.status:<11}  {cells:>9}  {run.name}{note}")
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    found = doctor.checks()
    sys.stdout.write(doctor.render(found))
    return EXIT_OK if all(c.ok for c in found if c.required) else EXIT_FAILED_CELLS


COMMANDS = {"run": cmd_run, "report": cmd_report, "runs": cmd_runs, "doctor": cmd_doctor}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (spec.SpecError, StoreError, ToolError) as error:
        message = textwrap.indent(str(error), "  ").lstrip()
        print(f"iolab: {message}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
