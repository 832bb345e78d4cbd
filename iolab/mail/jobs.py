"""A mail's fio jobs as iolab runs them: the workload and benchmark values, and the scaling and judging
every form of the benchmark shares (iolab.mail.benchmark reads the forms).

A job's sections are scaled to the VM (sizes, jobs, times; placement taken out: a file or device the mail
names is the target's, never opened), checked by iolab's option check (iolab.engines.fio_options: what an
experiment file may not do, unless the user allows it by name) and judged by fio's own parser
(``fio --parse-only``). What is scaled, refused or not reproduced is said, never dropped.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from typing import Any, Literal

from iolab.engines import fio_options
from iolab.mail.environment import Device, Environment, device_of, unmapped
from iolab.units import format_size, parse_size

Origin = Literal["fio command line", "fio job", "t/io_uring", "dd", "libMicro", "recipe", "prose"]

MAX_JOB_SIZE = 64 << 20  # bytes of one fio job's files
MAX_JOBS = 4  # fio numjobs, dd/prose threads
# the experiment iolab patch writes has a VM of 1 vCPU (iolab.workloads.compose): a mail's jobs take turns on it
SHARED_CPU = "(taking turns on the VM's 1 vCPU)"

PLACEMENT = {"filename", "directory", "opendir", "filename_format"}
# the CPUs of the mail's machine: the VM iolab patch writes has one (a job pinned to CPU 1 would fail there)
_CPUS = {"cpus_allowed", "cpumask", "cpus_allowed_policy", "numa_cpu_nodes", "numa_mem_policy"}
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
    rows: tuple[str, ...] = ()  # a template's job (iolab.mail.templates): the claim's rows it is for, only them
    template: str = ""  # the template's options as the mail wrote them ("rw=$rw")


@dataclass(frozen=True)
class Benchmark:
    workloads: tuple[MailWorkload, ...]
    environment: Environment
    scaled: tuple[str, ...]  # each figure scaled to the VM: "numjobs 16 -> 4"
    not_reproduced: tuple[str, ...]  # "what: why"
    refused: tuple[str, ...]  # options refused by the experiment file's checks, and how to allow them


# -- fio -----------------------------------------------------------------------------------


@dataclass
class Found:
    workloads: list[MailWorkload] = field(default_factory=list)
    scaled: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    devices: list[tuple[Device, str]] = field(default_factory=list)
    allow: tuple[str, ...] = ()  # option names the user allows (iolab patch --allow)


def _scale_job(sections: list[tuple[str, dict[str, str]]], found: Found) -> list[tuple[str, dict[str, str]]]:
    """The sections with placement taken out and sizes, jobs and times scaled to the VM."""
    out: list[tuple[str, dict[str, str]]] = []
    for name, options in sections:
        kept: dict[str, str] = {}
        for key, value in options.items():
            key = key.strip()
            verdict = fio_options.judge(key, value) if key not in PLACEMENT else None
            if verdict is not None and (verdict[1] is None or verdict[1] not in found.allow):
                how = f" (iolab patch --allow {verdict[1]} runs it)" if verdict[1] else ""
                found.refused.append(f"[{name}] {key}{'=' + value if value else ''}: {verdict[0]}{how}")
                continue
            if key in PLACEMENT:
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
            if key in ("sqthread_poll", "sqpoll") and value in ("", "1", "true"):
                found.scaled.append(f"[{name}] sqthread_poll: the SQ thread and fio, which polls for its completions, "
                                    "take turns on the VM's 1 vCPU (on the mail's machine each has a CPU): the rate is "
                                    "set by their turns, not by the SQ thread's work alone")
            if key in _CPUS:
                found.scaled.append(f"[{name}] {key}={value} -> left out (the mail's CPUs; the VM has 1 vCPU)")
                continue
            if key in _TIME_BOUND:
                if key == "runtime":
                    found.scaled.append(f"[{name}] runtime={value} -> size-bound (the VM's clock)")
                continue
            if key in ("size", "io_size", "filesize"):
                size = size_of(value)
                if size is not None and size > MAX_JOB_SIZE:
                    found.scaled.append(f"[{name}] {key}={value} -> {format_size(MAX_JOB_SIZE)}")
                    value = format_size(MAX_JOB_SIZE)
            if key == "numjobs" and value.isdigit() and int(value) > MAX_JOBS:
                found.scaled.append(f"[{name}] numjobs={value} -> {MAX_JOBS} {SHARED_CPU}")
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


def size_of(text: str) -> int | None:
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


def judged(name: str, origin: Origin, source: str, sections: list[tuple[str, dict[str, str]]],
            found: Found, allow: tuple[str, ...], raw: bool = False) -> None:
    """The job, if iolab's checks and fio's parser take it; else why not, listed. ``raw``:
    it names a device (so does a filename= of a device in its sections)."""
    named = len(found.devices)
    elsewhere = [(value, unmapped(value)) for _, options in sections for key, value in options.items()
                 if key in PLACEMENT and unmapped(value)]
    if elsewhere:  # the job would run on the VM's target, where what it measures is not
        found.missing += [f"{name} ({origin}) on {device}: {why}: not run" for device, why in elsewhere]
        return
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
