"""What the tools print, read line by line into figures keyed by what they measure.

fio's own lines (``READ: bw=``, ``read: IOPS=, BW=``, ``lat (usec): ... avg=``,
``bw (MiB/s): ... avg=``, fio before 3.0), dd's summary line (its rate),
time(1)'s real time (zsh's total, GNU time's elapsed), t/io_uring's line a
second, pidstat's line a second (its %CPU), bonnie++'s line of rates, a
profile's share of a function (``__blk_mq_alloc_requests() 1.47%``), an
average said in words (``avg 186``), and any figure with its unit after
it, keyed by the words before it (``seq write: 178 MB/s``: ``seq write
MB/s``); a row of figures (``Latency  411ms  11914us``) by its columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from iolab.mail.claimed.model import NOT_MEASURED, Better, Unit, better_of, figures, number, unit_of
from iolab.mail.claimed.named import named_values, token_figures
from iolab.mail.claimed.naming import side_of
from iolab.mail.claimed.suites import suite_figures

NOISE = re.compile(r"^\s*(Jobs:|cpu\s*:|IO depths|submit\s*:|complete\s*:|issued|latency\s*:|clat percentiles|"
                    r"lat percentiles|\||Run status|Disk stats|[a-z]+\d*: ios=|fio-\d|Starting \d)", re.I)
_FIO_GROUP = re.compile(r"\b(READ|WRITE|TRIM|MIXED)\s*:\s*bw=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s)")
_FIO_JOB = re.compile(r"^\s*(?:([\w ]*?\w)\s*(?::\s*|\s))?IOPS=(\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?[kKMG]?)(?:\s*,\s*BW=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s))?"
                      r"(?![\w.])")
# fio's "bw (  MiB/s): min= 2056, max= 2308, per=100.00%, avg=2186.20": an average it prints
_FIO_BW = re.compile(r"^\s*bw\s*\(\s*([KMGT]i?B/s)\s*\)\s*:.*?\bavg=\s*(\d+(?:\.\d+)?)")
_FIO_IOPS = re.compile(r"^\s*iops\s*:\s*min=.*?\bavg=\s*(\d+(?:\.\d+)?)")  # its "iops : min=.., avg=.."
_FIO_OLD = re.compile(r"^\s*(\w+)\s*:\s*io=[^,]+,\s*bw=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s),\s*iops=(\d+(?:\.\d+)?[kKM]?)|"
                      r"\b(READ|WRITE|MIXED):\s*io=[^,]+,\s*aggrb=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s)")  # fio before 3.0
_FIO_LAT = re.compile(r"^\s*(?:(\d+[kKmM]?|[A-Za-z][\w.-]{0,15})\s+)?([cs]?lat)\s*\(\s*(nsec|usec|msec)\s*\)\s*:\s*min=[^,]*,\s*max=[^,]*,\s*"
                      r"avg=\s*(\d+(?:\.\d+)?)")
_DD = re.compile(r"(?:\bcopied,|^)\s*[\d.]+\s*s,\s*(\d+(?:\.\d+)?)\s*([kKMGT]?i?B/s)\s*$")  # its tail alone too
_TIME_REAL = re.compile(r"^\s*real\s*(?P<m>\d+)m\s?(?P<s>\d+(?:\.\d+)?)s\b|"
                        r"^\s*(?P<m2>\d+)m(?P<s2>\d+(?:\.\d+)?)s\s+real\b|"
                        r"\bcpu\s+(?:(?P<m3>\d+):)?(?P<s3>\d+(?:\.\d+)?)\s+total\b")  # zsh's "... 95% cpu 0.031 total"
_TIME_PART = re.compile(r"^\s*(user|sys)\s*(\d+)m\s?(\d+(?:\.\d+)?)s\b")  # time(1)'s breakdown of real
# GNU time's default line: "4.52user 22.53system 0:38.16elapsed 70%CPU" (its elapsed the wall time)
_GNU_TIME = re.compile(r"\b[\d.]+user\s+[\d.]+system\s+(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)elapsed\b")
# time -v's wall time: "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:23.45"; time -p's "real 83.45"
_TIME_V = re.compile(r"\bElapsed \(wall clock\) time\s*(?:\([^)]*\))?\s*:\s*(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)\s*$")
_TIME_P = re.compile(r"^\s*(?P<what>real|user|sys)\s+(?P<s>\d+(?:\.\d+)?)\s*$")
# perf stat's own: "1.234567890 seconds time elapsed", "0.500000000 seconds sys"
_PERF_TIME = re.compile(r"^\s*(?P<s>\d+(?:\.\d+)?)\s+seconds\s+(?P<what>time elapsed|user|sys)\s*$")
# a duration in words, its parts one figure: "3 minutes, 38 seconds", "1 hour 2 minutes and 5 seconds"
_WORDED = re.compile(r"(?<![\w.])(?:(?P<h>\d+)\s*hours?,?\s+(?:and\s+)?)?(?P<m>\d+)\s*min(?:ute)?s?,?\s+(?:and\s+)?"
                     r"(?P<s>\d+(?:\.\d+)?)\s*sec(?:ond)?s?\b", re.I)
_COMPACT = re.compile(r"(?<![\w.])(?:(?P<h>\d+)h\s?)?(?P<m>\d+)m\s?(?P<s>\d+(?:\.\d+)?)s(?![\w/])|"  # "3m38.2s"
                      r"(?<![\w.])(?P<h2>\d+)h\s?(?P<m2>\d+)m(?:in)?(?![\w/])")  # "14h29m": hours and minutes
# t/io_uring's line a second: "IOPS=3700000, BW=1806MiB/s, IOS/call=32/31"
_IO_URING = re.compile(r"^\s*IOPS=(?P<iops>\d+(?:\.\d+)?[kKM]?),\s*(?:BW=(?P<bw>\d+(?:\.\d+)?)(?P<unit>[KMG]i?B/s),\s*)?"
                       r"IOS/call=")
# fio's status line before 3.0 ("Jobs: 4 (f=4): [rrrr] [45.2% done] [183K/0/0 iops] [eta 00m:33s]"), or
# its iops part pasted alone ("[258K/0/0 iops]"): read, write (and trim) IOPS of that second
_FIO_STATUS = re.compile(r"\[(?P<r>\d+(?:\.\d+)?[kKM]?)/(?P<w>\d+(?:\.\d+)?[kKM]?)(?:/(?P<t>\d+(?:\.\d+)?[kKM]?))?"
                         r"\s*iops\]", re.I)
_STATED_AVERAGE = re.compile(r"\b(?:avg|average|mean)\s*[:=]?\s*~?$", re.I)  # a line's own mean of its runs
_AVERAGE = re.compile(r"\b(avg|average|mean|median)\b\s*[:=]?\s*(\d[\d,]*(?:\.\d+)?)(?![\w.])", re.I)
FIO_JOB_HEAD = re.compile(r"^\s*(\S+): \(groupid=\d+, jobs=\d+\)")
# bonnie++'s line of results: "debian0  7501M  375k  99  1.4g  97  117m  14 ..." (a rate, its %CP, ...)
_BONNIE = re.compile(r"^\s*(?:\S+\s+)?(?P<what>\d+[KMGT]|\d+:\d+:\d+/\d+)"
                     r"(?P<cells>(?:\s+(?:\d+(?:\.\d+)?[kmg]?|\+{3,})\s+(?:\d+|\+{3,})){3,})\s*$")
# pidstat's line a second: "08:38:33  0  93  0.00  0.00  0.00  0.00  0.00  3  kswapd0" (%CPU the last share)
_PIDSTAT = re.compile(r"^\s*\d\d:\d\d:\d\d(?:\s+[AP]M)?\s+\d+\s+\d+(?:\s+\d+\.\d+){3,5}\s+(?P<cpu>\d+\.\d+)\s+\d+\s+"
                      r"(?P<command>\S+)\s*$")
_SPREAD = re.compile(r"(?:±|\+/-)\s*\d[\d.]*(?:e[+-]?\d+)?\s*(?P<u>[A-Za-zµ%]+(?:/[a-z]+)?)?")
_PERF_REPORT = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s+(?:\d+(?:\.\d+)?%\s+)?\S.*?\[[k.]\]\s+([A-Za-z_][\w.]*)\s*$")
_CALLGRAPH = re.compile(r"^[\s|]*--(\d+(?:\.\d+)?)%--([A-Za-z_][\w.]*)\s*$")  # perf report -g's node: "|--31.67%--foo"
_PROFILE = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(\)\s*:?\s+(\d+(?:\.\d+)?)\s*%")  # from a name's start: linear


@dataclass(frozen=True)
class Figure:
    key: str  # what it measures: "READ bw", "read IOPS", "lat avg", "dd", "__blk_mq_alloc_requests()", "IOPS"
    value: float
    unit: Unit
    better: Better | None
    line: str
    run: int = 0  # lines of figures one after the other share a run: a key's figures in one run are samples
    alone: bool = False  # a whole run's result (dd's summary of one file): never a sample of a series
    at: int = -1  # the line's number in the text
    fio: bool = False  # read from fio's own output: repeated a side, its runs (their mean)
    counter: bool = False  # a counter's line ("pswpin: 29815871"): a claim only where the prose names it


_IOPS: Unit = ("IOPS", "rate", "higher")


def _figure(key: str, value: float | None, unit: Unit | None, line: str) -> list[Figure]:
    return [Figure(key, value, unit, None, line)] if value is not None and unit is not None else []


def _fio(line: str) -> list[Figure] | None:
    """fio's own lines: a group's ``READ: bw=``, a job's ``read: IOPS=.., BW=..``, ``lat (usec): .. avg=``."""
    found = [f for m in _FIO_GROUP.finditer(line)
             for f in _figure(f"{m.group(1)} bw", float(m.group(2)), unit_of(m.group(3)), line)]
    job = _FIO_JOB.match(line)
    if job:
        op = f"{job.group(1)} " if job.group(1) else ""  # "before : IOPS=37.9k, ...": the side's name, not the op
        found += _figure(f"{op}IOPS", number(job.group(2)), _IOPS, line)
        found += _figure(f"{op}BW", float(job.group(3)), unit_of(job.group(4)), line) if job.group(3) else []
        found += [Figure(f"{op}{key}", value, unit, None, line)  # "4k  IOPS=92.7k, BW=362MiB/s, Lat=11033.30usec"
                  for key, value, unit in token_figures(line[job.end():]) if job.group(3)]
    bw = _FIO_BW.match(line)
    if bw:
        found += _figure("bw avg", float(bw.group(2)), unit_of(bw.group(1)), line)
    iops = _FIO_IOPS.match(line)
    if iops:
        found += _figure("iops avg", float(iops.group(1)), _IOPS, line)
    lat = _FIO_LAT.match(line)
    if lat:
        case = f"{lat.group(1)} " if lat.group(1) else ""  # "4   lat (nsec): ...": a case's, its name first
        found += _figure(f"{case}{lat.group(2)} avg", float(lat.group(4)), unit_of(lat.group(3)), line)
    status = _FIO_STATUS.search(line)
    for op in ("r", "w", "t") if status else ():
        value = number(status.group(op) or "0") if status else None
        found += _figure(f"{dict(r='read', w='write', t='trim')[op]} IOPS", value, _IOPS, line) if value else []
    old = _FIO_OLD.search(line)
    if old and old.group(1):
        found += _figure(f"{old.group(1)} IOPS", number(old.group(4)), _IOPS, line)
        found += _figure(f"{old.group(1)} BW", float(old.group(2)), unit_of(old.group(3)), line)
    elif old:
        found += _figure(f"{old.group(5)} bw", float(old.group(6)), unit_of(old.group(7)), line)
    return found if (found or job or lat or old or bw or iops or status or _FIO_GROUP.search(line)) else None


