"""The benchmark a patch mail describes, as workloads iolab runs.

From the mail's text (cover and descriptions, never the diff) this reads,
in order of how exactly the mail says it:

- fio command lines (``fio --name=x --rw=randread ...``, wrapped with ``\\``
  or over lines that start with ``--``): options before the first
  ``--name`` are ``[global]``, each ``--name`` starts a job;
- fio job files quoted in the body (``[section]`` then ``option=value``);
- ``t/io_uring`` invocations, mapped onto fio's io_uring engine (depth,
  submit and complete batches, polling, fixed buffers, registered files,
  O_DIRECT, threads; random reads as t/io_uring does by default);
- ``dd if=... of=... bs=... count=...`` as a sequential fio job;
- libMicro case names (``write_u1k``, ``pwrite_u10k``): iolab-probe's batch mode;
- a shell recipe of metadata churn (create N files with W workers, sync,
  delete 1 in K, drop caches, sync): iolab-probe's churn mode, the last
  sync timed;
- prose that only names parameters (block size, file size, O_DIRECT or
  buffered, threads, iterations, "low memory"), with the operations the
  claim's rows name (``direct_read``, ``direct_write``).

fio's own parser judges every fio job (``fio --parse-only``); iolab's option
check (iolab.engines.fio_options) refuses what an experiment file may not
do (run a program, write outside the target) unless the user allows it by
name. Placement is iolab's: a file or device the mail names is mapped onto
what a VM here offers (Environment.device), never opened. Sizes, threads,
counts and runtimes are scaled to the VM (Scaled notes say how). What cannot
be mapped is listed in ``not_reproduced`` with the reason, never dropped.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from iolab.engines import fio_options
from iolab.engines.script import ALLOW as SCRIPT
from iolab.mail.claimed import Claim
from iolab.mail.environment import SIZE, Device, Environment, bytes_of, device_of, environment
from iolab.mail.fio_text import command_lines, fio_command, option_lines, quoted_jobs, slug
from iolab.units import format_size, parse_size

Origin = Literal["fio command line", "fio job", "t/io_uring", "dd", "libMicro", "recipe", "prose"]

MAX_JOB_SIZE = 64 << 20  # bytes of one fio job's files
MAX_JOBS = 4  # fio numjobs, dd/prose threads
# the experiment iolab patch writes has a VM of 1 vCPU (iolab.workloads.compose): a mail's jobs take turns on it
_SHARED_CPU = "(taking turns on the VM's 1 vCPU)"
MAX_OPS = 50_000  # probe ops per cell
MAX_FILES = 20_000  # churn files
LIBMICRO_CASES = ("write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k")  # iolab-probe batch mode's cases
LIBMICRO_BATCHES = 50

_PLACEMENT = {"filename", "directory", "opendir", "filename_format"}
# time-bound options dropped for a size-bound job (the VM's clock, or instructions, would make them long)
_TIME_BOUND = {"runtime", "time_based", "ramp_time"}


@dataclass(frozen=True)
class MailWorkload:
    name: str
    origin: Origin
    source: str  # the mail's words it came from (one line)
    job: str | None = None  # fio job text
    probe: dict[str, Any] | None = None  # iolab-probe parameters
    raw: bool = False  # on the raw device (fs = "none")
    memory_max: int | None = None
    primary: tuple[str, ...] = ()
    script: str | None = None  # a shell recipe iolab does not map, run as written (only with --allow script)


@dataclass(frozen=True)
class Benchmark:
    workloads: tuple[MailWorkload, ...]
    environment: Environment
    scaled: tuple[str, ...]  # each figure scaled to the VM: "numjobs 16 -> 4"
    not_reproduced: tuple[str, ...]  # "what: why"
    refused: tuple[str, ...]  # options refused by the experiment file's checks, and how to allow them


# -- fio -----------------------------------------------------------------------------------


@dataclass
class _Found:
    workloads: list[MailWorkload] = field(default_factory=list)
    scaled: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    devices: list[tuple[Device, str]] = field(default_factory=list)
    allow: tuple[str, ...] = ()  # option names the user allows (iolab patch --allow)


def _scale_job(sections: list[tuple[str, dict[str, str]]], found: _Found) -> list[tuple[str, dict[str, str]]]:
    """The sections with placement taken out and sizes, jobs and times scaled to the VM."""
    out: list[tuple[str, dict[str, str]]] = []
    for name, options in sections:
        kept: dict[str, str] = {}
        for key, value in options.items():
            key = key.strip()
            verdict = fio_options.judge(key, value) if key not in _PLACEMENT else None
            if verdict is not None and (verdict[1] is None or verdict[1] not in found.allow):
                how = f" (iolab patch --allow {verdict[1]} runs it)" if verdict[1] else ""
                found.refused.append(f"[{name}] {key}{'=' + value if value else ''}: {verdict[0]}{how}")
                continue
            if key in _PLACEMENT:
                device = device_of(value)
                if device:
                    found.devices.append((device, value))
                shared = _shared_file(key, value, options, sections) if device is None else None
                if shared:
                    kept[key] = shared
                    if shared != value:
                        found.scaled.append(f"[{name}] {key}={value} -> {shared} (on the target: its jobs share "
                                            "it, as the mail's do)")
                continue
            if key in _TIME_BOUND:
                if key == "runtime":
                    found.scaled.append(f"[{name}] runtime={value} -> size-bound (the VM's clock)")
                continue
            if key in ("size", "io_size", "filesize"):
                size = _size(value)
                if size is not None and size > MAX_JOB_SIZE:
                    found.scaled.append(f"[{name}] {key}={value} -> {format_size(MAX_JOB_SIZE)}")
                    value = format_size(MAX_JOB_SIZE)
            if key == "numjobs" and value.isdigit() and int(value) > MAX_JOBS:
                found.scaled.append(f"[{name}] numjobs={value} -> {MAX_JOBS} {_SHARED_CPU}")
                value = str(MAX_JOBS)
            kept[key] = value
        if name != "global" and not any(k in kept for k in ("size", "io_size", "filesize")):
            has_global = any(n == "global" and ("size" in o or "io_size" in o) for n, o in out)
            if not has_global:
                kept["size"] = format_size(MAX_JOB_SIZE)
                found.scaled.append(f"[{name}] size={format_size(MAX_JOB_SIZE)} (the mail gives none: the VM's room)")
        out.append((name, kept))
    return out


def _shared_file(key: str, value: str, options: dict[str, str],
                 sections: list[tuple[str, dict[str, str]]]) -> str | None:
    """The file name, under the target, of a filename= that several jobs share (numjobs > 1,
    or [global]'s): its last component where the mail gives a path; None where iolab places the files."""
    jobs = options.get("numjobs") or next((o.get("numjobs", "") for n, o in sections if n == "global"), "")
    if key != "filename" or not (options is sections[0][1] and sections[0][0] == "global"
                                 or jobs.isdigit() and int(jobs) > 1):
        return None
    names = [part.rstrip("/").rsplit("/", 1)[-1] for part in re.split(r"(?<!\\):", value)]
    return ":".join(names) if all(re.fullmatch(r"[\w.+-]+", n) and n not in (".", "..") for n in names) else None


def _size(text: str) -> int | None:
    try:
        return parse_size(text.strip())
    except ValueError:
        return None


def _job_text(sections: list[tuple[str, dict[str, str]]]) -> str:
    lines = []
    for name, options in sections:
        lines.append(f"[{name}]")
        lines += [f"{k}={v}" if v != "" else k for k, v in options.items()]
    return "\n".join(lines) + "\n"


def _judged(name: str, origin: Origin, source: str, sections: list[tuple[str, dict[str, str]]],
            found: _Found, allow: tuple[str, ...], raw: bool = False) -> None:
    """The job, if iolab's checks and fio's parser take it; else why not, listed. ``raw``:
    it names a device (so does a filename= of a device in its sections)."""
    named = len(found.devices)
    sections = _scale_job(sections, found)
    job = _job_text(sections)
    raw = raw or len(found.devices) > named
    findings = [f for f in fio_options.findings(job, raw_device=False) if f.allow not in allow or f.allow is None]
    if findings:
        for finding in findings:
            how = f" (iolab patch --allow {finding.allow} runs it)" if finding.allow else ""
            found.refused.append(f"{name}: {finding.where}: {finding.reason}{how}")
        return
    refusal = parse_refusal(job)
    if refusal:
        found.missing.append(f"{name} ({origin}): fio refuses the job: {refusal}")
        return
    found.workloads.append(MailWorkload(name, origin, source[:200], job=job, raw=raw))


def parse_refusal(job: str) -> str | None:
    """fio's own words if ``fio --parse-only`` refuses the job, else None (also without fio here)."""
    if shutil.which("fio") is None:
        return None
    from iolab.engines import fio

    return fio.parse_refusal(job, "fio")


# -- t/io_uring and dd ---------------------------------------------------------------------

# t/io_uring's options (its usage): the fio option each becomes; values 0/1 for the booleans
_IO_URING = {"d": "iodepth", "s": "iodepth_batch_submit", "c": "iodepth_batch_complete_min", "b": "bs",
             "p": "hipri", "B": "fixedbufs", "F": "registerfiles", "n": "numjobs", "O": "direct", "R": "rw"}
_IO_URING_MODES = ("N", "a", "S")  # no-op requests, libaio, sync I/O: each a bool, off by default
_IO_URING_DEFAULTS = {"d": "128", "s": "32", "c": "32", "b": "4096", "p": "1", "B": "1", "F": "1", "n": "1",
                      "O": "1", "R": "1"}


def _io_uring(command: str, name: str, found: _Found, allow: tuple[str, ...]) -> None:
    try:
        words = shlex.split(command)[1:]
    except ValueError:
        found.missing.append(f"{command[:60]}: not a command line")
        return
    given = dict(_IO_URING_DEFAULTS)
    modes = []  # no-op, aio and sync modes the command turns on (-N1, -a1, -S1: not fio's io_uring)
    unknown = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            continue
        if re.fullmatch(r"-[A-Za-z]", word) and i + 1 < len(words):
            flag, value = word[1], words[i + 1]
            i += 2
        elif re.fullmatch(r"-[A-Za-z]\S+", word):
            flag, value = word[1], word[2:]
            i += 1
        else:
            device = device_of(word)
            if device:
                found.devices.append((device, word))
            elif word.startswith(("/", "./")):
                unknown.append(f"{word} (a file)")
            else:
                break  # the sentence goes on
            i += 1
            continue
        if flag in _IO_URING:
            given[flag] = value
        elif flag in _IO_URING_MODES:
            modes += [f"-{flag} {value}"] if value != "0" else []  # -N0: explicitly off, as by default
        elif flag not in ("t", "T", "r", "X", "P"):  # latency tracking, TSC rate, runtime, ring fd, NUMA home
            unknown.append(f"-{flag} {value}")
    if modes:
        found.missing.append(f"t/io_uring {' '.join(modes)}: no-op, aio or sync modes are not fio's io_uring")
        return
    if unknown:
        found.missing.append(f"t/io_uring: {', '.join(unknown)}: not mapped onto fio")
    options = {"ioengine": "io_uring", "thread": ""}
    for flag, key in _IO_URING.items():
        value = given[flag]
        if key == "rw":
            options["rw"] = "randread" if value != "0" else "read"
        elif key in ("hipri", "fixedbufs", "registerfiles"):
            if value != "0":
                options[key] = ""
        else:
            options[key] = value
    _judged(name, "t/io_uring", command, [(slug(name, 60), options)], found, allow,
            raw=any(device_of(word) for word in words))


def _dd(command: str, name: str, found: _Found, allow: tuple[str, ...]) -> None:
    args = dict(word.split("=", 1) for word in command.split()[1:] if "=" in word)
    source, target = args.get("if", ""), args.get("of", "")
    flags = set(args.get("iflag", "").split(",")) | set(args.get("oflag", "").split(","))
    written = set(args.get("oflag", "").split(","))
    conv = set(args.get("conv", "").split(","))
    if source.startswith(("/dev/zero", "/dev/urandom")) or (not source and target):
        rw, place = "write", target
    elif target in ("/dev/null", "") and source:
        rw, place = "read", source
    else:
        found.missing.append(f"{command[:80]}: a copy from one file to another is not a job iolab runs")
        return
    device = device_of(place)
    if device:
        found.devices.append((device, place))
    bs = args.get("bs", "512")
    count = args.get("count")
    options = {"rw": rw, "bs": bs, "ioengine": "psync"}
    if "direct" in flags:
        options["direct"] = "1"
    if rw == "write" and written & {"sync", "dsync"}:  # each write synchronous: O_SYNC, or O_DSYNC
        options["sync"] = "dsync" if "dsync" in written and "sync" not in written else "1"
    if rw == "write" and conv & {"fsync", "fdatasync"}:  # the data synced once, before dd ends
        options["end_fsync"] = "1"
    block = _size(bs.replace("K", "k"))
    if count and count.isdigit() and block:
        options["size"] = format_size(int(count) * block)
    _judged(name, "dd", command, [(slug(name, 60), options)], found, allow, raw=device is not None)


# -- libMicro, recipes, prose ----------------------------------------------------------------


def _libmicro(text: str, found: _Found) -> None:
    named = list(dict.fromkeys(re.findall(r"\b(p?(?:write|read)_[a-z]\d+k?)\b", text)))
    for case in named:
        if case in LIBMICRO_CASES:
            found.workloads.append(MailWorkload(case, "libMicro", case, probe={
                "mode": "batch", "case": case, "batches": LIBMICRO_BATCHES}))
        else:
            found.missing.append(f"libMicro {case}: iolab-probe's batch mode has {', '.join(LIBMICRO_CASES)}")
    if named and "libmicro" in text.lower():
        found.scaled.append(f"libMicro: {LIBMICRO_BATCHES} batches per cell (libMicro's default: 200)")


_STEP_WORDS = (
    ("create", r"\btouch\b|\bcreat(?:e|ing)\b.*\bfiles?\b"),
    ("delete", r"\b(?:delete|remove|unlink|rm)\b"),
    ("drop_caches", r"drop_caches"),
    ("sync", r"\bsync\b"),
)


def _recipe(text: str, found: _Found) -> None:
    """A numbered shell recipe of creates, syncs, deletes and cache drops: iolab-probe's churn."""
    steps = re.findall(r"(?:^|\s)(\d)\.\s+(.+?)(?=\s\d\.\s|\n\s*\n|$)", text, re.S)
    if len(steps) < 3:
        return
    phases: list[tuple[str, str]] = []
    for _, step in steps:
        step = step.split(" This ")[0].split("\n\n")[0]
        kind = next((k for k, pattern in _STEP_WORDS if re.search(pattern, step.split("#")[0], re.I)), None)
        if kind is None:
            if phases:
                break  # the recipe ended
            _script(steps, found)
            return
        phases.append((kind, step.strip()))
    if not any(kind == "create" for kind, _ in phases):
        _script(steps, found)
        return
    words = " ".join(step for _, step in phases)
    files = re.search(r"\bseq\s+\d+\s+(\d+)|(\d[\d,]*)\s+files", words)
    workers = re.search(r"-P\s*(\d+)|(\d+)\s+(?:workers|threads|jobs)", words)
    every = re.search(r"every\s+(\d+)(?:th|st|nd|rd)?", words)
    probe: dict[str, Any] = {"mode": "churn", "phases": ",".join(kind for kind, _ in phases),
                             "report_phase": phases[-1][0]}
    if files:
        count = int((files.group(1) or files.group(2)).replace(",", ""))
        if count > MAX_FILES:
            found.scaled.append(f"files {count} -> {MAX_FILES} (the VM: emulated, 1-2 vCPUs)")
        probe["files"] = min(count, MAX_FILES)
    if workers:
        probe["workers"] = int(workers.group(1) or workers.group(2))
    if every and any(kind == "delete" for kind, _ in phases):
        probe["delete_every"] = int(every.group(1))
    found.workloads.append(MailWorkload("churn", "recipe", words[:200], probe=probe))


_SHELL = re.compile(r"[|;&>]|\$\(|^\./")


_STOPWORDS = {"the", "a", "an", "at", "of", "to", "and", "is", "it", "in", "on", "for", "with", "that", "this"}


def _command(step: str) -> bool:
    """A recipe step that is a shell command: shell syntax in it, or its
    first word a program on this machine's PATH and the rest not a sentence
    ("look at the time the sync took" is prose though look(1) exists)."""
    text = step.split("#")[0]
    words = text.split()
    if not words:
        return False
    if _SHELL.search(text):
        return True
    return shutil.which(words[0]) is not None and sum(w.lower() in _STOPWORDS for w in words[1:]) < 2


def _script(steps: list[tuple[str, str]], found: _Found) -> None:
    """A numbered recipe of shell commands iolab does not map: listed as not
    reproduced, or, when the user allows it by name (--allow script), run as
    written, its prose steps left out and named."""
    texts = [" ".join(step.split("\n\n")[0].split()) for _, step in steps]
    commands = [text for text in texts if _command(text)]
    if len(commands) * 2 < len(texts):
        return  # a numbered list of prose, not a recipe
    first = commands[0] if len(commands[0]) <= 40 else commands[0][:37] + "..."
    if SCRIPT not in found.allow:
        found.missing.append(f"the recipe '{first}' ({len(texts)} steps): its commands map onto no iolab "
                             f"workload; iolab patch --allow {SCRIPT} runs it as a shell script")
        return
    for number, text in zip((n for n, _ in steps), texts):
        if text not in commands:
            found.missing.append(f"recipe step {number} '{text[:40]}': prose, not a command: left out of the script")
    found.workloads.append(MailWorkload("recipe", "recipe", " ; ".join(commands)[:200],
                                        script="\n".join(commands) + "\n"))


def _prose(text: str, claims: list[Claim], found: _Found, name: str) -> None:
    """A workload from parameters the prose names, with the operations the claim's rows name."""
    bs = re.search(rf"\b{SIZE}\s*(?:O_DIRECT|direct|buffered|random|sequential|I/O|IO|reads?|writes?|blocks?)",
                   text)
    size = re.search(rf"\b{SIZE}\s+(?:\w+\s+)?file", text)
    threads = re.search(r"\b(\d+)\s+(?:threads|jobs|processes|readers|writers)\b", text)
    ops = re.search(r"\b(\d[\d,]*)\s+(?:iterations|ops|operations|I/Os|IOs)\b", text)
    direct = re.search(r"O_DIRECT|\bdirect I/O\b|\bDIO\b", text)
    buffered = re.search(r"\bbuffered\b", text, re.I)
    named = sum(bool(x) for x in (bs, size, threads, ops, direct or buffered))
    if named < 2:
        return
    rows = list(dict.fromkeys(c.label.split()[0] for c in claims if re.search(r"read|write", c.label.split()[0])))
    operations = [(row, "pwrite" if "write" in row.lower() else "pread") for row in rows]
    if not operations:
        verbs = [op for op in ("read", "write") if re.search(rf"\b{op}s?\b", text, re.I)]
        operations = [(f"{name[:30]} {op}", f"p{op}") for op in verbs]
    if not operations:
        return
    source = " ".join(m.group(0) for m in (bs, size, threads, ops, direct) if m)
    block = bytes_of(bs.group(1), bs.group(2)) if bs else 4096
    file_size = bytes_of(size.group(1), size.group(2)) if size else MAX_JOB_SIZE
    if file_size > MAX_JOB_SIZE:
        found.scaled.append(f"file size {format_size(file_size)} -> {format_size(MAX_JOB_SIZE)}")
        file_size = MAX_JOB_SIZE
    count = int(ops.group(1).replace(",", "")) if ops else 10_000
    if count > MAX_OPS:
        found.scaled.append(f"{count} ops -> {MAX_OPS}")
        count = MAX_OPS
    if threads and int(threads.group(1)) > 1:  # several threads: fio, which runs them
        jobs = min(int(threads.group(1)), MAX_JOBS)
        if jobs < int(threads.group(1)):
            found.scaled.append(f"{threads.group(1)} threads -> {jobs} {_SHARED_CPU}")
        for row, op in operations:
            options = {"rw": op[1:], "bs": str(block), "size": format_size(file_size), "numjobs": str(jobs),
                       "direct": "1" if direct and not buffered else "0", "ioengine": "psync"}
            _judged(slug(row), "prose", source, [(slug(row), options)], found, ())
        return
    for row, op in operations:
        found.workloads.append(MailWorkload(slug(row), "prose", source, probe={
            "mode": "lat", "op": op, "bs": format_size(block).replace("KiB", "k").replace("MiB", "M"),
            "file_size": format_size(file_size).replace("MiB", "M").replace("KiB", "k"),
            "direct": bool(direct) and not buffered, "ops": count}))


_OTHER_BENCHMARKS = ("will-it-scale", "fsmark", "fs_mark", "dbench", "filebench", "sysbench", "postmark",
                     "xfstests", "fstests", "mmtests", "stress-ng", "vdbench", "iozone", "bonnie", "pgbench",
                     "rocksdb", "db_bench", "kernbench", "hackbench", "perf bench", "lmbench", "unixbench")


def benchmark(text: str, subject: str, claims: list[Claim], allow: tuple[str, ...] = ()) -> Benchmark:
    """The mail's benchmark: its workloads (most exact form first), environment and what is left out."""
    name = slug(re.sub(r"^\s*(?:Re:\s*)?(\[[^\]]*\]\s*)*", "", subject) or "mail", 40)
    found = _Found(allow=allow)
    commands = command_lines(text, "fio", r"\s--?[A-Za-z]|\s\S+\.(?:fio|job|ini)\b")
    for k, command in enumerate(commands):
        sections, ignored = fio_command(command, name if len(commands) == 1 else f"{name}-{k + 1}")
        found.missing += [f"fio {item}" for item in ignored]
        if sections:
            _judged(sections[-1][0] if len(commands) > 1 else name, "fio command line", command, sections, found,
                    allow)
    for k, (source, sections) in enumerate(quoted_jobs(text)):
        _judged(f"{name}-job{k + 1}" if k else f"{name}-job", "fio job", source, sections, found, allow)
    if not commands:
        for label, line, options in option_lines(text):
            job = f"{name}-{label}" if label else f"{name}-{len(found.workloads) + 1}"
            _judged(slug(job, 60), "fio job", line, [(slug(job, 60), options)], found, allow)
    for command in command_lines(text, "t/io_uring", r"\s-[A-Za-z]|\s/dev/"):
        _io_uring(command, f"{name}-t-io_uring", found, allow)
    for command in command_lines(text, "dd", r"\s(?:if|of)="):
        if " if=" in f" {command}" or " of=" in f" {command}":
            _dd(command, f"{name}-dd", found, allow)
    _libmicro(text, found)
    _recipe(text, found)
    if not found.workloads:
        _prose(text, claims, found, name)
    for other in _OTHER_BENCHMARKS:
        if re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", text, re.I):
            found.missing.append(f"{other}: not a benchmark iolab runs")
    env, missing = environment(text, subject, found.devices)
    found.missing += missing
    if env.memory_max is not None:
        found.workloads = [replace(w, memory_max=env.memory_max) for w in found.workloads]
    if env.checkpoint:
        found.workloads = [replace(w, primary=("phase.flush_last_ns",)) if w.origin == "recipe" else w
                           for w in found.workloads]
    names: dict[str, int] = {}
    unique = []
    for workload in found.workloads:  # two forms may give one name
        names[workload.name] = names.get(workload.name, 0) + 1
        suffix = f"-{names[workload.name]}" if names[workload.name] > 1 else ""
        unique.append(replace(workload, name=workload.name + suffix))
    return Benchmark(tuple(unique), env, tuple(dict.fromkeys(found.scaled)), tuple(dict.fromkeys(found.missing)),
                     tuple(dict.fromkeys(found.refused)))
