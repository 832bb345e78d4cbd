"""The fio engine: a user's job file, placed on the target, run with json+ output.

The job text is used as written. iolab only appends, at the end of every
job section, where the files go (``directory=`` the target's mount, or
``filename=`` the raw device) and the variant's fio options, so that they
override what the job says. Latency percentiles are computed from fio's
json+ histogram bins, which iolab also keeps for merging across iterations.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from iolab import histogram, process
from iolab.engines import fio_options
from iolab.engines.base import EngineError, EngineResult, WorkloadRun, version_of
from iolab.sysutil import last_lines, require

PERCENTILES = (50.0, 99.0, 99.9)  # of each direction's completion latency histogram
PER_DIRECTION = ("bw", "iops", "lat_mean", *(f"p{q:g}" for q in PERCENTILES))  # read_bw, write_p99, ...
EVERY_JOB = ("ios", "ctx", "cpu_usr", "cpu_sys", "cs_per_io")
SYNC = ("syncs", "sync_lat_mean", *(f"sync_p{q:g}" for q in PERCENTILES))  # a job's fsync/fdatasync calls
_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_OPTION = re.compile(r"^\s*([A-Za-z_][\w]*)\s*(?:=\s*(.*?))?\s*$")


class FioEngine:
    name = "fio"

    def __init__(self, binary: str = "fio"):
        self.binary = binary  # "fio" on PATH, or the path of a fio built from source

    def version(self) -> str:
        path = require(self.binary)
        return version_of(path, lambda: process.run_tool([self.binary, "--version"]).strip())

    def run(self, work: WorkloadRun) -> EngineResult:
        require(self.binary)
        job_path = work.workdir / "job.fio"
        placed = place_job(work.job, work.options, work.target.mountpoint, work.target.device, work.allow)
        job_path.write_text(placed)
        output = work.workdir / "fio.json"
        argv = [self.binary, "--output-format=json+", f"--output={output}", "--eta=never", str(job_path)]
        done = process.run(argv, cwd=work.workdir, preexec=work.preexec)
        text = output.read_text() if output.exists() else ""
        if done.returncode != 0:
            raise EngineError(f"fio exit {done.returncode}: {fio_error(done.stderr, text)}")
        report = load_report(text)
        result = parse_report(report, spans(placed, work.workdir))
        result.artefacts = {"fio.json": text, "job.fio": job_path.read_text()}
        return result


def sections(job: str) -> list[tuple[str, list[str]]]:
    """A job file's sections in order: (name, lines); lines before any section go under ''."""
    found: list[tuple[str, list[str]]] = [("", [])]
    for line in job.splitlines():
        match = _SECTION.match(line)
        if match:
            found.append((match.group(1).strip(), []))
        else:
            found[-1][1].append(line)
    return found


# Instructions mode: each job section stops after this many I/Os (fio's number_ios) unless it sets its own.
# Measured (bench/data/opcount-2026-11-26.txt, A/A of 7.2, 4 KiB random O_DIRECT reads of a 64 MiB file): the
# median completion latency was one bin in every boot at 2000, 8000 and all 16384 I/Os, and moved a bin in one
# boot of four at 500; the bandwidth moved by 0.3-3% between boots at any count (not exact at any).
INSTRUCTIONS_IOS = 2000
# Instructions mode: each job section that runs as one process writes fio's I/O log (version 3: each I/O's
# issue and each file's open and close, in us since the job began) to the cell's directory, and its bandwidth
# and IOPS are its bytes and I/Os over the span from its first I/O's issue to its files' close after the last
# completion (io_span_us), not over fio's runtime, which is whole milliseconds rounded up: a 10 ms job's rates
# fell on levels 10% apart (issue 36 item 7).
CLOCK_LOG = "iolab-clock.{index}.log"
_IO_ACTIONS = ("read", "write", "trim", "sync", "datasync")
LOOPING_IO_SIZE = "1P"  # io_size of a time-based job in instructions mode: far beyond any region, so number_ios stops it


