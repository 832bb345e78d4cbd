"""The result lines of benchmark suites pasted per side: filebench's IO Summary and UnixBench's results.

filebench prints ``IO Summary: 1234567 ops 20575.988 ops/s 3429/3429 rd/wr 803.5mb/s 0.583ms/op``
(1.5) or ``IO Summary: 1234567 ops, 20575.988 ops/s, (3429/3429 r/w), 803.5mb/s, 583us cpu/op, 0.6ms
latency`` (1.4): its rate of operations, its bandwidth and its latency an operation are the run's figures
(the count of operations is how long it ran, no figure). UnixBench prints each test's result with its
unit and the time it took (``Dhrystone 2 using register variables  49873520.1 lps  (10.0 s, 7
samples)``) and its ``System Benchmarks Index Score  1234.5``: each result in its unit and the score
(higher), keyed by the test's name. (Its index table's rows, ``File Copy ...  3960.0  712345.6  1798.8``,
look like any table's row: the tables' readers read them.)
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Unit, unit_of

_FILEBENCH = re.compile(r"\bIO Summary:\s*\d+\s+ops,?\s+(?P<ops>\d+(?:\.\d+)?)\s*ops/s,?\s+\(?\d+/\d+\s*(?:rd/wr|r/w)\)?,?\s+"
                        r"(?P<mb>\d+(?:\.\d+)?)\s*mb/s(?:,?\s+(?P<cpu>\d+(?:\.\d+)?)\s*(?P<cu>us|ms)\s+cpu/op)?"
                        r"(?:,?\s+(?P<lat>\d+(?:\.\d+)?)\s*(?P<lu>us|ms)(?:/op|\s+latency))?", re.I)
_UNIX_RESULT = re.compile(r"^\s*(?P<name>[A-Z][\w ()-]*?[\w)])\s{2,}(?P<v>\d+(?:\.\d+)?)\s+(?P<u>lps|lpm|KBps|MWIPS|MFLOPS)"
                          r"\s+\(\s*[\d.]+\s*s,\s*\d+\s+samples?\)\s*$")
_UNIX_SCORE = re.compile(r"^\s*System Benchmarks(?: Partial)? Index Score\s*(?:\(Partial Only\))?\s+(?P<v>\d+(?:\.\d+)?)\s*$")
_RATES: dict[str, Unit] = {"lps": ("lps", "rate", "higher"), "lpm": ("lpm", "rate", "higher"),
                           "mwips": ("MWIPS", "rate", "higher"), "mflops": ("MFLOPS", "rate", "higher"),
                           "kbps": ("KB/s", "bandwidth", "higher")}
_INDEX: Unit = ("index", "", "higher")  # a score, of no kind of unit


def suite_figures(line: str) -> list[tuple[str, float, Unit]] | None:
    """A suite's result line as (key, value, unit) figures; None: no suite's line."""
    bench = _FILEBENCH.search(line)
    if bench:
        out: list[tuple[str, float, Unit]] = [("IO Summary ops/s", float(bench.group("ops")), ("ops/s", "rate", "higher")),
                                              ("IO Summary MB/s", float(bench.group("mb")), ("MB/s", "bandwidth", "higher"))]
        lat, unit = bench.group("lat"), unit_of(bench.group("lu") or "")
        return out + ([("IO Summary latency", float(lat), unit)] if lat and unit else [])
    result = _UNIX_RESULT.match(line)
    if result:
        unit = _RATES.get(result.group("u").lower()) or unit_of(result.group("u"))
        return [(result.group("name"), float(result.group("v")), unit)] if unit else []
    score = _UNIX_SCORE.match(line)
    if score:
        return [("System Benchmarks Index Score", float(score.group("v")), _INDEX)]
    return None
