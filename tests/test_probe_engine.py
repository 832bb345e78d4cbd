"""The probe engine: iolab-probe's JSON into metrics and histograms, its
errors into EngineError, probe workloads in experiment files, and (as root)
probe workloads run through the whole pipeline on real loop devices.

Fixtures in tests/fixtures/probe/ were recorded from the real binary on an
ext4 loop mount (see test_fixtures_are_real_probe_output)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from iolab import analysis, histogram, load, spec
from iolab.analysis import metrics
from iolab.run import runner
from iolab.engines import EngineError, WorkloadRun, get
from iolab.engines import probe as engine
from iolab.cell.sample import Sample
from iolab.store import RunInfo, Store
from iolab.sysutil import ToolError
from iolab.engines import Prepared
from tests.helpers import FIXTURES, REPO, experiment

PROBE_FIXTURES = FIXTURES / "probe"


def fixture(name: str) -> dict:
    return json.loads((PROBE_FIXTURES / name).read_text())


@pytest.fixture(scope="session")
def built_probe(tmp_path_factory) -> Path:
    """iolab-probe built from the current sources in a temp dir (no race with make -C probe)."""
    for tool in ("make", "cc"):
        if shutil.which(tool) is None:
            pytest.skip(f"cannot build iolab-probe: {tool} is not installed")
    build = tmp_path_factory.mktemp("probe-engine-build")
    for src in (REPO / "probe").iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy2(src, build / src.name)
    done = subprocess.run(["make", "-s", "-C", str(build)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot build iolab-probe: {done.stderr.strip()[-300:]}")
    return build / "iolab-probe"


@pytest.fixture
def probe_bin(built_probe, monkeypatch) -> Path:
    monkeypatch.setenv("IOLAB_PROBE", str(built_probe))
    return built_probe


def work(job: dict, tmp_path: Path, options: dict | None = None, mountpoint: str | None = None) -> WorkloadRun:
    mount = tmp_path / "mnt"
    mount.mkdir(exist_ok=True)
    target = Prepared(fs="ext4", device=None, mountpoint=mountpoint or str(mount))
    return WorkloadRun(engine.job_text(job), options or {}, target, tmp_path)


# -- the parameter table ----------------------------------------------------


def test_table_matches_describe(probe_bin):
    described = json.loads(subprocess.run([str(probe_bin), "--describe"], capture_output=True,
                                          text=True, check=True).stdout)

    def kinds(params):
        return {p["name"]: tuple(p["choices"]) if p["type"] == "CHOICE" else p["type"] for p in params}

    assert described["probe_version"] == engine.OUTPUT_VERSION
    assert kinds(described["common"]["params"]) == engine.COMMON
    assert {m["name"]: kinds(m["params"]) for m in described["modes"]} == engine.MODES
    rwf_help = next(p["help"] for m in described["modes"] if m["name"] == "lat"
                    for p in m["params"] if p["name"] == "rwf")
    assert all(flag in rwf_help for flag in engine.RWF_FLAGS)


def test_normalize_sizes_bools_and_names():
    params = engine.normalize({"mode": "lat", "op": "pwrite", "bs": "4k", "file_size": "64MiB",
                               "direct": True, "dsync": 0, "ops": 50000, "warmup_ops": 10,
                               "runtime": "500ms", "rwf": []})
    assert params == {"mode": "lat", "op": "pwrite", "bs": 4096, "file-size": 64 << 20, "direct": True,
                      "dsync": False, "ops": 50000, "warmup-ops": 10, "runtime": "500ms", "rwf": ""}
    assert engine.normalize(params) == params  # idempotent: a stored experiment validates again
    churn = engine.normalize({"mode": "churn", "phases": ["create", "sync"], "report-phase": "sync"})
    assert churn["phases"] == "create,sync"


@pytest.mark.parametrize("params, message", [
    ({"op": "pread"}, "mode: missing"),
    ({"mode": "frob"}, "mode: unknown mode 'frob' (modes: lat, batch, uring, churn)"),
    ({"mode": "lat", "case": "write_u1k"}, "case: not a parameter of mode lat"),
    ({"mode": "lat", "file": "/etc/passwd"}, "file: chosen by iolab from [target]"),
    ({"mode": "churn", "dir": "/tmp"}, "dir: chosen by iolab"),
    ({"mode": "lat", "bs": "4q"}, "bs: not a size"),
    ({"mode": "lat", "ops": -1}, "ops: expected a whole number"),
    ({"mode": "lat", "ops": True}, "ops: expected a whole number"),
    ({"mode": "lat", "direct": "yes"}, "direct: expected true or false"),
    ({"mode": "lat", "op": "read"}, "op: 'read' is not one of pread, pwrite, preadv2, pwritev2"),
    ({"mode": "lat", "rwf": "dontcache,fast"}, "rwf: unknown flag 'fast'"),
    ({"mode": "lat", "runtime": "soon"}, "runtime: expected seconds"),
    ({"mode": "batch"}, "case: mode batch needs it"),
])
def test_normalize_refuses(params, message):
    with pytest.raises(ValueError) as error:
        engine.normalize(params)
    assert message in str(error.value)


# -- experiment files ---------------------------------------------------------


def probe_experiment(workload: dict, variants: list[dict] | None = None, **tables) -> spec.Experiment:
    """An experiment of one probe workload "w" (the probe's default metrics)."""
    return experiment(variants or ("a", "b"), workload=[{"name": "w", "engine": "probe", **workload}], report=None,
                      **tables)


def test_probe_workload_in_an_experiment():
    exp = probe_experiment({"probe": {"mode": "lat", "op": "pread", "bs": "4k", "file_size": "64M",
                                      "direct": True, "ops": 50000}},
                           [{"name": "4k"}, {"name": "8k", "probe": {"bs": "8k", "direct": 1}}])
    workload = exp.workload[0]
    assert workload.probe == {"mode": "lat", "op": "pread", "bs": 4096, "file-size": 64 << 20,
                              "direct": True, "ops": 50000}
    assert json.loads(load.job_text(exp, workload)) == workload.probe
    assert exp.variant[1].probe == {"bs": 8192, "direct": True}
    # what the store keeps validates again to the same experiment
    assert spec.Experiment.model_validate_json(exp.model_dump_json()) == exp


@pytest.mark.parametrize("workload, variants, message", [
    ({"probe": {"mode": "lat", "frob": 1}}, None, 'workload["w"].probe: frob: not a parameter of mode lat'),
    ({}, None, "engine = 'probe' takes probe = { mode = ..., ... }"),
    ({"probe": {"mode": "lat"}, "job": "[x]\n"}, None, "leave out job"),
    ({"probe": {"mode": "lat"}, "job_file": "x.fio"}, None, "no job, no job_file"),
    ({"probe": {"mode": "lat"}}, [{"name": "a"}, {"name": "b", "probe": {"mode": "batch"}}],
     'variant["b"].probe: mode: a variant cannot change'),
    ({"probe": {"mode": "lat"}}, [{"name": "a"}, {"name": "b", "probe": {"frob": 1}}],
     'variant["b"].probe: frob: not a parameter of any probe mode'),
])
def test_probe_workload_refused(workload, variants, message):
    with pytest.raises(spec.SpecError) as error:
        probe_experiment(workload, variants)
    assert message in str(error.value)


def test_probe_table_needs_probe_engine():
    with pytest.raises(spec.SpecError, match="probe = {...} is for engine = 'probe'"):
        experiment(workload=[{"name": "w", "job": "[j]\n", "probe": {"mode": "lat"}}])


def test_variant_override_not_in_the_mode_fails_the_cell(tmp_path):
    with pytest.raises(EngineError, match="variant probe option 'case' is not a parameter of mode lat"):
        engine.merged(engine.job_text({"mode": "lat"}), {"case": "write_u1k"})
    mode, params = engine.merged(engine.job_text({"mode": "lat", "bs": "4k"}), {"bs": 8192})
    assert (mode, params) == ("lat", {"bs": 8192})


# -- parsing real output ------------------------------------------------------


def test_lat_metrics():
    doc = fixture("lat-pread-direct-ext4.json")
    result = engine.parse_output(doc)
    m, hist = result.metrics, result.histograms["lat"]
    assert histogram.total(hist) == doc["ops"] == m["ops"]
    for q, key in ((50, "p50"), (99, "p99"), (99.9, "p99.9")):
        assert m[f"lat_p{q:g}"] == histogram.percentile(hist, q)
        # the probe clamps to the exact [min, max]; the bucket value is within 0.4%
        assert m[f"lat_p{q:g}"] == pytest.approx(doc["lat_ns"][key], rel=0.004)
    assert m["lat_mean"] == doc["lat_ns"]["mean"]
    assert m["iops"] == doc["iops"]
    assert m["bw"] == pytest.approx(doc["bytes"] / (doc["elapsed_ns"] / 1e9) / 2**20)
    assert m["ctx"] == doc["rusage"]["nvcsw"] + doc["rusage"]["nivcsw"]
    assert m["cs_per_io"] == m["ctx"] / doc["ops"]


def test_uring_metrics():
    doc = fixture("uring-read-qd4-direct-ext4.json")
    result = engine.parse_output(doc)
    assert result.metrics["bw"] == doc["bw_bytes"] / 2**20
    assert histogram.total(result.histograms["lat"]) == doc["ops"]
    assert result.metrics["lat_p50"] == pytest.approx(doc["lat_ns"]["p50"], rel=0.004)


def test_batch_metrics():
    doc = fixture("batch-write_u1k-ext4.json")
    result = engine.parse_output(doc)
    assert result.metrics["per_call"] == doc["us_per_call"]["median"]
    assert result.metrics["per_call_min"] == doc["us_per_call"]["min"]
    assert result.metrics["calls"] == doc["calls"]
    assert result.histograms == {}


def test_churn_metrics():
    doc = fixture("churn-300-ext4.json")
    m = engine.parse_output(doc).metrics
    ns = [p["ns"] for p in doc["phases"]]
    assert [p["name"] for p in doc["phases"]] == ["create", "sync", "delete", "drop_caches", "sync"]
    assert (m["phase.create_ns"], m["phase.sync#1_ns"], m["phase.delete_ns"],
            m["phase.drop_caches_ns"], m["phase.sync#2_ns"]) == tuple(ns)
    assert m["phase_ns"] == doc["report_phase_ns"] == m["phase.sync#2_ns"]  # the last sync
    assert m["total_ns"] == doc["total_ns"]
    assert metrics.lookup("phase.sync#2_ns").label == "sync#2 ns"
    assert metrics.lookup("phase.drop_caches_ns").unit == "ns"


def test_fixtures_are_real_probe_output():
    for path in PROBE_FIXTURES.glob("*.json"):
        doc = json.loads(path.read_text())
        assert doc["probe_version"] == 1 and doc["mode"] in engine.MODES, path.name
        assert doc["params"].get("file", doc["params"].get("dir", "")).startswith("mnt/"), path.name


@pytest.mark.parametrize("doc, message", [
    ({"probe_version": 2, "mode": "lat"}, "output version 2; iolab reads version 1"),
    ({"probe_version": 1, "mode": "lat", "ops": 1}, "iolab-probe lat output lacks or garbles"),
    ({"probe_version": 1, "mode": "frob"}, "unknown mode 'frob'"),
])
def test_bad_output(doc, message):
    with pytest.raises(EngineError, match=message):
        engine.parse_output(engine.load_output(json.dumps(doc)))


def test_metrics_are_registered_with_short_labels():
    for name in ("lat_p50", "lat_p99", "lat_p99.9", "lat_mean", "iops", "bw", "per_call",
                 "per_call_min", "phase_ns", "total_ns", "ctx"):
        metric = metrics.lookup(name)
        assert metric.name in metrics.KNOWN and len(metric.label) <= 14
    p50 = metrics.lookup("lat_p50")
    assert (p50.label, p50.unit, p50.histogram, p50.quantile, p50.scale) == ("median ns/op", "ns", "lat", 50.0, 1.0)
    assert metrics.lookup("per_call").label == "us/call"


# -- across iterations: merged histograms, default rows -------------------------


def _sample(seq: int, variant: str, result) -> Sample:
    return Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant=variant, workload="w",
                  status="ok", metrics=result.metrics, histograms=result.histograms)


