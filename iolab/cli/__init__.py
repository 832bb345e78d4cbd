"""The command line, the top stage: the only place that knows argv.

    commands  `iolab` and its commands (run, report, calibrate, compare, resume, cleanup, doctor)
    common    exit statuses, the store and the experiment the arguments name
    store     runs, baseline, history
    queue     submit, agent, agents
    kernel    `iolab kernel ...`
    patch     `iolab patch`
    gate      the CI gate of --fail-on
    doctor    what this machine can do
    progress  progress lines with ETA on stderr

This file only re-exports.
"""

from iolab.cli.common import EXIT_FAILED_CELLS, EXIT_INTERRUPTED, EXIT_OK, EXIT_PIPE, EXIT_USAGE
from iolab.cli.commands import EXIT_REGRESSION, main

__all__ = ["EXIT_FAILED_CELLS", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PIPE", "EXIT_REGRESSION", "EXIT_USAGE", "main"]