def _timed(line: str, parts: tuple[str, ...]) -> list[Figure] | None:
    """time(1)'s lines: real (GNU time's elapsed, zsh's total) the wall time; user and sys only as parts says."""
    part = _TIME_PART.match(line)
    if part:
        return _figure(part.group(1), int(part.group(2)) * 60 + float(part.group(3)), unit_of("s"), line) \
            if part.group(1) in parts else []
    plain = _TIME_P.match(line) or _PERF_TIME.match(line)
    if plain:
        what = "real" if plain.group("what") == "time elapsed" else plain.group("what")
        return _figure(what, float(plain.group("s")), unit_of("s"), line) if what == "real" or what in parts else []
    gnu = _GNU_TIME.search(line) or _TIME_V.search(line)
    if gnu:
        wall = float(gnu.group("h") or 0) * 3600 + float(gnu.group("m")) * 60 + float(gnu.group("s"))
        return _figure("real", wall, unit_of("s"), line)
    timed = _TIME_REAL.search(line)
    if timed:
        minutes = timed.group("m") or timed.group("m2") or timed.group("m3") or "0"
        seconds = timed.group("s") or timed.group("s2") or timed.group("s3")
        return _figure("real", float(minutes) * 60 + float(seconds), unit_of("s"), line)
    return None