def test_percentile_rows_use_the_merged_histogram():
    read = engine.parse_output(fixture("lat-pread-direct-ext4.json"))
    write = engine.parse_output(fixture("lat-pwrite-1k-cached-ext4.json"))
    merged = histogram.merge([read.histograms["lat"], write.histograms["lat"]])
    assert histogram.total(merged) == read.metrics["ops"] + write.metrics["ops"]
    assert all(isinstance(k, int) and isinstance(v, int) for k, v in merged.items())
    exp = probe_experiment({"probe": {"mode": "lat"}})
    info = RunInfo(id=1, name="probe", status="complete", seed=1, started=0.0, finished=0.0,
                   experiment_path=None, experiment_json=exp.model_dump_json(), planned_cells=4,
                   host={}, recheck_of=None)
    samples = [_sample(1, "a", read), _sample(2, "a", write), _sample(3, "b", read), _sample(4, "b", read)]
    result = analysis.analyse(info, samples)
    rows = {row.metric.name: row for row in result.rows}
    assert list(rows) == ["lat_p50", "lat_p99"]  # the default rows of a lat workload
    assert rows["lat_p99"].figures["a"].center == histogram.percentile(merged, 99)
    assert rows["lat_p50"].figures["b"].center == read.metrics["lat_p50"]


