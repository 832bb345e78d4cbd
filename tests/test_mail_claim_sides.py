"""Forms of outputs and prose pasted per side (issue 36): each side's figure in its own unit,
fio's lines per operation, runs of one side by their mean, a setting turned on as the after side."""

from iolab.mail.claimed import claims


def _rows(text: str, subject: str = "") -> list[tuple[float, float, str]]:
    return [(round(c.before, 2), round(c.after, 2), c.unit) for c in claims(text, subject)]


def test_a_pipe_table_whose_sides_write_other_units_of_one_kind():
    text = """Sequential read on the array, before and after:

| case       | before     | after      |
|------------|------------|------------|
| 1 job      | 870 MiB/s  | 1.5 GiB/s  |
| completion | 2100 usec  | 1.8 msec   |
"""
    assert _rows(text) == [(870, 1536, "MiB/s"), (2100, 1800, "us")]


def test_blocks_a_side_whose_figures_are_in_other_units_of_one_kind():
    text = """Buffered write on a loop device:

Unpatched:
  stream copy:   720 MiB/s
  small files:   640 KiB/s

Patched:
  stream copy:   1.25 GiB/s
  small files:   0.75 MiB/s
"""
    assert _rows(text) == [(720, 1280, "MiB/s"), (640, 768, "KiB/s")]
