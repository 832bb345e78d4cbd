"""The iolab command line: run, report, calibrate, runs, doctor."""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
import random
import sqlite3
import sys
import textwrap
from pathlib import Path

from iolab import cli_gate, cli_kernel, cli_patch, doctor, load, progress, spec
from iolab.analysis import reports
from iolab.analysis.model import Report
from iolab.run import calibrate
from iolab.cell import interrupts
from iolab.run import runner
from iolab.report import FORMATS, renderer
from iolab.report.calibration import RENDERERS as CALIBRATION_RENDERERS
from iolab.store import Store, StoreError, default_path
from iolab.storedb import is_url
from iolab.sysutil import ToolError

EXIT_OK, EXIT_FAILED_CELLS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_PIPE = 141  # stdout closed by its reader (`| head`): what a shell shows for SIGPIPE
EXIT_REGRESSION = cli_gate.EXIT_REGRESSION  # 3: --fail-on found a primary metric worse

DESCRIPTION = """\
iolab runs a storage workload against a baseline and candidates, many
times, interleaved, on a fresh filesystem each time, stores every sample
and prints the comparison a reviewer trusts.

workflow:
  iolab doctor                      what this machine can do
  iolab run scenarios/demo.toml     run an experiment, print the table
  iolab runs                        list stored runs
  iolab report 3 --format json      show run 3 again, as JSON
  iolab run --recheck 3             run 3's experiment again, shown beside it
  iolab resume 3                    continue run 3 after Ctrl-C or a kill
  iolab cleanup                     reclaim what a killed run left
  iolab calibrate scenarios/demo.toml
                                    the baseline against itself: noise,
                                    detectable change, A/A false positives
  iolab report 3 --format html > run3.html
                                    one page with plots, to mail
  iolab compare 3 7                 run 3 against run 7 (unpaired)
  iolab baseline save main 3        name run 3; then run ... --baseline main
  iolab history read_bw             a metric across the runs of an experiment
  iolab submit exp.toml --store postgresql://db/iolab --labels nvme
                                    queue the rounds for test hosts; each
                                    runs: iolab agent --store ... --labels nvme
  iolab run exp.toml --fail-on regression:5%
                                    exit 3 when a metric got worse by >5%
  iolab patch 000*.patch --dry-run  workloads for the files a series
                                    touches, base against each step

An experiment file names the target (a loop image by default), two or more
variants (the first is the baseline) and one or more workloads (fio jobs).
See README.md and scenarios/ for examples.
"""

