"""The probe engine: iolab-probe (probe/, C) run once per cell, its JSON parsed.

A probe workload names a mode of iolab-probe and its parameters, as the
probe spells them (``iolab-probe MODE --help``; ``_`` may stand for ``-``):

    [[workload]]
    name = "direct_read"
    engine = "probe"
    probe = { mode = "lat", op = "pread", bs = "4k", file_size = "64M", direct = true, ops = 50000 }

A variant may override parameters with ``probe = { bs = "8k" }``. iolab
places the I/O itself: ``--file=<mount>/probe.dat`` (lat, uring, batch),
``--dir=<mount>/churn`` (churn), or the raw device for ``fs = "none"``
(lat, uring), so ``file`` and ``dir`` are refused in the experiment.

The parameter table below mirrors ``iolab-probe --describe``;
tests/test_probe_engine.py checks that they agree. A probe workload's job
text (what the runner ships to the cell) is its parameters as JSON.

Metrics (see iolab/metrics.py): lat and uring give the ``lat`` histogram
(ns, fio json+ shape) and ``lat_p50``/``lat_p99``/``lat_p99.9`` read from
it, ``lat_mean``, ``iops``, ``bw``; batch gives ``per_call`` (libMicro's
median) and ``per_call_min``; churn gives ``phase.<name>_ns`` per phase
(``<name>#k`` when a phase repeats) and the reported phase as
``phase_ns``; every mode gives ``ctx`` (getrusage context switches of the
measured region).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iolab import histogram, process
from iolab.engines.base import EngineError, EngineResult, WorkloadRun, version_of
from iolab.sysutil import ToolError
from iolab.units import parse_size

PROBE_DIR = Path(__file__).resolve().parents[2] / "probe"
OUTPUT_VERSION = 1  # the "probe_version" this module reads

# -- parameters -----------------------------------------------------------
# Kinds as `iolab-probe --describe` names them; a tuple is a CHOICE.
Kind = str | tuple[str, ...]
COMMON: dict[str, Kind] = {"cpu": "N", "clock": ("monotonic_raw", "monotonic")}
_TARGET: dict[str, Kind] = {
    "file": "PATH",
    "file-size": "SIZE",
    "direct": "BOOL",
    "dsync": "BOOL",
    "evict": "BOOL",
    "bs": "SIZE",
    "pattern": ("seq", "rand"),
    "seed": "N",
}
MODES: dict[str, dict[str, Kind]] = {
    "lat": {
        "op": ("pread", "pwrite", "preadv2", "pwritev2"),
        **_TARGET,
        "ops": "N",
        "runtime": "SECONDS",
        "warmup-ops": "N",
        "rwf": "FLAGS",
    },
    "batch": {
        "case": ("write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k", "custom"),
        "op": ("write", "pwrite"),
        "bs": "SIZE",
        "batch": "N",
        "offset": "SIZE",
        "batches": "N",
        "warmup-batches": "N",
        "file": "PATH",
        "file-size": "SIZE",
        "prep": ("create", "keep"),
        "prep-sync": "BOOL",
    },
    "uring": {
        "op": ("read", "write"),
        **_TARGET,
        "iodepth": "N",
        "submit-batch": "N",
        "complete-batch": "N",
        "ops": "N",
        "runtime": "SECONDS",
        "rwf": "FLAGS",
    },
    "churn": {
        "dir": "PATH",
        "files": "N",
        "workers": "N",
        "delete-every": "N",
        "file-bytes": "SIZE",
        "phases": "LIST",
        "sync": ("sync", "syncfs"),
        "report-phase": "NAME",
    },
}
REQUIRED = {"batch": ("case",)}
RWF_FLAGS = ("dontcache", "nowait", "hipri", "dsync", "sync")
_DURATION = re.compile(r"^\d+(\.\d+)?(ns|us|ms|s|m|h)?$")

Value = int | bool | str | float


def _key(name: str) -> str:
    return str(name).replace("_", "-")


def _value(name: str, kind: Kind, value: Any) -> Value:
    """One parameter's value in the form the probe takes; ValueError names the parameter."""
    if isinstance(kind, tuple):
        if value not in kind:
            raise ValueError(f"{name}: {value!r} is not one of {', '.join(kind)}")
        return value
    if kind == "PATH":
        raise ValueError(
            f"{name}: chosen by iolab from [target] (a file or directory on the fresh "
            "filesystem, or the raw device); remove it"
        )
    if kind == "N":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected a whole number, got {value!r}")
        return value
    if kind == "SIZE":
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"{name}: expected a size (4096, 4k, 64MiB), got {value!r}")
        try:
            return parse_size(value)
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
    if kind == "BOOL":
        if value in (0, 1) and not isinstance(value, float):
            return bool(value)
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    if kind == "SECONDS":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return value
        if isinstance(value, str) and _DURATION.match(value):
            return value
        raise ValueError(f"{name}: expected seconds or a duration (10, 2.5, 500ms, 1m), got {value!r}")
    words = value.split(",") if isinstance(value, str) else value
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{name}: expected a string or a list of strings, got {value!r}")
    words = [w.strip() for w in words if w.strip()]
    if kind == "FLAGS":
        bad = [w for w in words if w not in RWF_FLAGS]
        if bad:
            raise ValueError(f"{name}: unknown flag {bad[0]!r} (flags: {', '.join(RWF_FLAGS)})")
    if kind == "NAME" and len(words) != 1:
        raise ValueError(f"{name}: expected one name, got {value!r}")
    return ",".join(words)


