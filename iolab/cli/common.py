"""What the commands share: the exit statuses, the options several commands
take, and what the arguments name: the store (an existing one, for commands
that read runs) and the experiment (loaded in the --timing mode asked for,
with --iterations, checked against this machine)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import get_args

from iolab import load, spec
from iolab.report import FORMATS
from iolab.stats import VIEWS
from iolab.store import Store, StoreError, default_path
from iolab.store.db import is_url

EXIT_OK, EXIT_FAILED_CELLS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_PIPE = 141  # stdout closed by its reader (`| head`): what a shell shows for SIGPIPE

STORE_HELP = "the store: an SQLite file, or a postgresql:// URL (a shared store)"


def store_option_everywhere(parser: argparse.ArgumentParser) -> None:
    """--store after the subcommand too (iolab runs --store FILE): every
    subcommand takes it, and leaves it unset unless given there."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                sub.add_argument("--store", metavar="FILE|URL", default=argparse.SUPPRESS, help=STORE_HELP)
                store_option_everywhere(sub)


def iterations_type(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of rounds or 'auto', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def timing_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--timing", choices=get_args(spec.Timing),
        help="override [vm] timing: 'instructions' runs the VMs under QEMU's TCG with a fixed instruction "
        "count (-icount shift=0,sleep=off), so the guest's durations are exact instruction counts, "
        "not times (default then: 3 rounds, 1 vCPU, the target in the guest's memory, unless the file "
        "sets them)")


def view_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    command.add_argument("--view", choices=VIEWS,
                         help="central value: median ± CI (default), mean ± stddev, harmonic mean "
                         "(for rates) (default: [report].view)")
    command.add_argument("--min-max", action="store_true", default=None,
                         help="show min..max under each row (JSON always has them)")
    command.add_argument("--verbose", "-v", action="store_true", default=False,
                         help="the text report's header in full: the VM, the timing mode's units, the hosts "
                         "(default: at most 6 lines; the JSON report always has it, as \"header\")")


def checked_experiment(path: str, timing: str | None = None) -> spec.Experiment:
    """An experiment file, parsed and checked against this machine, in the
    timing mode --timing asks for (an error then says so)."""
    experiment = _load_in_mode(path, timing)
    with load.in_file(path):
        load.check_here(experiment)
    return experiment


def _load_in_mode(path: str, timing: str | None) -> spec.Experiment:
    """The experiment file, in the timing mode --timing asks for (an error then says so)."""
    try:
        return load.load(path, timing)
    except spec.SpecError as error:
        if timing is None:
            raise
        raise spec.SpecError(f"--timing {timing}: {error}") from None


def with_iterations(experiment: spec.Experiment, iterations: int | str | None) -> spec.Experiment:
    if iterations is None:
        return experiment
    data = experiment.model_dump()
    if iterations != "auto":  # the adaptive settings only go with "auto"
        for name in ("min_iterations", "max_iterations", "time_budget", "target_ci"):
            data["run"].pop(name)
    data["run"]["iterations"] = iterations
    data["run"]["exact_stop"] = False  # the rounds asked for, all of them
    base_dir = data.pop("base_dir")
    try:
        return load.parse(data, base_dir=base_dir, inputs=experiment.inputs)
    except spec.SpecError as error:
        raise spec.SpecError(f"--iterations {iterations}: {error}") from None


def open_store(args: argparse.Namespace, exists: bool = False) -> Store:
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


def existing_store(args: argparse.Namespace) -> Store | None:
    """The store if it exists (a dry run reads earlier runs; it makes no store)."""
    where = args.store or default_path()
    if not is_url(str(where)) and not Path(where).exists():
        return None
    try:
        return Store(where)
    except StoreError as error:  # a store this iolab cannot read: plan without its history
        print(f"iolab: the dry run reads no history: {few_lines(str(error), 1)}", file=sys.stderr)
        return None


def parse_run_id(store: Store, text: str) -> int:
    if text == "latest":
        return store.latest_run_id()
    if text.isdigit():
        return int(text)
    raise StoreError(f"run must be a number or 'latest', got {text!r}")


def few_lines(message: str, lines: int = 6, width: int = 300) -> str:
    """An error message cut to a few short lines: it may quote what the user gave."""
    kept = [line if len(line) <= width else line[: width - 3] + "..." for line in message.splitlines()[:lines]]
    more = len(message.splitlines()) - lines
    return "\n".join(kept + ([f"(and {more} more lines)"] if more > 0 else []))
