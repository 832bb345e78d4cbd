"""The reader abstains from rows of weak evidence (iolab.mail.claimed.abstain), on layouts written here."""

from iolab.mail.claimed.abstain import SMALL, abstained, small_count
from iolab.mail.claimed.model import make, unit_of
from iolab.mail.claimed.reader import claims

TABLE = """Results:

  kernel      base   patched
  jobs           4         8
  runtime(s)  12.0      10.5
"""
PROSE = "With this patch the cache holds 4 entries per page instead of 3 entries, so lookups walk less.\n"
PIPES = """| test | base | patched |
|---|---|---|
| depth | 4 | 8 |
| read | 410 MB/s | 520 MB/s |
"""


def _rows(text: str) -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text)]


def test_a_tables_unitless_small_whole_row_is_abstained_from_its_measure_kept() -> None:
    assert _rows(TABLE) == [("runtime(s)", 12.0, 10.5)]


def test_a_pair_in_prose_of_small_whole_counts_is_abstained_from() -> None:
    assert _rows(PROSE) == []


def test_a_pipe_tables_setting_of_small_whole_numbers_is_abstained_from_its_measure_kept() -> None:
    assert _rows(PIPES) == [("read", 410.0, 520.0)]


def test_a_row_with_a_unit_a_fraction_or_a_figure_above_small_is_kept() -> None:
    kept = [make("wall", 3, 5, unit_of("s"), None, "", "wall 3 s -> 5 s"),
            make("ratio", 1.5, 2.0, None, None, "", "ratio 1.5 2.0"),
            make("files", 4, SMALL + 1, None, None, "", "files 4 17")]
    dropped = make("queues", 2, 4, None, None, "", "queues 2 4")
    assert abstained([*kept, dropped]) == kept
    assert small_count(dropped) and not any(small_count(c) for c in kept)


def test_a_small_whole_row_whose_change_the_mail_states_is_kept() -> None:
    stated = make("bar_total", 4, 5, None, None, "+25.00%", "bar_total  4.0  5.0  +25.00%")
    assert abstained([stated]) == [stated]
