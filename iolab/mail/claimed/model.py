"""A claim row of a patch mail, and the figures and units it is made of.

A row is a label, the figure before the change and after it, the unit,
and which way the unit is better. Nothing here compares figures across
machines: a claim's size is its ratio, after / before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Better = Literal["higher", "lower"]
Kind = Literal["time", "rate", "bandwidth", "count", "ratio", "size", ""]
Unit = tuple[str, Kind, "Better | None"]  # as shown, its kind, which way is better

_TIME: dict[str, tuple[str, ...]] = {
    "ns": ("ns", "nsec", "nsecs", "ns/op", "nanoseconds"),
    "us": ("us", "usec", "usecs", "µs", "μs", "usecs/call", "us/call", "us/op", "usec/op", "microseconds"),
    "ms": ("ms", "msec", "msecs", "milliseconds"),
    "s": ("s", "sec", "secs", "seconds"),
    "min": ("min", "mins", "minutes"),
    "h": ("hours",),
}
_RATE: dict[str, tuple[str, ...]] = {
    "IOPS": ("iops",),
    "ops/s": ("ops/s", "ops/sec", "op/s"),
    "files/s": ("files/s", "files/sec"),
    "req/s": ("req/s", "reqs/s", "requests/s", "req/sec"),
    "tps": ("tps", "trans/s", "transactions/s"),  # sysbench's and mariadb's transactions a second
}
# fio's own short forms ("BW(M/s)", "167M/s -> 234M/s"): its M and G are binary; "K/s" is as often a count a second
_BANDWIDTH = {"B/s": ("b/s", "bytes/s"), "KiB/s": ("kib/s",), "MiB/s": ("mib/s", "mib/sec", "m/s"),
              "GiB/s": ("gib/s", "gib/sec", "g/s"),
              "KB/s": ("kb/s", "kb/sec"), "MB/s": ("mb/s", "mb/sec"), "GB/s": ("gb/s", "gb/sec"),
              "Mbit/s": ("mbit", "mbit/s", "mbits/s", "mbit/sec"), "Gbit/s": ("gbit", "gbit/s", "gbits/s", "gbit/sec")}
# unit as written (lower case) -> the unit shown, its kind, which way is better
_UNITS: dict[str, Unit] = {
    **{w: (shown, "time", "lower") for shown, words in _TIME.items() for w in words},
    **{w: (shown, "rate", "higher") for shown, words in _RATE.items() for w in words},
    **{w: (shown, "bandwidth", "higher") for shown, words in _BANDWIDTH.items() for w in words},
    "%": ("%", "ratio", None),
    "bytes": ("bytes", "size", "lower"),  # a structure's size ("struct extent_map from 128 bytes down to 112")
}
# a mean named as one (avg, average, mean), as a word of its own
MEAN = re.compile(r"(?<![a-z])(?:avg|average|mean)(?![a-z])", re.I)
# a measure's spread beside its mean, named as a word of its own: its extremes, its deviation ("std dev",
# "σ", a relative one: "RSD", the coefficient of variation), a percentile ("p99", "99.9th"): blocks.py and
# evidence.py ask the same names
EXTREME = re.compile(r"(?<![a-z])(?:min|max|minimum|maximum)(?![a-z])", re.I)
DEVIATION = re.compile(r"(?<![a-z/])(?:std\s*dev|stdev|stddev|std|sigma|σ|deviation|rsd|"
                       r"coefficient\s+of\s+variation)(?![a-z])", re.I)
PERCENTILE = re.compile(r"(?<![a-z])(?:p\d{2,4}(?:\.\d+)?|\d{1,2}(?:\.\d+)?th|percentile)(?![a-z])", re.I)
SPREAD = re.compile("|".join(f"(?:{p.pattern})" for p in (EXTREME, DEVIATION, PERCENTILE)), re.I)

SUFFIX = {"k": 1e3, "m": 1e6, "g": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_NUMBER = re.compile(r"^~?[+-]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+(?:e[+-]?\d+)?|e[+-]?\d+)?([kKmMgG])?$")
PERCENT = re.compile(r"^[+-]?\d+(?:\.\d+)?%$")
NOT_TABLE = re.compile(r"^(from|date|subject|to|cc|fixes|link|closes|reviewed-by|signed-off-by|acked-by|tested-by|"
                       r"reported-by|suggested-by|co-developed-by|message-id|in-reply-to|base-commit)\s*:", re.I)
# what a test prints that measures nothing: a hex dump's line ("00000c00:  58 58 58 ..."), xfs_io's
# confirmation of one I/O ("wrote 4096/4096 bytes at offset 32768") and its rate over no time or one op
# ("1 ops; 0.0000 sec", "1 MiB, 1 ops; 0.0103 sec (96.665 MiB/sec ...)"),
# a test suite's totals ("1061 tests, 3 failures, 290 skipped, 13152 seconds": it ran, nothing regressed)
NOT_MEASURED = re.compile(r"^\s*(?:[0-9a-f]{6,}:?(?:\s+[0-9a-f]{2,4}){4,}|(?:wrote|read) \d+/\d+ bytes at offset|"
                          r".*\b(?:ops; 0\.0+ sec|1 ops;)|"
                          r".*\b\d+ tests?, .*\b\d+ (?:failures?|failed|skipped)\b)", re.I)  # a test suite's totals
# a figure with its unit after it: "562K IOPS", "4994MiB/s", "6.4 Million IOPS", "1.47%"
FIGURE = re.compile(r"(?<![\w.])(?P<n>[+-]?\d[\d,]*(?:\.\d+)?)(?:\s?(?P<s>[kKmMgG](?![a-zA-Z])|[kKMG](?=IOPS)|"
                    r"(?i:thousand|million|billion)\b))?\s*\(?(?P<u>%|[A-Za-zµμ]+(?:/[A-Za-z]+)?)\)?")


@dataclass(frozen=True)
class Claim:
    """One row of the mail's claim."""

    label: str  # the row as the mail names it ("write_u1k", "A seq 128k qd1: BW (MB/s)")
    before: float
    after: float
    unit: str  # as shown ("us", "IOPS", "MiB/s"), "" when the mail names none
    kind: Kind
    better: Better | None  # which way the unit is better (None: the mail does not say, a count)
    stated: str = ""  # the mail's own delta, as written ("76.0%", "+0.9%")
    source: str = ""  # the line it was read from, for the reader
    # which form read it ("columns", "pipes", "sides", "prose", ...: iolab.mail.claimed.reader sets it) and
    # what the form saw of its two sides ("names": a table's header names a side; "order": their order
    # alone; "": the form's own rule): what the gate (iolab.mail.claimed.evidence) asks of a row depends on them
    form: str = field(default="", compare=False)
    sides: str = field(default="", compare=False)

    @property
    def ratio(self) -> float | None:
        """after / before (None when before is zero)."""
        return self.after / self.before if self.before else None

    @property
    def delta(self) -> float | None:
        """The relative change after against before (-0.76: 76% lower)."""
        return None if self.ratio is None else self.ratio - 1.0

    @property
    def direction(self) -> Literal["up", "down", "none"]:
        if self.after > self.before:
            return "up"
        return "down" if self.after < self.before else "none"