# stress-ng's metrics row: "stress-ng: info:  [3305] hdd   23568   60.01   0.94   19.92   392.74   1129.82"
# (bogo ops, real, usr and sys seconds, bogo ops/s by real time, by usr+sys time); its other lines measure nothing
_STRESS_NG = re.compile(r"^\s*stress-ng:\s*\w+:\s*\[\d+\]\s+(?P<name>[a-z][\w-]*)\s+\d+\s+(?:[\d.]+\s+){3}"
                        r"(?P<rate>\d+(?:\.\d+)?)\s+[\d.]+(?:\s+[\d.]+){0,2}\s*$")  # newer: CPU used, RSS max
# hdparm -t / -T: "Timing buffered disk reads: 1024 MB in  3.00 seconds = 341.33 MB/sec" (the seconds its own)
_HDPARM = re.compile(r"^\s*Timing (?P<what>[\w ]+?):\s*[\d.]+\s*[kMG]?B in\s+[\d.]+\s*seconds\s*=\s*"
                     r"(?P<rate>\d+(?:\.\d+)?)\s*(?P<unit>[kMG]B/sec)\s*$", re.I)
# sysbench's counts with their rate: "transactions:   100000 (1666.33 per sec.)"
_SYSBENCH = re.compile(r"^\s*(?P<name>[a-z][\w ]*?):\s+\d+\s+\((?P<rate>\d+(?:\.\d+)?) per sec\.\)\s*$")


