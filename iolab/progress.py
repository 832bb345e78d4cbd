"""Progress with ETA on the terminal while a run goes; silent otherwise."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

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
        self.task = None
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