def unit_of(text: str) -> Unit | None:
    """The unit a word or a label names: ``ns``, ``BW (MB/s)``, ``Flush time (ms)``, ``usecs/call``."""
    word = text.strip().strip("(),:;").lower()
    if word in _UNITS:
        return _UNITS[word]
    inner = re.findall(r"\(([^()]+)\)", text)
    words = text.replace(",", " ").split()
    parts = [p for w in words if "_" in w for k, p in enumerate(w.split("_"))  # "write_clat_ns_mean": ns
             if k or _UNITS.get(p.lower(), ("", "", None))[1] == "rate"]  # "tps_med": tps ("min_lat": not minutes)
    for candidate in [*inner, *words, *(p for p in parts if p != "bytes")]:
        key = candidate.strip().strip("(),:;.[]").lower()
        if key in ("mbps", "gbps"):  # the case says it: Gbps are bits a second, GBps bytes
            bits = "bps" in candidate
            return _UNITS[(key[0] + ("bit/s" if bits else "b/s"))]
        if key in _UNITS and key != "%":
            return _UNITS[key]
        if key[:1] in ("k", "m") and _UNITS.get(key[1:], ("", "", None))[1] == "rate":
            return _UNITS[key[1:]]  # a rate in thousands or millions: "kops/s", "MIOPS"
    return None


def multiplier(text: str) -> float:
    """What a unit word multiplies its figure by: a rate written in thousands or millions (``350 KIOPS``,
    ``120 kops/s``, ``1.2 MIOPS``) is 1e3 or 1e6 of the rate unit_of names; any other word, 1."""
    key = text.strip().strip("(),:;.[]").lower()
    if key in _UNITS or key[:1] not in ("k", "m") or _UNITS.get(key[1:], ("", "", None))[1] != "rate":
        return 1.0
    return SUFFIX[key[0]]


def number(token: str) -> float | None:
    """A figure as written: ``1.418``, ``562K``, ``1,205``, ``1.90e+09``, ``~250``; None for anything else."""
    match = _NUMBER.match(token.strip())
    if not match:
        return None
    value = float((match.group(1) + (match.group(2) or "")).replace(",", ""))
    return value * SUFFIX[match.group(3).lower()] if match.group(3) else value


def figures(text: str) -> list[tuple[float, Unit, re.Match[str]]]:
    """Each figure in the text with a unit written after it (``562K IOPS``, ``4994MiB/s``)."""
    out = []
    for match in FIGURE.finditer(text):
        unit = unit_of(match.group("u"))
        if unit is None and match.group("u") == "%":
            unit = _UNITS["%"]
        value = number(match.group("n"))
        if unit is None or value is None:
            continue
        suffix = (match.group("s") or "").lower()
        scale = SUFFIX[suffix] if suffix in SUFFIX else multiplier(match.group("u"))  # 350K IOPS, 120 kops/s
        out.append((value * scale, unit, match))
    return out