def _tools(line: str) -> list[Figure] | None:
    """stress-ng's bogo ops a second (its other lines: none), hdparm's and sysbench's rates; None: none of theirs."""
    if re.match(r"^\s*stress-ng:", line):
        row = _STRESS_NG.match(line)
        return _figure(f"{row.group('name')} bogo ops/s", float(row.group("rate")), ("ops/s", "rate", "higher"),
                       line) if row else []
    hdparm = _HDPARM.match(line)
    if hdparm:
        return _figure(hdparm.group("what"), float(hdparm.group("rate")), unit_of(hdparm.group("unit")), line)
    bench = _SYSBENCH.match(line)
    if bench:
        return _figure(f"{bench.group('name')} per sec", float(bench.group("rate")), ("/s", "rate", "higher"), line)
    suite = suite_figures(line)  # filebench's IO Summary, UnixBench's results, index and score
    return None if suite is None else [Figure(key, value, unit, None, line) for key, value, unit in suite]


def _seconds(found: re.Match[str]) -> str:
    parts = found.groupdict()
    hours, minutes = int(parts["h"] or parts.get("h2") or 0), int(parts["m"] or parts.get("m2") or 0)
    return f"{hours * 3600 + minutes * 60 + float(parts['s'] or 0):g} seconds"


def worded(line: str) -> str:
    """A line with each duration in words or in time(1)'s short form written as its seconds
    (``3 minutes, 38 seconds``, ``3m38s``, ``1h2m3.5s``: ``218 seconds``)."""
    for form in (_WORDED, _COMPACT):
        line = form.sub(_seconds, line)
    return line


def _unspread(spread: re.Match[str]) -> str:
    """A spread dropped, its unit kept when the figure before it has none (fs_mark's "57634.2+/-2.8e+04 files/sec")."""
    return " " + (spread.group("u") or "") if re.search(r"\d\s*$", spread.string[:spread.start()]) else " "


