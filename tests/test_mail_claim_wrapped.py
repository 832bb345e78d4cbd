"""The claims reader's pipe tables whose header is wrapped over lines (iolab.mail.claimed.pipes):
the lines of names over the first row of figures joined column by column, rules of ``~`` inside."""

from iolab.mail.claimed.pipes import pipe_tables


def _pairs(lines: list[str]) -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in pipe_tables(lines)]


def test_a_header_wrapped_over_three_lines_names_the_sides():
    lines = ["Queue     |                 |",
             "depth     |  Baseline       |  Patched",
             "          |  kernel         |  kernel",
             "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
             "   1      |  10.5 us        |  9.5 us (-9.5%)",
             "  32      |  40.0 us        |  30.0 us (-25%)"]
    assert [(b, a) for _, b, a in _pairs(lines)] == [(10.5, 9.5), (40.0, 30.0)]


def test_a_group_name_over_two_columns_is_no_wrapped_name():
    lines = ["| fio   | randread              |",
             "| jobs  | MB/s       | IOPS     |",
             "|-------|------------|----------|",
             "| 1     | 500        | 128000   |",
             "| 4     | 900        | 230000   |"]
    assert _pairs(lines) == []  # a rate and a count of one run: no sides named

