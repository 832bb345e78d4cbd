"""Plots of the HTML report, drawn by matplotlib as inline SVG.

Each function takes computed data (lists of values, histograms, deltas) and
returns one ``<svg>`` element as text. Text stays text (``svg.fonttype =
none``) and is escaped by matplotlib's SVG writer; math parsing is off, so a
``$`` in a name is a dollar sign. Element ids are prefixed per figure, so
several SVGs live in one document; the output has no date and a fixed hash
salt, so the same data gives the same SVG.
"""

from __future__ import annotations

import io
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab import histogram

if TYPE_CHECKING:  # matplotlib loads when the first figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
VERDICT_COLORS = {"better": "#2e7d32", "worse": "#c62828", "same": "#757575", "insufficient": "#9e9e9e"}
RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "text.parse_math": False,
    "text.usetex": False,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_figures = itertools.count(1)
PANEL = 3.4  # inches a panel is wide: three side by side fill a page 1200 px wide at the SVG's 72 per inch
COLUMNS = 3  # panels side by side at most; more go on the next line
MARGIN = 0.7  # inches of a panel left of its axes (the y label and ticks): a title centres on the axes
CHAR = 0.62  # a title character's mean width, in ems of its font (DejaVu Sans, Chromium's fallback too)


def new_page() -> None:
    """Number the figures of a page from 1 again (the same data, the same page)."""
    global _figures
    _figures = itertools.count(1)


@dataclass(frozen=True)
class Strip:
    """One metric's panel: values per variant, and values paired by round."""

    title: str
    unit: str
    values: dict[str, list[float]]  # by variant, in column order
    pairs: list[tuple[int, float, float]]  # (round, baseline value, candidate value)


@dataclass(frozen=True)
class Interval:
    """One line of a forest plot."""

    label: str
    delta: float
    low: float
    high: float
    verdict: str


@dataclass(frozen=True)
class StepLine:
    """One metric of a series over its steps (nan where a step has no value)."""

    title: str
    unit: str
    steps: list[str]
    centers: list[float]
    low: list[float]
    high: list[float]


def title(ax: Axes, text: str, width: float = PANEL) -> None:
    """The panel's title, wrapped to the panel's width (a title wider than its panel runs into the
    next one, or past the figure's edge), and marked (gid "title-N") so a test can find it."""
    import textwrap

    size = float(ax.title.get_fontsize())
    chars = max(12, int((width - MARGIN) * 72 / (size * CHAR)))  # centred over the axes, not the panel
    ax.set_title("\n".join(textwrap.wrap(text, chars, break_long_words=True)) or text)
    ax.title.set_gid(f"title-{ax.figure.axes.index(ax)}")


def _grid(count: int) -> tuple[int, int]:
    """(rows, columns) of panels: at most COLUMNS side by side."""
    columns = min(COLUMNS, count) or 1
    return (count + columns - 1) // columns, columns


def steps_figure(lines: Sequence[StepLine]) -> str:
    """Per metric a line over the series' steps, each center with its 95% CI (a metric with no
    value at any step is left out: no empty axes)."""
    lines = [line for line in lines if any(math.isfinite(c) for c in line.centers)]
    if not lines:
        return ""  # no figure: every metric failed at every step
    count, columns = _grid(len(lines))
    figure = _figure(PANEL * columns, 2.4 * count)
    axes = figure.subplots(count, columns, squeeze=False).ravel()
    for ax, line in zip(axes, lines):
        xs = [i for i, c in enumerate(line.centers) if math.isfinite(c)]
        centers = [line.centers[i] for i in xs]
        low = [line.centers[i] - line.low[i] if math.isfinite(line.low[i]) else 0 for i in xs]
        high = [line.high[i] - line.centers[i] if math.isfinite(line.high[i]) else 0 for i in xs]
        ax.errorbar(xs, centers, yerr=[low, high], marker="o", markersize=3, capsize=2, color=COLORS[0],
                    linewidth=1)
        ax.set_xticks(range(len(line.steps)), line.steps)
        ax.set_xlabel("step")
        ax.set_ylabel(line.unit)
        title(ax, line.title)
    for ax in axes[len(lines):]:
        ax.set_visible(False)
    return to_svg(figure)


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(figure: Figure, name: str | None = None) -> str:
    """The figure as an inline <svg> element with ids unique to it."""
    import matplotlib

    number = next(_figures)
    prefix = name or f"f{number}"
    with matplotlib.rc_context({**RC, "svg.hashsalt": prefix}):
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)  # RDF boilerplate
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#|href="#)([^")]+)', lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    return svg.replace("<svg ", '<svg class="plot" role="img" ', 1)


