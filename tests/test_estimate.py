"""The dry run's estimate: VM boots counted from the plan's cell order, each
at the boot time this store measured for that kernel (else for the others)."""

from iolab.cell.sample import Sample
from iolab.run import estimate
from iolab.store import Store
from tests.helpers import experiment

JOB = "[j]\nrw=randread\nruntime=2\ntime_based=1\n"


def vm_experiment(tmp_path, cells_per_boot=2, order="alternate"):
    for image in ("a.img", "b.img"):  # local kernel images (never booted here)
        (tmp_path / image).touch()
    return experiment([{"name": "a", "kernel": str(tmp_path / "a.img")},
                       {"name": "b", "kernel": str(tmp_path / "b.img")}],
                      workload=[{"name": "r", "job": JOB}], run={"iterations": 4, "order": order, "seed": 5},
                      vm={"cells_per_boot": cells_per_boot})


def store_with_boots(tmp_path, boots):
    """A finished run whose samples were cells of these boots: (kernel,
    boot number, seconds to boot, cells in it), in wall mode."""
    store = Store(tmp_path / "s.db")
    run_id = store.begin_run(name="earlier", experiment_path=None, experiment_json="{}", seed=1,
                             planned_cells=sum(n for *_, n in boots), host={})
    seq = 0
    for kernel, boot, seconds, cells in boots:
        for _ in range(cells):
            vm = {"kernel": kernel, "boot": boot, "boot_s": seconds, "timing": "wall"}
            store.add_sample(run_id, Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant="v",
                                            workload="w", status="ok", env={"vm": vm}, started=1.0,
                                            setup_s=0.25, run_s=2.0, teardown_s=0.25))
            seq += 1
    store.end_run(run_id, "complete")
    return store


def test_boots_follow_the_cell_order_and_cells_per_boot():
    cells = [estimate.plan.PlannedCell(i, i, i, False, v, "w") for i, v in enumerate("aabbaab")]
    assert estimate.planned_boots(cells, {"a": "k1", "b": "k2"}, 2) == {"k1": 2, "k2": 2}
    assert estimate.planned_boots(cells, {"a": "k1", "b": "k2"}, 1) == {"k1": 4, "k2": 3}
    # two variants of one kernel share its boots
    assert estimate.planned_boots(cells, {"a": "k", "b": "k"}, 10) == {"k": 1}
    # instructions mode: a boot holds one variant's round (here every cell is a round of its own)
    assert estimate.planned_boots(cells, {"a": "k", "b": "k"}, 10, by_round=True) == {"k": 7}


def test_each_kernels_boots_at_its_own_median_else_the_others(tmp_path):
    exp = vm_experiment(tmp_path)
    a = str(tmp_path / "a.img")
    store = store_with_boots(tmp_path, [(a, 1, 3.0, 2), (a, 2, 3.0, 2), ("other", 1, 6.0, 1), ("other", 2, 7.0, 1)])
    result = estimate.estimate(exp, store)
    lines = "\n".join(result.lines())
    # alternate, 2 cells a boot, 4 rounds: a a b b a a b b: 2 boots of each
    assert f"boots of {a}: 2, 3.0 s each (the median of its 2 boots in the store)" in lines
    b = str(tmp_path / "b.img")
    assert f"boots of {b}: 2, 4.5 s each (not booted here yet: the median of 4 boots of other kernels)" in lines
    # 8 cells of 2 s runtime + 0.5 s setup/teardown, 2 x 3.0 s and 2 x 4.5 s of boots
    assert result.total_s == 8 * 2.5 + 2 * 3.0 + 2 * 4.5
    # a VM cell's fio takes longer than its runtime (start-up, layout under emulation): a lower bound
    assert result.at_least and "all 8 cells: at least 35s" in lines


def test_boots_never_measured_make_the_total_a_lower_bound(tmp_path):
    result = estimate.estimate(vm_experiment(tmp_path, cells_per_boot=1), None)
    assert [(b.boots, b.boot_s) for b in result.boots] == [(4, None), (4, None)]
    assert result.at_least and "no wall-mode boot measured here yet" in "\n".join(result.lines())