def line_figures(line: str, label: str = "", parts: tuple[str, ...] = ()) -> list[Figure]:
    """The figures of one line under a side, keyed by what they measure; time(1)'s ``user`` and
    ``sys`` only when parts names them (the text speaks of user or system time)."""
    node = _CALLGRAPH.match(line)
    if node:  # a node of perf's call graph, its pipes drawn before it
        return [Figure(node.group(2) + "()", float(node.group(1)), ("%", "ratio", "lower"), "lower", line, alone=True)]
    if NOISE.match(line) or NOT_MEASURED.match(line):
        return []
    line = _SPREAD.sub(_unspread, line)  # "1.234 s ±  0.010 s": the spread is no figure of its own
    timed = _timed(line, parts)  # time(1)'s "real 3m11.5s" before its minutes are read as seconds
    if timed is not None:
        return timed
    line = worded(line)
    fio = _fio(line)
    if fio is not None:
        return [replace(f, fio=True) for f in fio]
    tool = _tools(line)
    if tool is not None:
        return tool
    uring = _IO_URING.match(line)
    if uring:
        found = _figure("IOPS", number(uring.group("iops")), _IOPS, line)
        return found + (_figure("BW", float(uring.group("bw")), unit_of(uring.group("unit")), line)
                        if uring.group("bw") else [])
    dd = _DD.search(line)
    if dd:
        return [replace(f, alone=True) for f in _figure("dd", float(dd.group(1)), unit_of(dd.group(2)), line)]
    pidstat = _PIDSTAT.match(line)
    if pidstat:  # a process's CPU share: a run of them, a side's samples
        return [Figure(f"{pidstat.group('command')} %CPU", float(pidstat.group("cpu")), ("%", "ratio", "lower"),
                       "lower", line)]
    bonnie = _BONNIE.match(line)
    if bonnie:  # bonnie++'s rates a second, each followed by its %CP ("+++++ +++": too fast to time)
        cells = bonnie.group("cells").split()
        return [Figure(f"{bonnie.group('what')} #{n + 1}", value, ("/s", "rate", "higher"), "higher", line)
                for n, value in enumerate(number(c) for c in cells[0::2]) if value is not None]
    shares = _shares(line) or _worded_rate(line) or _cpu_share(line)
    if shares:
        return shares
    out: list[Figure] = []
    if _ARROW.search(line):
        return []  # "34 -> 46 GiB/s": a pair of its own, the prose's
    measured = _measured(line)
    row = len(measured) >= 3 and not any(re.search(r"[A-Za-z]{2}", line[a[2].end():b[2].start()])
                                      for a, b in zip(measured, measured[1:]))
    for n, (value, unit, match) in enumerate(measured):  # not a share, a delta, a figure naming its line ("1s: ..")
        key = _key_words(line[:match.start()], label, unit[0])
        # a row of figures (bonnie++'s "Latency  35068us  24976us  2944ms"): each keyed by its column
        out.append(Figure(f"{_key_words(line[:measured[0][2].start()], label, '')} #{n + 1}" if row else key, value,
                          unit, None, line))
    keyed = _named(line, parts, out) or ([] if out else _unit_keyed(line))  # "rps=200319 (MB/s=22924)"
    if keyed:
        return keyed
    if not out:  # "- seq write: avg 186 stddev 331": the unit is the side's ("latencies (in usecs)")
        average = _AVERAGE.search(line)
        if average and number(average.group(2)) is not None:
            out.append(Figure(_key_words(line[:average.start()], label, "avg"), number(average.group(2)) or 0.0,
                              ("", "", None), None, line))
    counter = None if out else counted(line)
    return out + ([Figure(counter[0], counter[1], ("", "count", None), None, line, counter=True)] if counter else [])


def _named(line: str, parts: tuple[str, ...], out: list[Figure]) -> list[Figure]:
    """A line of named values (``rps=200319 (MB/s=22924)``, sysfs's ``.../duration_ms:3619``) where the
    words before each figure read none, or ran over another's figure and gave a figure another's unit
    (``qps=80100 (KB/s=40050)``: 80100 KB/s) or a setting names the row (``bs=64k  IOPS=11.2k, BW=697MiB/s``
    read as ``bs=64k IOPS=11.2k BW``)."""
    named = named_values(line, parts)
    misread = any((f.value, f.unit) not in [(v, u) for _, v, u in named or []] for f in out)
    ran = any(re.search(r"=\S*\d", f.key) for f in out) and all("=" in key for key, _, _ in named or [])
    if named is None or out and not misread and not ran:
        return []
    return [Figure(key, value, unit, None, line) for key, value, unit in named]


