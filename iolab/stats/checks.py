"""Input checks shared by the statistics modules.

Statistics refuse what they cannot support: a value that is nan or inf,
a nested sequence, a fraction outside (0, 1), a count that is not a
positive integer -- each raises :class:`Refusal` (a ValueError) with a
short message naming the argument. Refusals that depend on the data (too
few samples, every value equal) are not exceptions: they travel with the
result as a verdict "insufficient" and a warning that says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from iolab.stats.kinds import VIEWS, View

Values: TypeAlias = Sequence[float] | np.ndarray
"""What the statistics take as samples: a list of numbers, or a numpy array of them."""


class Refusal(ValueError):
    """Input the statistics cannot use; the message names the argument."""


def values(data: Values, name: str = "values") -> np.ndarray:
    a = np.asarray(data, dtype=float)
    if a.ndim != 1:
        raise Refusal(f"{name}: expected a flat sequence of numbers, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise Refusal(f"{name}: contains nan or inf; failed cells must not reach statistics")
    return a


def view(name: str) -> View:
    for known in VIEWS:
        if name == known:
            return known
    raise Refusal(f"view must be one of {VIEWS}, got {name!r}")


def fraction(name: str, x: float) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise Refusal(f"{name} must be a number in (0, 1), got {x!r}") from None
    if not (0.0 < x < 1.0):
        raise Refusal(f"{name} must be in (0, 1), got {x!r}")
    return x


def positive_int(name: str, v: object, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise Refusal(f"{name} must be an integer >= {minimum}, got {v!r}")
    return v


def pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def conf(c: float) -> str:
    return f"{c * 100:g}%"
