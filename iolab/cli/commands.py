"""The iolab command line: run, report, calibrate, compare, resume, cleanup,
doctor, and main(), the one entry. The other commands are in
iolab.cli.store (runs, baseline, history), iolab.cli.queue (submit, agent,
agents), iolab.cli.kernel, iolab.cli.patch, iolab.cli.mail and
iolab.cli.watch; what they share (exit statuses, the store and experiment
the arguments name) in iolab.cli.common, the CI gate in iolab.cli.gate,
the machine's checks in iolab.cli.doctor and the progress display in
iolab.cli.progress."""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import textwrap
from dataclasses import replace
from typing import Any

from iolab import spec
from iolab.cli import doctor, progress
from iolab.cli import gate as cli_gate, kernel as cli_kernel, mail as cli_mail, patch as cli_patch, queue as cli_queue
from iolab.cli import store as cli_store, watch as cli_watch
from iolab.cli.common import (EXIT_FAILED_CELLS, EXIT_INTERRUPTED, EXIT_OK, EXIT_PIPE, EXIT_USAGE, STORE_HELP,
                              checked_experiment, existing_store, few_lines, iterations_type, open_store,
                              parse_run_id, store_option_everywhere, timing_option, view_options, with_iterations)
from iolab.analysis import compare, reports
from iolab.analysis.model import Report
from iolab.process import interrupts
from iolab.report import renderer
from iolab.report.calibration import RENDERERS as CALIBRATION_RENDERERS
from iolab.run import calibrate, inputs, runner
from iolab.store import Store, StoreError, default_path
from iolab.sysutil import ToolError

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
  iolab patch mail.mbox --dry-run   a patch mail (or a series, a web
                                    copy, a diff): its own benchmark and
                                    claim, base against each patch
  iolab watch ~/lists/linux-block --once --dry-run
                                    the list robot: series it would queue

An experiment file names the target (a loop image by default), two or more
variants (the first is the baseline) and one or more workloads (fio jobs).
See README.md, docs/ and scenarios/ for examples.
"""

EPILOG = """\
exit status: 0 all cells succeeded (or failed as the experiment expects:
[[variant]] fails); 1 some cells failed (they are stored
and shown as failures; with --format benchstat only when every cell failed,
the others are counted on stderr), or every cell failed, or a variant
failed all its cells of the first measured round alike, which stops the
run there (run status "failed"); 2 bad usage or experiment file; 3
--fail-on: a primary metric got worse or failed (with ,undecided: or could not
be decided); 130
interrupted; 141 the reader of stdout closed it (| head).
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

    _run_command(commands)
    report = commands.add_parser("report", help="print the comparison of a stored run",
                                 description="Re-render a stored run from its samples.")
    report.add_argument("run", nargs="?", default="latest", help="run id (default: the latest)")
    view_options(report)
    _gate_options(report)
    _compare_command(commands)
    cli_store.add_baseline(commands)
    cli_store.add_history(commands)

    cal = commands.add_parser(
        "calibrate", help="run the baseline against itself: noise and detectable change",
        description="Run the experiment's baseline against an identical copy (A/A), interleaved, "
        "and report per metric the noise, the smallest change detectable with 90% power, "
        "and the observed A/A false-positive rate.")
    cal.add_argument("experiment", help="experiment file (TOML)")
    cal.add_argument("--iterations", type=int, metavar="N",
                     help="rounds (default: [run].iterations, or 10 when it is auto)")
    cal.add_argument("--seed", type=int, help="seed of the interleaving order")
    timing_option(cal)
    cal.add_argument("--format", choices=tuple(CALIBRATION_RENDERERS), default="text",
                     help="report format (default: text)")
    cal.add_argument("--quiet", action="store_true", help="no progress display")

    cli_store.add_runs(commands)
    cli_queue.add_parsers(commands)
    cli_kernel.add_parser(commands)
    cli_patch.add_parser(commands)
    cli_mail.add_parser(commands)
    cli_watch.add_parser(commands)
    _recovery_commands(commands)
    commands.add_parser("doctor", help="check what this machine can do",
                        description="Check tools, kernel features and permissions iolab needs.")
    store_option_everywhere(parser)
    return parser