def test_default_rows_of_each_mode():
    produced = {
        "lat": engine.parse_output(fixture("lat-pread-direct-ext4.json")).metrics,
        "batch": engine.parse_output(fixture("batch-write_u1k-ext4.json")).metrics,
        "churn": engine.parse_output(fixture("churn-300-ext4.json")).metrics,
    }
    rows = {mode: [n for n in metrics.DEFAULT_ROWS if n in m] for mode, m in produced.items()}
    assert rows == {"lat": ["lat_p50", "lat_p99"], "batch": ["per_call"], "churn": ["phase_ns"]}


# -- running the binary ---------------------------------------------------------


def test_run_places_the_file_on_the_target(probe_bin, tmp_path):
    result = get("probe").run(work({"mode": "lat", "op": "pwrite", "bs": "1k", "file_size": "256k",
                                    "ops": 500}, tmp_path))
    assert result.metrics["ops"] == 500 and histogram.total(result.histograms["lat"]) == 500
    argv = result.artefacts["probe.argv"]
    assert f"--file={tmp_path}/mnt/probe.dat" in argv and "--bs=1024" in argv and "--op=pwrite" in argv
    assert json.loads(result.artefacts["probe.json"])["params"]["file"] == f"{tmp_path}/mnt/probe.dat"
    assert re.fullmatch(r"iolab-probe 1 \(sha256 [0-9a-f]{12}\)", get("probe").version())


