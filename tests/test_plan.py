from collections import Counter

import pytest

from iolab import plan
from iolab.stats.choice import PAIRED, UNPAIRED, choose
from tests.helpers import experiment as build


def matrix(**run):
    """Three variants, two workloads, 5 rounds after 1 warm-up (or the run table given)."""
    return build(("a", "b", "c"), workload=[{"name": "w1", "job": "[j]\n"}, {"name": "w2", "job": "[j]\n"}],
                 run=run or {"iterations": 5, "warmup": 1})


def test_every_round_runs_every_pair_once():
    cells = plan.plan(matrix(), seed=7)
    assert len(cells) == 3 * 2 * 6
    for round_index in range(6):
        pairs = [(c.variant, c.workload) for c in cells if c.round == round_index]
        assert sorted(pairs) == sorted((v, w) for v in "abc" for w in ("w1", "w2"))
    assert [c.seq for c in cells] == list(range(len(cells)))


def test_warmup_rounds_come_first_and_are_marked():
    cells = plan.plan(matrix(), seed=7)
    warm = [c for c in cells if c.warmup]
    assert len(warm) == 6 and all(c.round == 0 and c.iteration == -1 for c in warm)
    assert Counter(c.iteration for c in cells if not c.warmup) == {i: 6 for i in range(5)}


def test_order_is_seeded_and_varies_by_round():
    experiment = matrix()
    assert plan.plan(experiment, 1) == plan.plan(experiment, 1)
    assert plan.plan(experiment, 1) != plan.plan(experiment, 2)
    orders = {tuple((c.variant, c.workload) for c in plan.plan(experiment, 1) if c.round == r) for r in range(6)}
    assert len(orders) > 1


def test_sequential_order():
    experiment = matrix(iterations=3, order="sequential")
    cells = plan.plan(experiment, 0)
    assert [c.variant for c in cells[:3]] == ["a", "a", "a"]
    assert [c.iteration for c in cells[:3]] == [0, 1, 2]


def test_rounds_on_demand_are_the_full_plan():
    experiment = matrix()
    full = plan.plan(experiment, 11)
    made = [cell for r in range(6) for cell in plan.round_cells(experiment, 11, r)]
    assert made == full
    assert plan.round_cells(experiment, 11, 3) == [c for c in full if c.round == 3]


def test_auto_plans_up_to_max_iterations():
    experiment = matrix(iterations="auto", min_iterations=4, max_iterations=9, warmup=1)
    assert plan.total_rounds(experiment) == 10
    cells = plan.plan(experiment, 2)
    assert len(cells) == 6 * 10 and cells[-1].iteration == 8
    # a round beyond the plan is still well defined (same stream)
    assert plan.round_cells(experiment, 2, 12)[0].seq == 12 * 6


def test_rounds_on_demand_need_interleaving():
    experiment = matrix(iterations=3, order="sequential")
    with pytest.raises(ValueError):
        plan.round_cells(experiment, 0, 0)


# ---------------------------------------------------------------- the planned test


def test_six_rounds_two_primary_rows_plan_the_rank_test():
    """Signed-rank with 6 pairs: smallest p 2/64 = 0.031, not below Holm's 0.025;
    Mann-Whitney U of 6 + 6 values: 2/924."""
    choice = choose(6, 2, paired=True)
    assert (choice.test, choice.level) == (UNPAIRED, 0.025)
    assert choice.min_p == pytest.approx(2 / 924)
    assert choose(7, 2, paired=True).test == PAIRED  # 2/128 < 0.025
    assert choose(8, 1, paired=False).test == UNPAIRED  # a sequential order has no pairs


def test_a_plan_that_cannot_decide_names_the_rounds_it_needs():
    choice = choose(4, 2, paired=True)  # MWU 4 + 4: 2/70 = 0.029
    assert not choice.decidable and choice.needed == 5
    assert choice.min_p == pytest.approx(2 / 70)
    assert choose(3, 40, paired=True).needed == 7  # MWU 7 + 7: 2/3432 < 0.05/40
    assert choose(4, 2, paired=True, correction="none").test == UNPAIRED  # at 0.05


def test_the_choice_is_the_plans_and_the_analysis_uses_it():
    exp = build(("a", "b"), iterations=6)
    assert plan.test_choice(exp, 2).test == UNPAIRED
    assert plan.test_choice(exp, 1).test == PAIRED  # 2/64 < 0.05
    sequential = exp.model_copy(update={"run": exp.run.model_copy(update={"order": "sequential"})})
    assert plan.test_choice(sequential, 1).test == UNPAIRED
