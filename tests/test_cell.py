"""The cell executor with knobs, placement and collectors, on real kernel interfaces."""

import os
from pathlib import Path

import pytest

from iolab.cell import executor as cell
from iolab.knobs import memory_cgroup
from tests.helpers import experiment

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.machine_wide, pytest.mark.usefixtures("needs_root_tools", "clean_system")]

THP = "/sys/kernel/mm/transparent_hugepage/use_zero_page"
JOB = "[global]\nrw=randread\nbs=4k\nsize=16M\nruntime=1\ntime_based=1\n[r]\n"


def make_cell(variant=None, workload=None, job=JOB, **tables):
    exp = experiment([{"name": "v", **(variant or {})}, "other"], target={"size": "128MiB"},
                     workload=[{"name": "w", "job": job, **(workload or {})}], **tables)
    return cell.CellSpec(seq=0, round=0, iteration=0, warmup=False, target=exp.target,
                         variant=exp.variant[0], workload=exp.workload[0], job=job,
                         setup=exp.cell, collect=exp.collect, derived=exp.derived)


def execute(tmp_path, spec_):
    (tmp_path / "cache").mkdir(exist_ok=True)
    return cell.execute(spec_, tmp_path, tmp_path / "cache", tmp_path / "journal")


def read(path):
    return Path(path).read_text().strip()


def our_cgroups():
    """Memory cgroups this test process made (other iolab runs may have their own)."""
    cg = memory_cgroup()
    mine = f"-{os.getpid()}-"
    return sorted(p.name for p in Path(cg.mount).rglob("iolab*") if p.is_dir() and mine in p.name)


def test_failure_mid_cell_restores_every_knob(tmp_path):
    before = {k: read(f"/proc/sys/vm/{k}") for k in ("dirty_bytes", "dirty_ratio", "dirty_background_bytes")}
    thp_before = read(THP)
    variant = {
        "sysctl": {"vm.dirty_bytes": 64 << 20, "vm.dirty_background_bytes": 16 << 20},
        "sysfs": {THP: "0" if thp_before == "1" else "1", "/sys/block/{dev}/queue/read_ahead_kb": 64},
        "memory_max": "256MiB",
        "cpus": [0],
        # fails inside the engine's run, with every knob applied
        "fio": {"direct": 1, "bs": 100},
    }
    sample = execute(tmp_path, make_cell(variant))
    assert sample.status == "failed" and "Invalid argument" in sample.error
    after = {k: read(f"/proc/sys/vm/{k}") for k in ("dirty_bytes", "dirty_ratio", "dirty_background_bytes")}
    assert after == before
    assert read(THP) == thp_before
    assert our_cgroups() == []
    journal = tmp_path / "journal"
    assert not journal.exists() or read(journal) == ""  # nothing left to recover
    applied = sample.env["knobs"]
    assert any("dirty_bytes" in label for label in applied)


def test_knobs_hold_during_the_run_and_are_recorded(tmp_path):
    sample = execute(tmp_path, make_cell({"sysfs": {"/sys/block/{dev}/queue/nomerges": 2}}))
    assert sample.status == "ok", sample.error
    (label, (old, new)), = sample.env["knobs"].items()
    assert "nomerges" in label and new == "2" and old != "2"


def test_memory_limit_caps_the_workload(tmp_path):
    job = "[global]\nrw=read\nbs=1M\nsize=96M\n[r]\n"
    sample = execute(tmp_path, make_cell(workload={"memory_max": "32MiB"}, job=job))
    assert sample.status == "ok", sample.error
    assert 0 < sample.metrics["cgroup.memory_peak_bytes"] <= 32 << 20


def test_lost_trace_events_fail_the_sample(tmp_path):
    collect = {"phase": [{"name": "rq", "start": "block:block_rq_issue", "end": "block:block_rq_complete",
                          "buffer_size_kb": 4}]}
    job = "[global]\nrw=randread\nbs=4k\ndirect=1\nsize=16M\nruntime=2\ntime_based=1\n[r]\n"
    sample = execute(tmp_path, make_cell(job=job, collect=collect))
    assert sample.status == "failed"
    assert "lost" in sample.error and "buffer_size_kb" in sample.error
    assert sample.metrics == {}


def test_perf_tracepoint_counts_and_derived_metric(tmp_path):
    job = "[global]\nrw=randread\nbs=4k\ndirect=1\nsize=16M\nruntime=1\ntime_based=1\n[r]\n"
    sample = execute(tmp_path, make_cell(
        job=job,
        collect={"perf": ["block:block_rq_complete"]},
        derived={"cpl_per_io": "`perf.block:block_rq_complete` / disk.ios"},
    ))
    assert sample.status == "ok", sample.error
    completions = sample.metrics["perf.block:block_rq_complete"]
    # the loop device's completions, plus whatever the backing disk completed meanwhile
    assert completions >= sample.metrics["disk.ios"] > 0
    assert sample.metrics["cpl_per_io"] >= 1.0


def test_perf_filter_counts_only_the_target(tmp_path):
    job = "[global]\nrw=randread\nbs=4k\ndirect=1\nsize=16M\nruntime=1\ntime_based=1\n[r]\n"
    sample = execute(tmp_path, make_cell(
        job=job,
        collect={"perf": [{"event": "block:block_rq_complete", "filter": "dev == {devt}", "name": "rq_complete"}]},
    ))
    assert sample.status == "ok", sample.error
    # fio's I/Os, plus the few the filesystem issued on the same device meanwhile
    ios = sample.metrics["ios"]
    assert ios <= sample.metrics["perf.rq_complete"] <= ios * 1.05 + 50
    assert sample.metrics["perf.rq_complete"] == pytest.approx(sample.metrics["disk.ios"], abs=20)  # windows differ by microseconds


def test_bad_sysfs_value_is_a_failed_cell_not_a_crash(tmp_path):
    sample = execute(tmp_path, make_cell({"sysfs": {"/sys/block/{dev}/queue/scheduler": "no-such-scheduler"}}))
    assert sample.status == "failed" and "scheduler" in sample.error
