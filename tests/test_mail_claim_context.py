"""The unit the lines above a table name (iolab.mail.claimed.tables): a command line's flags name none."""

from iolab.mail.claimed.tables import _context_unit, column_tables


def test_a_command_lines_flags_name_no_unit_of_the_table_under_it():
    assert _context_unit(["$ ./bench -s 32 --ms 4 -t 8"]) == (None, None)  # flags, not seconds or ms
    assert _context_unit(["fio -h for its options; latency in us"])[0] == ("us", "time", "lower")
    text = "Ran ./bench -s 32 -t 8 on both kernels:\n\nkernel      ops    lat\nbase        1200   15.1\npatched     1500   12.2\n"
    assert {c.unit for c in column_tables(text.splitlines())} == {""}
