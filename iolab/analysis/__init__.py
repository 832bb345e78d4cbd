"""The analysis stage: from stored samples to the table a reviewer reads.

    table        one run's samples -> Analysis (rows, comparisons, verdicts)
    failures     failed cells grouped by their error, in general form
    metrics      the metric catalogue; diagnostics: noise and disturbed rounds
    model        Report: what every renderer takes; reports: Reports from the store
    compare      two runs of one experiment; history: a metric across runs
    envdiff      what differs in the environment

This file only re-exports.
"""

from iolab.analysis.diagnostics import Diagnostic
from iolab.analysis.table import Analysis, Failure, Figure, Row, analyse, sequential_level
from iolab.stats.sequential import Sequential

__all__ = ["Analysis", "Row", "Figure", "Failure", "Diagnostic", "Sequential", "analyse", "sequential_level"]