def for_instructions(job: str) -> str:
    """A fio job whose job sections each stop after INSTRUCTIONS_IOS I/Os
    (number_ios), where a section or its [global] sets no number_ios, and
    that count I/Os instead of time (time_based=0: fio 3.33 does not stop a
    time-based job at number_ios, and a runtime on a clock that counts
    instructions is an instruction budget, not a count of I/Os): a guest's
    clock that counts instructions needs no more I/Os for its medians.
    A time-based job loops over its region until its time ends; so it does
    here until its I/O count (io_size beyond the region: fio wraps around,
    and number_ios stops it), where it sets no io_size of its own. Without
    that a 64 MiB region of 128 KiB writes stopped at 512 I/Os, a quarter
    of the count (and fio's loops= does not help: number_ios counts each
    loop apart, measured with fio 3.33 and 3.41)."""
    parsed = sections(job)

    def value(lines: list[str], option: str) -> str | None:
        found = [m.group(2) or "1" for line in lines if (m := _OPTION.match(line)) and m.group(1) == option]
        return found[-1] if found else None

    general = [line for name, lines in parsed if name.startswith("global") for line in lines]
    alone = sum(1 for name, _ in parsed if name and not name.startswith("global")) == 1
    out: list[str] = []
    index = 0
    for name, lines in parsed:
        if name:
            out.append(f"[{name}]")
        out.extend(lines)
        if not name or name.startswith("global"):
            continue
        added = []
        if value(general, "number_ios") is None and value(lines, "number_ios") is None:
            added.append(f"number_ios={INSTRUCTIONS_IOS}")
        if (value(lines, "time_based") or value(general, "time_based") or "0") not in ("0", "false"):
            added.append("time_based=0")
            if not any(value(where, option) for where in (general, lines) for option in ("io_size", "io_limit")):
                added.append(f"io_size={LOOPING_IO_SIZE}")
        if _clocked(general, lines, value, alone):
            added.append(f"write_iolog={CLOCK_LOG.format(index=index)}")
        index += 1
        if added:
            out += ["; iolab: instructions mode", *added]
    return "\n".join(out) + "\n"


def _clocked(general: list[str], lines: list[str], value: Callable[[list[str], str], str | None],
             alone: bool = False) -> bool:
    """Whether a job section gets the clock log: one process (numjobs 1: clones would share the log)
    reported alone (no group_reporting, or the file's only job section: a group of one job, as the
    SQPOLL mail's -numjobs=1 -group_reporting=1), and no I/O log of its own."""
    def setting(option: str) -> str | None:
        return value(lines, option) or value(general, option)
    return ((setting("numjobs") or "1") == "1" and (alone or setting("group_reporting") in (None, "0"))
            and not any(setting(option) for option in ("write_iolog", "read_iolog")))


def place_job(
    job: str, options: dict[str, object], mountpoint: str | None, device: str | None, allow: Collection[str] = ()
) -> str:
    """The job text with the target and the variant's options appended to each
    job section, after iolab.engines.fio_options has judged every line of it."""
    try:
        fio_options.check(job, options, raw_device=mountpoint is None, allow=allow)
    except fio_options.UnsafeJob as error:
        raise EngineError(f"fio job: {error}") from None
    parsed = sections(job)
    jobs = [name for name, _ in parsed if name and not name.startswith("global")]
    if not jobs:
        raise EngineError("fio job: no job section (a [name] other than [global])")
    appended = [f"directory={mountpoint}"] if mountpoint is not None else [f"filename={device}"]
    appended += [fio_options.option_line(key, value) for key, value in options.items()]
    out: list[str] = []
    for name, lines in parsed:
        if name:
            out.append(f"[{name}]")
        out.extend(lines)
        if name and not name.startswith("global"):
            out.append("; added by iolab")
            out.extend(appended)
    return "\n".join(out) + "\n"


def io_span_us(log: str) -> int | None:
    """From fio's I/O log (version 3), the us from its first I/O's issue to its
    last event (its files' close, after the last I/O completed); None where
    the log is not version 3 or holds no I/O."""
    lines = log.splitlines()
    if not lines or lines[0].strip() != "fio version 3 iolog":
        return None
    first = last = None
    for line in lines[1:]:
        parts = line.split()
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        io = len(parts) >= 5 and parts[-3] in _IO_ACTIONS and parts[-1].isdigit() and parts[-2].isdigit()
        if io and first is None:
            first = int(parts[0])
        last = int(parts[0])
    return last - first if first is not None and last is not None and last > first else None