def params_of(mode: str) -> dict[str, Kind]:
    return {**MODES[mode], **COMMON}


def normalize(params: Mapping[str, Any]) -> dict[str, Value]:
    """A workload's probe table checked and in the probe's terms: mode first,
    names with '-', sizes in bytes, booleans as bool. ValueError names the parameter."""
    given = {_key(name): value for name, value in params.items()}
    mode = given.pop("mode", None)
    if mode is None:
        raise ValueError(f"mode: missing (one of {', '.join(MODES)})")
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode: unknown mode {str(mode)[:40]!r} (modes: {', '.join(MODES)})")
    known = params_of(mode)
    out: dict[str, Value] = {"mode": mode}
    for name, value in given.items():
        if name not in known:
            raise ValueError(
                f"{name}: not a parameter of mode {mode} (parameters: "
                f"{', '.join(n for n, k in known.items() if k != 'PATH')}; see iolab-probe {mode} --help)"
            )
        out[name] = _value(name, known[name], value)
    for name in REQUIRED.get(mode, ()):
        if name not in out:
            raise ValueError(f"{name}: mode {mode} needs it (one of {', '.join(known[name])})")
    return out


def normalize_overrides(options: Mapping[str, Any]) -> dict[str, Value]:
    """A variant's probe overrides: each must be a parameter of some mode and
    fit it; whether it fits the workload's mode is checked when the cell runs."""
    out: dict[str, Value] = {}
    for raw_name, value in options.items():
        name = _key(raw_name)
        if name == "mode":
            raise ValueError("mode: a variant cannot change a workload's mode")
        kinds = [params_of(mode)[name] for mode in MODES if name in params_of(mode)]
        if not kinds:
            every = sorted({n for mode in MODES for n, k in params_of(mode).items() if k != "PATH"})
            raise ValueError(f"{name}: not a parameter of any probe mode (parameters: {', '.join(every)})")
        errors = []
        for kind in kinds:
            try:
                out[name] = _value(name, kind, value)
                break
            except ValueError as error:
                errors.append(str(error))
        else:
            raise ValueError(errors[0])
    return out


def job_text(params: Mapping[str, Any]) -> str:
    """The job text of a probe workload: its checked parameters as JSON."""
    return json.dumps(normalize(params))


