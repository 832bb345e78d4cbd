"""iolab.mail.hinted: the rows of a block the user names (``--read 40-52:2,3``, ``--read 10-15/20-25``), on
layouts written for these tests: a pipe table, a table of whitespace with a column of units, each side
its own block; the line numbers of the mail's file or of the text read; and the specs refused."""

import pytest

from iolab.mail import hinted
from iolab.mail.hinted import HintError, figures_of, parse, read
from iolab.mail.unread import unread

PIPES = """\
Intro line.

| workload | base (MB/s) | patched (MB/s) | delta  |
|----------|-------------|----------------|--------|
| seqread  | 2874        | 3305           | +15.0% |
| randread | 812         | 845            | +4.1%  |
| total    | 3686        |                |        |
"""

UNITS = """\
Results:

  test          unit     v6.18     v6.18-p1
  seqread       MB/s     2874      3305
  randread      KIOPS    562       574
  fsync lat     usec     120       80
"""

SIDES = """\
Without it:

  percentile   usec
  50.00th        45
  99.00th        90
  99.90th       140

With it:

  percentile   usec
  50.00th        42
  99.00th        87
  99.90th       133
"""


def _rows(spec, text, files=None):
    found = read(parse(spec), text, files or {})
    return [(c.label, c.before, c.after, c.unit, c.better, c.form) for c in found.rows], found.skipped


def test_a_pipe_tables_named_cells_are_the_sides_with_the_headers_unit_and_the_stated_delta():
    rows, skipped = _rows("3-7:1,2", PIPES)
    assert rows == [("seqread MB/s", 2874, 3305, "MB/s", "higher", "hinted"),
                    ("randread MB/s", 812, 845, "MB/s", "higher", "hinted")]
    assert skipped == 1  # the total: one figure, not the two named
    (first, _) = read(parse("3-7:1,2"), PIPES, {}).rows
    assert first.stated == "+15.0%" and first.source == "| seqread  | 2874        | 3305           | +15.0% |"


def test_a_column_of_units_gives_each_row_its_unit_its_multiplier_and_its_way():
    rows, skipped = _rows("3-6:1,2", UNITS)  # "v6.18" and "p1" are no figures: words
    assert rows == [("seqread MB/s", 2874, 3305, "MB/s", "higher", "hinted"),
                    ("randread KIOPS", 562e3, 574e3, "IOPS", "higher", "hinted"),
                    ("fsync lat usec", 120, 80, "us", "lower", "hinted")]
    assert skipped == 0


def test_each_side_its_own_block_pairs_lines_by_their_text_without_figures():
    rows, skipped = _rows("3-6/10-13", SIDES)  # the header, the same in both, is no row
    assert rows == [("50.00th", 45, 42, "us", "lower", "hinted"), ("99.00th", 90, 87, "us", "lower", "hinted"),
                    ("99.90th", 140, 133, "us", "lower", "hinted")]
    assert skipped == 0
    (first, *_) = read(parse("3-6/10-13"), SIDES, {}).rows
    assert first.source == "50.00th        45 / 50.00th        42"  # both lines: each read, as unread sees it


STACKED = """\
| metric              | mean        | median      |
|---------------------|-------------|-------------|
| (A) base            | 265207.738  | 262941.000  |
| (B) patched         | 249249.191  | 248781.000  |
|                     | -6.02%      | -5.39%      |
| (A) base            | 241618.484  | 240209.000  |
| (B) patched         | 229820.671  | 229108.000  |
|                     | -4.88%      | -4.62%      |
"""


def test_sides_one_line_below_the_other_pair_each_line_with_the_next_a_line_of_changes_passed_over():
    rows, skipped = _rows("1-8:1,1+1", STACKED)
    assert [r[:3] for r in rows] == [("(A) base / (B) patched", 265207.738, 249249.191),
                                     ("(A) base / (B) patched", 241618.484, 229820.671)]
    assert skipped == 0
    assert [r[1:3] for r in _rows("3-8:2+1,2", STACKED)[0]] == [(248781, 262941), (229108, 240209)]


