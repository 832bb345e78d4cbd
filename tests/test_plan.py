from collections import Counter

import pytest

from iolab import load, plan

EXPERIMENT = {
    "name": "p",
    "variant": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
    "workload": [{"name": "w1", "job": "[j]\n"}, {"name": "w2", "job": "[j]\n"}],
    "run": {"iterations": 5, "warmup": 1},
}


def test_every_round_runs_every_pair_once():
    cells = plan.plan(load.parse(EXPERIMENT), seed=7)
    assert len(cells) == 3 * 2 * 6
    for round_index in range(6):
        pairs = [(c.variant, c.workload) for c in cells if c.round == round_index]
        assert sorted(pairs) == sorted((v, w) for v in "abc" for w in ("w1", "w2"))
    assert [c.seq for c in cells] == list(range(len(cells)))


def test_warmup_rounds_come_first_and_are_marked():
    cells = plan.plan(load.parse(EXPERIMENT), seed=7)
    warm = [c for c in cells if c.warmup]
    assert len(warm) == 6 and all(c.round == 0 and c.iteration == -1 for c in warm)
    assert Counter(c.iteration for c in cells if not c.warmup) == {i: 6 for i in range(5)}


def test_order_is_seeded_and_varies_by_round():
    experiment = load.parse(EXPERIMENT)
    assert plan.plan(experiment, 1) == plan.plan(experiment, 1)
    assert plan.plan(experiment, 1) != plan.plan(experiment, 2)
    orders = {tuple((c.variant, c.workload) for c in plan.plan(experiment, 1) if c.round == r) for r in range(6)}
    assert len(orders) > 1


def test_sequential_order():
    experiment = load.parse({**EXPERIMENT, "run": {"iterations": 3, "order": "sequential"}})
    cells = plan.plan(experiment, 0)
    assert [c.variant for c in cells[:3]] == ["a", "a", "a"]
    assert [c.iteration for c in cells[:3]] == [0, 1, 2]


def test_rounds_on_demand_are_the_full_plan():
    experiment = load.parse(EXPERIMENT)
    full = plan.plan(experiment, 11)
    made = [cell for r in range(6) for cell in plan.round_cells(experiment, 11, r)]
    assert made == full
    assert plan.round_cells(experiment, 11, 3) == [c for c in full if c.round == 3]


def test_auto_plans_up_to_max_iterations():
    experiment = load.parse({**EXPERIMENT, "run": {"iterations": "auto", "min_iterations": 4,
                                                   "max_iterations": 9, "warmup": 1}})
    assert plan.total_rounds(experiment) == 10
    cells = plan.plan(experiment, 2)
    assert len(cells) == 6 * 10 and cells[-1].iteration == 8
    # a round beyond the plan is still well defined (same stream)
    assert plan.round_cells(experiment, 2, 12)[0].seq == 12 * 6


def test_rounds_on_demand_need_interleaving():
    experiment = load.parse({**EXPERIMENT, "run": {"iterations": 3, "order": "sequential"}})
    with pytest.raises(ValueError):
        plan.round_cells(experiment, 0, 0)
