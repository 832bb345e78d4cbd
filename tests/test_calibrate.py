"""The A/A experiment iolab calibrate builds, and the figures it computes."""

import math

import numpy as np
import pytest

from iolab import analysis, stats
from iolab.run import calibrate
from iolab.run import runner
from iolab.store import Store
from tests import helpers
from tests.fakes import ScriptedHost

def base(**tables):
    """Variant a-long-variant (direct I/O) against b, one randread workload."""
    tables.setdefault("run", {"iterations": 8})  # no seed: each run draws its own
    return helpers.experiment([{"name": "a-long-variant", "fio": {"direct": 1}}, "b"], name="c",
                              workload=[{"name": "w", "job": "[j]\nrw=randread\n"}],
                              report={"metrics": ["read_bw", "read_p50"]}, **tables)


def test_aa_experiment_copies_the_baseline():
    aa = calibrate.aa_experiment(base(variant=[{"name": "buffered"}, {"name": "d"}]))
    assert [v.name for v in aa.variant] == ["buffered", "buffered'"]
    assert aa.variant[0].model_dump(exclude={"name"}) == aa.variant[1].model_dump(exclude={"name"})
    assert aa.run.iterations == 8 and aa.report.kind == "calibration"
    long = calibrate.aa_experiment(base(variant=[{"name": "x" * 24}, {"name": "d"}]), 9)
    assert long.variant[1].name == "x" * 23 + "'" and long.run.iterations == 9
    auto = calibrate.aa_experiment(base(run={"iterations": "auto", "max_iterations": 12}))
    assert auto.run.iterations == calibrate.DEFAULT_ITERATIONS and not auto.run.auto


def test_calibration_figures_match_the_statistics(tmp_path, monkeypatch):
    aa = calibrate.aa_experiment(base(variant=[{"name": "a"}, {"name": "b"}]), 8)
    store = Store(tmp_path / "c.db")
    run_id = runner.run(aa, store, host=ScriptedHost({"a": 100.0, "a'": 100.0}), seed=1)  # fixed order: an A/A may be a false alarm
    samples = store.samples(run_id)
    result = analysis.analyse(store.run(run_id), samples)
    found = calibrate.calibrate(result, samples)
    bw, p50 = found.rows
    a = [s.metrics["read_bw"] for s in sorted(samples, key=lambda s: s.round) if s.variant == "a"]
    b = [s.metrics["read_bw"] for s in sorted(samples, key=lambda s: s.round) if s.variant == "a'"]
    pooled = np.array(a + b)
    assert bw.n == 8 and bw.noise == pytest.approx(np.std(pooled, ddof=1) / np.mean(pooled))
    assert found.detect_alpha == pytest.approx(0.05 / 2)
    assert found.test == "signed-rank"  # an interleaved A/A run is paired by round
    ratios = np.log(np.array(b)) - np.log(np.array(a))
    assert bw.detectable == stats.detectable_change_paired(ratios, 8, 0.025, 0.9)
    assert bw.false_positive == stats.aa_false_positive_rate(a, b, 0.05, test="signed-rank")
    assert bw.aa.verdict == "same"
    # p50 of the scripted host never changes: no detectable change can be computed
    assert math.isnan(p50.detectable) and p50.false_positive is None and "quantized" in p50.warnings[0]
