"""How the tables write their figures: a number, a central value with its
spread, min..max, a delta with its mark; JSON numbers; lines wrapped to a
mail's width."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable

from iolab.analysis import Analysis, Figure
from iolab.stats import Comparison, View, median_ci_min_n
from iolab.units import fine_percent, percent


WIDTH = 72  # a mail's line


def wrapped(lines: list[str], indent: str = "  ", width: int = WIDTH) -> list[str]:
    """Lines wrapped to a mail's width, continuation lines indented."""
    out = []
    for line in lines:
        # a path or a word longer than the line stays whole (a path broken mid-word cannot be copied)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False,
                             break_long_words=False) or [""]
    return out


def json_number(value: float) -> float | None:
    """A figure for JSON: None where it is nan or infinite."""
    return value if math.isfinite(value) else None


VIEW_TEXT = {"median": "median ±rel. spread", "mean": "mean ±stddev", "hmean": "harmonic mean ±rel. stddev"}


def view_text(view: View, spreads: Iterable[float]) -> str:
    """What the figures are, as the header says it; a median none of whose
    figures shows a spread (``spreads``: the figures' rel_spread) says why."""
    if view == "median" and not any(math.isfinite(s) for s in spreads):
        return f"median (no ±: the CI of a median needs {median_ci_min_n()} samples)"
    return VIEW_TEXT[view]


def table_view_text(analysis: Analysis) -> str:
    """The view of a report's table (with a recheck's beside it)."""
    shown = [a for a in (analysis, analysis.original) if a is not None]
    return view_text(analysis.view, (f.rel_spread for a in shown for row in a.rows
                                     for f in row.figures.values() if f.n))


def number(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    size = abs(value)
    if size >= 10_000:
        return f"{value:.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def mean_sd(center: float, stddev: float) -> str:
    """``4333 ±27``: the stddev to two significant digits, the mean to the
    same decimal place; large values in k or M (``184k ±59k``), as the
    block-task-context-completion seed prints them."""
    if not math.isfinite(center):
        return "-"
    if not math.isfinite(stddev):
        return number(center)
    scale, suffix = (1e6, "M") if abs(center) >= 1e7 else (1e3, "k") if abs(center) >= 1e5 else (1.0, "")
    c, s = center / scale, stddev / scale
    if s == 0:
        return f"{number(c)}{suffix} ±0"
    decimals = min(6, max(0, 1 - math.floor(math.log10(s))))
    return f"{c:.{decimals}f}{suffix} ±{s:.{decimals}f}{suffix}"


def figure_cell(figure: Figure, view: View = "median") -> str:
    if figure.n == 0:
        return (figure.expected or "FAILED") if figure.failed else "-"
    if view == "mean":
        return mean_sd(figure.center, figure.summary.stddev if figure.summary else math.nan)
    spread = figure.rel_spread
    if not math.isfinite(spread):
        return number(figure.center)
    width = f"{spread * 100:.1f}" if spread < 0.1 else f"{spread * 100:.0f}"
    return f"{number(figure.center)} ±{width}%"


def minmax_cell(figure: Figure) -> str:
    if figure.summary is None:
        return "-"
    return f"{number(figure.summary.minimum)}..{number(figure.summary.maximum)}"


def mark(comparison: Comparison) -> str:
    """The verdict as the table marks it: ``*`` significant, ``~`` no
    significant change, ``?`` no test; an exact comparison (no test) ``=*``
    when it is a change and ``=`` when it is not; an exploratory row's mark
    in parentheses: ``(*)``, ``(=)``."""
    if comparison.exact is not None:
        found = "=" if comparison.verdict == "same" else "=*"
    else:
        found = {"same": "~", "insufficient": "?"}.get(comparison.verdict, "*")
    return f"({found})" if comparison.family == "exploratory" else found


def delta_cell(comparison: Comparison | None) -> str:
    """``+20.5% *``, ``+0.4% ~``, ``?``, ``-84.4% =*``, ``+0.0% =``; an exploratory
    row's marks in parentheses: ``+3.1% (*)``, ``-0.2% (~)``. The delta
    measured stands beside every mark, ``~`` too (no significant change is
    not no change: the reader sees how large the undecided delta was)."""
    if comparison is None:
        return "-"
    shown = mark(comparison)
    if comparison.exact is not None:  # no test: the delta as measured, 0 included
        return f"{fine_percent(comparison.delta)} {shown}" if math.isfinite(comparison.delta) else shown
    if not math.isfinite(comparison.delta):
        return shown
    return f"{percent(comparison.delta)} {shown}"


def listing(items: list[str], limit: int = 4) -> str:
    return "; ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")
