"""mmtests' comparison of kernels (``compare-kernels.sh``), read as claims.

mmtests prints one column a kernel, the first the baseline, each figure
with its change against the first in parentheses (``(   0.00%)``) or
between stars when the change is significant (``*   8.81%*``)::

                       5.18-rc8-vanilla       5.18-rc8-patched
    Amean     1        71.22 (   0.00%)       64.94 *   8.81%*
    Hmean     1-files/sec  5004.75 (   0.00%)  5075.96 (   1.42%)

A row is a statistic of a key's samples (Min, quartiles, Max-N, Stddev,
BHmean-N, ...); the claim is the key's mean row (``Amean``, ``Hmean``,
``Gmean``), the others describe the samples. Its ``Duration`` block is the
run's time(1): ``Elapsed`` the claim, ``User`` and ``System`` its breakdown.
Each later column is claimed against the first (the baseline its changes
are computed against).
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.model import Better, Claim, Unit, better_of, make, unit_of
from iolab.mail.claimed.naming import side_of

_CELL = r"-?\d+(?:\.\d+)?\s*[(*]\s*-?\d+(?:\.\d+)?%\s*[)*]"
_ROW = re.compile(rf"^\s*(?P<stat>[A-Za-z0-9][\w-]*)(?P<key>(?:\s+\S+)*?)\s+(?P<cells>{_CELL}(?:\s+{_CELL})+)\s*$")
_VALUE = re.compile(r"(-?\d+(?:\.\d+)?)\s*[(*]\s*(-?\d+(?:\.\d+)?)%")
_REACH = 200  # rows a comparison's names may stand above (a hostile mail's time stays bounded)
_MEAN = re.compile(r"^[AHG]mean$|^Mean$", re.I)
# the statistics compare-kernels.sh prints a key's samples by (a row named otherwise is the key's own figure)
_STAT = re.compile(r"^(?:Min|Max|Range|Stddev|CoeffVar|[AHGB]*mean|Mean|[AHGB]+mean-\d+|Max-\d+|\d+(?:st|nd|rd|th)-qrtle)$",
                   re.I)
_REFERENCE = re.compile(r"\bref(?:erence)?\b", re.I)
_DURATION = re.compile(r"^\s*Duration\s+(?P<what>Elapsed)\s+(?P<values>\d+(?:\.\d+)?(?:\s+\d+(?:\.\d+)?)+)\s*$")


def _columns(lines: list[str], k: int) -> list[str]:
    """The kernels' names above row k: the last line of words above the rows (a kernel's name
    its column's last word, ``5.3.0-rc3`` over ``vanilla``)."""
    j = k - 1
    while j >= max(0, k - _REACH) and _ROW.match(lines[j]):
        j -= 1
    return lines[j].split() if j >= 0 and lines[j].strip() else []


def _rows(lines: list[str]) -> list[tuple[int, re.Match[str]]]:
    """Each line of a comparison whose first figure is the baseline (its change ``0.00%``)."""
    out = []
    for k, line in enumerate(lines):
        row = _ROW.match(line)
        if row and float(_VALUE.findall(row.group("cells"))[0][1]) == 0.0:
            out.append((k, row))
    return out


def compare_tables(lines: list[str]) -> tuple[list[Claim], set[int]]:
    """The claims of every mmtests comparison in the lines, and the lines it was read from."""
    claims: list[Claim] = []
    used: set[int] = set()
    names: list[str] = []
    found = _rows(lines)
    plain = _plain(found)
    for k, row in found:
        names = names if k - 1 in used else _columns(lines, k)  # a table's rows share its names
        used.add(k)
        if not _MEAN.match(row.group("stat")) and k not in plain:
            continue
        cells = _VALUE.findall(row.group("cells"))
        values = [float(v) for v, _ in cells]
        key = " ".join(row.group("key").split())
        unit = unit_of(key.split("-", 1)[-1]) if key else None  # "1-files/sec": files/s
        unit = unit or (_header_unit(names) if k in plain else None)
        sided = _sided(names) if len(names) == len(values) > 2 else None
        for b, a in [sided] if sided else [(0, n) for n in range(1, len(values))]:
            named = f" ({names[a]})" if len(values) > 2 and len(names) == len(values) else ""
            label = f"{row.group('stat')} {key}{named}".strip()
            better = _gained(values, [float(p) for _, p in cells], b, a) if sided else None
            claim = make(label, values[b], values[a], unit, better or (better_of(key) if unit is None else None), "",
                         row.group(0))
            claims.append(replace(claim, sides="names") if sided else claim)  # the header names both sides
    if used:
        claims += _durations(lines, used)
    return claims, used


def _plain(rows: list[tuple[int, re.Match[str]]]) -> set[int]:
    """The rows of comparisons that name no statistic (``creat_clo-1  14705.88 (   0.00%)  14354.07 *  -2.39%*``,
    each row a key's own figure, the means alone pasted): each such row is a claim, as a mean row is."""
    out: set[int] = set()
    block: list[int] = []
    for n, (k, row) in enumerate(rows):
        block.append(n)
        if n + 1 < len(rows) and rows[n + 1][0] == k + 1:
            continue
        if not any(_STAT.match(rows[m][1].group("stat")) for m in block):
            out |= {rows[m][0] for m in block}
        block = []
    return out


def _header_unit(names: list[str]) -> Unit | None:
    """The unit the columns' names say (``Vanilla (ops/s)  Patched (ops/s)``), when they say one."""
    found = {unit_of(n.strip("()[]")) for n in names if unit_of(n.strip("()[]"))}
    return found.pop() if len(found) == 1 else None


def _sided(names: list[str]) -> tuple[int, int] | None:
    """(before, after) columns when beside a reference column (``6.1-reference  6.2-vanilla
    6.2-patched``) exactly one other column names the before side and one the after; the
    changes in parentheses stay against the reference, the claim is between the sides. When only
    the last column names a side, the after (``opt=0  opt=1  patched``), the ones before it are
    kernels or settings without the change: the claim is against its neighbour, the one it patches."""
    sides = [None if _REFERENCE.search(n) else side_of(n.replace("-", " ")) for n in names]
    before = [k for k, side in enumerate(sides) if side == "before"]
    after = [k for k, side in enumerate(sides) if side == "after"]
    if not before and after == [len(names) - 1] and not any(_REFERENCE.search(n) for n in names):
        return after[0] - 1, after[0]  # "opt=0  opt=1  patched": the patched kernel against the one it patches
    if len(before) != 1 or len(after) != 1 or not any(_REFERENCE.search(n) for n in names):
        return None
    return before[0], after[0]


def _gained(values: list[float], gains: list[float], b: int, a: int) -> Better | None:
    """The better way of a row from mmtests' changes against the reference (a gain is positive:
    the after side's larger gain with a smaller figure says lower is better)."""
    if gains[a] == gains[b] or values[a] == values[b]:
        return None
    return "higher" if (values[a] > values[b]) == (gains[a] > gains[b]) else "lower"


def _durations(lines: list[str], used: set[int]) -> list[Claim]:
    """mmtests' Duration block under a comparison: its Elapsed row, the run's wall time."""
    out = []
    for k, line in enumerate(lines):
        found = _DURATION.match(line)
        if found and any(j < k for j in used):
            values = [float(v) for v in found.group("values").split()]
            used.add(k)
            out += [replace(make(f"Duration {found.group('what')}", values[0], after, None, "lower", "", line),
                            sides="order") for after in values[1:]]  # by the columns' order: the gate asks for more
    return out