EPILOG = """\
exit status: 0 all cells succeeded; 1 some cells failed (they are stored
and shown as failures; with --format benchstat only when every cell failed,
the others are counted on stderr), or every cell failed (run status
"failed"); 2 bad usage or experiment file; 3 --fail-on: a primary metric
got worse (or could not be decided); 130 interrupted; 141 the reader of
stdout closed it (| head).
The store is %(store)s unless --store or $IOLAB_STORE says otherwise.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iolab",
        description=DESCRIPTION,
        epilog=EPILOG % {"store": default_path()},
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--store", metavar="FILE|URL", help=STORE_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser("run", help="run an experiment and print its comparison",
                              description="Plan, run, store and report an experiment.")
    run.add_argument("experiment", nargs="?", help="experiment file (TOML)")
    run.add_argument("--recheck", type=int, metavar="RUN",
                     help="run the stored experiment of RUN again (new seed) and show both")
    run.add_argument("--iterations", type=_iterations, metavar="N|auto", help="override [run].iterations")
    _timing_option(run)
    run.add_argument("--seed", type=int, help="seed of the interleaving order (default: [run].seed or random)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--dry-run", action="store_true",
                     help="validate and print the plan (the test it fixes, the time it takes, the cells), run nothing")
    run.add_argument("--force", action="store_true",
                     help="run a plan under which no primary comparison can be decided (too few rounds)")
    run.add_argument("--show-command", action="store_true",
                     help="print each VM's QEMU command line (variants with a kernel) as it starts")
    _view_options(run)
    _gate_options(run)


    report = commands.add_parser("report", help="print the comparison of a stored run",
                                 description="Re-render a stored run from its samples.")
    report.add_argument("run", nargs="?", default="latest", help="run id (default: the latest)")
    _view_options(report)
    _gate_options(report)
    _more_commands(commands)

    cal = commands.add_parser(
        "calibrate", help="run the baseline against itself: noise and detectable change",
        description="Run the experiment's baseline against an identical copy (A/A), interleaved, "
        "and report per metric the noise, the smallest change detectable with 90% power, "
        "and the observed A/A false-positive rate.")
    cal.add_argument("experiment", help="experiment file (TOML)")
    cal.add_argument("--iterations", type=int, metavar="N",
                     help="rounds (default: [run].iterations, or 10 when it is auto)")
    cal.add_argument("--seed", type=int, help="seed of the interleaving order")
    _timing_option(cal)
    cal.add_argument("--format", choices=tuple(CALIBRATION_RENDERERS), default="text",
                     help="report format (default: text)")
    cal.add_argument("--quiet", action="store_true", help="no progress display")

    commands.add_parser("runs", help="list stored runs",
                        description="List the runs in the store; a queued run's rounds: queued, running "
                        "and done per host.")
    _queue_commands(commands)
    cli_kernel.add_parser(commands)
    cli_patch.add_parser(commands)
    _recovery_commands(commands)
    commands.add_parser("doctor", help="check what this machine can do",
                        description="Check tools, kernel features and permissions iolab needs.")
    _store_option_everywhere(parser)
    return parser


STORE_HELP = "the store: an SQLite file, or a postgresql:// URL (a shared store)"


def _store_option_everywhere(parser: argparse.ArgumentParser) -> None:
    """--store after the subcommand too (iolab runs --store FILE): every
    subcommand takes it, and leaves it unset unless given there."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                sub.add_argument("--store", metavar="FILE|URL", default=argparse.SUPPRESS, help=STORE_HELP)
                _store_option_everywhere(sub)


def _more_commands(commands) -> None:
    """compare, baseline, history."""
    cmp = commands.add_parser(
        "compare", help="compare two stored runs of one experiment (unpaired)",
        description="Each variant's values in run A against run B (different times, machines or "
        "kernels): Mann-Whitney U, Holm-corrected; the environment differences are listed.")
    cmp.add_argument("run_a", type=int, metavar="RUN_A", help="the reference run")
    cmp.add_argument("run_b", type=int, metavar="RUN_B", help="the run compared with it")
    _view_options(cmp)
    cmp.add_argument("--fail-on", type=_gate, metavar="regression[:N%]",
                     help="exit 3 when a primary metric of RUN_B is worse than in RUN_A (by more than N%%)")
    base = commands.add_parser("baseline", help="name runs to compare later runs with",
                               description="Saved baselines: a name for a run (saving a name again "
                               "moves it). Use with run/report --baseline NAME.")
    actions = base.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    save = actions.add_parser("save", help="save RUN as baseline NAME", description="Save RUN as baseline NAME.")
    save.add_argument("name", help="e.g. main, v6.18")
    save.add_argument("run", help="run id, or 'latest'")
    actions.add_parser("list", help="list saved baselines", description="List saved baselines.")
    hist = commands.add_parser("history", help="a metric across the runs of an experiment",
                               description="The central value of METRIC in each stored run of an "
                               "experiment (default: the latest run's), per workload and variant.")
    hist.add_argument("metric", help="metric name, e.g. read_bw, read_p99, lat_p50")
    hist.add_argument("--experiment", metavar="NAME", help="experiment name (default: the latest run's)")
    hist.add_argument("--last", type=int, metavar="N", help="only the last N runs")
    hist.add_argument("--format", choices=("text", "json", "html"), default="text",
                      help="report format (default: text)")
    hist.add_argument("--timing", choices=("wall", "instructions"),
                      help="the runs of this timing mode (default: the latest run's mode)")
    hist.add_argument("--view", choices=("median", "mean", "hmean"), default="median",
                      help="central value (default: median)")