def _run_command(commands: Any) -> None:
    run = commands.add_parser("run", help="run an experiment and print its comparison",
                              description="Plan, run, store and report an experiment.")
    run.add_argument("experiment", nargs="?", help="experiment file (TOML)")
    run.add_argument("--recheck", type=int, metavar="RUN",
                     help="run the stored experiment of RUN again (new seed) and show both")
    run.add_argument("--iterations", type=iterations_type, metavar="N|auto", help="override [run].iterations")
    timing_option(run)
    run.add_argument("--seed", type=int, help="seed of the interleaving order (default: [run].seed or random)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--dry-run", action="store_true",
                     help="validate and print the plan (the test it fixes, the time it takes, the cells), run nothing")
    run.add_argument("--force", action="store_true",
                     help="run a plan under which no primary comparison can be decided (too few rounds)")
    run.add_argument("--show-command", action="store_true",
                     help="print each VM's QEMU command line (variants with a kernel) as it starts")
    view_options(run)
    _gate_options(run)


def _compare_command(commands: Any) -> None:
    cmp = commands.add_parser(
        "compare", help="compare two stored runs of one experiment (unpaired)",
        description="Each variant's values in run A against run B (different times, machines or "
        "kernels): Mann-Whitney U, Holm-corrected; the environment differences are listed.")
    cmp.add_argument("run_a", type=int, metavar="RUN_A", help="the reference run")
    cmp.add_argument("run_b", type=int, metavar="RUN_B", help="the run compared with it")
    view_options(cmp)
    cmp.add_argument("--fail-on", type=_gate, metavar="regression[:N%][,undecided]",
                     help="exit 3 when a primary metric of RUN_B is worse than in RUN_A (by more than N%%); "
                     "with ',undecided' also when one cannot be decided (else such rows are named)")


def _gate(text: str) -> cli_gate.Gate:
    try:
        return cli_gate.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _gate_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--baseline", metavar="NAME",
                         help="show the run against the run saved as baseline NAME (iolab baseline save)")
    command.add_argument("--fail-on", type=_gate, metavar="regression[:N%][,undecided]",
                         help="exit 3 when a primary metric of the table is worse (by more than N%%), or has "
                         "no comparison (its cells failed); with ',undecided' also when one cannot be "
                         "decided (else such rows are named); the CI gate")


def _recovery_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """iolab resume and iolab cleanup."""
    resume = commands.add_parser(
        "resume", help="continue an interrupted or killed run",
        description="Run the cells of a stored run that have no sample yet, with its stored seed and plan; "
        "the samples it has are kept. Then print its comparison.")
    resume.add_argument("run", type=int, help="run id (iolab runs lists them)")
    resume.add_argument("--quiet", action="store_true", help="no progress display")
    view_options(resume)
    commands.add_parser(
        "cleanup", help="reclaim what killed runs left (knobs, loop devices, mounts, images, processes)",
        description="Undo what iolab processes that died (SIGKILL, a crash) left on this machine, and mark "
        "their runs interrupted; say what was done. A run does this itself before it starts.")


def _print_plan(experiment: spec.Experiment, seed: int, store: Store | None) -> None:
    from iolab.run import dryrun

    lines = list(dryrun.lines(experiment, seed, store))  # all of it first: an error prints no half plan
    print("\n".join(lines))


