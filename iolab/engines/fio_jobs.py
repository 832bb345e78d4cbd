"""What a fio job file asks of the target and of the clock, before it runs.

fio reads a job file as sections of ``option=value`` lines; ``[global]``
options apply to every job section after it. From that this module takes
the few options that decide the room the job's files need (size, filesize,
numjobs, nrfiles, filename) and how long it runs (runtime, time_based,
ramp_time, stonewall), as fio's documentation defines them:

- ``size`` is the total of one job's files (``nrfiles`` files of size/nrfiles),
  unless ``filesize`` sets each file's size; ``numjobs`` clones the job, each
  with its own files, unless they share a ``filename``.
- ``time_based`` runs for ``runtime`` (plus ``ramp_time``); without it
  ``runtime`` caps a size-bound job.
- jobs run at the same time, except after a ``stonewall`` (or ``wait_for``),
  which starts a new group.

A size given as a percentage (of the device) needs no room of its own, and
a time or size iolab cannot read is left unknown (None), never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|d)?\s*$", re.IGNORECASE)
_SECONDS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0,
            "h": 3600.0, "d": 86400.0}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_DIRECTIONS = {"read": {"read"}, "randread": {"read"}, "write": {"write"}, "randwrite": {"write"},
               "trimwrite": {"write"}, "randtrimwrite": {"write"}, "rw": {"read", "write"},
               "readwrite": {"read", "write"}, "randrw": {"read", "write"}, "trim": set(), "randtrim": set()}


@dataclass(frozen=True)
class Job:
    name: str
    numjobs: int
    size: int | None  # bytes of one clone's files; None: not given, or a percentage
    filename: str | None  # a shared file name (numjobs clones share it)
    seconds: float | None  # how long one run of the job takes when time-bound; None: size-bound
    cap: float | None  # runtime without time_based: at most this long
    stonewall: bool
    directions: frozenset[str]  # "read", "write": what its rw= does (fio's default: read), and verify's reads
    rw: str  # its rw= as given ("read" when not)


def seconds(text: str) -> float | None:
    """fio's time value (default unit: seconds)."""
    match = _TIME.match(text)
    if not match:
        return None
    return float(match.group(1)) * _SECONDS[(match.group(2) or "s").lower()]


def size(text: str) -> int | None:
    """fio's size value (binary suffixes, fio's default kb_base); None for a
    percentage, a range or what iolab cannot read."""
    match = _SIZE.match(text)
    if not match:
        return None
    return int(match.group(1)) * 1024 ** _POWERS[match.group(2).lower()]


def _sections(text: str) -> list[tuple[str, dict[str, str]]]:
    out: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            out.append((line[1:-1].strip(), {}))
        elif out:
            key, _, value = line.partition("=")
            out[-1][1][key.strip().lower()] = value.strip()
    return out


def _merged(text: str, extra: dict[str, object] | None) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """Each job section: its name, its options with [global] applied before them and
    ``extra`` (a variant's fio options) after, and its own options alone."""
    found = []
    common: dict[str, str] = {}
    added = {k.lower(): str(int(v) if isinstance(v, bool) else v) for k, v in (extra or {}).items()}
    for name, options in _sections(text):
        if name == "global":
            common.update(options)
        else:
            found.append((name, {**common, **options, **added}, options))
    return found


def option_values(text: str, name: str, extra: dict[str, object] | None = None) -> list[str]:
    """Each job section's value of one option, [global] applied before it and
    ``extra`` after ("1" for a bare flag); a section without it has none."""
    return [merged[name] or "1" for _, merged, _ in _merged(text, extra) if name in merged]


def jobs(text: str, extra: dict[str, object] | None = None) -> list[Job]:
    """The job sections of a fio job file, each with [global] applied before
    it and ``extra`` (a variant's fio options) after."""
    found = []
    for name, o, options in _merged(text, extra):
        total = size(o["size"]) if "size" in o else None
        filesize = size(o["filesize"]) if "filesize" in o else None
        if filesize is not None:
            total = filesize * max(1, int(o.get("nrfiles", "1") or 1))
        runtime = seconds(o["runtime"]) if "runtime" in o else None
        ramp = seconds(o.get("ramp_time", "0")) or 0.0
        timed = "time_based" in o and o["time_based"] not in ("0", "false")
        rw = o.get("rw", o.get("readwrite", "read"))
        directions = _DIRECTIONS.get(rw.split(":")[0].strip(), {"read", "write"})
        if o.get("verify", "0") != "0" and o.get("do_verify", "1") != "0":
            directions = directions | {"read"}  # a write job that verifies reads its data back
        found.append(Job(
            name=name, numjobs=max(1, int(o.get("numjobs", "1") or 1)), size=total,
            filename=o.get("filename") or None,
            seconds=(runtime + ramp) if timed and runtime is not None else None,
            cap=(runtime + ramp) if runtime is not None and not timed else None,
            stonewall="stonewall" in options or "wait_for" in options,
            directions=frozenset(directions), rw=rw,
        ))
    return found


def room(found: list[Job]) -> tuple[int, list[str]]:
    """Bytes the jobs' files need on the target, and how (one line per job)."""
    total, how = 0, []
    shared: dict[str, int] = {}
    for job in found:
        if job.size is None:
            continue
        if job.filename:
            for name in job.filename.split(":"):
                shared[name] = max(shared.get(name, 0), job.size)
            how.append(f"{job.name}: {human(job.size)} in {job.filename}")
        else:
            total += job.numjobs * job.size
            how.append(f"{job.name}: {job.numjobs} x {human(job.size)}" if job.numjobs > 1
                       else f"{job.name}: {human(job.size)}")
    return total + sum(shared.values()), how


def duration(found: list[Job]) -> tuple[float | None, bool]:
    """Seconds one run of the job file takes (groups one after another, the
    jobs of a group together), and whether that is exact (every job
    time-bound) rather than an upper bound from runtime caps. None: some
    job is bound by its size only (its time depends on the machine)."""
    groups: list[list[Job]] = []
    for job in found:
        if job.stonewall or not groups:
            groups.append([])
        groups[-1].append(job)
    total, exact = 0.0, True
    for group in groups:
        longest = 0.0
        for job in group:
            if job.seconds is not None:
                longest = max(longest, job.seconds)
            elif job.cap is not None:
                longest, exact = max(longest, job.cap), False
            else:
                return None, False
        total += longest
    return total, exact


def human(nbytes: int) -> str:
    for suffix, power in (("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)):
        if nbytes >= 1024**power:
            value = nbytes / 1024**power
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.1f}{suffix}"
    return f"{nbytes}B"