def spans(job: str, workdir: Path) -> dict[str, int]:
    """Each clocked job section's I/O span in us (io_span_us), by its name."""
    found = {}
    for name, lines in sections(job):
        logs = [m.group(2) for line in lines if (m := _OPTION.match(line)) and m.group(1) == "write_iolog"
                and (m.group(2) or "").startswith("iolab-clock.")]
        path = workdir / logs[-1] if logs else None
        span = io_span_us(path.read_text(errors="replace")) if path is not None and path.exists() else None
        if span is not None:
            found[name] = span
    return found


def load_report(text: str) -> dict[str, Any]:
    """fio's JSON report; fio may print error lines before the opening brace."""
    start = 0 if text.startswith("{") else text.find("\n{") + 1
    if start == 0 and not text.startswith("{"):
        raise EngineError("fio wrote no JSON report")
    try:
        return json.loads(text[start:])
    except json.JSONDecodeError as error:
        raise EngineError(f"fio's JSON report is malformed: {error}") from None


@functools.lru_cache(maxsize=256)
def parse_refusal(job: str, binary: str = "fio") -> str | None:
    """fio's own words if `fio --parse-only` refuses the job text, else None."""
    with tempfile.NamedTemporaryFile("w", prefix="iolab-parse-", suffix=".fio") as handle:
        handle.write(job)
        handle.flush()
        done = process.run([binary, "--parse-only", handle.name], timeout=60)
    if done.returncode == 0:
        return None
    return fio_error(done.stderr, done.stdout)[:300]


def fio_error(stderr: str, report_text: str) -> str:
    """fio's own words for a failure: its error lines, from stderr or before
    the JSON; each distinct line once, sorted: the jobs of one fio print
    theirs in the order they happen to fail, and cells that failed alike
    get one text (the report groups failed cells by it)."""
    before_json = report_text.split("\n{")[0] if not report_text.startswith("{") else ""
    text = stderr + "\n" + before_json
    lines = sorted({
        line.strip()
        for line in text.splitlines()
        if line.startswith(("fio:", "Bad option")) or "error" in line.lower()
    })
    return last_lines("\n".join(lines) if lines else text, 3)


def _sync_metrics(jobs: list[dict[str, Any]], metrics: dict[str, float], histograms: dict[str, dict[int, int]]) -> None:
    """The latency of the jobs' fsync/fdatasync calls (fio's "sync" section,
    filled by fsync= and fdatasync=): how many, their mean, and percentiles
    of their merged histogram."""
    parts = [job["sync"]["lat_ns"] for job in jobs if job.get("sync", {}).get("lat_ns", {}).get("N", 0) > 0]
    if not parts:
        return
    calls = sum(part["N"] for part in parts)
    metrics["syncs"] = calls
    metrics["sync_lat_mean"] = sum(part["mean"] * part["N"] for part in parts) / calls / 1e3
    bins = histogram.merge(histogram.from_fio_bins(part.get("bins", {})) for part in parts)
    if bins:
        histograms["sync_lat"] = bins
        for q, value in histogram.percentiles(bins, PERCENTILES).items():
            metrics[f"sync_p{q:g}"] = value / 1e3


def metric_names(directions: Collection[str]) -> set[str]:
    """The metrics parse_report can give for jobs doing I/O in ``directions``
    ("read", "write"; fio_jobs.Job.directions), and the syncs' metrics: a
    job with fsync= or fdatasync= gives them (the options are not read here,
    so they are always possible)."""
    return set(metric_order(directions))


def metric_order(directions: Collection[str]) -> list[str]:
    """metric_names in the order a report lists them: each direction's (reads first), every job's, the syncs'."""
    return [f"{d}_{m}" for d in ("read", "write") if d in directions for m in PER_DIRECTION] + [*EVERY_JOB, *SYNC]