_HIGHER = re.compile(r"\b(bw|bandwidth|throughput|tput|iops|k?ops|tps|qps|[kmg]?bps|rate|speed|score|transactions?|"
                     r"operations\s+per|per\s+sec(?:ond)?|[a-z]+/s(?:ec)?|hit\s+ratio|efficiency)\b", re.I)
_LOWER = re.compile(r"\b(lat|latency|latencies|(?<!each )(?<!every )(?<!same )(?<!this )(?<!that )(?<!first )(?<!next )"
                    r"(?<!some )(?<!any )(?<!long )time|runtimes?|durations?|elapsed|wall|cpu|overhead|cycles|"
                    r"load\s*avg|load\s+average|loadavg|memory\s+used|used\s+memory|"
                    r"instructions|context[- ]switch(?:es)?|p(?:50|90|95|99|999|9999|99\.9+)|"
                    r"(?:page\s*)?faults|misses|comparisons|stalls|retries|contention|usage|utili[sz]ation|"
                    r"compressed\s+(?:size|blocks?|bytes|pages)|write\s+amplification|footprint|rss|sys|usr|iowait|"
                    r"(?:sys)?calls|wakeups|interrupts|allocations|evictions|power|energy|janks?)\b",
                    re.I)
_LOWER_RATE = re.compile(r"\b(?:miss|error|drop|loss|failure|fault|retr(?:y|ies)|retransmit)\w*\s+(?:rate|ratio)\b|"
                         r"\b(?:context[- ]switch(?:es)?|cs|misses|interrupts|irqs|wakeups|retries|evictions|stalls)\s*(?:per\s+sec(?:ond)?|/\s*s(?:ec)?\b|a\s+second)",
                         re.I)  # a rate of what costs: context switches per second


_FRAGMENTED = re.compile(r"\bfrag(?:ment\w*)?\b|\bextents\s+per\b|"
                         r"\b(?:num(?:ber)?\.?|count)\s+(?:of\s+)?(?:free\s+)?extents?\b",
                         re.I)

_CONTIGUOUS = re.compile(r"\bextent\s+size|\bsize\s+(?:per|of)\s+(?:an?\s+)?extent\b", re.I)


def better_of(label: str) -> Better | None:
    """Which way is better by what a row names, when its unit does not say (``BW(M/s)``, ``latency``,
    ``write_bw_bytes``, ``p99Bms``: words joined by underscores or a capital are words)."""
    words = re.sub(r"_|(?<=[a-z0-9])(?=[A-Z])", " ", label)
    if _FRAGMENTED.search(words):
        return "lower"  # fragmentation, however it is scored: fewer extents a file, fewer free pieces
    if _CONTIGUOUS.search(words):
        return "higher"  # its other face: larger extents
    if _LOWER_RATE.search(words):
        return "lower"  # a rate of what goes wrong: misses, errors, drops
    higher, lower = _HIGHER.search(words), _LOWER.search(words)
    if higher and not lower:
        return "higher"
    return "lower" if lower and not higher else None


def make(label: str, before: float, after: float, unit: Unit | None, better: Better | None, stated: str,
         source: str) -> Claim:
    """A claim row; a unit's own direction unless the mail says which way is better, else its name's."""
    shown, kind, unit_better = unit if unit else ("", "count", None)
    named = " ".join(label.split())[:120] or shown or "figure"  # an experiment's [[claims.row]] needs a label
    return Claim(named, before, after, shown, kind, better or unit_better or better_of(label), stated[:20],
                 source.strip())


_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0,
          "B/s": 1.0, "KiB/s": 2.0 ** 10, "MiB/s": 2.0 ** 20, "GiB/s": 2.0 ** 30, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
          "Mbit/s": 1e6 / 8, "Gbit/s": 1e9 / 8}


def convert(value: float, unit: str, to: str) -> float | None:
    """A figure in another unit of its kind (fio writes 998KiB/s on one side, 1.2MiB/s on the other);
    None when the two are not of one kind."""
    if unit == to:
        return value
    if unit not in _SCALE or to not in _SCALE or (unit[-2:] == "/s") != (to[-2:] == "/s"):
        return None
    return value * _SCALE[unit] / _SCALE[to]



def aligned(value: float, written: Unit | None, to: Unit | None) -> float:
    """An after side's figure in the before side's unit, when a row writes each side in another unit
    of one kind (``980 MiB/s`` and ``1.2 GiB/s``, ``1500 usec`` and ``1.2 msec``); as written otherwise."""
    if written is None or to is None or written[0] == to[0]:
        return value
    found = convert(value, written[0], to[0])
    return value if found is None else found


_SAID_UNIT = re.compile(r"(?:\bin|\()\s*(?P<u>[A-Za-zµ/]{2,})\s*(?:\)|\b)")


def said_unit(lines: list[str], k: int, reach: int = 25) -> Unit | None:
    """The unit the text above line k says its figures are in ("values are in IOPS",
    "Performance test result(IOPS):"), the nearest first, within reach lines."""
    for line in reversed(lines[max(0, k - reach):k]):
        for match in _SAID_UNIT.finditer(line):
            unit = unit_of(match.group("u"))
            if unit is not None and unit[1] in ("time", "rate", "bandwidth"):
                return unit
    return None
