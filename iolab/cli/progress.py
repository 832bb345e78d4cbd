"""Progress with ETA on the terminal while a run goes; silent otherwise."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from iolab.run.runner import NoProgress
from iolab.cell.sample import Sample


class TerminalProgress:
    def __init__(self, console: Console):
        self.console = console
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cells"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[failed]}"),
            console=console,
            transient=True,
        )
        self.task: TaskID | None = None
        self.failed = 0

    def start(self, total: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("starting", total=total, failed="")

    def cell_started(self, label: str) -> None:
        assert self.task is not None
        self.bar.update(self.task, description=label)

    def cell_done(self, sample: Sample) -> None:
        assert self.task is not None
        if sample.status != "ok":
            self.failed += 1
            self.console.print(f"[red]cell {sample.seq} ({sample.variant} / {sample.workload}) failed:[/] {sample.error}")
        self.bar.update(self.task, advance=1, failed=f"[red]{self.failed} failed" if self.failed else "")

    def stop(self) -> None:
        self.bar.stop()


def for_terminal(quiet: bool = False) -> TerminalProgress | NoProgress:
    if quiet or not sys.stderr.isatty():
        return NoProgress()
    return TerminalProgress(Console(stderr=True))


class BuildProgress:
    """A kernel build's phase, files compiled and ETA on the terminal
    (iolab.kernels.make.Reporter)."""

    def __init__(self, console: Console):
        self.console = console
        self.bar = Progress(
            TextColumn("[bold]kernel build: {task.description}"),
            BarColumn(),
            TextColumn("{task.fields[files]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=console,
            transient=True,
        )
        self.task: Any = None

    def phase(self, name: str, detail: str = "") -> None:
        if self.task is None:
            self.bar.start()
            self.task = self.bar.add_task(name, total=None, files="", eta="")
        self.console.print(f"kernel build: {name}" + (f" ({detail})" if detail else ""))
        self.bar.update(self.task, description=name)

    def finish(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None

    def files(self, done: int, expected: int | None, eta_s: float | None) -> None:
        if self.task is None:
            return
        shown = f"{done}/{expected} files" if expected else f"{done} files"
        eta = f"ETA {int(eta_s) // 60}:{int(eta_s) % 60:02d}" if eta_s is not None else ""
        self.bar.update(self.task, completed=min(done, expected) if expected else None,
                        total=expected, files=shown, eta=eta)


def build_reporter(quiet: bool = False) -> BuildProgress | None:
    """The terminal's build display; None (log lines instead) when quiet or not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    return BuildProgress(Console(stderr=True))