def _plain_ticks(axis: Axis) -> None:
    """Log-axis labels as plain numbers (matplotlib's default writes math text)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _jitter(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.12, 0.12, n)


def _strip_panel(ax: Axes, strip: Strip) -> None:
    names = list(strip.values)
    data = [strip.values[n] for n in names]
    if all(data):
        ax.boxplot(data, positions=range(len(names)), widths=0.5, showfliers=False,
                   medianprops={"color": "black"}, boxprops={"color": "#999999"},
                   whiskerprops={"color": "#999999"}, capprops={"color": "#999999"})
    for i, values in enumerate(data):
        ax.scatter(i + _jitter(len(values), i), values, s=12, color=COLORS[i % len(COLORS)], alpha=0.8,
                   zorder=3)
    ax.set_xticks(range(len(names)), names, rotation=15)
    title(ax, strip.title)
    ax.set_ylabel(strip.unit)


def _pair_panel(ax: Axes, strip: Strip, names: tuple[str, str]) -> None:
    for round_, base, cand in strip.pairs:
        color = COLORS[1] if cand > base else COLORS[0]
        ax.plot([0, 1], [base, cand], color=color, alpha=0.6, marker="o", markersize=3, linewidth=1)
    ax.set_xticks([0, 1], list(names))
    ax.set_xlim(-0.3, 1.3)
    title(ax, f"by round ({len(strip.pairs)} pairs)")
    ax.set_ylabel(strip.unit)


def samples_figure(strips: Sequence[Strip], pair_names: tuple[str, str] | None) -> str:
    """Per metric: values of each variant (box and points); with pair_names,
    below each the baseline's and the candidate's value of each round joined.
    At most COLUMNS metrics side by side; a metric with no value is left out."""
    strips = [strip for strip in strips if any(strip.values.values())]
    if not strips:
        return ""  # no figure: no metric has a value
    lines, columns = _grid(len(strips))
    per = 2 if pair_names else 1
    figure = _figure(PANEL * columns, 2.6 * lines * per)
    axes = np.atleast_2d(figure.subplots(lines * per, columns, squeeze=False))
    for i, strip in enumerate(strips):
        top, column = (i // columns) * per, i % columns
        _strip_panel(axes[top][column], strip)
        if pair_names:
            below = axes[top + 1][column]
            if strip.pairs:
                _pair_panel(below, strip, pair_names)
            else:
                below.set_axis_off()
                below.text(0.5, 0.5, "no rounds with both values", ha="center", transform=below.transAxes)
    for i in range(len(strips), lines * columns):  # the last line's empty places
        for k in range(per):
            axes[(i // columns) * per + k][i % columns].set_visible(False)
    return to_svg(figure)


def forest_figure(intervals: Sequence[Interval], heading: str) -> str:
    """Delta and its 95% CI per metric row, in %; 0 marked."""
    figure = _figure(8, 0.5 * len(intervals) + 1.0)
    ax = figure.subplots()
    for y, item in enumerate(reversed(intervals)):
        color = VERDICT_COLORS.get(item.verdict, "#757575")
        if math.isfinite(item.low) and math.isfinite(item.high):
            ax.plot([item.low * 100, item.high * 100], [y, y], color=color, linewidth=2)
        if math.isfinite(item.delta):
            ax.plot([item.delta * 100], [y], marker="o", color=color,
                    fillstyle="full" if item.verdict in ("better", "worse") else "none")
    ax.axvline(0, color="black", linewidth=0.8)
    import textwrap

    labels = ["\n".join(textwrap.wrap(i.label, 36)) or i.label for i in reversed(intervals)]  # a row's name, wrapped
    ax.set_yticks(range(len(intervals)), labels)
    ax.set_xlabel("delta, % (95% CI)")
    title(ax, heading, 7)
    return to_svg(figure)


def cdf_figure(panels: dict[str, dict[str, histogram.Histogram]], xlabel: str = "latency, us") -> str:
    """Per histogram (read_clat, ...): each variant's merged latency CDF, log x
    (histograms in ns, drawn in thousands: us, or kinsn in instructions mode)."""
    count, columns = _grid(len(panels))
    figure = _figure(PANEL * columns, 2.8 * count)
    axes = figure.subplots(count, columns, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax, (name, by_variant) in zip(axes, panels.items()):
        for i, (variant, hist) in enumerate(by_variant.items()):
            items = sorted(hist.items())
            total = sum(c for _, c in items)
            if not total:
                continue
            xs = [b / 1000 for b, _ in items]
            ys = np.cumsum([c for _, c in items]) / total
            ax.step(xs, ys, where="post", color=COLORS[i % len(COLORS)], label=variant, linewidth=1.2)
        ax.set_xscale("log")
        _plain_ticks(ax.xaxis)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("fraction of I/Os")
        title(ax, f"{name}: merged over all rounds")
        ax.legend(loc="lower right")
    return to_svg(figure)


def history_figure(series: dict[str, list[tuple[int, float, float, float]]], heading: str, unit: str,
                   changed: frozenset[int] = frozenset()) -> str:
    """Per series (a variant of a workload): (run id, center, low, high) across
    runs; a dashed line before each run in `changed` (its setup differs from
    the run before)."""
    figure = _figure(7, 3)
    ax = figure.subplots()
    runs = next(iter(series.values()), [])
    for x, point in enumerate(runs):
        if point[0] in changed:
            ax.axvline(x - 0.5, color="grey", linestyle="--", linewidth=0.8)
    for i, (name, points) in enumerate(series.items()):
        xs = list(range(len(points)))
        centers = [p[1] for p in points]
        low = [c - p[2] if math.isfinite(p[2]) else 0 for c, p in zip(centers, points)]
        high = [p[3] - c if math.isfinite(p[3]) else 0 for c, p in zip(centers, points)]
        ax.errorbar(xs, centers, yerr=[low, high], marker="o", markersize=3, capsize=2,
                    color=COLORS[i % len(COLORS)], label=name, linewidth=1)
    ax.set_xticks(range(len(runs)), [str(p[0]) for p in runs])
    ax.set_xlabel("run")
    ax.set_ylabel(unit)
    title(ax, heading, 7)
    ax.legend(loc="best")
    return to_svg(figure)
