"""A run stops after its first measured round when a variant failed every cell
of it alike (iolab.run.early; after the first two for a variant of one cell a
round): the samples stay, the run is failed, the reason names the variant and
the error."""

import pytest

from iolab import analysis
from iolab.run import runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment

MOUNT = "mount -t xfs failed (exit 32): mount: /tmp/iolab-run-f7694bcff659/cell{seq}-b4c1b437837f/mnt: wrong fs type"


def per_cell(cell):
    """The error of a cell whose mount fails: its own directory in the text."""
    return MOUNT.format(seq=cell.seq)


def test_a_variant_that_cannot_run_stops_the_run_after_the_first_round(tmp_path):
    from iolab.cli import commands as cli
    from iolab.analysis.model import as_report

    store = Store(tmp_path / "s.db")
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell})
    run_id = runner.run(experiment(["ext4", "xfs"], 8, run={"iterations": 8, "seed": 5, "warmup": 1}), store,
                        host=host)
    run = store.run(run_id)
    assert [c.round for c in host.seen] == [0, 0, 1, 1, 2, 2]  # the warm-up round, then two measured ones:
    assert run.status == "failed"                                   # one cell a round, two cells judged
    assert run.stop_reason == ("variant 'xfs' failed its 2 cells of rounds 1-2 alike, so the run stopped there "
                               "(iolab resume runs the rest): "
                               "mount -t xfs failed (exit 32): mount: <cell dir>/mnt: wrong fs type")
    result = analysis.analyse(run, store.samples(run_id))
    assert cli._failure_status(as_report(result), "text") == 1
    assert result.rows[0].figures["ext4"].n == 2  # the other variant's samples of the rounds are kept


def test_a_variant_whose_cells_of_every_workload_fail_alike_stops_it(tmp_path):
    """Two workloads, one declared to fail: the other's cells decide, and an
    interleaved run ends the round first (4 cells)."""
    store = Store(tmp_path / "s.db")
    exp = experiment(["ext4", {"name": "xfs", "fails": {"c": "needs the series"}}], 8,
                     workload=[{"name": name, "job": "[j]\nrw=randread\n"} for name in "abc"])
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": lambda cell: per_cell(cell) + f" ({cell.workload.name})"
                                                      if cell.workload.name == "c" else per_cell(cell)})
    run_id = runner.run(exp, store, host=host)
    assert len(host.seen) == 6 and {c.round for c in host.seen} == {0}
    assert store.run(run_id).stop_reason.startswith("variant 'xfs' failed its 2 cells of round 0 alike, so the run")


@pytest.mark.parametrize("variants, fail, cells", [
    # failing as the experiment says it will
    (["ext4", {"name": "xfs", "fails": {"randread": "needs the series", "again": "needs the series"}}],
     {"xfs": per_cell}, 16),
    # some cells of the round fail, others do not
    (["ext4", "xfs"], {"xfs": lambda cell: None if cell.workload.name == "again" else per_cell(cell)}, 16),
])
def test_a_variant_that_can_run_or_is_expected_to_fail_runs_every_round(tmp_path, variants, fail, cells):
    store = Store(tmp_path / "s.db")
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, fail)
    exp = experiment(variants, 8, workload=[{"name": "randread", "job": "[j]\nrw=randread\n"},
                                            {"name": "again", "job": "[j]\nrw=randread\n"}])
    runner.run(exp, store, host=host)
    assert len(host.seen) == 2 * cells


def test_different_errors_in_the_round_do_not_stop_it(tmp_path):
    store = Store(tmp_path / "s.db")
    exp = experiment(["ext4", "xfs"], 8, workload=[{"name": "randread", "job": "[j]\nrw=randread\n"},
                                                   {"name": "seqread", "job": "[j]\nrw=read\n"}])
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": lambda cell: f"fio exit 1: {cell.workload.name}"})
    run_id = runner.run(exp, store, host=host)
    assert len(host.seen) == 32 and store.run(run_id).status == "complete"


def test_an_adaptive_run_stops_at_the_first_round_too(tmp_path):
    store = Store(tmp_path / "s.db")
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell})
    run_id = runner.run(experiment(["ext4", "xfs"], "auto", run={"iterations": "auto", "seed": 5,
                                                                  "min_iterations": 4}), store, host=host)
    assert len(host.seen) == 4 and "variant 'xfs' failed its 2 cells of rounds 0-1 alike," in \
        store.run(run_id).stop_reason


def test_resume_runs_the_rest_as_asked(tmp_path):
    """The user resumes a run stopped so (the machine mended, say): the rest runs."""
    store = Store(tmp_path / "s.db")
    exp = experiment(["ext4", "xfs"], 4)
    run_id = runner.run(exp, store, host=ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell}))
    assert store.run(run_id).status == "failed"
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell})
    runner.run(exp, store, host=host, resume=run_id)
    assert len(host.seen) == 4 and len(store.samples(run_id)) == 8
    assert store.run(run_id).status == "complete"  # some cells succeeded: failed ones are in the notes


def test_a_run_resumed_within_its_first_round_still_stops_at_its_end(tmp_path):
    """Interrupted after the first cell of round 0: the resumed run judges the
    variant whose cells it runs now, and ends the round before it stops."""
    store = Store(tmp_path / "s.db")
    exp = experiment(["ext4", "xfs"], 4)
    first = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell})
    first.run_cell = _interrupt_after(first.run_cell, 1)  # seed 5: ext4 runs first
    with pytest.raises(runner.Interrupted) as stopped:
        runner.run(exp, store, host=first)
    host = ScriptedHost({"ext4": 100.0, "xfs": 1.0}, {"xfs": per_cell})
    runner.run(exp, store, host=host, resume=stopped.value.run_id)
    samples = store.samples(stopped.value.run_id)
    assert len(samples) == 4 and {s.round for s in samples} == {0, 1}
    assert "variant 'xfs' failed its 2 cells of rounds 0-1 alike" in store.run(stopped.value.run_id).stop_reason


def _interrupt_after(run_cell, cells):
    count = []

    def run(cell):
        if len(count) == cells:
            raise KeyboardInterrupt
        count.append(cell)
        return run_cell(cell)
    return run
