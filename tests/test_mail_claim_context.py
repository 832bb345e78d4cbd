"""The unit the lines above a table name (iolab.mail.claimed.tables): a command line's flags name none;
and two captions' equal setting is no pair of side rows."""

from iolab.mail.claimed.tables import _context_unit, column_tables, side_rows


def test_a_command_lines_flags_name_no_unit_of_the_table_under_it():
    assert _context_unit(["$ ./bench -s 32 --ms 4 -t 8"]) == (None, None)  # flags, not seconds or ms
    assert _context_unit(["fio -h for its options; latency in us"])[0] == ("us", "time", "lower")
    text = "Ran ./bench -s 32 -t 8 on both kernels:\n\nkernel      ops    lat\nbase        1200   15.1\npatched     1500   12.2\n"
    assert {c.unit for c in column_tables(text.splitlines())} == {""}


def test_two_captions_equal_setting_is_no_row_of_the_sides():
    assert side_rows(["unpatched, iodepth=32", "patched, iodepth=32"]) == []
    assert side_rows(["baseline numjobs=8", "patched numjobs=8"]) == []
    assert [(c.before, c.after) for c in side_rows(["base  4720 usec", "patched  4311 usec"])] == [(4720, 4311)]