def merged(job: str, options: Mapping[str, Any]) -> tuple[str, dict[str, Value]]:
    """(mode, parameters) of one run: the workload's job with the variant's overrides."""
    try:
        params = json.loads(job)
    except json.JSONDecodeError:
        raise EngineError(f"probe workload: job is not the JSON iolab writes: {job[:60]!r}") from None
    mode = params.get("mode")
    if mode not in MODES:
        raise EngineError(f"probe workload: unknown mode {mode!r}")
    for name in options:
        if _key(name) not in params_of(mode) or _key(name) == "mode":
            raise EngineError(f"variant probe option {_key(name)!r} is not a parameter of mode {mode}")
    try:
        checked = normalize({**params, **{_key(k): v for k, v in options.items()}})
    except ValueError as error:
        raise EngineError(f"probe {mode}: {error}") from None
    checked.pop("mode")
    return mode, checked


# -- instructions mode: the op counts exactness needs -------------------------
# Under -icount a cell's cost per op is the same count op after op, so the
# median of a few batches (ops) is the median of many; what the guest runs
# beyond that is QEMU's CPU time and nothing else. Measured
# (bench/data/opcount-2026-11-26.txt: A/A of 7.2 on ext4, each round its
# own boot, 4-5 boots a setting): write_u1k and write_u10k gave one value in
# every boot from 21 batches (11 and 15 moved by 0.002-0.004% now and then);
# their batch size stays libMicro's (a smaller batch walks fewer folios:
# another workload). A pwrite batch of 1000 calls holds 3-4 of the guest's
# timer ticks (one per 4 Minsn), whose cost moves from boot to boot: its
# median moved by up to 0.004% at any batch count below 50, and at 50 from
# one boot to another; of 100 calls most batches hold none, and the median
# was one value in every boot (it counts the call without the ticks:
# 0.17-0.26% below the 1000-call median). But "most" is not enough: a
# batch of 100 calls of 16.8 kinsn (seed 004's pwrite_u10k on nofix) holds a
# tick with a chance of 0.42, so in about one boot of five 11 of the 21
# batches did and the median rose by 0.3%, which cost a third round
# (bench/data/seed004-instructions-2026-11-26d.txt). Of 20 calls (0.34 Minsn
# there) a batch holds one with a chance of 0.08, and the median is the
# call without a tick in every boot; it is 0.002% above the 100-call one
# (the batch's own two clock reads over fewer calls). lat and uring keep their ops:
# seed 000's sequential 4 KiB O_DIRECT pread/pwrite over a 64 MiB file
# gave a median of 13855, 14495, 14495 and 14367 insn/op (pread) and
# 17855-18495, 18495, 18495 and 14943 (pwrite) at 2000, 8000, 20000 and
# 50000 ops (bench/data/opcount-2026-11-26.txt): where a run passes over
# the file again, the later passes are another workload (an overwrite of
# allocated blocks), so a cut count measures something else.
INSTRUCTIONS_BATCHES = 21  # batch mode: timed batches at most
INSTRUCTIONS_PWRITE_BATCH = 20  # batch mode, pwrite cases: calls per batch at most
DEFAULT_BATCHES = 200  # iolab-probe batch --batches when not given
CASE_BATCH = {"write_u1k": 50, "write_u10k": 25, "pwrite_u1k": 1000, "pwrite_u10k": 1000, "custom": 1000}


def for_instructions(job: str) -> str:
    """A probe job with its op count cut to what an instruction count needs
    (batch: INSTRUCTIONS_BATCHES batches, a pwrite batch INSTRUCTIONS_PWRITE_BATCH
    calls); a smaller count is kept. lat and uring (whose later ops may be
    another workload: above) and churn (whose phases are the workload) are
    left as they are."""
    params = json.loads(job)
    mode = params.get("mode")
    if mode == "batch":
        params["batches"] = min(int(params.get("batches", DEFAULT_BATCHES)), INSTRUCTIONS_BATCHES)
        case = params.get("case")
        if case in ("pwrite_u1k", "pwrite_u10k") or (case == "custom" and params.get("op", "pwrite") == "pwrite"):
            params["batch"] = min(int(params.get("batch", CASE_BATCH[case])), INSTRUCTIONS_PWRITE_BATCH)
    return json.dumps(params)


# -- running ----------------------------------------------------------------


