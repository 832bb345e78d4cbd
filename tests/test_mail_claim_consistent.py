"""A row the changes stated on its own lines contradict is refused (iolab.mail.claimed.consistent). Lines
written for these tests, in the forms people paste."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.consistent import a_change, contradicted, crossed
from iolab.mail.claimed.model import Claim


# two tests' columns under rows of configurations, each row's change stated against the baseline's
TWO_TESTS = """Overhead of the feature, kernel build and hackbench, with and without it:

                         kbuild                  hackbench
    (1 baseline)         10.500s                 40.200s
    (2 disabled)         11.025s (+5.00%)        40.602s (+1.00%)
    (3 enabled)          13.650s (+30.00%)       46.230s (+15.00%)
"""


def _pairs(text: str, subject: str = "") -> list[tuple[float, float]]:
    return [(c.before, c.after) for c in claims(text, subject)]


def _claim(before: float, after: float, source: str, unit: str = "s") -> Claim:
    return Claim("x", before, after, unit, "time", "lower", source=source)


def test_columns_of_two_tests_under_rows_of_configurations_are_no_pair():
    found = _pairs(TWO_TESTS)
    assert (11.025, 40.602) not in found and (13.65, 46.23) not in found


def test_a_tables_row_stating_no_change_goes_with_the_rows_that_contradict_theirs():
    assert (10.5, 40.2) not in _pairs(TWO_TESTS)
    agreeing = """Build times with and without the series:

                         without                 with
    kbuild               10.500s                 9.450s (-10.00%)
    hackbench            40.200s                 36.180s (-10.00%)
    fsstress             20.000s                 19.000s
"""
    assert (20.0, 19.0) in _pairs(agreeing)


def test_a_third_kernels_column_is_not_paired_with_the_base_by_its_delta():
    row = "Hmean     ops-4   1000.00 (   0.00%)   1500.00 *  50.00%*   1800.00 *  80.00%*"
    assert not contradicted(_claim(1000, 1500, row, "ops/s"))
    assert not contradicted(_claim(1000, 1800, row, "ops/s"))
    assert contradicted(_claim(1500, 1800, row, "ops/s"))


def test_a_row_whose_delta_agrees_either_way_is_kept():
    assert not contradicted(_claim(120, 100, "| read | 120 ms | 100 ms | -16.7% |"))
    assert not contradicted(_claim(120, 100, "| read | 120 ms | 100 ms | +20% |"))  # a gain against the after
    assert not contradicted(_claim(85, 76, "85 seconds / 76 seconds (-11.2%)"))  # the mail's own rounding
    assert contradicted(_claim(120, 100, "| read | 120 ms | 100 ms | -45% |"))


def test_lines_stating_no_change_ask_nothing():
    assert not contradicted(_claim(120, 100, "| read | 120 ms | 100 ms | CPU 45% |"))
    assert not contradicted(_claim(120, 100, "read: 120 ms -> 100 ms"))


def test_a_row_of_shares_may_state_its_change_in_points():
    assert not contradicted(_claim(45, 40, "| CPU | 45% | 40% | -5% |", "%"))
    assert not contradicted(_claim(4.3, 2.6, "on locking from ~4.3% to ~2.6%, it cuts 1.3% - 1.9% of CPU time", "%"))
    assert contradicted(_claim(1.37, 0.92, "| hackbench | 8.15 | 1.37% | 7.95 (-2.5%) | 0.92% |", "%"))


def test_a_table_with_its_deltas_reads_as_before():
    text = """fio randread, before and after the patch:

    case        before      after      change
    4k qd1      12.1k       13.3k      +9.9%
    4k qd32     410k        452k       +10.2%
"""
    assert _pairs(text) == [(12100, 13300), (410000, 452000)]


def test_a_column_of_changes_is_no_row():
    for label in ("Phase Total % change", "Suspend time diff", "IOPS delta", "Resume time change (%)"):
        assert a_change(Claim(label, 33, 1, "%", "ratio", None, source="| Suspend time | 107 ms | 72 ms | -33% |"))
    for label in ("release_pages cycle share (perf diff)", "Changed blocks", "IOPS"):
        assert not a_change(Claim(label, 33, 1, "%", "ratio", None))


def test_rows_of_two_tables_a_side_pair_by_name_not_by_place():
    text = """Before the series:

| Phase            | Time   |
| Total open time  | 107 ms |
| Total close time | 75 ms  |

After the series:

| Phase            | Time   |
| Total close time | 74 ms  |
| Total open time  | 60 ms  |
"""
    found = _pairs(text)
    assert (107, 74) not in found and (75, 60) not in found, found


def test_rows_that_are_the_sides_in_one_table_are_not_crossed():
    lines = ["| case           | 1 job    | 4 jobs   |",
             "| 8k (bigalloc)  | 1.4 GB/s | 2.0 GB/s |",
             "| 8k (LBS)       | 1.7 GB/s | 2.3 GB/s |"]
    row = Claim("8k 1 job", 1.4, 1.7, "GB/s", "bandwidth", "higher", source=f"{lines[1]} / {lines[2]}")
    assert not crossed(row, lines)
    other = Claim("x", 107, 74, "ms", "time", "lower",
                  source="| Total open time  | 107 ms | / | Total close time | 74 ms  |")
    assert crossed(other, ["| Total open time  | 107 ms |", "", "| Total close time | 74 ms  |",
                           "| Total open time  | 60 ms  |"])
