"""A patch mail's claim: its table or before/after pairs, read from the five
seed mails as given (web-archive copies, one of them a single line) and
from mails written here in the other forms."""

from pathlib import Path

import pytest

from iolab.mail.claimed import claims, description, number, unit_of

SEEDS = Path(__file__).parent / "fixtures" / "seeds"


def _rows(text: str) -> list[tuple[str, float, float, str, str | None]]:
    return [(c.label, c.before, c.after, c.unit, c.better) for c in claims(text)]


def test_a_column_table_under_a_header_with_its_unit_in_the_sentence_above():
    found = claims((SEEDS / "ext4-write-begin-large-folio.txt").read_text())
    assert [(c.label, c.before, c.after, c.unit, c.better, c.stated) for c in found] == [
        ("write_u1k", 1.418, 0.3405, "us", "lower", "76.0%"),
        ("write_u10k", 1.887, 0.4175, "us", "lower", "77.9%"),
        ("pwrite_u1k", 1.6775, 0.3390, "us", "lower", "79.8%"),
        ("pwrite_u10k", 1.9035, 0.4130, "us", "lower", "78.3%"),
    ]
    assert found[0].direction == "down" and found[0].delta == pytest.approx(0.3405 / 1.418 - 1)


def test_units_written_after_each_figure():
    found = _rows((SEEDS / "f2fs-dio-iostat.txt").read_text())
    assert found == [("direct_read median", 65264.50, 55470.95, "ns", "lower"),
                     ("direct_read recheck", 65553.75, 55470.95, "ns", "lower"),
                     ("direct_write median", 68054.62, 56309.44, "ns", "lower"),
                     ("direct_write recheck", 66873.51, 56309.44, "ns", "lower")]


def test_a_pipe_table_in_a_mail_whose_line_breaks_were_lost_read_by_its_columns():
    text = (SEEDS / "f2fs-nat-readahead.txt").read_text()
    assert text.count("\n") <= 1
    assert _rows(text) == [("NAT blocks accessed", 1205, 1264, "", None),
                           ("NAT blocks read", 1191, 1242, "", None),
                           ("Flush time (ms)", 158, 11, "ms", "lower")]


def test_an_ascii_box_table_quoted_in_a_reply():
    assert _rows((SEEDS / "erofs-compressed-dio.txt").read_text()) == [
        ("normal scenario", 2629.8, 3648.7, "MiB/s", "higher"),
        ("low memory scenario", 2350.0, 3633.9, "MiB/s", "higher")]


def test_groups_spreads_and_si_suffixes():
    found = {c.label: c for c in claims((SEEDS / "block-task-context-completion.txt").read_text())}
    assert len(found) == 39
    bw = found["A seq 128k qd1: BW (MB/s)"]
    assert (bw.before, bw.after, bw.unit, bw.stated) == (4333, 4374, "MB/s", "+0.9%")
    ctx = found["A seq 128k qd1: ctx-switches"]
    assert (ctx.before, ctx.after, ctx.kind) == (184e3, 3.68e6, "count")
    assert found["F mem-pressure (dirty_bytes=64MB, 4 writers): p999 (us)"].after == 36648


def test_pairs_in_prose_and_a_header_that_names_the_after_side_first():
    text = """Subject: [PATCH] block: batch tag allocation

Random reads went from 562K -> 574K IOPS on a single queue, and
4994 MiB/s -> 5762 MiB/s for sequential writes. With 1 to 4 threads
nothing changed. Completion latency improved from 120 usec to 80 usec.

                 patched   vanilla
  read_lat_us      40.1      52.3
  write_lat_us     43.0      51.0

Signed-off-by: A Developer <a@example.org>
---
 block/blk-mq-tag.c | 4 ++--
"""
    assert _rows(text) == [
        ("read_lat_us", 52.3, 40.1, "us", "lower"),
        ("write_lat_us", 51.0, 43.0, "us", "lower"),
        ("Random reads", 562e3, 574e3, "IOPS", "higher"),
        ("sequential writes", 4994, 5762, "MiB/s", "higher"),
        ("Completion latency", 120, 80, "us", "lower"),
    ]


def test_a_mail_without_figures_and_headers_that_look_like_rows_claim_nothing():
    text = ("From: A Developer\nDate: Mon Jun 08 2026 - 23:52:41 EST\nSubject: [PATCH 2/3] xfs: tidy\n\n"
            "Fixes: 7ac67301e82f0 (\"xfs: x\")\nCc: stable # v6.16+\n\nNo functional change.\n"
            "---\n fs/xfs/xfs_file.c | 11 ++++++-----\n 1 file changed, 6 insertions(+), 5 deletions(-)\n")
    assert claims(text) == []
    assert "insertions" not in description(text)