def binary() -> Path:
    """The iolab-probe to run: $IOLAB_PROBE, the one built in probe/, or one on PATH."""
    explicit = os.environ.get("IOLAB_PROBE")
    if explicit:
        path = Path(explicit)
        if not os.access(path, os.X_OK):
            raise ToolError(f"IOLAB_PROBE={explicit}: not an executable file")
        return path
    built = PROBE_DIR / "iolab-probe"
    if os.access(built, os.X_OK):
        newer = [src.name for src in PROBE_DIR.glob("*.[ch]") if src.stat().st_mtime > built.stat().st_mtime]
        if newer:
            raise ToolError(f"{built} is older than {newer[0]}: run 'make -C probe' (or 'make setup')")
        return built
    on_path = shutil.which("iolab-probe")
    if on_path:
        return Path(on_path)
    raise ToolError(f"iolab-probe is not built ({built}): run 'make -C probe' (or 'make setup')")


def placement(mode: str, mountpoint: str | None, device: str | None) -> dict[str, str]:
    """Where the probe does its I/O: on the fresh filesystem, or the raw device."""
    if mountpoint is not None:
        if mode == "churn":
            return {"dir": str(Path(mountpoint, "churn"))}
        return {"file": str(Path(mountpoint, "probe.dat"))}
    if mode in ("lat", "uring") and device is not None:
        return {"file": device}
    raise EngineError(f"probe {mode} needs a filesystem (fs = 'none' gives only lat and uring a raw device)")


def argument(name: str, value: Value) -> str:
    if isinstance(value, bool):
        value = int(value)
    return f"--{name}={value}"


def command(binary_path: Path, mode: str, params: Mapping[str, Value], where: Mapping[str, str]) -> list[str]:
    return [str(binary_path), mode, *(argument(k, v) for k, v in {**where, **params}.items())]


def probe_error(returncode: int, stderr: str) -> str:
    """The probe's own words: its error line and hint, without the program name."""
    lines = [line.strip().removeprefix("iolab-probe: ") for line in stderr.splitlines() if line.strip()]
    if returncode < 0:
        lines.append(f"killed by signal {-returncode}")
    return "; ".join(lines[-3:]) or "no error message"


class ProbeEngine:
    name = "probe"

    def version(self) -> str:
        """'iolab-probe 1 (sha256 1a2b3c4d5e6f)': the output version and which
        build, stored with every sample (env["probe"])."""
        path = binary()

        def ask() -> str:
            done = process.run([str(path), "--version"])
            if done.returncode != 0:
                raise ToolError(f"{path} --version failed: {probe_error(done.returncode, done.stderr)}")
            build = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
            return f"{done.stdout.strip()} (sha256 {build})"

        return version_of(path, ask)

    def run(self, work: WorkloadRun) -> EngineResult:
        mode, params = merged(work.job, work.options)
        where = placement(mode, work.target.mountpoint, work.target.device)
        argv = command(binary(), mode, params, where)
        done = process.run(argv, cwd=work.workdir, preexec=work.preexec)
        if done.returncode != 0:
            raise EngineError(f"iolab-probe {mode} exit {done.returncode}: {probe_error(done.returncode, done.stderr)}")
        result = parse_output(load_output(done.stdout))
        result.artefacts = {"probe.json": done.stdout, "probe.argv": shlex.join(argv)}
        if done.stderr.strip():
            result.artefacts["probe.stderr"] = done.stderr
        return result


# -- parsing ----------------------------------------------------------------


