"""Rows keyed by configurations that a legend above the table defines (``Config 1: No meta format +
Btrfs (base)``, ``Config 3: Meta format + Btrfs (datasum_offload)``, then a table whose rows are
``1``, ``2``, ``3``): the configuration the legend calls the base (the first, where several are) is
before, the one it says brings what the series introduces is after; the others are context.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.naming import Side, side_of

_BRINGS = r"\b(?:introduc\w*|adds?|implement\w*|enabl\w*|brings?|offload\w*)\b"

_LEGEND = re.compile(r"^\s*(?:(?:config(?:uration)?|setup|case|scenario|variant)\s*#?\s*)"
                     r"([A-Za-z]|\d{1,2})\s*[:=)]\s+(\S.{3,})$", re.I)
_KEY = re.compile(r"^(?:(?:config(?:uration)?|setup|case|scenario|variant)\s*#?\s*)?([A-Za-z]|\d{1,2})$", re.I)


def _legend(lines: list[str]) -> dict[str, str]:
    """Each configuration's key and the description the legend gives it (its first)."""
    out: dict[str, str] = {}
    for line in lines:
        found = _LEGEND.match(line)
        if found:
            out.setdefault(found.group(1).lower(), found.group(2).strip())
    return out


def _side(description: str, lines: list[str]) -> Side | None:
    """The side a configuration's description says: by its words (``(base)``, ``vanilla``), else after
    where a name in its parentheses is what the text says the series introduces (``(datasum_offload)``)."""
    said = side_of(description)
    if said:
        return said
    text = " ".join(lines)
    named = [n.strip() for n in re.findall(r"\(([^()]+)\)", description) if re.search(r"[A-Za-z]{3}", n)]
    return "after" if any(re.search(rf"{_BRINGS}[^.]{{0,60}}(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I)
                          for name in named) else None


def legend_pair(labels: list[str], lines: list[str]) -> tuple[int, int] | None:
    """Which rows (by index) are before and after when every row's label is a key of the legend above:
    the first the legend calls the base against the one after; None when it is not one of each."""
    keys = [_KEY.match(label.strip().rstrip(":")) for label in labels]
    legend = _legend(lines) if all(keys) and len(keys) >= 2 else {}
    found = [k.group(1).lower() for k in keys if k]
    if len(legend) < 2 or len(set(found)) != len(found) or any(key not in legend for key in found):
        return None
    sides = [_side(legend[key], lines) for key in found]
    before = [k for k, side in enumerate(sides) if side == "before"]
    after = [k for k, side in enumerate(sides) if side == "after"]
    return (before[0], after[0]) if before and len(after) == 1 else None
