"""The claim table: each row the patch mail claims, its delta beside iolab's, and one word.

Shared by every format (text, reply, markdown, HTML as rows; JSON as
objects). The mail's delta is its own figures' ratio (after / before - 1);
its absolute figures never appear beside this machine's.
"""

from __future__ import annotations

import math
from typing import Any

from iolab.analysis import Analysis
from iolab.analysis.claims import Agreement
from iolab.report import figures
from iolab.units import percent

COLUMNS = ["mail's row", "mail", "iolab", "", "claim"]
TITLE = "the mail's claim, checked (directions and ratios, not its figures):"


def mark(agreement: Agreement) -> str:
    if agreement.verdict in ("better", "worse"):
        return "=*" if agreement.exact else "*"
    if agreement.exact:
        return "="
    return {"same": "~", "insufficient": "?"}.get(agreement.verdict, "")


def rows(analysis: Analysis) -> list[list[str]]:
    """One line per claimed row: label, the mail's delta, iolab's delta and mark, the word."""
    out = []
    for a in analysis.claims:
        label = a.label + (f" ({a.unit})" if a.unit and a.unit not in a.label else "")
        iolab = percent(a.delta) if math.isfinite(a.delta) else "-"
        out.append([label, percent(a.mail_delta), iolab, mark(a), a.says])
    return out


def notes(analysis: Analysis) -> list[str]:
    """Under the table: which row measured each claim, why a claim is not
    reproduced, and what of the mail's benchmark was scaled, refused or left out."""
    claims = analysis.experiment.claims
    if claims is None:
        return []
    measured = [f"{a.label}: {a.workload} {a.metric_label}" for a in analysis.claims if a.metric_label]
    lines = [f"measured by: {'; '.join(measured)}"] if measured else []
    lines += [f"{a.word}: {a.label}: {a.reason}" for a in analysis.claims if a.reason]
    lines += [f"not reproduced here: {item}" for item in claims.not_reproduced]
    lines += [f"refused: {item}" for item in claims.refused]
    if claims.scaled:
        lines.append(f"scaled to this VM: {'; '.join(claims.scaled)}")
    return lines


def text_lines(analysis: Analysis) -> list[str]:
    """The claim table as aligned text lines, then its notes, each wrapped to a mail's width."""
    if analysis.experiment.claims is None:
        return []
    below = figures.wrapped([f"  {line}" for line in notes(analysis)], "    ")
    table = [COLUMNS, *rows(analysis)]
    if len(table) == 1:
        return [TITLE, "  (the mail states no figures before and after)", *below]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    lines = [TITLE]
    for r in table:
        cells = [f"{r[0]:<{widths[0]}}", f"{r[1]:>{widths[1]}}", f"{r[2]:>{widths[2]}}", f"{r[3]:<{widths[3]}}",
                 r[4]]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return lines + below


def document(analysis: Analysis) -> dict[str, Any] | None:
    """The JSON form: each claim with both deltas, iolab's verdict and the word."""
    claims = analysis.experiment.claims
    if claims is None:
        return None
    return {
        "source": claims.source,
        "rows": [{"label": a.label, "unit": a.unit, "mail_delta": a.mail_delta if math.isfinite(a.mail_delta) else None,
                  "mail_stated": a.stated or None, "workload": a.workload or None, "metric": a.metric or None,
                  "delta": a.delta if math.isfinite(a.delta) else None, "verdict": a.verdict or None,
                  "exact": a.exact, "agreement": a.word, "rounds": a.rounds or None,
                  "rounds_needed": a.needed or None, **({"reason": a.reason} if a.reason else {})}
                 for a in analysis.claims],
        "scaled": claims.scaled,
        "not_reproduced": claims.not_reproduced,
        "refused": claims.refused,
    }