def _queue_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """submit, agent, agents: many machines pulling rounds from a queue in the PostgreSQL store."""
    sub = commands.add_parser(
        "submit", help="queue an experiment's rounds for test hosts (agents) to run",
        description="Check the experiment as 'iolab run' does, store the run in the PostgreSQL store and "
        "queue one job per round; print the run id and exit. Agents (iolab agent) with the labels take the "
        "rounds; 'iolab runs' shows them, 'iolab report RUN' prints the table.")
    sub.add_argument("experiment", help="experiment file (TOML)")
    sub.add_argument("--labels", metavar="A,B", default="",
                     help="only agents with all these labels take the rounds (e.g. nvme,x86)")
    sub.add_argument("--iterations", type=_iterations, metavar="N", help="override [run].iterations")
    sub.add_argument("--seed", type=int, help="seed of the interleaving order (default: [run].seed or random)")
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


def _gate(text: str) -> cli_gate.Gate:
    try:
        return cli_gate.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _gate_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--baseline", metavar="NAME",
                         help="show the run against the run saved as baseline NAME (iolab baseline save)")
    command.add_argument("--fail-on", type=_gate, metavar="regression[:N%]",
                         help="exit 3 when a primary metric of the table is worse (by more than N%%), or "
                         "cannot be decided; the CI gate")


def _recovery_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """iolab resume and iolab cleanup."""
    resume = commands.add_parser(
        "resume", help="continue an interrupted or killed run",
        description="Run the cells of a stored run that have no sample yet, with its stored seed and plan; "
        "the samples it has are kept. Then print its comparison.")
    resume.add_argument("run", type=int, help="run id (iolab runs lists them)")
    resume.add_argument("--quiet", action="store_true", help="no progress display")
    _view_options(resume)
    commands.add_parser(
        "cleanup", help="reclaim what killed runs left (knobs, loop devices, mounts, images, processes)",
        description="Undo what iolab processes that died (SIGKILL, a crash) left on this machine, and mark "
        "their runs interrupted; say what was done. A run does this itself before it starts.")


def _iterations(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of rounds or 'auto', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _timing_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--timing", choices=("wall", "instructions"),
        help="override [vm] timing: 'instructions' runs the VMs under QEMU's TCG with a fixed instruction "
        "count (-icount shift=0,sleep=off), so the guest's durations are exact instruction counts, "
        "not times (default then: 3 rounds, 1 vCPU, unless the file sets them)")


def _view_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    command.add_argument("--view", choices=("median", "mean", "hmean"),
                         help="central value: median ± CI (default), mean ± stddev, harmonic mean "
                         "(for rates) (default: [report].view)")
    command.add_argument("--min-max", action="store_true", default=None,
                         help="show min..max under each row (JSON always has them)")


def _experiment(path: str, timing: str | None = None) -> spec.Experiment:
    """An experiment file, parsed and checked against this machine, in the
    timing mode --timing asks for (an error then says so)."""
    experiment = _load(path, timing)
    with load.in_file(path):
        load.check_here(experiment)
    return experiment


def _store(args: argparse.Namespace, exists: bool = False) -> Store:
    """The store; with ``exists``, only one that is there already (a command
    that reads runs never makes an empty store of a mistyped path)."""
    where = args.store or default_path()
    if exists and not is_url(str(where)) and not Path(where).exists():
        raise StoreError(f"no store at {where}{_nearest_store(Path(where))}")
    return Store(where)


def _nearest_store(path: Path) -> str:
    """"; did you mean ..." with the existing store whose name is nearest, or where stores are."""
    places = {path.parent if str(path.parent) else Path(".")}
    default = default_path()
    if not is_url(str(default)):
        places.add(Path(default).parent)
    found = [p for place in places if place.is_dir() for p in place.iterdir()
             if p.is_file() and p.suffix in (".db", ".sqlite", ".sqlite3")]
    if Path(str(default)).exists():
        found.append(Path(str(default)))
    close = difflib.get_close_matches(str(path), [str(p) for p in found], n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]}?"
    if found:
        return f" (stores here: {', '.join(sorted({str(p) for p in found})[:4])})"
    return " (a store is made by the first 'iolab run'; --store or $IOLAB_STORE name another)"


def _existing_store(args: argparse.Namespace) -> Store | None:
    """The store if it exists (a dry run reads earlier runs; it makes no store)."""
    where = args.store or default_path()
    if not is_url(str(where)) and not Path(where).exists():
        return None
    try:
        return Store(where)
    except StoreError as error:  # a store this iolab cannot read: plan without its history
        print(f"iolab: the dry run reads no history: {_few_lines(str(error), 1)}", file=sys.stderr)
        return None