def test_batch_and_churn_run(probe_bin, tmp_path):
    batch = get("probe").run(work({"mode": "batch", "case": "pwrite_u1k", "batches": 5, "batch": 100}, tmp_path))
    assert batch.metrics["per_call"] > 0 and batch.metrics["calls"] == 500
    churn = get("probe").run(work({"mode": "churn", "files": 50, "workers": 2, "delete_every": 10,
                                   "phases": "create,delete,create", "report_phase": "create#1"}, tmp_path))
    assert churn.metrics["phase_ns"] == churn.metrics["phase.create#1_ns"]
    assert "--dir=" + str(tmp_path / "mnt" / "churn") in churn.artefacts["probe.argv"]


def test_probe_error_is_an_engine_error_with_its_text(probe_bin, tmp_path):
    with pytest.raises(EngineError) as error:
        get("probe").run(work({"mode": "lat", "rwf": "dontcache"}, tmp_path))
    assert str(error.value) == "iolab-probe lat exit 2: lat: --rwf needs --op=preadv2 or --op=pwritev2 (got --op=pread)"


def test_probe_error_text_from_recorded_stderr():
    text = engine.probe_error(1, (PROBE_FIXTURES / "error-direct-bs100.stderr").read_text())
    assert text.startswith("pread: Invalid argument [EINVAL] (offset 0, len 100, flags O_DIRECT")
    assert "; hint: O_DIRECT needs offset and length aligned to 512 bytes" in text and "(--bs) is not" in text
    assert engine.probe_error(-9, "") == "killed by signal 9"


def test_placement_on_a_raw_device():
    assert engine.placement("lat", None, "/dev/loop7") == {"file": "/dev/loop7"}
    assert engine.placement("uring", None, "/dev/loop7") == {"file": "/dev/loop7"}
    with pytest.raises(EngineError, match="probe batch needs a filesystem"):
        engine.placement("batch", None, "/dev/loop7")
    with pytest.raises(EngineError, match="probe churn needs a filesystem"):
        engine.placement("churn", None, "/dev/loop7")


def test_missing_binary_says_how_to_build(tmp_path, monkeypatch):
    monkeypatch.delenv("IOLAB_PROBE", raising=False)
    monkeypatch.setattr(engine, "PROBE_DIR", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match=r"iolab-probe is not built .*: run 'make -C probe' \(or 'make setup'\)"):
        engine.ProbeEngine().version()
    monkeypatch.setenv("IOLAB_PROBE", str(tmp_path / "nope"))
    with pytest.raises(ToolError, match="IOLAB_PROBE=.*nope: not an executable file"):
        engine.binary()


def test_stale_binary_says_rebuild(tmp_path, monkeypatch):
    monkeypatch.delenv("IOLAB_PROBE", raising=False)
    monkeypatch.setattr(engine, "PROBE_DIR", tmp_path)
    (tmp_path / "iolab-probe").write_text("#!/bin/sh\n")
    (tmp_path / "iolab-probe").chmod(0o755)
    os.utime(tmp_path / "iolab-probe", (1, 1))
    (tmp_path / "main.c").write_text("")
    with pytest.raises(ToolError, match="older than main.c: run 'make -C probe'"):
        engine.binary()


# -- the whole pipeline, real loop devices (root) --------------------------------