def load_output(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise EngineError(f"iolab-probe wrote malformed JSON: {error}") from None
    if not isinstance(doc, dict):
        raise EngineError("iolab-probe wrote no JSON object")
    version = doc.get("probe_version")
    if version != OUTPUT_VERSION:
        raise EngineError(
            f"iolab-probe output version {version!r}; iolab reads version {OUTPUT_VERSION}: run 'make -C probe'"
        )
    return doc


def _context_switches(doc: dict[str, Any]) -> float:
    ru = doc["rusage"]
    return float(ru["nvcsw"] + ru["nivcsw"])


def _latency(doc: dict[str, Any], bw_bytes: float) -> EngineResult:
    hist = histogram.from_fio_bins(doc["lat_ns"]["bins"])
    if not hist:
        raise EngineError("iolab-probe timed no op (empty latency histogram)")
    metrics: dict[str, float] = {
        "ops": float(doc["ops"]),
        "iops": float(doc["iops"]),
        "bw": bw_bytes / 2**20,
        "lat_mean": float(doc["lat_ns"]["mean"]),
    }
    # from the bins, as the merged centre across iterations is: one rule for both
    for q, value in histogram.percentiles(hist, (50.0, 99.0, 99.9)).items():
        metrics[f"lat_p{q:g}"] = float(value)
    return EngineResult(metrics=metrics, histograms={"lat": hist})


def _batch(doc: dict[str, Any]) -> EngineResult:
    per_call = doc["us_per_call"]
    return EngineResult(
        metrics={
            "per_call": float(per_call["median"]),
            "per_call_min": float(per_call["min"]),
            "calls": float(doc["calls"]),
        }
    )


# Metric names before store version 6 -> now: a name says what it counts in both timing modes
# (us_per_call was kinsn per call in instructions mode). Old stores are migrated (iolab.store.schema);
# an experiment file's old names are read as the new ones (iolab.load.metric_names.renamed).
RENAMED = {"us_per_call": "per_call", "us_per_call_min": "per_call_min"}
LATENCY = ("ops", "iops", "bw", "lat_mean", "lat_p50", "lat_p99", "lat_p99.9", "cs_per_io")
METRICS: dict[str, tuple[str, ...]] = {  # each mode's metrics (and ctx, of every mode)
    "lat": LATENCY, "uring": LATENCY, "batch": ("per_call", "per_call_min", "calls"),
    "churn": ("total_ns", "phase_ns"),
}


def metric_names(mode: str, phases: str | None = None) -> set[str]:
    """The metrics parse_output can give for a mode; churn's per phase from
    its ``phases`` parameter ("sync,delete"), or the pattern phase.*_ns when
    the probe's default phases run (their names are the probe's own)."""
    names = {*METRICS[mode], "ctx"}
    if mode == "churn":
        names |= set(phase_names(phases.split(","))) if phases else {"phase.*_ns"}
    return names


def phase_names(names: list[str]) -> list[str]:
    """Metric names of churn phases: the name, or name#k where it repeats."""
    out = []
    for index, name in enumerate(names):
        if names.count(name) > 1:
            name = f"{name}#{names[: index + 1].count(name)}"
        out.append(f"phase.{name}_ns")
    return out


def _churn(doc: dict[str, Any]) -> EngineResult:
    phases = doc["phases"]
    metrics = {
        key: float(phase["ns"]) for key, phase in zip(phase_names([p["name"] for p in phases]), phases)
    }
    metrics["total_ns"] = float(doc["total_ns"])
    if doc.get("report_phase_ns") is not None:
        metrics["phase_ns"] = float(doc["report_phase_ns"])
    return EngineResult(metrics=metrics)


def parse_output(doc: dict[str, Any]) -> EngineResult:
    """Metrics and histograms of one probe run's JSON."""
    mode = doc.get("mode")
    try:
        if mode == "lat":
            elapsed = doc["elapsed_ns"]
            result = _latency(doc, doc["bytes"] * 1e9 / elapsed if elapsed else 0.0)
        elif mode == "uring":
            result = _latency(doc, float(doc["bw_bytes"]))
        elif mode == "batch":
            result = _batch(doc)
        elif mode == "churn":
            result = _churn(doc)
        else:
            raise EngineError(f"iolab-probe output of unknown mode {mode!r}")
        result.metrics["ctx"] = _context_switches(doc)
    except (KeyError, TypeError, ValueError) as error:
        raise EngineError(f"iolab-probe {mode} output lacks or garbles {error}") from None
    if mode in ("lat", "uring") and result.metrics["ops"]:
        result.metrics["cs_per_io"] = result.metrics["ctx"] / result.metrics["ops"]
    return result
