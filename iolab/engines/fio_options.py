"""Which fio options a job may use, judged against fio 3.33's own option table.

Every option fio 3.33 knows (``fio --cmdhelp=all``, its aliases and the
options of its I/O engines, ``fio --enghelp``) is listed below by what it
can do; tests/fixtures/fio/options-3.33.txt is fio's own output and a test
checks that this table names exactly its options. Most options only shape
the I/O. The others are refused unless the experiment opts in by name
(``allow = ["exec_prerun"]``, or ``"ioengine=exec"`` for an engine):

- options that run programs (exec_prerun, exec_postrun) or load code
  (an ioengine outside SAFE_ENGINES: exec, external:..., network engines,
  any other name, which fio would try to dlopen);
- options that read or write files outside the cell's own directories:
  file names (filename, filename_format, e4defrag's donorname) must stay
  under the target's directory, log files (write_*_log, write_iolog,
  merge_blktrace_file, mem=mmap:FILE) under the cell's working directory,
  after ``..`` is resolved; read_iolog and replay_redirect replay I/O onto
  the devices a log names; a quoted buffer_pattern/verify_pattern reads a
  file; directory/opendir are iolab's to choose;
- options that change machine-wide state fio does not restore
  (ioscheduler, cgroup, allow_mounted_write, a built-in profile);
- an ``include`` line (fio takes every line starting with "include" as
  one) and options fio 3.33 does not know.

Refused always (no opt-in): lines fio would read differently from iolab
(control characters, over-long lines, a malformed or path-like [section]
name, options before the first section), ``${VAR}`` (fio substitutes the
environment), and a variant's fio key or value that is not one plain
``name=value`` line.

The parser follows fio's own (init.c __parse_jobs_ini, parse.c
get_option): blanks stripped at both ends; ``;`` or ``#`` first makes a
comment; a line starting with ``[`` is a section; the name is what comes
before the first ``=``, blanks stripped, matched exactly or by alias.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

FIO_VERSION = "3.33"

# fio 3.33 --cmdhelp=all (the order fio prints them)
GENERAL = """
description name wait_for filename lockfile directory filename_format unique_filename opendir rw bs
ba bsrange bssplit bs_unaligned randrepeat randseed norandommap ignore_error rw_sequencer ioengine
iodepth iodepth_batch iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low
serialize_overlap io_submit_mode size io_size fill_device filesize file_append offset
offset_increment offset_align number_ios random_generator random_distribution percentage_random
allrandrepeat nrfiles file_service_type openfiles fallocate fadvise_hint fsync fdatasync
write_barrier sync_file_range direct atomic buffered overwrite loops numjobs startdelay runtime
time_based verify_only ramp_time clocksource mem verify do_verify verify_interval verify_offset
verify_pattern verify_fatal verify_dump verify_async verify_backlog verify_backlog_batch
experimental_verify verify_state_load verify_state_save trim_percentage trim_verify_zero
trim_backlog trim_backlog_batch write_iolog read_iolog read_iolog_chunked replay_no_stall
replay_redirect replay_scale replay_align replay_time_scale replay_skip merge_blktrace_file
merge_blktrace_scalars merge_blktrace_iters exec_prerun exec_postrun ioscheduler zonemode zonesize
zonecapacity zonerange zoneskip read_beyond_wp max_open_zones job_max_open_zones ignore_zone_limits
zone_reset_threshold zone_reset_frequency lockmem rwmixread rwmixwrite nice prio prioclass thinktime
thinktime_spin thinktime_blocks thinktime_blocks_type thinktime_iotime rate rate_min rate_process
rate_cycle rate_ignore_thinktime rate_iops rate_iops_min max_latency latency_target latency_window
latency_percentile latency_run invalidate sync write_hint create_serialize create_fsync
create_on_open create_only allow_file_create allow_mounted_write pre_read cpumask cpus_allowed
cpus_allowed_policy numa_cpu_nodes numa_mem_policy end_fsync fsync_on_close unlink unlink_each_loop
exitall exit_what exitall_on_error stonewall new_group thread per_job_logs write_bw_log bwavgtime
write_lat_log write_iops_log iopsavgtime log_entries log_avg_msec log_hist_msec log_hist_coarseness
write_hist_log log_max_value log_offset log_prio log_compression log_compression_cpus
log_store_compressed log_unix_epoch log_alternate_epoch log_alternate_epoch_clock_id
block_error_percentiles group_reporting stats zero_buffers refill_buffers scramble_buffers
buffer_pattern buffer_compress_percentage buffer_compress_chunk dedupe_percentage dedupe_mode
dedupe_working_set_percentage dedupe_global clat_percentiles lat_percentiles slat_percentiles
percentile_list significant_figures disk_util gtod_reduce disable_lat disable_clat disable_slat
disable_bw_measurement gtod_cpu unified_rw_reporting continue_on_error error_dump profile cgroup
cgroup_nodelete cgroup_weight uid gid kb_base unit_base hugepage-size flow_id flow flow_sleep
steadystate steadystate_duration steadystate_ramp_time
""".split()

# fio 3.33 --enghelp=ENGINE, all engines (an engine option applies only with its engine)
ENGINE_OPTIONS = """
arguments bindname brick busy_poll clientname clustername cmd_type cmdprio cmdprio_bssplit
cmdprio_class cmdprio_percentage conf cpuchunks cpuload cpumode donorname exit_on_io_done fixedbufs
force_async grace_time hipri hipri_percentage hostname inplace interface listen mss nodelay
nonvectored nowait pingpong pool port program protocol rbdname readfua registerfiles sg_write_mode
single-instance skip_bad sqthread_poll sqthread_poll_cpu stat_type std_redirect stream_id thp
touch_objects ttl uncached uri userspace_reap verb volume window_size writefua
""".split()

ALIASES = {
    "readwrite": "rw", "blocksize": "bs", "blockalign": "ba", "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned", "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min", "io_limit": "io_size",
    "fill_fs": "fill_device", "fileoffset": "offset", "nr_files": "nrfiles", "timeout": "runtime",
    "iomem": "mem", "ratemin": "rate_min", "ratecycle": "rate_cycle", "wait_for_previous": "stonewall",
    "disable_bw": "disable_bw_measurement", "ss": "steadystate", "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time", "proto": "protocol",
}

KNOWN = frozenset(GENERAL) | frozenset(ENGINE_OPTIONS)

# Engines that do I/O to the job's files (or burn CPU) and nothing else.
SAFE_ENGINES = frozenset(
    "sync psync vsync pvsync pvsync2 libaio io_uring posixaio mmap splice null cpuio "
    "falloc ftruncate filecreate filestat filedelete e4defrag".split()
)

TARGET_PATH = ("filename", "filename_format", "donorname")  # joined to the target's directory
WORK_PATH = ("write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "write_iolog",
             "merge_blktrace_file")  # relative to fio's working directory (the cell's)
REFUSED = {
    "exec_prerun": "runs a program",
    "exec_postrun": "runs a program",
    "read_iolog": "replays an I/O log onto the devices it names",
    "replay_redirect": "replays an I/O log onto a device of its own",
    "directory": "iolab puts the job's files on the target ([target]); a relative filename is fine",
    "opendir": "iolab puts the job's files on the target ([target]); a relative filename is fine",
    "ioscheduler": "changes the target device's I/O scheduler and leaves it changed "
                   "(use sysfs = { \"/sys/block/{dev}/queue/scheduler\" = ... }, restored after the cell)",
    "cgroup": "makes cgroups of its own, machine-wide (use memory_max)",
    "cgroup_nodelete": "leaves fio's cgroups behind",
    "allow_mounted_write": "lets fio write to a mounted block device",
    "profile": "runs a built-in profile with jobs and files of its own",
}
PATTERNS = ("buffer_pattern", "verify_pattern")  # a 'quoted' value is a file fio reads

MAX_LINE = 1000  # fio reads job files with fgets(4096): a longer line is cut into two
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_BLANKS = " \t\n\v\f\r"
_SECTION = re.compile(r"\[([^\[\]/\\]{1,64})\]")
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
_FORMAT_TOKENS = re.compile(r"\$(jobname|jobnum|filenum|clientuid)")


class UnsafeJob(ValueError):
    """A job fio must not run as it is; the message names the option and why."""


@dataclass(frozen=True)
class Finding:
    """One line fio would run that iolab refuses."""

    where: str  # "[job] filename", "variant fio", "line 3"
    reason: str
    allow: str | None  # the name that opts in; None when nothing can

    def __str__(self) -> str:
        hint = f" (allow = [\"{self.allow}\"] runs it anyway)" if self.allow else ""
        return f"{self.where}: {self.reason}{hint}"


def excerpt(text: str, limit: int = 40) -> str:
    """A short, printable excerpt of user input, for messages."""
    shown = text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(shown)


def _inside(path: str) -> bool:
    """Does the relative `path` stay inside the directory it is joined to?"""
    if not path or path.startswith("/"):
        return False
    resolved = posixpath.normpath(posixpath.join("/base", path))
    return resolved.startswith("/base/")


def _judge_paths(option: str, value: str, raw_device: bool) -> str | None:
    """Why a path-valued option is refused, or None."""
    if option in TARGET_PATH:
        if raw_device:
            return "the target is a raw device: iolab gives it to fio as the filename"
        if option == "filename_format":
            value = _FORMAT_TOKENS.sub("x", value)
        parts = re.split(r"(?<!\\):", value) if option == "filename" else [value]
        for part in parts:
            if not _inside(part.replace("\\:", ":")):
                return f"{excerpt(part)} is outside the target's directory"
        return None
    path = value.split(":", 1)[1] if option == "mem" else value
    if option == "mem" and ":" not in value:
        return None
    if path and not _inside(path):
        return f"{excerpt(path)} is outside the cell's working directory"
    return None


def did_you_mean(name: str, known: Iterable[str], *, quoted: bool = False) -> str:
    """"; did you mean X?" for the closest of ``known`` (difflib), else "":
    the hint of a misspelt name (a fio option, a metric; ``quoted``: a file
    name, shown as 'X')."""
    import difflib  # here: a VM guest's cells import this module, and its words are rarely asked for

    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"; did you mean {close[0]!r}?" if close and quoted else f"; did you mean {close[0]}?" if close else ""


def judge(option: str, value: str, raw_device: bool = False) -> tuple[str, str | None] | None:
    """(reason, allow name) if `option=value` is refused, else None; the allow
    name is None where no allow can lift the refusal."""
    name = ALIASES.get(option, option)
    if name not in KNOWN:
        return f"not an option of fio {FIO_VERSION}{did_you_mean(name, KNOWN | set(ALIASES))}", option
    if name in REFUSED:
        return REFUSED[name], name
    if name == "ioengine":
        engine = value.split(":", 1)[0]
        if engine not in SAFE_ENGINES:
            what = "loads the engine from a file" if engine == "external" or "/" in value else (
                f"the {excerpt(engine)} engine can reach beyond the target or run programs")
            return what, f"ioengine={engine}"
        return None
    if name in TARGET_PATH or name in WORK_PATH or name == "mem":
        why = _judge_paths(name, value, raw_device)
        return (why, name) if why else None
    if name in PATTERNS and "'" in value:
        return "a quoted pattern is a file fio reads", name
    if name == "name" and "/" in value:
        return "a job name with '/' becomes a path", None
    return None


@dataclass(frozen=True)
class _Line:
    number: int
    section: str | None
    text: str


def _lines(job: str) -> Iterator[_Line]:
    section = None
    for number, raw in enumerate(job.split("\n"), start=1):
        line = raw.strip(_BLANKS)
        if line.startswith("["):
            section = line
        yield _Line(number, section, line if not _CONTROL.search(raw.rstrip("\r")) else raw)


def _line_finding(line: _Line, raw_device: bool) -> Finding | None:
    where = f"line {line.number}"
    text = line.text
    if len(text) > MAX_LINE:
        return Finding(where, f"longer than {MAX_LINE} characters (fio would split it)", None)
    if _CONTROL.search(text):
        return Finding(where, "a control character (fio would read this line differently)", None)
    if not text or text[0] in ";#":
        return None
    if "${" in text:
        return Finding(where, "${...} takes a value from iolab's environment; write the value", None)
    if text.startswith("["):
        match = _SECTION.fullmatch(text)
        if not match or match.group(1) != match.group(1).strip(_BLANKS):
            return Finding(where, f"{excerpt(text)}: a section is [name], at most 64 characters, no '/'", None)
        return None
    if line.section is None:
        return Finding(where, "an option before the first [section]; put it under [global]", None)
    if text.startswith(("include", "$include")):
        return Finding(f"{line.section} {where}", "includes a file iolab cannot judge; paste its options", "include")
    name, _, value = text.partition("=")
    name, value = name.strip(_BLANKS), value.strip(_BLANKS)
    verdict = judge(name, value, raw_device)
    if verdict is None:
        return None
    return Finding(f"{line.section} {excerpt(name, 32)}", verdict[0], verdict[1])


def option_line(key: object, value: object) -> str:
    """A variant's fio option as the line appended to each job section."""
    if isinstance(value, bool):
        value = int(value)
    return f"{key}={value}"