def _execute(
    args: argparse.Namespace, experiment: spec.Experiment, path: str | None, seed: int | None,
    recheck_of: int | None = None, show_command: bool = False, resume: int | None = None,
) -> tuple[Store, int, bool]:
    """Run and store; (store, run id, interrupted)."""
    store = open_store(args)
    interrupts.sigterm_interrupts()
    shown = progress.for_terminal(args.quiet)
    try:
        run_id = runner.run(experiment, store, experiment_path=path, seed=seed, progress=shown,
                            recheck_of=recheck_of, show_command=show_command, resume=resume,
                            build_progress=progress.build_reporter(args.quiet))
    except runner.Interrupted as interrupted:
        run_id = interrupted.run_id
        ok, failed = store.sample_counts(run_id)
        taken = f"the {ok + failed} samples taken so far are in run {run_id}" if ok + failed else \
            f"no cell ended; run {run_id} is stored, with no sample"
        print(f"iolab: interrupted; {taken} (iolab resume {run_id} continues it):", file=sys.stderr)
        return store, run_id, True
    return store, run_id, False


def cmd_run(args: argparse.Namespace) -> int:
    if (args.experiment is None) == (args.recheck is None):
        raise spec.SpecError("give an experiment file, or --recheck RUN (not both)")
    seed = args.seed
    path = args.experiment
    if args.recheck is not None:
        if args.timing is not None:
            raise spec.SpecError("--timing with --recheck: a recheck runs the stored experiment as it ran")
        store = open_store(args)
        original = store.run(args.recheck)
        experiment = inputs.stored(spec.Experiment.model_validate_json(original.experiment_json), store, args.recheck)
        path = original.experiment_path
        while seed is None or seed == original.seed:  # the same plan, shuffled anew
            seed = random.randrange(2**31)
    else:
        experiment = checked_experiment(args.experiment, args.timing)
    experiment = with_iterations(experiment, args.iterations)
    from iolab.run import dryrun

    why = dryrun.undecidable(experiment)
    if why and not args.force:
        raise spec.SpecError(why)
    if args.baseline:  # a name that is not saved, or a run this one cannot be set against: now, not after the run
        saved = open_store(args, exists=True)
        base = saved.run(saved.baseline(args.baseline).run_id)
        compare.comparable(f"baseline {args.baseline!r} (run {base.id})",
                           spec.Experiment.model_validate_json(base.experiment_json), "this run", experiment)
    if args.dry_run:
        fixed = seed if seed is not None else experiment.run.seed
        _print_plan(experiment, fixed if fixed is not None else 0, existing_store(args))
        if fixed is None:
            print("(the order shown is seed 0's; a run draws a random seed and stores it: "
                  "give --seed N to run this very order)")
        elif args.recheck is not None and args.seed is None:
            print(f"(the order shown is seed {fixed}'s, drawn for this dry run; a recheck draws its own seed, "
                  f"never run {args.recheck}'s: give --seed N to run this very order)")
        return EXIT_OK
    store, run_id, interrupted = _execute(args, experiment, path, seed, args.recheck, args.show_command)
    status = _print_report(store, run_id, args)
    return EXIT_INTERRUPTED if interrupted else status


def _report(store: Store, run_id: int, args: argparse.Namespace) -> Report:
    """The run's report (with the run it rechecks beside it), or with
    --baseline NAME the run against the saved baseline run."""
    options = dict(view=getattr(args, "view", None), min_max=getattr(args, "min_max", None))
    if getattr(args, "baseline", None):
        report = reports.baseline_report(store, args.baseline, run_id, **options)
    else:
        report = reports.run_report(store, run_id, **options)
    return replace(report, verbose=bool(getattr(args, "verbose", False)))


def _print_report(store: Store, run_id: int, args: argparse.Namespace) -> int:
    report = _report(store, run_id, args)
    result = report.analysis
    if result.experiment.report.kind == "calibration" and report.compared is None:
        if args.format not in CALIBRATION_RENDERERS:
            raise spec.SpecError(f"--format {args.format}: a calibration prints as "
                                 f"{', '.join(CALIBRATION_RENDERERS)}")
        found = calibrate.calibrate(result, list(report.samples))
        sys.stdout.write(CALIBRATION_RENDERERS[args.format](found))
        return EXIT_FAILED_CELLS if any(not f.expected for f in result.failures) else EXIT_OK
    sys.stdout.write(renderer(args.format)(report))
    return _gated(report, args, _failure_status(report, args.format))


