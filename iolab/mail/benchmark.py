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
from dataclasses import replace
from typing import Any

from iolab.engines.script import ALLOW as SCRIPT
from iolab.mail import templates
from iolab.mail.claimed import Claim
from iolab.mail.environment import SIZE, bytes_of, device_of, environment, unmapped
from iolab.mail.fio_text import command_lines, fio_command, option_lines, quoted_jobs, slug
from iolab.mail.jobs import MAX_JOB_SIZE as MAX_JOB_SIZE
from iolab.mail.jobs import MAX_JOBS as MAX_JOBS
from iolab.mail.jobs import SHARED_CPU, Found, Origin, judged, size_of
from iolab.mail.jobs import Benchmark as Benchmark
from iolab.mail.jobs import MailWorkload as MailWorkload
from iolab.units import format_size

MAX_OPS = 50_000  # probe ops per cell
MAX_FILES = 20_000  # churn files
LIBMICRO_CASES = ("write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k")  # iolab-probe batch mode's cases
LIBMICRO_BATCHES = 50


def _filled(name: str, command: str, sections: list[tuple[str, dict[str, str]]],
            mail: tuple[str, list[Claim]], found: Found, origin: Origin = "fio command line",
            raw: bool = False) -> None:
    """A command line written as a template (``-rw=$rw``, t/io_uring's ``-n $JOBS``): a job per value
    the mail gives, each tied to the rows that name its value; what is not mapped, said."""
    jobs, missing = templates.fill(sections, *mail)
    found.missing += [f"{name} ({origin}): {item}" for item in missing]
    for job in jobs:
        count = len(found.workloads)
        judged(slug(f"{name[:40]}-{'-'.join(job.values.values())}", 60), origin,
               f"{job.said}: {command}", job.sections, found, found.allow, raw=raw)
        found.workloads[count:] = [replace(w, rows=job.rows, template=templates.template(sections))
                                   for w in found.workloads[count:]]


# -- t/io_uring and dd ---------------------------------------------------------------------

# t/io_uring's options (its usage): the fio option each becomes; values 0/1 for the booleans
_IO_URING = {"d": "iodepth", "s": "iodepth_batch_submit", "c": "iodepth_batch_complete_min", "b": "bs",
             "p": "hipri", "B": "fixedbufs", "F": "registerfiles", "n": "numjobs", "O": "direct", "R": "rw"}
_IO_URING_MODES = ("N", "a", "S")  # no-op requests, libaio, sync I/O: each a bool, off by default
_IO_URING_DEFAULTS = {"d": "128", "s": "32", "c": "32", "b": "4096", "p": "1", "B": "1", "F": "1", "n": "1",
                      "O": "1", "R": "1"}


def _io_uring(command: str, name: str, found: Found, allow: tuple[str, ...], mail: tuple[str, list[Claim]]) -> None:
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
            if unmapped(word):  # the job would run on the VM's target, where what it measures is not
                found.missing.append(f"{name} (t/io_uring) on {word.rstrip(':,.;')}: {unmapped(word)}: not run")
                return
            if device:
                found.devices.append((device, word))
            elif word.startswith(("/", "./")):  # a file of the mail's: the job's file on iolab's target
                found.scaled.append(f"t/io_uring's file {word}: a file on iolab's target")
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
    raw = any(device_of(word) for word in words)
    if templates.variables([("t", options)]):  # -n $JOBS: a value per row that names one
        _filled(name, command, [(slug(name, 60), options)], mail, found, "t/io_uring", raw)
        return
    judged(name, "t/io_uring", command, [(slug(name, 60), options)], found, allow, raw=raw)


def _dd(command: str, name: str, found: Found, allow: tuple[str, ...]) -> None:
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
    block = size_of(bs.replace("K", "k"))
    if count and count.isdigit() and block:
        options["size"] = format_size(int(count) * block)
    judged(name, "dd", command, [(slug(name, 60), options)], found, allow, raw=device is not None)


# -- libMicro, recipes, prose ----------------------------------------------------------------


def _libmicro(text: str, found: Found) -> None:
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


def _recipe(text: str, found: Found) -> None:
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


def _script(steps: list[tuple[str, str]], found: Found) -> None:
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


def _prose(text: str, claims: list[Claim], found: Found, name: str) -> None:
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
            found.scaled.append(f"{threads.group(1)} threads -> {jobs} {SHARED_CPU}")
        for row, op in operations:
            options = {"rw": op[1:], "bs": str(block), "size": format_size(file_size), "numjobs": str(jobs),
                       "direct": "1" if direct and not buffered else "0", "ioengine": "psync"}
            judged(slug(row), "prose", source, [(slug(row), options)], found, ())
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
    found = Found(allow=allow)
    commands = command_lines(text, "fio", r"\s--?[A-Za-z]|\s\S+\.(?:fio|job|ini)\b")
    for k, command in enumerate(commands):
        sections, ignored = fio_command(command, name if len(commands) == 1 else f"{name}-{k + 1}")
        found.missing += [f"fio {item}" for item in ignored]
        if sections:
            job = sections[-1][0] if len(commands) > 1 else name
            if templates.variables(sections):
                _filled(job, command, sections, (text, claims), found)
            else:
                judged(job, "fio command line", command, sections, found, allow)
    for k, (source, sections) in enumerate(quoted_jobs(text)):
        judged(f"{name}-job{k + 1}" if k else f"{name}-job", "fio job", source, sections, found, allow)
    if not commands:
        for label, line, options in option_lines(text):
            job = f"{name}-{label}" if label else f"{name}-{len(found.workloads) + 1}"
            judged(slug(job, 60), "fio job", line, [(slug(job, 60), options)], found, allow)
    for command in command_lines(text, "t/io_uring", r"\s-[A-Za-z]|\s/dev/"):
        _io_uring(command, f"{name}-t-io_uring", found, allow, (text, claims))
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
    unique: list[MailWorkload] = []
    for workload in found.workloads:  # two forms may give one name; a command the mail gives twice is one
        if any(replace(workload, name=w.name, source=w.source) == w for w in unique):
            continue
        names[workload.name] = names.get(workload.name, 0) + 1
        suffix = f"-{names[workload.name]}" if names[workload.name] > 1 else ""
        unique.append(replace(workload, name=workload.name + suffix))
    return Benchmark(tuple(unique), env, tuple(dict.fromkeys(found.scaled)), tuple(dict.fromkeys(found.missing)),
                     tuple(dict.fromkeys(found.refused)))