def _measured(line: str) -> list[tuple[float, Unit, re.Match[str]]]:
    """A line's figures with their units, not a share, nor one that names its line ("1s: ..") or a setting;
    of runs with their stated average ("35s 34s 33s total: 170s, avg: 34s", "mean=34s") the average alone,
    each average for the runs of its unit since the one before it."""
    found = [f for f in figures(line) if f[1][0] != "%" and not line[f[2].end():].lstrip().startswith(":")]
    stated = [f for f in found if _STATED_AVERAGE.search(line[:f[2].start()])]
    measured = [f for f in found if f in stated or not (f[1][1] == "time" and _setting(line[:f[2].start()]))]
    runs: list[tuple[float, Unit, re.Match[str]]] = []
    for k, average in enumerate(stated):
        since = stated[k - 1][2].end() if k else 0
        mine = [f for f in measured if since <= f[2].start() < average[2].start() and f[1][0] == average[1][0]]
        runs += mine if len(mine) >= 2 else []
    return [f for f in measured if f not in runs]


# a figure after a name that says its unit: "Average Files/sec:  96898.0", "max_commit_ms 233784", "BW (MB/s) = 512"
_UNIT_KEYED = re.compile(r"^\s*(?P<name>[A-Za-z][\w ./()-]{0,60}?)\s*(?:[:=]\s*|\s)\s*(?P<v>\d[\d,]*(?:\.\d+)?)\s*$")
def _shares(line: str) -> list[Figure]:
    """A profile's share of a function: ``__blk_mq_alloc_requests() 1.47%``, perf report's row."""
    shares = [Figure(m.group(1) + "()", float(m.group(2)), ("%", "ratio", "lower"), "lower", line)
              for m in _PROFILE.finditer(line)]
    report = _PERF_REPORT.match(line)  # perf report's row: "12.50%  fio  [kernel]  [k] native_queued_spin_lock"
    return shares or ([Figure(report.group(2) + "()", float(report.group(1)), ("%", "ratio", "lower"), "lower", line)]
                      if report else [])


# a rate in words: "1378930.00 requests per second", "Requests per second: 12345.6", "12000 ops/sec", also keyed
# by what was done and followed by more ("SET: 5258.62 requests per second, p50=0.087 msec"), or named by the
# key alone ("Requests/sec:  7150.33", "Transfer/sec:  4.70MB": a size a second)
_PER_SECOND = re.compile(r"^\s*(?:(?:(?P<key>[A-Za-z][\w.-]{0,20}(?:\s[\w.-]+){0,2})\s*:\s*)?(?P<v>\d[\d,]*(?:\.\d+)?)"
                         r"\s+(?P<what>[A-Za-z]+)\s+per\s+sec(?:ond)?(?:\s*(?:[,;(]|\s-\s).*)?|"
                         r"(?P<what2>[A-Za-z]+)(?:\s+per\s+sec(?:ond)?|/sec|/s)\s*[:=]\s*(?P<v2>\d[\d,]*(?:\.\d+)?)"
                         r"\s*(?P<size>[KMGT]i?B)?)\s*$", re.I)
# a share of the CPU a run took: "~1600% CPU", "CPU usage: 45%", "CPU\t~52%"
# ... also "about 30% system load", "~12% CPU utilization" (the words after the share its name)
_CPU = re.compile(r"^\s*(?:(?:about|around|roughly|approximately)\s+|~)?(?P<v>\d+(?:\.\d+)?)\s*%\s*"
                  r"(?P<what>(?:(?:system|sys|user|kernel|cpu|CPU)\s+)?(?:CPU|load|usage|utili[sz]ation)"
                  r"(?:\s+(?:load|usage|utili[sz]ation))?)|"
                  r"^\s*CPU(?:\s+(?:usage|utili[sz]ation|util|load))?\s*[:=]?\s*~?(?P<v2>\d+(?:\.\d+)?)\s*%\s*$", re.I)


def _worded_rate(line: str) -> list[Figure]:
    """Things done a second written in words (``1378930.00 requests per second``): a rate of them."""
    found = _PER_SECOND.match(line)
    if not found:
        return []
    what, value = (found.group("what") or found.group("what2")).lower(), number(found.group("v") or found.group("v2"))
    size = unit_of(f"{found.group('size')}/s") if found.group("size") else None
    unit = size or unit_of(f"{what}/s") or (f"{what}/s", "rate", "higher")
    key = f"{found.group('key')} " if found.group("key") else ""
    return [Figure(f"{key}{what} per second", value, unit, "higher", line)] if value is not None else []