def _print_plan(experiment: spec.Experiment, seed: int, store: Store | None) -> None:
    from iolab.run import dryrun

    for line in dryrun.lines(experiment, seed, store):
        print(line)


def _load(path: str, timing: str | None) -> spec.Experiment:
    """The experiment file, in the timing mode --timing asks for (an error then says so)."""
    try:
        return load.load(path, timing)
    except spec.SpecError as error:
        if timing is None:
            raise
        raise spec.SpecError(f"--timing {timing}: {error}") from None


def _with_iterations(experiment: spec.Experiment, iterations: int | str | None) -> spec.Experiment:
    if iterations is None:
        return experiment
    data = experiment.model_dump()
    if iterations != "auto":  # the adaptive settings only go with "auto"
        for name in ("min_iterations", "max_iterations", "time_budget", "target_ci"):
            data["run"].pop(name)
    data["run"]["iterations"] = iterations
    base_dir = data.pop("base_dir")
    try:
        return load.parse(data, base_dir=base_dir)
    except spec.SpecError as error:
        raise spec.SpecError(f"--iterations {iterations}: {error}") from None


def _execute(
    args: argparse.Namespace, experiment: spec.Experiment, path: str | None, seed: int | None,
    recheck_of: int | None = None, show_command: bool = False, resume: int | None = None,
) -> tuple[Store, int, bool]:
    """Run and store; (store, run id, interrupted)."""
    store = _store(args)
    interrupts.sigterm_interrupts()
    shown = progress.for_terminal(args.quiet)
    try:
        run_id = runner.run(experiment, store, experiment_path=path, seed=seed, progress=shown,
                            recheck_of=recheck_of, show_command=show_command, resume=resume,
                            build_progress=progress.build_reporter(args.quiet))
    except runner.Interrupted as interrupted:
        print(f"iolab: interrupted; the samples taken so far are in run {interrupted.run_id}:", file=sys.stderr)
        return store, interrupted.run_id, True
    return store, run_id, False


def cmd_run(args: argparse.Namespace) -> int:
    if (args.experiment is None) == (args.recheck is None):
        raise spec.SpecError("give an experiment file, or --recheck RUN (not both)")
    seed = args.seed
    path = args.experiment
    if args.recheck is not None:
        if args.timing is not None:
            raise spec.SpecError("--timing with --recheck: a recheck runs the stored experiment as it ran")
        original = _store(args).run(args.recheck)
        experiment = spec.Experiment.model_validate_json(original.experiment_json)
        path = original.experiment_path
        while seed is None or seed == original.seed:  # the same plan, shuffled anew
            seed = random.randrange(2**31)
    else:
        experiment = _experiment(args.experiment, args.timing)
    experiment = _with_iterations(experiment, args.iterations)
    from iolab.run import dryrun

    why = dryrun.undecidable(experiment)
    if why and not args.force:
        raise spec.SpecError(why)
    if args.dry_run:
        fixed = seed if seed is not None else experiment.run.seed
        _print_plan(experiment, fixed if fixed is not None else 0, _existing_store(args))
        if fixed is None:
            print("(the order shown is seed 0's; a run draws a random seed and stores it: "
                  "give --seed N to run this very order)")
        return EXIT_OK
    store, run_id, interrupted = _execute(args, experiment, path, seed, args.recheck, args.show_command)
    status = _print_report(store, run_id, args)
    return EXIT_INTERRUPTED if interrupted else status


def _report(store: Store, run_id: int, args: argparse.Namespace) -> Report:
    """The run's report (with the run it rechecks beside it), or with
    --baseline NAME the run against the saved baseline run."""
    options = dict(view=getattr(args, "view", None), min_max=getattr(args, "min_max", None))
    if getattr(args, "baseline", None):
        return reports.baseline_report(store, args.baseline, run_id, **options)
    return reports.run_report(store, run_id, **options)


