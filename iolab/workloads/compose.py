"""The experiment `iolab patch` writes: the chosen workloads over a series of the patches.

The base is the source with the patches it already carries taken out
(``reverse``, last patch first); the steps add the patches in order
(``[series]``). The text is TOML a user edits and runs with ``iolab run``;
a comment at its top says why each workload was chosen.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.stats.choice import fewest_rounds
from iolab.stats.kinds import PAIRED
from iolab.engines import fio, fio_jobs, probe, script
from iolab.load import device
from iolab.mail.benchmark import Benchmark, MailWorkload
from iolab.mail.claimed import Claim
from iolab.mail.files import named
from iolab.mail.unread import Block
from iolab.spec import MIN_SIZE
from iolab.spec.claims import SOURCE_LINE
from iolab.workloads import mail as from_mail
from iolab.workloads.library import REPEAT_ROUNDS, Chosen, PatchInfo, Selection, repeat_note, wild
from iolab.units import counted

SIZE = 512 << 20  # the target image: room for every area's files, in the VM's memory


@dataclass(frozen=True)
class Composed:
    """What `iolab patch` decided, beside the experiment's text."""

    text: str
    reverse: list[Path]  # patches already in the source: the base takes them out
    skipped: list[str]  # chosen workloads left out, and why


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _cut(text: str, width: int) -> str:
    """A line of the mail in one line of at most ``width`` characters, saying where it was cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


@dataclass(frozen=True)
class FromMail:
    """What the mail says: its benchmark (the primary workloads) and its claim."""

    benchmark: Benchmark
    claims: list[Claim]
    source: str  # the mail: its subject (and Message-Id)
    text: str = ""  # the subjects and bodies, whose words choose the library's workloads too
    unread: tuple[Block, ...] = ()  # its blocks of figures no claim row came from, numbered in the mail's files


_SPARE = ("better", "source", "reason")  # a row's keys written only when they hold a value
_TEMPLATE_LEFT = ("stated", "source", "reason")  # left out of a row to fill: what a reader saw, why none checks it
UNREAD_SHOWN = 3  # the blocks not read that get a row to fill; the rest are counted


def _row(m: from_mail.Matched) -> dict[str, Any]:
    """A [[claims.row]] of the experiment: the claim as read, and the workload and metric that check it."""
    c = m.claim
    return {"label": c.label[:120], "before": c.before, "after": c.after, "unit": c.unit[:20], "better": c.better,
            "stated": c.stated[:20], "source": _cut(c.source, SOURCE_LINE) if c.source.strip() else "",
            "workload": m.workload, "metric": m.metric, "reason": m.reason[:300]}


def _comment(text: str) -> str:
    """Text as a TOML comment may hold it: no control character (a mail's line may carry one)."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


WORKLOADS_SHOWN, METRICS_SHOWN = 6, 5  # the workloads, and metrics of each, the rows to fill name; the rest: "..."
_KINDS = {"rate": r"\biops\b", "bandwidth": r"[kmgt]i?b/s|\bbw\b|bandwidth|throughput",
          "time": r"\b(lat|latency|clat|slat|percentile|[unm]sec|[unm]s)\b"}  # a block's header's words


def _kind(metric: str) -> str:
    """What a metric measures: "rate", "bandwidth", "time", or "" (a count)."""
    if metric.endswith("iops"):
        return "rate"
    if re.search(r"(^|_)bw$", metric):
        return "bandwidth"
    return "time" if re.search(r"(^|_)(lat_\w+|p[\d.]+|per_call\w*|\w*_ns)$", metric) else ""


def _checked_by(table: dict[str, Any]) -> list[str]:
    """The metrics a [[workload]] table can check a claim row by, its own first (metrics, primary), then
    its engine's (iolab.engines: fio's per direction its jobs' rw= does, the probe's per mode)."""
    engine, params = table.get("engine", "fio"), table.get("probe") or {}
    if engine == "script":
        names: list[str] = list(script.METRICS)
    elif engine == "probe":
        names = [*probe.METRICS.get(str(params.get("mode")), ()), "ctx"]
    else:
        names = fio.metric_order(set().union(*(job.directions for job in fio_jobs.jobs(str(table.get("job") or "")))))
    own = [*table.get("metrics", []), *table.get("primary", [])]
    return list(dict.fromkeys(n for n in [*own, *names] if not any(c in n for c in "*?[")))


def _suggested(header: str, metrics: list[str]) -> list[str]:
    """The metrics of a workload a block's header names the kind (and side) of: "usec" a time, "MB/s" a
    bandwidth, "read" the reads; none where it names no kind."""
    words = header.lower()
    kinds = [kind for kind, pattern in _KINDS.items() if re.search(pattern, words)]
    sides = [side for side in ("read", "write") if side in words] or ["read", "write"]
    return [m for m in metrics if kinds and _kind(m) == kinds[0]  # a metric of no side (lat_p50) fits any
            and (m.split("_")[0] in sides or m.split("_")[0] not in ("read", "write"))][:3]


def _metrics_note(tables: list[dict[str, Any]]) -> list[str]:
    """The comment that names, once, each workload of the experiment and the metrics that can check it."""
    lines = ["# Its workloads and the metrics that check them (the spec loader refuses any other):"]
    for table in tables[:WORKLOADS_SHOWN]:
        names = _checked_by(table)
        lines.append(_comment(f"#   {_toml(table['name'])}: {', '.join(names[:METRICS_SHOWN])}"
                              + (", ..." if len(names) > METRICS_SHOWN else "")))
    return lines + (["#   ..."] if len(tables) > WORKLOADS_SHOWN else [])


def _unread_rows(mail: FromMail, tables: list[dict[str, Any]]) -> list[str]:
    """Each block of figures no claim row came from, as comments: its lines in the mail, its first line,
    and a [[claims.row]] (the keys a real row has) whose values the user fills, never one guessed;
    ``tables``: the experiment's [[workload]] tables, whose names and metrics the row may take."""
    if not mail.unread:
        return []
    many = len(mail.unread) > 1
    lines = ["", f"# Not read: {len(mail.unread)} block{'s' if many else ''} of figures in the mail no claim row came "
             "from (iolab mail lists them).", "# A block that holds a claim: uncomment its [[claims.row]], fill "
             "each value from the mail, and name", "# the [[workload]] and metric that check it (docs/mails.md)."]
    lines += _metrics_note(tables) if tables else ["# The experiment has no [[workload]]: leave workload and "
                                                   "metric \"\" (not reproduced)."]
    hints = {"label": "the mail's row", "unit": '"us", "MB/s", "IOPS"; "" for a count',
             "better": '"higher" or "lower"',
             "workload": f"{_toml(tables[0]['name'])} or another above" if tables else "",
             "metric": "one of its metrics above"}
    blank = from_mail.Matched(Claim("", 0.0, 0.0, "", "", None), "", "", "")
    keys = [k for k in _row(blank) if k not in _TEMPLATE_LEFT]  # a written row's keys, in its order
    for block in mail.unread[:UNREAD_SHOWN]:
        lines += ["#", _comment(f"# lines {block.first_line}-{block.last_line} of {block.where} ({block.figures} "
                                f"figures): {block.header}"), "# [[claims.row]]"]
        likely = _suggested(block.header, _checked_by(tables[0])) if tables else []
        for key in keys:  # a figure left blank: unfilled, the file is refused at its line, never run as 0
            value = f"{key} =" if key in ("before", "after") else f'{key} = ""'
            hint = (f"its header's words suggest {', '.join(map(_toml, likely))}" if key == "metric" and likely
                    else hints.get(key, ""))
            lines.append((f"# {value:<13}" + (f"  # {hint}" if hint else "")).rstrip())
    if len(mail.unread) > UNREAD_SHOWN:
        rest = len(mail.unread) - UNREAD_SHOWN
        lines += ["#", f"# and {rest} more block{'s' if rest > 1 else ''} not read: iolab mail lists them"]
    return lines


def _mail_lines(mail: FromMail, fs: str, timing: str) -> tuple[list[str], list[str], list[str]]:
    """The mail's [[workload]] tables, its [claims] and [[collect.phase]] lines, as TOML lines."""
    bench = mail.benchmark
    matched = from_mail.match(mail.claims, bench.workloads)
    workloads: list[str] = []
    for workload in bench.workloads:
        claimed = [m.metric for m in matched if m.workload == workload.name]
        table = from_mail.workload_table(workload, fs, claimed, bench.environment)
        workloads += ["", f"[[workload]]         # the mail's benchmark ({workload.origin}): "
                      f"{_cut(workload.source, 60)}",
                      *(f"{k} = {_toml(v)}" for k, v in table.items())]
    phases: list[str] = []
    if bench.environment.checkpoint:
        for phase in from_mail.CHECKPOINT_PHASES.get(fs, []):
            phases += ["", "[[collect.phase]]", *(f"{k} = {_toml(v)}" for k, v in phase.items())]
    devices = from_mail.device_note(bench)
    missing = list(bench.not_reproduced)
    scaled = [*bench.scaled, *devices]
    if timing == "instructions" and any(w.job is not None or (w.probe or {}).get("mode") == "batch"
                                        for w in bench.workloads):  # the run cuts these op counts further
        scaled.append("instructions mode: fio's I/Os and libMicro's batches cut further to what a count needs "
                      "(the report's header says how far)")
    if not (matched or scaled or missing or bench.refused):
        return workloads, [], phases
    claims = ["", "[claims]             # the mail's claim: the report sets iolab's delta beside each row",
              f"source = {_toml(mail.source[:300])}", f"scaled = {_toml(scaled)}",
              f"not_reproduced = {_toml(missing)}", f"refused = {_toml(list(bench.refused))}"]
    for m in matched:
        claims += ["", "[[claims.row]]", *(f"{k} = {_toml(v)}" for k, v in _row(m).items() if v or k not in _SPARE)]
    return workloads, claims, phases


def _threads(workload: MailWorkload) -> int:
    """How many threads a mail's workload runs (probe workers, fio numjobs, an SQPOLL kernel thread)."""
    if workload.probe is not None:
        return int(workload.probe.get("workers", 1))
    sqpoll = 2 if re.search(r"^\s*sqthread_poll\b", workload.job or "", re.M) else 1  # and the SQPOLL thread
    return max([job.numjobs for job in fio_jobs.jobs(workload.job or "")] + [sqpoll])


def _chosen(selection: Selection, mail: FromMail | None, timing: str) -> tuple[str, list[Chosen], list[str]]:
    """The target's filesystem, the library's workloads that run on it, and those left out (and why)."""
    chosen = selection.chosen
    fs = chosen[0].area.fs if chosen else "ext4"
    if mail is not None and mail.benchmark.environment.fs:
        fs = mail.benchmark.environment.fs
        chosen = [c for c in chosen if c.area.fs == fs or (fs != "erofs" and c.area.fs == "none")]
    skipped = []
    if fs != "erofs":
        skipped = [f"{c.workload.name}: erofs workloads need an erofs target; run them in an experiment "
                   "of their own" for c in chosen if c.area.fs == "erofs"]
        chosen = [c for c in chosen if c.area.fs != "erofs"]
    # a workload whose counts do not repeat gets the rounds a test needs; one that spreads beyond LEAVE_OUT
    # stays out, unless nothing else is left
    far = [c for c in chosen if wild(c.workload, "instructions")] if timing == "instructions" else []
    if len(far) < len(chosen) or (far and mail is not None and mail.benchmark.workloads):  # others are left
        skipped += [repeat_note(c.workload, "instructions") + "; left out of this run" for c in far]
        chosen = [c for c in chosen if c not in far]
    return fs, chosen, skipped


def _why(infos: list[PatchInfo], chosen: list[Chosen], selection: Selection, skipped: list[str], command: str,
         mailed: bool) -> list[str]:
    """The comment at the experiment's top: what wrote it, the patches' files, and why each workload."""
    lines = [f"# Written by: {command}"]
    if mailed:
        lines += ["# The primary workloads are the mail's own benchmark; the workloads iolab's library",
                  "# (iolab/workloads/areas/) chose for the files these patches touch are exploratory rows."]
    else:
        lines += ["# The workloads iolab's library (iolab/workloads/areas/) chose for the files these",
                  "# patches touch."]
    lines += ["# Edit freely, then: iolab run THIS-FILE", "#"]
    for info in infos:
        files = ", ".join(f"{name} ({', '.join(dict.fromkeys(info.functions.get(name, ()))) or '-'})"
                          for name in info.files)
        lines.append(f"#   {info.path.name}: {files}")
    for c in chosen:
        lines.append(f"#   chose {c.workload.name!r} ({c.area.area}, {c.workload.kind}): {c.reason}")
        lines.append(f"#     {c.workload.why}")
    for name in selection.unknown:
        lines.append(f"#   {name}: in no area of the library (no workload chosen for it)")
    for note in skipped:
        lines.append(f"#   left out {note}")
    return lines


# The rounds a claimed row may take in instructions mode, where values that vary need a test: twice
# the fewest at which the paired signed-rank test can decide one comparison at p < 0.05 (6)
CLAIMS_ROUNDS = 2 * fewest_rounds(PAIRED, 0.05)


def _run_and_vm(timing: str, unrepeated: list[Chosen], mail: FromMail | None) -> list[str]:
    """The [run] and [vm] tables: the rounds the workloads need, and the VM's disk."""
    lines = ["", "[run]"]
    threaded = [w.name for w in (mail.benchmark.workloads if mail is not None else ()) if _threads(w) > 1]
    if timing == "instructions" and unrepeated:
        lines += [f"# {', '.join(c.workload.name for c in unrepeated)}: its counts do not repeat in instructions",
                  f"# mode (the library's A/A): {REPEAT_ROUNDS} rounds, the fewest a paired test decides at p < 0.05",
                  f"iterations = {REPEAT_ROUNDS}", 'order = "alternate"']
    elif timing == "instructions" and threaded:
        lines += [f"# {', '.join(threaded)}: several threads interleave differently from boot to boot, so",
                  "# its counts vary: 6 rounds, the fewest a paired test decides at p < 0.05",
                  "iterations = 6", 'order = "alternate"']
    elif timing == "instructions":
        lines += ['iterations = 3          # instructions timing: each value exact, 3 rounds show it',
                  'order = "alternate"']
    else:
        lines += ['iterations = "auto"     # wall timing: rounds added while a comparison is open',
                  "min_iterations = 8", "max_iterations = 16"]
    if timing == "instructions" and mail is not None and mail.claims:
        lines += [f"claims_rounds = {CLAIMS_ROUNDS}      # then a round at a time while a claimed row is undecided, "
                  f"up to {CLAIMS_ROUNDS}"]
    lines += ["", "[vm]"]
    if timing == "instructions":
        lines.append('timing = "instructions"')
    null_blk = mail is not None and mail.benchmark.environment.device == "null_blk"
    disk = ['disk = "null_blk"       # the mail\'s /dev/nullb0: the guest\'s null_blk' if null_blk else
            'disk = "ram"            # the image in the guest\'s memory']
    need = device.need_of(mail.benchmark.environment.device if mail is not None else None,
                          [w.job for w in mail.benchmark.workloads if w.job] if mail is not None else [])
    table = device.vm_table(need, timing) if need.polled or need.kind == "rotational" else {}
    if table:  # a loop device does not poll (fio: "Operation not supported"); instructions see no disk's time
        disk = [f"disk = {_toml(table['disk'])}" + " " * max(1, 17 - len(table["disk"]))
                + f"# the mail's device: {need.words()}"]
        disk += [f"model = {_toml(table['model'])}"] if "model" in table else []
    return lines + ["cpus = 1", 'memory = "2GiB"', *disk, "cells_per_boot = 8", 'timeout = "10m"', ""]


def compose(infos: list[PatchInfo], selection: Selection, *, source: str, in_source: list[bool],
            base_dir: Path | None, timing: str, command: str, mail: FromMail | None = None,
            title: str | None = None, other_forms: dict[Path, Path] | None = None,
            commit: str | None = None) -> Composed:
    """The experiment's TOML text, named ``title`` (the mail's) when given;
    its paths relative to ``base_dir``, where it is written, or absolute for
    None (iolab.mail.files.named). ``other_forms``: for a patch the source has
    in another form, the file of that form, which the base takes out in its stead;
    ``commit``: with a git tree as the source, the commit."""
    fs, chosen, skipped = _chosen(selection, mail, timing)
    unrepeated = [c for c in chosen if repeat_note(c.workload, "instructions")] if timing == "instructions" else []
    reverse = [(other_forms or {}).get(info.path, info.path) for info, inside in zip(infos, in_source) if inside][::-1]
    mailed = mail is not None and bool(mail.benchmark.workloads)
    lines = _why(infos, chosen, selection, skipped, command, mailed)
    first = infos[0].title or infos[0].path.name
    name = first if len(infos) == 1 else f"{first} (and {counted(len(infos) - 1, 'more patch', 'more patches')})"
    name = title[:200] if title else name[:180] + ": patch by patch"
    lines += ["", f"name = {_toml(name)}", "", "[kernel]", f"source = {_toml(source)}"]
    lines += [f"commit = {_toml(commit)}"] if commit else []
    if reverse:
        lines.append("# already in the source (or in another form: *.in-source.patch): the base is the source "
                     "with them taken out")
        lines.append(f"reverse = {_toml([named(p, base_dir) for p in reverse])}")
    lines += ["", "[series]", f"patches = {_toml([named(i.path, base_dir) for i in infos])}"]
    size = max([SIZE, MIN_SIZE[fs]] + [MIN_SIZE[c.area.fs] for c in chosen])
    lines += ["", "[target]", 'kind = "loop"', f"fs = {_toml(fs)}", f'size = "{size >> 20}MiB"']
    for erofs_file in chosen[0].area.files if fs == "erofs" else []:
        lines += ["", "[[target.files]]", *(f"{k} = {_toml(v)}" for k, v in
                                            erofs_file.model_dump(exclude_defaults=False).items())]
    mail_workloads, mail_claims, phases = _mail_lines(mail, fs, timing) if mail is not None else ([], [], [])
    lines += mail_workloads
    same = [(w.probe, w.job) for w in mail.benchmark.workloads] if mail is not None else []
    for c in chosen:
        if (c.workload.probe, c.workload.job) in same:
            lines.insert(lines.index("") if "" in lines else len(lines),
                         f"#   left out {c.workload.name!r}: the mail's benchmark runs it")
            continue
        table = c.workload.table(c.area.fs, c.area.io)
        if mailed:
            table["exploratory"] = True
        lines += ["", "[[workload]]" + ("         # the library's, exploratory" if mailed else ""),
                  *(f"{k} = {_toml(v)}" for k, v in table.items())]
    tables = tomllib.loads("\n".join(lines)).get("workload", [])  # as written: the mail's and the library's
    lines += mail_claims + (_unread_rows(mail, tables) if mail is not None else [])
    lines += phases + _run_and_vm(timing, unrepeated, mail)
    return Composed("\n".join(lines), reverse, skipped)