def test_earlier_runs_of_the_experiment_hold_their_boots_already(tmp_path):
    exp = vm_experiment(tmp_path)
    store = store_with_boots(tmp_path, [(str(tmp_path / "a.img"), 1, 3.0, 2)])
    run_id = store.begin_run(name=exp.name, experiment_path=None, experiment_json=exp.model_dump_json(), seed=1,
                             planned_cells=1, host={})
    store.add_sample(run_id, Sample(seq=0, round=0, iteration=0, warmup=False, variant="a", workload="r",
                                    status="ok", started=1.0, setup_s=0.5, run_s=2.0, teardown_s=0.5))
    store.end_run(run_id, "complete")
    result = estimate.estimate(exp, store)
    assert result.boots == [] and result.workloads[0].how == "earlier runs of this experiment"
    # the same experiment in the other timing mode: its cells take other times, its runs are not used
    other = exp.model_copy(update={"vm": exp.vm.model_copy(update={"timing": "instructions"})})
    assert estimate.estimate(other, store).workloads[0].how != "earlier runs of this experiment"


def test_setup_and_teardown_come_from_cells_that_ran_alike(tmp_path):
    store = store_with_boots(tmp_path, [("k", 1, 3.0, 3)])  # VM cells only
    vm = estimate.estimate(vm_experiment(tmp_path), store)
    assert "setup/teardown 0.5 s, the median of 3 wall-mode VM cells in the store" in vm.workloads[0].how
    host = estimate.estimate(experiment(workload=[{"name": "r", "job": JOB}]), store)
    assert "setup/teardown of host cells not measured here yet" in host.workloads[0].how and host.at_least


def test_vm_cells_are_found_behind_later_host_runs(tmp_path):
    store = store_with_boots(tmp_path, [("k", 1, 3.0, 2)])
    for _ in range(estimate.RECENT_RUNS + 1):  # more host runs since than the setup figure reads
        run_id = store.begin_run(name="host", experiment_path=None, experiment_json="{}", seed=1, planned_cells=1,
                                 host={})
        store.add_sample(run_id, Sample(seq=0, round=0, iteration=0, warmup=False, variant="v", workload="w",
                                        status="ok", started=1.0, setup_s=0.1, run_s=2.0, teardown_s=0.1))
        store.end_run(run_id, "complete")
    result = estimate.estimate(vm_experiment(tmp_path), store)
    assert "setup/teardown 0.5 s, the median of 2 wall-mode VM cells" in result.workloads[0].how
    assert [b.boot_s for b in result.boots] == [3.0, 3.0]  # k's boot stands for both kernels never booted


def test_a_workload_without_a_time_of_its_own_counts_its_setup_and_the_boots(tmp_path):
    exp = vm_experiment(tmp_path)
    exp = exp.model_copy(update={"workload": [w.model_copy(update={"job": "[j]\nrw=randread\nsize=8M\n"})
                                               for w in exp.workload]})
    store = store_with_boots(tmp_path, [(str(tmp_path / "a.img"), 1, 3.0, 2)])
    result = estimate.estimate(exp, store)
    assert result.workloads[0].cell_s is None and result.untimed == 1 and result.at_least
    assert result.total_s == 8 * 0.5 + 4 * 3.0  # setup/teardown of its 8 cells, 4 boots
    assert ("all 8 cells: at least 16s (the workload with no time of its own counted at setup and teardown "
            "only, until one ran)") in "\n".join(result.lines())
    assert estimate.estimate(exp, None).total_s is None  # nothing measured at all: unknown


def test_a_resumed_host_runs_pause_is_not_its_time(tmp_path, monkeypatch):
    exp = experiment(workload=[{"name": "r", "job": JOB}])
    store = Store(tmp_path / "s.db")
    monkeypatch.setattr("iolab.store.runs.time.time", lambda: 100.0)  # the run begins at 100
    run_id = store.begin_run(name=exp.name, experiment_path=None, experiment_json=exp.model_dump_json(), seed=1,
                             planned_cells=2, host={})
    for seq, started in enumerate((101.0, 1000.0)):  # interrupted after its first cell, resumed 15 min later
        store.add_sample(run_id, Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant="base",
                                        workload="r", status="ok", started=started, setup_s=0.5, run_s=2.0,
                                        teardown_s=0.5))
    monkeypatch.setattr("iolab.store.runs.time.time", lambda: 1003.5)
    store.end_run(run_id, "complete")
    # 2 cells of 3 s and 1 s to the first: 3.5 s a cell, not half the 903 s of wall time
    assert estimate.estimate(exp, store).workloads[0].cell_s == 3.5