def _print_report(store: Store, run_id: int, args: argparse.Namespace) -> int:
    report = _report(store, run_id, args)
    result = report.analysis
    if result.experiment.report.kind == "calibration" and report.compared is None:
        if args.format not in CALIBRATION_RENDERERS:
            raise spec.SpecError(f"--format {args.format}: a calibration prints as "
                                 f"{', '.join(CALIBRATION_RENDERERS)}")
        found = calibrate.calibrate(result, list(report.samples))
        sys.stdout.write(CALIBRATION_RENDERERS[args.format](found))
        return EXIT_FAILED_CELLS if result.failures else EXIT_OK
    sys.stdout.write(renderer(args.format)(report))
    return _gated(report, args, _failure_status(report, args.format))


def _failure_status(report: Report, fmt: str) -> int:
    """Failed cells on stderr where the format has no place for a note
    (csv, benchstat, json), and the exit status: 1 for a run that failed or
    has failed cells; 0 for benchstat's output of a run with some, which
    tools read as a stream of results."""
    result = report.analysis
    failed = sum(len(f.cells) for f in result.failures)
    if result.run.status == "failed":
        print(f"iolab: run {result.run.id} failed: {result.run.stop_reason or 'see the report'}", file=sys.stderr)
        return EXIT_FAILED_CELLS
    if not failed:
        return EXIT_OK
    if fmt in ("csv", "benchstat", "json"):
        first = result.failures[0]
        print(f"iolab: run {result.run.id}: {failed} of {result.cells_done} cells failed "
              f"(first: {first.variant} / {first.workload}: {_few_lines(first.error, 1)})", file=sys.stderr)
    return EXIT_OK if fmt == "benchstat" else EXIT_FAILED_CELLS


def _gated(report: Report, args: argparse.Namespace, status: int) -> int:
    """With --fail-on: the gate's verdict on stderr, and exit 3 when it fails."""
    fail_on = getattr(args, "fail_on", None)
    if fail_on is None:
        return status
    outcome = cli_gate.check(report.analysis, fail_on)
    print(f"iolab: {outcome.message()}", file=sys.stderr)
    return status if outcome.passed else EXIT_REGRESSION


def cmd_calibrate(args: argparse.Namespace) -> int:
    experiment = calibrate.aa_experiment(_experiment(args.experiment, args.timing), args.iterations)
    store, run_id, interrupted = _execute(args, experiment, args.experiment, args.seed)
    status = _print_report(store, run_id, args)
    return EXIT_INTERRUPTED if interrupted else status


def cmd_report(args: argparse.Namespace) -> int:
    store = _store(args, exists=True)
    run_id = _run_id(store, args.run)
    status = _print_report(store, run_id, args)
    return EXIT_REGRESSION if status == EXIT_REGRESSION else EXIT_OK


def _run_id(store: Store, text: str) -> int:
    if text == "latest":
        return store.latest_run_id()
    if text.isdigit():
        return int(text)
    raise StoreError(f"run must be a number or 'latest', got {text!r}")


def cmd_compare(args: argparse.Namespace) -> int:
    store = _store(args, exists=True)
    report = reports.compare_report(store, args.run_a, args.run_b, view=args.view, min_max=args.min_max)
    sys.stdout.write(renderer(args.format)(report))
    return _gated(report, args, EXIT_OK)


def cmd_baseline(args: argparse.Namespace) -> int:
    store = _store(args, exists=True)
    if args.baseline_command == "save":
        run_id = _run_id(store, args.run)
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
        raise spec.SpecError(f"--last must be at least 1, got {args.last}")
    found = history.history(_store(args, exists=True), args.metric, experiment=args.experiment, last=args.last,
                            view=args.view, timing=args.timing)
    sys.stdout.write(HISTORY_RENDERERS[args.format](found))
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    from iolab.run import recovery, status

    store = _store(args, exists=True)
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


def cmd_submit(args: argparse.Namespace) -> int:
    from iolab.run import queue, submit

    labels = queue.labels(args.labels)
    experiment = _with_iterations(_experiment(args.experiment), args.iterations)
    store = _store(args)
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
        raise spec.SpecError(f"--store: an agent takes rounds from a PostgreSQL store; {where} is not a "
                             "postgresql:// URL")
    if args.heartbeat <= 0 or args.heartbeat > 3600:
        raise spec.SpecError(f"--heartbeat: seconds between 0 and 3600, got {args.heartbeat}")
    name = args.name or platform.node()
    if not name or len(name) > 64 or any(c.isspace() for c in name):
        raise spec.SpecError("--name: 1 to 64 characters, no blanks")
    settings = agent.Settings(url=where, name=name, labels=queue.labels(args.labels),
                              allow=tuple(sorted(set(args.allow))), until_idle=args.until_idle,
                              heartbeat=args.heartbeat)
    return agent.Agent(settings).serve()