def _option_finding(key: object, value: object, raw_device: bool) -> Finding | None:
    where = f"fio option {excerpt(str(key), 32)}"
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        return Finding(where, "not an option name (letters, digits, '_' and '-' only)", None)
    text = str(int(value) if isinstance(value, bool) else value)
    if _CONTROL.search(text) or len(text) > MAX_LINE or "${" in text:
        return Finding(where, "the value must be one line of printable text, no ${...}", None)
    verdict = judge(key, text.strip(_BLANKS), raw_device)
    return Finding(where, verdict[0], verdict[1]) if verdict else None


def findings(job: str, options: Mapping[str, object] | None = None, *, raw_device: bool = False) -> list[Finding]:
    """Everything in a job (and a variant's options appended to it) that iolab refuses."""
    found = [f for f in (_line_finding(line, raw_device) for line in _lines(job)) if f]
    for key, value in (options or {}).items():
        finding = _option_finding(key, value, raw_device)
        if finding:
            found.append(finding)
    return found


def check(
    job: str,
    options: Mapping[str, object] | None = None,
    *,
    raw_device: bool = False,
    allow: Collection[str] = (),
) -> list[str]:
    """Raise UnsafeJob (at most three findings) unless every finding is allowed
    by name; the allow names the job actually used, for the report."""
    found = findings(job, options, raw_device=raw_device)
    refused = [f for f in found if f.allow is None or f.allow not in allow]
    if refused:
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        raise UnsafeJob("; ".join(str(f) for f in refused[:3]) + more)
    return sorted({f.allow for f in found if f.allow})
