"""A side told in words before its figures, and samples whose average the side states.

``1. Without virtual command queue`` over ``I tested 3 times for each case and
output a average speed.``, then ``1) Sequential read:`` over ``Speed: 28.9MiB/s,
26.4MiB/s, 30.9MiB/s`` and ``Average speed: 28.7MiB/s``: the numbered heading
is a side though a sentence stands between it and its figures, and the runs'
line gives no row where the side states their average (``Average speed``).
"""

from __future__ import annotations

import re

from iolab.mail.claimed.outputs import Figure, line_figures

_NUMBERED = re.compile(r"^\s*\(?\d{1,2}[.)]\s+[A-Za-z]")  # "1. Without ...", "2) With ..."
_AVERAGE = re.compile(r"^(?:average|avg|mean)\s+(?P<key>.+)$", re.I)


def told(lines: list[str], k: int) -> bool:
    """Line k, a numbered heading naming a side, has one sentence of how it was run under it, then a
    case's caption ending in a colon and the case's figures."""
    said = lines[k + 1].strip() if k + 1 < len(lines) else ""
    if not _NUMBERED.match(lines[k]) or len(said.split()) < 6 or not said.endswith(".") or line_figures(said):
        return False
    under = [line for line in lines[k + 2:k + 6] if line.strip()][:2]
    return len(under) == 2 and under[0].rstrip().endswith(":") and bool(line_figures(under[1]))


def stated(figures: list[Figure]) -> list[Figure]:
    """A side's figures without the samples of a key whose average the side also states
    (``Speed: 28.9MiB/s, 26.4MiB/s`` where ``Average speed: 27.6MiB/s`` follows)."""
    averaged = {m.group("key").lower() for f in figures if (m := _AVERAGE.match(f.key))}
    def sample(figure: Figure) -> bool:
        key = re.sub(r"\s+#\d+$", "", figure.key).lower()  # "Speed #2": the line's second figure
        return any(a == key or a.startswith(key + " ") for a in averaged)
    return [f for f in figures if not sample(f)]