def clat_contradiction(parts: list[dict[str, Any]]) -> str:
    """Why a direction's completion latencies (clat) cannot be true, or "".

    A completion latency is a part of the total latency (clat = lat - slat),
    so a job whose mean clat exceeds its mean lat has issue times that were
    never stamped: fio 3.33's io_uring engine with sqthread_poll leaves them
    unset for I/Os the kernel's SQ thread picked up late (fixed upstream in
    2023, fio pull request 1594), and every clat is then the time since fio's
    clock began: all of them land in fio's last histogram bins. (0.1% above
    is allowed for the two means' rounding.)"""
    for part in parts:
        clat, lat = part.get("clat_ns", {}), part.get("lat_ns", {})
        if clat.get("N", 0) > 0 and lat.get("N", 0) > 0 and clat["mean"] > lat["mean"] * 1.001:
            return (f"fio's completion latency contradicts its total latency (its mean is "
                    f"{clat['mean'] / lat['mean']:.3g} times the mean total latency, never above 1 "
                    "where the issue time is stamped): "
                    "its I/Os' issue times were not stamped (fio's io_uring engine with sqthread_poll, "
                    "fixed upstream in 2023; a newer fio: fio = \"debian:fio\")")
    return ""


def _rates(job: dict[str, Any], direction: str, span_us: int | None) -> tuple[float, float]:
    """A job's bytes and I/Os a second in one direction: over its I/O span in us where it was
    clocked (instructions mode: CLOCK_LOG), else fio's own (over whole milliseconds)."""
    part = job[direction]
    if span_us is None:
        return part["bw_bytes"], part["iops"]
    return part["io_bytes"] * 1e6 / span_us, part["total_ios"] * 1e6 / span_us


def parse_report(report: dict[str, Any], span_us: dict[str, int] | None = None) -> EngineResult:
    """Metrics summed over all jobs of the report, and merged clat histograms.

    Bandwidth and IOPS are summed over jobs, which is the aggregate when the
    jobs run concurrently (fio's default; stonewalled jobs are not summed
    meaningfully). CPU figures are the mean over jobs. ``span_us``: the I/O
    span of jobs clocked finer than fio's milliseconds, by name (spans).
    """
    jobs = report.get("jobs") or []
    if not jobs:
        raise EngineError("fio report has no jobs")
    failed = [job for job in jobs if job.get("error")]
    if failed:
        names = ", ".join(f"{job['jobname']} (error {job['error']})" for job in failed)
        raise EngineError(f"fio job failed: {names}")
    metrics: dict[str, float] = {}
    histograms: dict[str, dict[int, int]] = {}
    unmeasured: dict[str, str] = {}
    total_ios = 0
    jobnames = [job.get("jobname") for job in jobs]
    clock = {name: span for name, span in (span_us or {}).items() if jobnames.count(name) == 1}
    for direction in ("read", "write"):
        doing = [job for job in jobs if job[direction]["total_ios"] > 0]
        parts = [job[direction] for job in doing]
        if not parts:
            continue
        rates = [_rates(job, direction, clock.get(job.get("jobname"))) for job in doing]
        ios = sum(part["total_ios"] for part in parts)
        total_ios += ios
        contradiction = clat_contradiction(parts)
        bins = {} if contradiction else histogram.merge(
            histogram.from_fio_bins(part["clat_ns"].get("bins", {})) for part in parts)
        unmeasured.update({f"{direction}_p{q:g}": contradiction for q in PERCENTILES if contradiction})
        metrics[f"{direction}_bw"] = sum(bw for bw, _ in rates) / 2**20
        metrics[f"{direction}_iops"] = sum(iops for _, iops in rates)
        metrics[f"{direction}_lat_mean"] = (
            sum(part["lat_ns"]["mean"] * part["total_ios"] for part in parts) / ios / 1e3
        )
        if bins:
            histograms[f"{direction}_clat"] = bins
            for q, value in histogram.percentiles(bins, PERCENTILES).items():
                metrics[f"{direction}_p{q:g}"] = value / 1e3
    _sync_metrics(jobs, metrics, histograms)
    metrics["ios"] = total_ios
    metrics["ctx"] = sum(job["ctx"] for job in jobs)
    metrics["cpu_usr"] = sum(job["usr_cpu"] for job in jobs) / len(jobs)
    metrics["cpu_sys"] = sum(job["sys_cpu"] for job in jobs) / len(jobs)
    if total_ios:
        metrics["cs_per_io"] = metrics["ctx"] / total_ios
    return EngineResult(metrics=metrics, histograms=histograms, unmeasured=unmeasured)
