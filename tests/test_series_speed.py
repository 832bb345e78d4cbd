"""bench/series_speed.py's reference check: the fast run's value of a step
that left a workload out is the last step before it that ran the workload,
and every (step, workload) is set against the reference's within the
tolerance (the bench itself needs built kernels and QEMU: not run here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from iolab import load
from iolab.cell.sample import Sample

BENCH = Path(__file__).resolve().parent.parent / "bench" / "series_speed.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("series_speed", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["series_speed"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules["series_speed"]


def experiment(tmp_path, unreached):
    for k in (1, 2):
        (tmp_path / f"p{k}.patch").write_text(f"--- a/fs/ext4/a.c\n+++ b/fs/ext4/a.c\n@@ -1 +1 @@\n-a\n+{k}\n")
    (tmp_path / "linux.tar.gz").write_bytes(b"")
    return load.parse({
        "name": "x", "kernel": {"source": "linux.tar.gz"},
        "series": {"patches": ["p1.patch", "p2.patch"], "strategy": "every", "unreached": unreached},
        "workload": [{"name": name, "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"},
                      "metrics": ["per_call"]} for name in ("e", "f")],
        "vm": {"timing": "instructions"},
    }, base_dir=str(tmp_path))


def samples(values):
    return [Sample(seq=n, round=0, iteration=0, warmup=False, variant=v, workload=w, status="ok",
                   metrics={"per_call": value}) for n, ((v, w), value) in enumerate(values.items())]


def test_a_left_out_step_stands_for_the_step_before(bench, tmp_path):
    exp = experiment(tmp_path, {"1 p1": ["f"], "2 p2": ["f"]})
    fast = samples({("base", "e"): 10.0, ("1 p1", "e"): 5.0, ("2 p2", "e"): 5.0, ("base", "f"): 7.0})
    full = samples({("base", "e"): 10.0, ("1 p1", "e"): 5.0, ("2 p2", "e"): 5.0,
                    ("base", "f"): 7.0, ("1 p1", "f"): 7.0, ("2 p2", "f"): 7.001})
    said = []
    assert bench.reference_check(exp, fast, full, 0.01, said.append)
    assert "6 (step, workload) primary medians compared (2 of them" in said[0] and "5 identical" in said[0]


def test_a_value_beyond_the_tolerance_or_missing_fails(bench, tmp_path):
    exp = experiment(tmp_path, {"1 p1": ["f"]})
    fast = samples({("base", "e"): 10.0, ("1 p1", "e"): 5.0, ("2 p2", "e"): 5.0, ("base", "f"): 7.0,
                    ("2 p2", "f"): 7.0})
    full = samples({("base", "e"): 10.0, ("1 p1", "e"): 5.0, ("2 p2", "e"): 5.0,
                    ("base", "f"): 7.0, ("1 p1", "f"): 7.5})  # the left-out step did change; step 2's is missing
    said = []
    assert not bench.reference_check(exp, fast, full, 0.01, said.append)
    assert any("1 p1 / f / per_call: 7.0 fast, 7.5 reference" in line for line in said)
    assert any("2 p2 / f / per_call: 7.0 fast, None reference" in line for line in said)


def test_boots_are_a_steps_rounds(bench):
    one = SimpleNamespace(variant="base", round=0, metrics={"vm.boot_s": 8.0})
    two = SimpleNamespace(variant="base", round=0, metrics={"vm.boot_s": 8.0})
    three = SimpleNamespace(variant="base", round=1, metrics={"vm.boot_s": 9.0})
    assert bench.boots([one, two, three]) == {"base": [8.0, 9.0]}


def test_the_benchs_wrapper_of_a_steps_kernel_takes_what_the_runner_passes(bench, monkeypatch):
    """batch_walls wraps kernels.Steps.get: a boot thread passes its stop event
    too (a wrapper without it broke the bench's run with a TypeError)."""
    import threading

    from iolab import kernels

    asked = []
    monkeypatch.setattr(kernels.Steps, "get", lambda self, name, stop=None: asked.append((name, stop)) or "k")
    stop = threading.Event()
    walls, waits = [], {}
    with bench.batch_walls(walls, waits):
        assert kernels.Steps.get(object(), "step 1", stop) == "k"
    assert asked == [("step 1", stop)] and "step 1" in waits