@pytest.mark.parametrize("token, value", [("1.418", 1.418), ("562K", 562e3), ("1,205", 1205), ("3.68M", 3.68e6),
                                          ("76.0%", None), ("v6", None)])
def test_figures(token, value):
    assert number(token) == value


@pytest.mark.parametrize("text, unit", [("usecs/call", "us"), ("BW (MB/s)", "MB/s"), ("Flush time (ms)", "ms"),
                                        ("kIOPS", "IOPS"), ("ctx-switches", None)])
def test_units(text, unit):
    found = unit_of(text)
    assert (found[0] if found else None) == unit


MARKDOWN = """Subject: [PATCH v2 3/5] block: plug small writes harder

Results on an NVMe disk (fio, 4k randwrite, qd=32, 4 jobs):

| workload      | before    | after     | change |
|---------------|-----------|-----------|--------|
| randwrite 4k  | 562K IOPS | 574K IOPS | +2.1%  |
| seqwrite 128k | 4994 MiB/s| 5762 MiB/s| +15.4% |

Latency (usec):
  p50    12.1 -> 11.9
  p99    45.0 -> 38.2
"""


def test_a_markdown_table_with_units_in_its_cells_and_pairs_under_a_heading_with_the_unit():
    assert [(c.label, c.before, c.after, c.unit, c.stated) for c in claims(MARKDOWN)] == [
        ("randwrite 4k", 562e3, 574e3, "IOPS", "+2.1%"), ("seqwrite 128k", 4994, 5762, "MiB/s", "+15.4%"),
        ("p50", 12.1, 11.9, "us", ""), ("p99", 45.0, 38.2, "us", "")]


@pytest.mark.parametrize("text, rows", [
    ("Before: 1203 MiB/s\nAfter:  1384 MiB/s\n", [("MiB/s", 1203, 1384, "MiB/s")]),
    ("before the patch: 35.2 us avg latency, after: 30.1 us\n", [("avg latency", 35.2, 30.1, "us")]),
    ("          baseline   patched   delta\n  iops    120k       135k      +12.5%\n"
     "  lat     8.2ms      7.1ms     -13.4%\n", [("iops", 120e3, 135e3, "IOPS"), ("lat", 8.2, 7.1, "ms")]),
])
def test_before_and_after_lines_and_units_written_onto_the_figures(text, rows):
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == rows


def test_one_row_under_a_header_naming_both_sides_with_units_glued_to_the_figures():
    text = ("Tested with fio on null_blk:\n\n         before      after\n"
            "BW     2874MiB/s   3305MiB/s   +15.0%\n\nSigned-off-by: A <a@example.org>\n")
    (row,) = claims(text)
    assert (row.label, row.before, row.after, row.unit, row.better, row.stated) == \
        ("BW", 2874.0, 3305.0, "MiB/s", "higher", "+15.0%")
    # a prefix that is the unit's own letter, and one that multiplies the figure
    assert [(c.before, c.unit) for c in claims("   base   patched\nread 512KiB/s 600KiB/s\n")] == [(512.0, "KiB/s")]
    assert [(c.after, c.unit) for c in claims("   base   patched\nread 562KIOPS 574KIOPS\n")] == [(574e3, "IOPS")]


def test_one_row_under_a_header_that_names_no_sides_is_no_table():
    assert claims("   run1   run2\ntime 8.2ms 7.1ms\n") == []


def test_a_pair_after_a_verb_alone_is_named_by_its_unit():
    (row,) = claims("t/io_uring -b512 -d128 /dev/nullb0\n\ngives 3.68M -> 3.70M IOPS here.\n")
    assert (row.label, row.before, row.after, row.unit) == ("IOPS", 3.68e6, 3.70e6, "IOPS")


def test_a_pair_of_ranges_is_read_by_their_middles():
    text = "streaming reads and writes through the pagecache go from\n60-90MB/s to 2-2.5GB/s.  Direct IO too.\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(75, 2250, "MB/s")]


def test_a_figure_in_millions_of_a_rate_is_one_row_not_two():
    found = claims("Random reads on the array:\n\nBefore: 1.2 MIOPS\nAfter: 1.5 MIOPS\n")
    assert [(c.before, c.after, c.unit) for c in found] == [(1.2e6, 1.5e6, "IOPS")]
