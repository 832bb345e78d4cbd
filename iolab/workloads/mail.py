"""The mail's benchmark as the experiment's primary workloads, and its claim matched to their rows.

iolab.mail reads the benchmark and the claim from the mail's text; this
turns them into [[workload]] tables (on the filesystem the mail names, or
the library's) and [claims] rows, each naming the workload and metric that
measure it, or why none does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from iolab.engines import fio_jobs, fio_options
from iolab.engines.script import ALLOW as SCRIPT
from iolab.mail.benchmark import MAX_JOBS, Benchmark, MailWorkload
from iolab.mail.claimed import Claim

# The phases of an f2fs checkpoint, from its tracepoint (as scenarios/f2fs-nat-readahead-7.2.toml):
# "flush" is the NAT/SIT flush and CP pack write after block_ops
CHECKPOINT_PHASES = {"f2fs": [
    {"name": "cp", "start": "f2fs:f2fs_write_checkpoint", "start_filter": "phase == 0",
     "end": "f2fs:f2fs_write_checkpoint", "end_filter": "phase == 2"},
    {"name": "flush", "start": "f2fs:f2fs_write_checkpoint", "start_filter": "phase == 1",
     "end": "f2fs:f2fs_write_checkpoint", "end_filter": "phase == 2"},
]}


@dataclass(frozen=True)
class Matched:
    claim: Claim
    workload: str  # "" when not reproduced
    metric: str
    reason: str


def _directions(workload: MailWorkload) -> set[str]:
    if workload.job is None:
        return set()
    return set().union(*(job.directions for job in fio_jobs.jobs(workload.job)))


def metric_for(claim: Claim, workload: MailWorkload) -> tuple[str, str]:
    """(metric, "") measuring the claim on this workload, or ("", why not)."""
    label = claim.label.lower()
    probe = workload.probe or {}
    mode = probe.get("mode")
    if mode == "batch":
        return ("per_call", "") if claim.kind == "time" else ("", f"a {claim.unit or 'count'} row: the "
                                                                   "batch mode measures time per call")
    if mode == "churn" or workload.script is not None:
        if claim.kind == "time":
            return (workload.primary[0] if workload.primary else "phase_ns"), ""
        return "", f"a count iolab does not measure for the {'churn' if mode else 'script'}"
    if mode in ("lat", "uring"):
        if claim.kind == "time":
            return ("lat_p99" if "p99" in label else "lat_mean" if re.search(r"\b(mean|avg|average)\b", label)
                    else "lat_p50"), ""
        return {"rate": ("iops", ""), "bandwidth": ("bw", "")}.get(claim.kind, ("", "a count the probe does "
                                                                               "not measure"))
    directions = _directions(workload)
    side = "write" if "write" in label and "read" not in label else "read" if "read" in label else \
        ("write" if directions == {"write"} else "read")
    if directions and side not in directions and claim.kind in ("rate", "bandwidth", "time"):
        rw = ", ".join(sorted({job.rw for job in fio_jobs.jobs(workload.job or "")}))
        return "", f"a {side} row: {workload.name} only {'reads' if side == 'write' else 'writes'} (rw={rw})"
    if claim.kind == "rate":
        return f"{side}_iops", ""
    if claim.kind == "bandwidth":
        return f"{side}_bw", ""
    if claim.kind == "time":
        quantile = "p99.9" if re.search(r"p99\.?9", label) else "p99" if "p99" in label else \
            "p50" if re.search(r"p50|median", label) else "lat_mean"
        return f"{side}_{quantile}", ""
    if re.search(r"ctx|context.switch", label):
        return "ctx", ""
    if re.search(r"cs\s*/\s*io", label):
        return "cs_per_io", ""
    return "", f"a {claim.unit or 'count'} iolab does not measure for this workload"


def match(claims: list[Claim], workloads: tuple[MailWorkload, ...]) -> list[Matched]:
    """Each claim with the workload (by the row's name, or the only one) and metric that measure it."""
    out = []
    for claim in claims:
        named = _named(claim, workloads)
        if not named:
            templated = [w for w in workloads if w.template]
            why = ("the mail's benchmark is not one iolab maps (see not reproduced here)" if not workloads
                   else f"the mail's command is a template ({templated[0].template}); the row names none of the "
                        f"values it ran with ({', '.join(w.name for w in templated)})" if templated
                   else f"no workload of the mail's benchmark is named in the row "
                        f"({', '.join(w.name for w in workloads)})")
            out.append(Matched(claim, "", "", why))
            continue
        metric, why = metric_for(claim, named[0])
        other = _other_count(claim, named[0])
        if other:
            metric, why = "", other
        out.append(Matched(claim, named[0].name if metric else "", metric, why))
    return out


def _named(claim: Claim, workloads: tuple[MailWorkload, ...]) -> list[MailWorkload]:
    """The workloads that measure the row: a template's job the row names the value of; else one the row
    names (a word of it, or its start); else the mail's one benchmark, unless it is a template's."""
    tied = [w for w in workloads if claim.label in w.rows]
    if tied:
        return tied
    free = [w for w in workloads if not w.template]
    words = re.split(r"[\s:]+", claim.label.strip())
    named = [w for w in free if w.name in words or w.name == claim.label]
    named = named or [w for w in free if claim.label.lower().startswith(w.name.lower())]
    return named or (list(workloads) if len(workloads) == 1 and not workloads[0].rows else [])


_COUNT = re.compile(r"\b(\d+)[\s-]*(readers?|writers?|threads?|jobs?|processes|procs?|workers?|tasks?)\b", re.I)


def _other_count(claim: Claim, workload: MailWorkload) -> str:
    """Why a row that names its own count of readers (threads, jobs) is not
    measured by the mail's fio job, which runs another count; "" when it is."""
    found = _COUNT.search(claim.label)
    if found is None or workload.job is None:
        return ""
    runs = max([job.numjobs for job in fio_jobs.jobs(workload.job)] or [1])
    if min(int(found.group(1)), MAX_JOBS) == runs:
        return ""
    return f"the row is {found.group(0)}; the mail's job runs {runs} (numjobs, as scaled to the VM)"


def workload_table(workload: MailWorkload, fs: str, claimed: list[str], environment: Any) -> dict[str, Any]:
    """The [[workload]] table of one of the mail's workloads."""
    engine = "probe" if workload.probe is not None else "script" if workload.script is not None else "fio"
    out: dict[str, Any] = {"name": workload.name, "engine": engine, "fs": "none" if workload.raw else fs}
    if workload.probe is not None:
        out["probe"] = dict(workload.probe)
    elif workload.script is not None:  # only there when the user allowed it by name (--allow script)
        out["job"] = workload.script
        out["allow"] = [SCRIPT]
    else:
        out["job"] = workload.job
        allowed = sorted({f.allow for f in fio_options.findings(workload.job or "") if f.allow})
        if allowed:  # only what the user allowed by name is left in a mail's job
            out["allow"] = allowed
    primary = list(dict.fromkeys([*workload.primary, *claimed]))
    if primary:
        out["primary"] = primary
    if workload.memory_max is not None:
        out["memory_max"] = f"{workload.memory_max >> 20}MiB"
    if environment.sysctl:
        out["sysctl"] = dict(environment.sysctl)
    if environment.device == "rotational":
        out["sysfs"] = {"/sys/block/{dev}/queue/rotational": 1}
    if environment.mount_options and not workload.raw:
        out["mount_options"] = environment.mount_options
    if environment.mkfs_options and not workload.raw:
        out["mkfs_options"] = list(environment.mkfs_options)
    return out


def device_note(benchmark: Benchmark) -> list[str]:
    """What the mail's device became here."""
    env = benchmark.environment
    if env.device == "null_blk":
        return [f"{env.device_source}: the guest's null_blk (/dev/nullb0, memory-backed: [vm] disk = \"null_blk\")"]
    if env.device == "raw":
        return [f"{env.device_source}: the VM's raw disk (iolab never opens a device a mail names)"]
    if env.device == "rotational":
        return [f"{env.device_source}: the VM's disk marked rotational (queue/rotational = 1)"]
    return []
