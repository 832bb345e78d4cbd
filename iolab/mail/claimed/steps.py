"""Columns that are the steps of a series: a baseline column, then one column a step, each with the
patches applied so far (``before  p 1  p 2+3  p 4+5``, ``base  +patch1  +patch1-2  +patch1-3``).

The claim is the baseline against the last step, the whole series; the steps between are context
(tests/corpus/README.md's convention for cumulative columns).
"""

from __future__ import annotations

import re

from iolab.mail.claimed.naming import side_of

# a step's name: a patch's number or a range or sum of them, with or without a plus or "patch"
_PATCH = r"(?:p(?:atch(?:es)?)?|pt|#)?\s*\d{1,2}"
_STEP = re.compile(rf"^(?:\+|w/\s*|with\s+)?\s*{_PATCH}(?:\s*(?:[-+,&~]|to|and)\s*{_PATCH})*$", re.I)


def _numbered(name: str) -> bool:
    """A step's name says a patch by its number (``p 2+3``, ``+patch1``, ``patches 1-3``), not a size."""
    return bool(_STEP.match(name.strip())) and bool(re.search(r"p|#|\+|patch|w/|with", name, re.I))


def step_pair(names: list[str]) -> tuple[int, int, str] | None:
    """(baseline, last step, "") when a header's names are one baseline column followed by two or more
    steps of the series (the last naming the highest patch); None otherwise."""
    before = [k for k, name in enumerate(names) if side_of(name) == "before"]
    added = [k for k, name in enumerate(names) if name.strip().startswith("+")]
    if not before and added and added == list(range(added[0], len(names))) and added[0] >= 1 and \
            (len(added) == 1 or all(_numbered(names[k]) for k in added)):
        return added[0] - 1, len(names) - 1, ""  # "for-6.10/block  +this series": the tree, then what it adds
    if len(before) != 1 or before[0] + 3 > len(names):
        return None
    steps = names[before[0] + 1:]
    if not all(_numbered(name) for name in steps):
        return None
    highest = [max(int(n) for n in re.findall(r"\d+", name)) for name in steps]
    if highest != sorted(highest) or highest[-1] == highest[0]:
        return None
    return before[0], len(names) - 1, ""
