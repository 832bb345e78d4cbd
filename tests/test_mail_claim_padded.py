"""The claims reader's rows (iolab.mail.claimed.rows): a spread padded inside its parentheses
(``4056.7 (  5.5)``) and a blank ``--`` cell (the base's own change) leave the row's figures."""

from iolab.mail.claimed.rows import read_row
from iolab.mail.claimed.tables import side_rows


def _values(line: str) -> list[float]:
    row = read_row(line)
    assert row is not None, line
    return [v for v, _ in row.values]


def test_a_padded_spread_is_the_figures_spread():
    assert _values("base    812.4 (  3.1)    99.0 ( 0.5)") == [812.4, 99.0]
    assert _values("vanilla  1200 (   12)  310 (  4)") == [1200, 310]


def test_a_blank_dash_cell_is_no_figure_and_no_label():
    assert read_row("base     --   512.0 (  2.0)     --   40.0 (  1.0)").label == "base"  # type: ignore[union-attr]
    assert _values("baseline   --   77.5   --   12.5") == [77.5, 12.5]


def test_base_and_test_rows_with_dash_cells_and_padded_spreads_pair_down():
    lines = ["                speedup  time_ms (stdev)",
             "     base           --    900.0 (  4.0)",
             "     patched     44.4%    500.0 (  3.0)"]
    assert [(c.before, c.after) for c in side_rows(lines)] == [(900.0, 500.0)]



def test_a_columns_spread_named_in_its_header_leaves_the_figure_its_name():
    from iolab.mail.claimed.evidence import admitted
    for spread in ("(stdev)", "(std dev)", "(sd)"):
        lines = [f"            speedup  time_ms {spread}    speedup  time_ms {spread}",
                 "   base       --   1500.0 (  9.0)      --   700.0 (  4.0)",
                 "   patched  26.7%  1100.0 (  8.0)   78.6%   150.0 (  2.0)"]
        found = side_rows(lines)
        assert [(c.label, c.before, c.after) for c in found][:1] == [("time_ms", 1500.0, 1100.0)], spread
        assert len(admitted(found, lines, [])) == 2  # not refused as a spread's row