def loop_experiment(variants: list[dict], iterations: int) -> spec.Experiment:
    return probe_experiment({"probe": {"mode": "lat", "op": "pread", "bs": "4k", "file_size": "8M", "direct": True,
                                       "ops": 2000}},
                            variants, target={"fs": "ext4", "size": "64MiB"}, run={"iterations": iterations, "seed": 1})


@pytest.mark.integration
@pytest.mark.root
@pytest.mark.usefixtures("needs_root_tools", "clean_system")
def test_probe_workload_through_the_runner(probe_bin, tmp_path):
    exp = loop_experiment([{"name": "4k"}, {"name": "8k", "probe": {"bs": "8k"}}], iterations=2)
    store = Store(tmp_path / "store.db")
    run_id = runner.run(exp, store)
    samples = store.samples(run_id)
    assert [s.status for s in samples] == ["ok"] * 4, [s.error for s in samples]
    for sample in samples:
        assert sample.env["probe"].startswith("iolab-probe 1 (sha256 ")
        assert histogram.total(sample.histograms["lat"]) == sample.metrics["ops"] == 2000
        argv = store.artefact(run_id, sample.seq, "probe.argv")
        assert "/probe.dat" in argv and ("--bs=8192" in argv) == (sample.variant == "8k")
        doc = json.loads(store.artefact(run_id, sample.seq, "probe.json"))
        assert doc["target"]["created"] and doc["io_flags"] == "O_DIRECT"
    result = analysis.analyse(store.run(run_id), samples)
    p99 = next(row for row in result.rows if row.metric.name == "lat_p99")
    for variant in ("4k", "8k"):
        merged = histogram.merge(s.histograms["lat"] for s in samples if s.variant == variant)
        assert p99.figures[variant].center == histogram.percentile(merged, 99)
        assert p99.figures[variant].n == 2


@pytest.mark.integration
@pytest.mark.root
@pytest.mark.usefixtures("needs_root_tools", "clean_system")
def test_unaligned_direct_block_size_is_a_failed_cell(probe_bin, tmp_path):
    exp = loop_experiment([{"name": "ok"}, {"name": "bad", "probe": {"bs": 100}}], iterations=1)
    store = Store(tmp_path / "store.db")
    run_id = runner.run(exp, store)
    by_variant = {s.variant: s for s in store.samples(run_id)}
    assert by_variant["ok"].status == "ok"
    bad = by_variant["bad"]
    assert bad.status == "failed" and bad.metrics == {}
    assert bad.error.startswith("iolab-probe lat exit 1: pread: Invalid argument [EINVAL] (offset 0, len 100")
    assert "(--bs) is not" in bad.error


def test_instructions_mode_cuts_the_probe_op_counts_to_what_a_count_needs():
    batch = json.loads(engine.for_instructions(engine.job_text({"mode": "batch", "case": "pwrite_u10k", "batches": 50})))
    assert batch["batches"] == engine.INSTRUCTIONS_BATCHES and batch["batch"] == engine.INSTRUCTIONS_PWRITE_BATCH
    write = json.loads(engine.for_instructions(engine.job_text({"mode": "batch", "case": "write_u10k"})))
    assert "batch" not in write  # libMicro's batch size kept: a smaller one walks fewer folios
    assert json.loads(engine.for_instructions(engine.job_text({"mode": "batch", "case": "write_u1k"})))["batches"] \
        == engine.INSTRUCTIONS_BATCHES  # the probe's default of 200
    assert json.loads(engine.for_instructions(engine.job_text({"mode": "batch", "case": "write_u1k", "batches": 5})))[
        "batches"] == 5  # fewer asked: kept
    lat = engine.job_text({"mode": "lat", "op": "pread", "ops": 50000})
    assert engine.for_instructions(lat) == lat  # its later ops may be another workload: kept
    churn = engine.job_text({"mode": "churn", "files": 1000})
    assert engine.for_instructions(churn) == churn


def test_an_engine_version_is_asked_once_per_build_of_the_program(tmp_path):
    """Each cell records its engine's version; a VM guest pays an exec for
    each --version, so it is asked once, and again when the program changes."""
    from iolab.engines.base import version_of

    program = tmp_path / "tool"
    program.write_bytes(b"one")
    asked = []

    def ask():
        asked.append(program.read_bytes())
        return program.read_bytes().decode()

    assert version_of(program, ask) == "one" and version_of(program, ask) == "one"
    assert asked == [b"one"]
    program.write_bytes(b"two!")  # rebuilt: another size and mtime
    assert version_of(program, ask) == "two!"
    assert asked == [b"one", b"two!"]