def test_a_header_whose_names_hold_figures_is_not_a_row_and_a_range_starting_below_it_reads_the_same():
    text = "  percentile   run 1   run 2\n  50.00th        45      42\n  99.00th        90      87\n"
    assert _rows("1-3:1,2", text) == _rows("2-3:1,2", text)
    assert [r[:3] for r in _rows("1-3:1,2", text)[0]] == [("50.00th", 45, 42), ("99.00th", 90, 87)]


@pytest.mark.parametrize("line, want", [
    ("randread 4k  562K  574K IOPS", [(4e3, None), (562e3, None), (574e3, "IOPS")]),
    ("qd32 99.00th v2 45us 1.5x 2,874MiB/s (3,305 MiB/s)", [(45, "us"), (1.5, None), (2874, "MiB/s"), (3305, "MiB/s")]),
    ("IOPS=562k, BW=2195MiB/s, 3%", [(562e3, None), (2195, "MiB/s"), (3, "%")]),
])
def test_a_figure_is_a_number_alone_or_with_its_unit_never_one_inside_a_word(line, want):
    assert [(f.value, f.unit[0] if f.unit else None) for f in figures_of(line)] == want


def test_the_numbers_are_the_files_lines_and_the_block_the_hint_covers_is_no_longer_unread():
    mail = "From: a@b\nSubject: x\n\n" + UNITS  # the text read starts at the file's fourth line
    rows, _ = _rows("6-9:1,2", UNITS, {"m.eml": mail})
    assert [r[0] for r in rows] == ["seqread MB/s", "randread KIOPS", "fsync lat usec"]
    found = read(parse("6-9:1,2"), UNITS, {"m.eml": mail})
    assert found.where == "m.eml" and found.lines == ((2, 6),)
    blocks = unread(UNITS, ())
    assert blocks and hinted.uncovered(blocks, [found]) == ()


def test_a_file_holding_the_text_encoded_is_numbered_by_the_text_read():
    encoded = "From: a@b\nContent-Transfer-Encoding: base64\n\nUmVzdWx0czoK\nICB0ZXN0ICAgICAgICAg\n"
    found = read(parse("4-6:1,2"), UNITS, {"m.eml": encoded})
    assert found.where == "the text read" and len(found.rows) == 3


def test_a_block_the_file_holds_quoted_printable_is_numbered_by_the_text_read_as_the_not_read_list_does():
    text = "Results:\n\n  test     x=1     x=2\n  seqread  a=1   2874   3305\n  randread a=1   812    845\n"
    mail = ("From: a@b\nContent-Transfer-Encoding: quoted-printable\n\n"
            + text.replace("=", "=3D"))  # its lines 4-5 ("Results:", "") are in the text too, elsewhere
    found = read(parse("4-5:2,3"), text, {"m.eml": mail})
    assert found.where == "the text read" and [(c.before, c.after) for c in found.rows] == [(2874, 3305), (812, 845)]


@pytest.mark.parametrize("spec, said", [
    ("40-52", r"'40-52': name two figures of each line, the before's and the after's"),
    ("40-52:2,2", r"name two figures"),
    ("52-40:1,2", r"lines 52-40: the first line is 1 or more and the last not before it"),
    ("4O-52:1,2", r"'4O-52:1,2': not a spec; write 40-52:2,3"),
    ("3-6/5-8", r"the before's lines and the after's overlap"),
    ("3-6/8-9:1+1", r"N\+1 \(a figure of the line below\) is for one block's lines"),
    ("6-9:1+1,2+1", r"name two figures of each line"),
    ("3-6:0,1", r"figures are counted from 1"),
    ("6-9:1,3", r"'6-9:1,3': no line of 6-9 holds a 3rd figure \(the most a line holds: 2\)"),
    ("3-60:1,2", r"'3-60:1,2': line 60 is beyond the end of m.eml \(9 lines\)"),
    ("1-2:1,2", r"lines 1-2 are not in the text iolab reads claims from"),
])
def test_a_bad_spec_is_refused_naming_the_spec_and_what_is_wrong(spec, said):
    with pytest.raises(HintError, match=said):
        read(parse(spec), UNITS, {"m.eml": "From: a@b\nSubject: x\n\n" + UNITS})
