"""Figures a tool prints as named values, whatever the tool: ``name=value`` or ``name: value`` tokens.

A line of them (``packets=24078368 (MB=2755550), rps=200319 (MB/s=22924)``, ``rps:208.43k
Bps: 1.88M lat=125ms``, ``time spent: 9807361 usecs   IOPS: 2039284``), or a file's path and
its value (sysfs's ``.../btree_gc_average_duration_ms:3619``): each token whose unit its value
writes (``lat=125ms``) or its name names (``rps``, ``MB/s``, ``_ms``, ``iops``) is a figure keyed
by its name, so that the same tool's line under the other side pairs name by name. Tokens with
no unit (``port=10002``, ``packets=24078368``) are settings or counts, no figure; a time or a
share whose name names no measure (``delay=10 usec``, ``idle=125ms``) is a setting's; ``user``
and ``sys`` are a run's breakdown (claims only where the text speaks of them, as time(1)'s),
and a spread's names (``min``, ``max``, ``stdev``) describe samples.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import SPREAD, Unit, better_of, number, unit_of
from iolab.mail.claimed.naming import side_of

# a name, then "=" or ":" (spaces after a colon), then a figure with its unit, if any, written onto it
_TOKEN = re.compile(r"(?<![\w.%-])(?P<name>[A-Za-z%][\w/%.-]*?)(?:\s?=\s?|:\s*)(?P<v>\d[\d,]*(?:\.\d+)?(?:[kKMG](?![A-Za-z/]))?)"
                    r"(?:\s?(?P<u>[A-Za-zµ/%]+(?:/[a-z]+)?)(?!\s?[:=]))?(?![\w.])")
# rates of things a second that model's units do not name: requests, queries, bytes
_RATES: dict[str, Unit] = {"rps": ("req/s", "rate", "higher"), "qps": ("queries/s", "rate", "higher"),
                           "bps": ("B/s", "bandwidth", "higher")}
_BREAKDOWN = {"user", "sys", "system", "usr"}


def _unit(name: str, written: str) -> Unit | None:
    """The unit a token's value writes, else the one its name names (``rps``, ``MB/s``, ``..._ms``)."""
    if written:
        return unit_of(written)
    tail = re.split(r"[_.-]", name)[-1]
    return unit_of(name) or _RATES.get(name.lower()) or _RATES.get(tail.lower())


_SET_WORDS = re.compile(r"limit|timeout|interval|threshold|delay|expire|period", re.I)  # a time that is set
_WORDED = re.compile(r"(?<![\w.-])[A-Za-z][\w-]*=[A-Za-z][\w.+-]*")  # a setting's word: "rw=randread"
_SETTING = re.compile(r"(?:bs|blocksize|size|qd|iodepth|depth|jobs|numjobs|threads|clients)$", re.I)


def named_values(line: str, parts: tuple[str, ...] = ()) -> list[tuple[str, float, Unit]] | None:
    """The named figures of a line of them (two tokens or more, every figure of the line a token's), or
    of a file's path and its value (sysfs's ``/sys/.../duration_ms:3619``); None: not such a line (other
    readers read it). A setting's word (``rw=randread``) and a token with no unit naming a size or a
    count of workers (``bs=64k``) name the figures after them (``rw=randread bs=64k IOPS``); a time's
    name must name a measure (``delay=10 usec`` is a setting)."""
    tokens = list(_TOKEN.finditer(line))
    if not tokens or re.search(r"\d", _TOKEN.sub(" ", line)):
        return None
    path = len(tokens) == 1 and tokens[0].group("name").count("/") > 1 and not tokens[0].group("u") and \
        line[tokens[0].end("name"):tokens[0].start("v")].strip() == ":" and \
        not line[:tokens[0].start()].strip(" \t/") and not line[tokens[0].end():].strip()  # sysfs's file: value
    if len(tokens) < 2 and not path:
        return None
    out = token_figures(line, tokens, parts, path)
    names = [t.group("name").lower() for t in tokens if t.group("u") or _unit(t.group("name"), "")]
    if len(set(names)) < len(names) or any(side_of(t.group("name")) or side_of(line[:t.start()].split(",")[-1])
                                         for t in tokens):
        return None  # "BW=3939MiB/s  BW=6613MiB/s", "With the patch: 2676MB/s, without: 2670MB/s": columns, sides
    return out if out else None


def token_figures(line: str, tokens: list[re.Match[str]] | None = None, parts: tuple[str, ...] = (),
                  path: bool = False) -> list[tuple[str, float, Unit]]:
    """Each token's figure (its key, value and unit) that measures something (above), whatever else the
    line holds: also the tokens fio's job line prints after its IOPS and BW (``Lat=11033.30usec``)."""
    tokens = list(_TOKEN.finditer(line)) if tokens is None else tokens
    out: list[tuple[str, float, Unit]] = []
    row, since = "", 0
    for token in tokens:
        name, value = token.group("name").rstrip(".-"), number(token.group("v"))
        between = re.split(r"[:,;(]", line[since:token.start("name")])[-1]  # "time spent: ..": "time spent"
        said = " ".join(re.findall(r"[A-Za-z][\w/%.-]*", between)[-2:] + [name])
        key = name.rsplit("/", 1)[-1] if name.count("/") > 1 else said  # sysfs's path: its file
        since = token.end()
        unit = _unit(name, token.group("u") or "")
        if unit is None and value is not None and (_SETTING.match(name) or token.group("v")[-1] in "kKMG"):
            row = f"{row} {name}={token.group('v')}".strip()  # "bs=64k": the row the figures after it are of
        worded = " ".join(m.group(0) for m in _WORDED.finditer(line, 0, token.start()))  # "rw=randread"
        if value is None or unit is None or SPREAD.match(name.lower()) or \
                name.lower() in _BREAKDOWN and name.lower() not in parts or \
                (unit[1] not in ("rate", "bandwidth") or path) and (better_of(key) is None or _SET_WORDS.search(key)):
            continue
        out.append((f"{worded} {row} {key}".strip(), value, unit))
    return out