def _failure_status(report: Report, fmt: str) -> int:
    """Failed cells on stderr where the format has no place for a note
    (csv, benchstat, json), and the exit status: 1 for a run that failed or
    has cells that failed unexpectedly; 0 for benchstat's output of a run
    with some, which tools read as a stream of results. Cells the experiment
    expects to fail ([[variant]] fails) are in the report, not the status."""
    result = report.analysis
    unexpected = [f for f in result.failures if not f.expected]
    failed = sum(len(f.cells) for f in unexpected)
    if result.run.status == "failed":
        print(f"iolab: run {result.run.id} failed: {result.run.stop_reason or 'see the report'}", file=sys.stderr)
        return EXIT_FAILED_CELLS
    if not failed:
        return EXIT_OK
    if fmt in ("csv", "benchstat", "json"):
        first = unexpected[0]
        print(f"iolab: run {result.run.id}: {failed} of {result.cells_done} cells failed "
              f"(first: {first.variant} / {first.workload}: {few_lines(first.error, 1)})", file=sys.stderr)
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
    experiment = calibrate.aa_experiment(checked_experiment(args.experiment, args.timing), args.iterations)
    store, run_id, interrupted = _execute(args, experiment, args.experiment, args.seed)
    status = _print_report(store, run_id, args)
    return EXIT_INTERRUPTED if interrupted else status


def cmd_report(args: argparse.Namespace) -> int:
    store = open_store(args, exists=True)
    run_id = parse_run_id(store, args.run)
    status = _print_report(store, run_id, args)
    return EXIT_REGRESSION if status == EXIT_REGRESSION else EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    store = open_store(args, exists=True)
    report = reports.compare_report(store, args.run_a, args.run_b, view=args.view, min_max=args.min_max)
    report = replace(report, verbose=bool(getattr(args, "verbose", False)))
    sys.stdout.write(renderer(args.format)(report))
    return _gated(report, args, EXIT_OK)


def cmd_resume(args: argparse.Namespace) -> int:
    from iolab.run import recovery

    store = open_store(args)
    recovery.report(recovery.reclaim())  # a run left `running` by a dead process is marked interrupted
    original = store.run(args.run)
    if original.queued:
        raise StoreError(f"run {args.run} was queued for agents (iolab submit): its rounds are theirs to run; "
                         "iolab runs shows them (submit the experiment again for a new run)")
    if original.status == "complete":
        raise StoreError(f"run {args.run} is complete: nothing to resume (iolab run --recheck {args.run} runs it again)")
    if original.status == "running":
        raise StoreError(f"run {args.run} is still running (its process is alive); stop it first")
    experiment = inputs.stored(spec.Experiment.model_validate_json(original.experiment_json), store, args.run)
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

        sys.stdout.write(f"\n{reply.RULE}\n" + reply.render(_report(store, run_id, args), command))
        return EXIT_INTERRUPTED if interrupted else status

    return cli_patch.cmd_patch(args, execute, lambda: existing_store(args))


def cmd_kernel(args: argparse.Namespace) -> int:
    return cli_kernel.cmd_kernel(args, lambda: open_store(args))


COMMANDS = {"run": cmd_run, "report": cmd_report, "calibrate": cmd_calibrate, "doctor": cmd_doctor,
            "kernel": cmd_kernel, "compare": cmd_compare, "resume": cmd_resume, "cleanup": cmd_cleanup,
            "patch": cmd_patch, "mail": cli_mail.cmd_mail, "watch": cli_watch.cmd_watch, **cli_store.COMMANDS,
            **cli_queue.COMMANDS}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    interrupts.sigterm_interrupts()  # SIGTERM and SIGINT to the PID are Ctrl-C, from the start
    try:
        return COMMANDS[args.command](args)
    except (spec.SpecError, StoreError, ToolError) as error:
        message = textwrap.indent(few_lines(str(error)), "  ").lstrip()
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

