"""A series' steps run only the workloads their patch can reach, and a third
round only where a step is not exact: which cells run, what is stored, and
that each change is still placed on its patch (iolab.run.series).

Runs go through the real runner and store with the scripted StepHost of
tests/test_series.py (each step's value per workload)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iolab import analysis, load, plan
from iolab.report import renderer
from iolab.run import runner, series
from iolab.store import Store
from tests.test_series import StepHost

# each patch's file: which filesystem's code it changes, if any
FILES = {"ext4.patch": "fs/ext4/inode.c", "f2fs.patch": "fs/f2fs/data.c", "erofs.patch": "fs/erofs/super.c",
         "ext4-again.patch": "fs/ext4/file.c", "vfs.patch": "fs/read_write.c"}


def reach_raw(tmp_path: Path, patches: list[str], **extra):
    for name in patches:
        path = FILES[name]
        (tmp_path / name).write_text(f"{name}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+{name}\n")
    (tmp_path / "linux.tar.gz").write_bytes(b"")
    raw = {
        "name": "a series on two filesystems",
        "kernel": {"source": "linux.tar.gz"},
        "series": {"patches": patches, "strategy": "every"},
        "target": {"kind": "loop", "fs": "ext4"},
        "workload": [{"name": "on_ext4", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}},
                     {"name": "on_f2fs", "engine": "probe", "fs": "f2fs",
                      "probe": {"mode": "batch", "case": "write_u1k"}}],
        "report": {"metrics": ["per_call"]},
        "vm": {"timing": "instructions"},
        "run": {"seed": 7},
    }
    raw.update(extra)
    return raw


def run_reach(tmp_path, host, patches, **extra):
    experiment = load.parse(reach_raw(tmp_path, patches, **extra), base_dir=str(tmp_path))
    store = Store(tmp_path / "reach.db")
    run_id = runner.run(experiment, store, host=host)
    return store, run_id, analysis.analyse(store.run(run_id), store.samples(run_id))


@pytest.mark.parametrize("files, found", [
    (["fs/ext4/inode.c"], {"ext4"}),
    (["fs/ext4/inode.c", "fs/ext4/ext4.h", "fs/f2fs/data.c"], {"ext4", "f2fs"}),
    (["fs/read_write.c"], None),  # the VFS: every workload
    (["fs/ext4/inode.c", "fs/read_write.c"], None),
    (["fs/jbd2/journal.c"], None),  # shared by filesystems
    (["fs/iomap/direct-io.c"], None),
    (["include/linux/fs.h"], None),
    (["fs/nfs/inode.c"], None),  # a filesystem iolab does not mount: left alone
    ([], None),
])
def test_own_filesystems(files, found):
    assert series.own_filesystems(files) == found


def test_a_step_runs_only_the_workloads_its_patch_reaches_and_changes_stay_placed(tmp_path):
    """ext4, f2fs, erofs, ext4 again, the VFS: on_f2fs skips steps 1, 3 and 4,
    on_ext4 steps 2 and 3; step 3 (erofs) runs nothing. The ext4 change of
    step 4 is measured against step 1 and still placed on patch 4; the VFS
    change on both at step 5."""
    patches = ["ext4.patch", "f2fs.patch", "erofs.patch", "ext4-again.patch", "vfs.patch"]
    host = StepHost({"on_ext4": {1: 0.5, 4: 1.25, 5: 1.1}, "on_f2fs": {2: 0.8, 5: 1.1}})
    store, run_id, result = run_reach(tmp_path, host, patches)
    stored = result.experiment.series
    assert stored.unreached == {"1 ext4": ["on_f2fs"], "2 f2fs": ["on_ext4"], "3 erofs": ["on_ext4", "on_f2fs"],
                                "4 ext4-again": ["on_f2fs"]}
    ran = {(step, workload) for _, step, workload in host.seen}
    assert ran == {(0, "on_ext4"), (0, "on_f2fs"), (1, "on_ext4"), (2, "on_f2fs"), (4, "on_ext4"),
                   (5, "on_ext4"), (5, "on_f2fs")}
    assert len(host.seen) == 7 * 2  # two rounds, every comparison exact
    found = sorted((c.workload, c.step, c.placed, round(c.delta, 3)) for c in result.series.changes)
    assert found == [("on_ext4", 1, True, -0.5), ("on_ext4", 4, True, 0.25), ("on_ext4", 5, True, 0.1),
                     ("on_f2fs", 2, True, -0.2), ("on_f2fs", 5, True, 0.1)]
    assert result.rounds_done == 2 and result.cells_done == 14 and result.cells_planned == 3 * 7  # at most 3 rounds
    assert series.build_ahead(result.experiment) == ["base", "1 ext4", "2 f2fs", "4 ext4-again", "5 vfs"]
    text = " ".join(renderer("text")(result).split())
    assert "3 erofs.patch: not run: its patch reaches none of the workloads" in text
    assert "4 ext4-again.patch: on_ext4 kinsn/call: +25.0% =*; not run on on_f2fs (its patch cannot reach them)" in text
    assert "series: every step, each on the workloads its patch can reach;" in text


def test_a_step_left_out_between_a_failed_one_keeps_the_interval(tmp_path):
    """A step that did not build is no proof: the change after it stays between the steps measured."""
    patches = ["ext4.patch", "f2fs.patch", "ext4-again.patch"]
    host = StepHost({"on_ext4": {3: 1.25}}, fail={1})
    _, _, result = run_reach(tmp_path, host, patches)
    change = next(c for c in result.series.changes if c.workload == "on_ext4")
    assert (change.first, change.step, change.placed) == (1, 3, False)  # step 1 failed, step 2 not run


def test_reach_all_runs_every_workload_at_every_step(tmp_path):
    patches = ["ext4.patch", "erofs.patch"]
    host = StepHost({"on_ext4": {1: 0.5}})
    _, _, result = run_reach(tmp_path, host, patches,
                             series={"patches": patches, "strategy": "every", "reach": "all"})
    assert result.experiment.series.unreached == {}
    assert len(host.seen) == 3 * 2 * 2


def test_the_plan_leaves_out_the_unreached_cells(tmp_path):
    raw = reach_raw(tmp_path, ["ext4.patch", "erofs.patch"])
    raw["series"]["unreached"] = {"1 ext4": ["on_f2fs"], "2 erofs": ["on_ext4", "on_f2fs"]}
    experiment = load.parse(raw, base_dir=str(tmp_path))
    assert plan.pairs(experiment) == [("base", "on_ext4"), ("1 ext4", "on_ext4"), ("base", "on_f2fs")]
    cells = plan.plan(experiment, 7)
    assert len(cells) == 3 * 3 and [c.seq for c in cells] == list(range(9))


def test_unreached_names_steps_and_workloads(tmp_path):
    raw = reach_raw(tmp_path, ["ext4.patch"])
    raw["series"]["unreached"] = {"1 ext4": ["nowhere"]}
    with pytest.raises(Exception, match="unreached"):
        load.parse(raw, base_dir=str(tmp_path))


def test_a_third_round_only_for_the_steps_not_exact(tmp_path):
    """Step 2 varies on on_ext4 (noise on that step only): its comparisons with
    step 1 and with step 3 are not exact, so steps 1, 2 and 3 run a third
    round of on_ext4; nothing else does."""

    class OneNoisy(StepHost):
        def run_cell(self, cell):
            sample = super().run_cell(cell)
            if cell.variant.step == 2 and cell.workload.name == "on_ext4":
                sample.metrics["per_call"] *= 1 + 0.05 * cell.round
            return sample

    host = OneNoisy({})
    raw = reach_raw(tmp_path, [])
    raw["series"]["patches"] = [f"vfs{k}.patch" for k in (1, 2, 3)]
    for k in (1, 2, 3):
        diff = f"--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -1 +1 @@\n-a\n+{k}\n"
        (tmp_path / f"vfs{k}.patch").write_text(diff)
    experiment = load.parse(raw, base_dir=str(tmp_path))
    assert experiment.run.exact_stop and experiment.run.iterations == 3
    store = Store(tmp_path / "third.db")
    run_id = runner.run(experiment, store, host=host)
    third = sorted((step, workload) for r, step, workload in host.seen if r == 2)
    assert third == [(1, "on_ext4"), (2, "on_ext4"), (3, "on_ext4")]
    assert len(host.seen) == 4 * 2 * 2 + 3
    assert "3 of 8 later cells" in store.run(run_id).stop_reason


def test_the_dry_run_counts_only_the_cells_a_step_runs(tmp_path):
    from iolab.run import dryrun

    experiment = load.parse(reach_raw(tmp_path, ["ext4.patch", "erofs.patch", "vfs.patch"]), base_dir=str(tmp_path))
    said = list(dryrun.lines(experiment, 7, None))
    # base 2 + ext4 1 + erofs 0 + vfs 2, 3 rounds at most
    assert said[0].startswith(f"{experiment.name}: {3 * 5} cells")
    assert "on the workloads its patch can reach (3 (step, workload) pairs left out)" in said[1]


@pytest.mark.parametrize("timing, boots", [("instructions", os.cpu_count() or 1), ("wall", 1)])
def test_a_series_boots_side_by_side_where_its_steps_build_ahead(tmp_path, timing, boots):
    """Instructions timing: the steps build ahead in a thread of their own, and a count does not
    depend on the host's load, so the cells run one boot per CPU; wall timing: one boot at a time."""
    raw = reach_raw(tmp_path, ["ext4.patch"], vm={"timing": timing})
    experiment = load.parse(raw, base_dir=str(tmp_path))
    assert runner.host_for(experiment, {}, steps=object()).parallel == boots