def cmd_agents(args: argparse.Namespace) -> int:
    from iolab.run import status

    for line in status.agent_lines(_store(args)):
        print(line)
    return EXIT_OK


def cmd_resume(args: argparse.Namespace) -> int:
    from iolab.run import recovery

    store = _store(args)
    recovery.report(recovery.reclaim())  # a run left `running` by a dead process is marked interrupted
    original = store.run(args.run)
    if original.queued:
        raise StoreError(f"run {args.run} was queued for agents (iolab submit): its rounds are theirs to run; "
                         "iolab runs shows them (submit the experiment again for a new run)")
    if original.status == "complete":
        raise StoreError(f"run {args.run} is complete: nothing to resume (iolab run --recheck {args.run} runs it again)")
    if original.status == "running":
        raise StoreError(f"run {args.run} is still running (its process is alive); stop it first")
    experiment = spec.Experiment.model_validate_json(original.experiment_json)
    store, run_id, interrupted = _execute(args, experiment, original.experiment_path, original.seed,
                                          resume=args.run)
    status = _print_report(store, run_id, args)
    return EXIT_INTERRUPTED if interrupted else status


def cmd_cleanup(args: argparse.Namespace) -> int:
    from iolab.run import recovery

    found = recovery.reclaim()
    for item in found:
        mark = {"restored": "reclaimed", "failed": "FAILED   ", "left": "running  "}[item.outcome]
        print(f"{mark}  {item.text}")
    if not found:
        print("nothing left by an earlier run")
    return EXIT_FAILED_CELLS if any(item.outcome == "failed" for item in found) else EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    found = doctor.checks()
    sys.stdout.write(doctor.render(found))
    return EXIT_OK if all(c.ok for c in found if c.required) else EXIT_FAILED_CELLS


def cmd_patch(args: argparse.Namespace) -> int:
    def execute(experiment: spec.Experiment, path: str, command: str) -> int:
        args.format, args.view, args.min_max = "text", None, None
        store, run_id, interrupted = _execute(args, experiment, path, None)
        status = _print_report(store, run_id, args)
        from iolab.report import reply

        sys.stdout.write("\n" + reply.render(_report(store, run_id, args), command))
        return EXIT_INTERRUPTED if interrupted else status

    return cli_patch.cmd_patch(args, execute)


def cmd_kernel(args: argparse.Namespace) -> int:
    return cli_kernel.cmd_kernel(args, lambda: _store(args))


COMMANDS = {"run": cmd_run, "report": cmd_report, "calibrate": cmd_calibrate, "runs": cmd_runs,
            "doctor": cmd_doctor, "kernel": cmd_kernel, "compare": cmd_compare, "baseline": cmd_baseline,
            "history": cmd_history, "resume": cmd_resume, "cleanup": cmd_cleanup, "patch": cmd_patch,
            "submit": cmd_submit, "agent": cmd_agent, "agents": cmd_agents}


def _few_lines(message: str, lines: int = 6, width: int = 300) -> str:
    """An error message cut to a few short lines: it may quote what the user gave."""
    kept = [line if len(line) <= width else line[: width - 3] + "..." for line in message.splitlines()[:lines]]
    more = len(message.splitlines()) - lines
    return "\n".join(kept + ([f"(and {more} more lines)"] if more > 0 else []))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    interrupts.sigterm_interrupts()  # SIGTERM and SIGINT to the PID are Ctrl-C, from the start
    try:
        return COMMANDS[args.command](args)
    except (spec.SpecError, StoreError, ToolError) as error:
        message = textwrap.indent(_few_lines(str(error)), "  ").lstrip()
        print(f"iolab: {message}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as error:  # the store's disk is full, or its file is not a database
        print(f"iolab: the store {args.store or default_path()}: {str(error)[:200]}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # before a run began (loading, a kernel download): nothing to keep
        print("iolab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `iolab ... | head`: the reader has what it wanted; no traceback at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE


if __name__ == "__main__":
    sys.exit(main())