def _cpu_share(line: str) -> list[Figure]:
    """The CPU a run took, alone on its line (``~1600% CPU``, ``CPU usage: 45%``): a share, better lower."""
    found = _CPU.match(line)
    if found and found.group("v") and line[found.end():].strip():
        return []  # the share's words then more: not a run's share alone on its line
    value = number(found.group("v") or found.group("v2")) if found else None
    what = " ".join(found.group("what").split()) if found and found.group("what") else "CPU"
    key = "CPU" if what.lower() == "cpu" else what
    return [Figure(key, value, ("%", "ratio", "lower"), "lower", line)] if value is not None else []


def _unit_keyed(line: str) -> list[Figure]:
    """A figure after a name that says its unit (``Average Files/sec:  96898.0``, ``max_commit_ms 233784``);
    a name per something (``SEGS_PER_SEC 128``) is a setting's, its SEC no unit of the figure."""
    keyed = _UNIT_KEYED.match(line)
    if not keyed or re.search(r"\bper\b|_per_", keyed.group("name"), re.I):
        return []
    unit, value = unit_of(keyed.group("name")), number(keyed.group("v"))
    if unit is None or value is None or unit[1] not in ("time", "rate", "bandwidth"):
        return []
    return [Figure(" ".join(keyed.group("name").split()), value, unit, None, line)]


# a counter's line: "pswpin: 29815871", "nr_dirty 1234", perf stat's "  12,345,678      cache-misses   # 3.45% ..."
_NAMED_COUNT = re.compile(r"^\s*(?P<name>[A-Za-z][\w./()-]*(?:\s[A-Za-z][\w./()-]*){0,2})(?:\s*[:=]\s*|\s+)"
                          r"(?P<v>\d[\d,]*)\s*$")
_COUNT_NAMED = re.compile(r"^\s*(?P<v>\d[\d,]*)\s+(?P<name>[A-Za-z][\w./:-]*(?:\s[A-Za-z][\w./:-]*){0,2})"
                          r"\s*(?:#.*)?$")


def counted(line: str) -> tuple[str, float] | None:
    """A counter's name and its count (a whole number: ``6.8`` is a version), on a line of its own;
    a side's name and a number (``Vanilla 6``) is none."""
    found = _NAMED_COUNT.match(line) or _COUNT_NAMED.match(line)
    value = number(found.group("v")) if found else None
    return (found.group("name"), value) if found and value is not None and side_of(found.group("name")) is None \
        else None


_ARROW = re.compile(r"\d\s*\S{0,8}\s*(?:->|=>|→)\s*~?\d")
_SET = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*=\s*$")


def _setting(before: str) -> bool:
    """A time that is a setting's value (``delay=10 usec``, ``ramp_time=10s``), not what was measured
    (``lat=12ms``): a name before an equals sign that names no measure (a rate's name is its unit)."""
    found = _SET.search(before)
    return found is not None and better_of(found.group(1)) is None


def _key_words(before: str, label: str, unit: str) -> str:
    """What a figure measures: the words before it on its line (those before a colon when the line
    is "name: figure"), without the sides' names, and its unit."""
    head = before.rstrip()
    text = head[:-1] if head.endswith(":") else before.split(":")[-1]
    words = re.findall(r"(?<![\w.])(?:[A-Za-z][\w/.-]*(?:\s?==?\s?[^\s,()]+)?|\d+[kKMG](?:i?B)?(?![\w/.]))",  # "bs=400K", "nr_wb_ctx = 8", "4k" name a row
                       text.split(":")[-1] if not head.endswith(":") else text)
    words = [re.sub(r"\s", "", w) for w in words]
    words = [w for w in words if side_of(w) is None and w.lower() not in ("is", "was", "at", "of", "the")]
    count = _COUNT.match(text) or _SIZE_NAME.match(before)  # "1048576 records - 95 seconds", "4k: bw=1193MiB/s":
    return " ".join([*label.split(), *([count.group(1)] if count else []), *words[-3:], unit]).strip()  # a row's name


_SIZE_NAME = re.compile(r"^\s*(\d+(?:\.\d+)?[kKmMgG](?:i?B)?)\s*:")  # a size before a colon ("16k:"): a block size
# a line that opens with a count of things ("1048576 records", "4k blocks", "32 jobs"): not a time stamp ("1s", "10 sec")
_COUNT = re.compile(r"^\s*(\d[\d,]*[kKmMgG]?)\s+(?=[A-Za-z])(?![smhu]?s(?:ec\w*)?\b|min\w*\b|hours?\b)")
