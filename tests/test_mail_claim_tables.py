"""The claims reader's tables: aligned columns under two header lines whose upper line names the
sides over several columns each, and sides a table names only by what the patch does to them."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.naming import patch_side

TWO_LEVEL = """dbench -t 30 on a fast NVMe drive:

clients\t\tpolled\t\t\tirq
\t\tBW\tLatency\t\tBW\tLatency
1\t\t 812.40   1.021\t\t 850.12   0.977
64\t\t6021.77  12.004\t\t6350.90  10.310
"""


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_a_group_over_two_columns_is_the_side_the_patch_drops_and_its_sub_columns_pair():
    assert _rows(TWO_LEVEL, "nvme: drop polled completions from the flush path") == [
        ("1 BW", 812.40, 850.12), ("1 Latency", 1.021, 0.977),
        ("64 BW", 6021.77, 6350.90), ("64 Latency", 12.004, 10.310)]


def test_the_group_the_patch_brings_is_after():
    assert _rows(TWO_LEVEL, "nvme: use polled completions for flushes")[0] == ("1 BW", 850.12, 812.40)


def test_groups_no_word_and_no_subject_name_are_no_sides():
    assert _rows(TWO_LEVEL) == []
    assert _rows(TWO_LEVEL, "nvme: tune the flush path") == []


def test_two_rows_that_are_the_sides_by_what_the_patch_drops_are_read_down():
    text = """fs_mark, 16 threads:

\tcreate\t\tunlink
async   5m10s\t\t4m02s
sync\t4m55s\t\t4m20s
"""
    assert _rows(text, "xfs: drop async flushes from log commits") == [
        ("create", 310, 295), ("unlink", 242, 260)]
    assert _rows(text) == []


def test_what_a_patch_does_to_a_name():
    lines = ["Subject: xfs: drop async cache flushes", "This patch adds a per-AG lock."]
    assert [patch_side(n, lines) for n in ("async", "per-AG", "sync", "cache")] == ["before", "after", None, None]
    assert patch_side("tune", ["Subject: block: let us tune the queue"]) is None  # "us" is no "use"


def test_a_box_drawn_in_unicode_is_read_as_the_same_box_in_ascii():
    text = """Sequential read, MB/s:

┌──────────────┬──────────┬──────────┐
│              │ nvme0n1  │ sda      │
├──────────────┼──────────┼──────────┤
│ vanilla      │ 1210     │ 480      │
├──────────────┼──────────┼──────────┤
│ patched      │ 1490     │ 515      │
└──────────────┴──────────┴──────────┘
"""
    ascii_box = text.translate(str.maketrans({"┌": "+", "┬": "+", "┐": "+", "├": "+", "┼": "+", "┤": "+",
                                              "└": "+", "┴": "+", "┘": "+", "─": "-", "│": "|"}))
    assert _rows(text) == _rows(ascii_box) == [("nvme0n1", 1210, 1490), ("sda", 480, 515)]


def test_a_pipe_table_with_rules_between_its_rows_and_rows_that_differ_in_their_side_word():
    text = """fio randread, 4 jobs:

                              |   numjobs=2   |    numjobs=4
      -----------------------------------------------------------
        fio without batching  |   301K IOPS   |    266K IOPS
      -----------------------------------------------------------
        fio with batching     |   322K IOPS   |    270K IOPS
"""
    assert _rows(text) == [("numjobs=2", 301e3, 322e3), ("numjobs=4", 266e3, 270e3)]


def test_a_border_crossed_by_another_mark_than_a_plus_is_a_border():
    plus = """+-----------+-----------+-----------+
|  test     |  base     |  patched  |
+-----------+-----------+-----------+
|  seqread  |  1210     |  1330     |
|  seqwrite |  905      |  948      |
+-----------+-----------+-----------+
"""
    assert _rows(plus.replace("+", "x")) == _rows(plus.replace("+", "*")) == _rows(plus) == [
        ("seqread", 1210, 1330), ("seqwrite", 905, 948)]


def test_the_subject_names_sides_only_where_no_other_word_does():
    text = """This patch introduces the use of the Intel QAT for decompression.

| variant   | cluster | seq read   | randread  |
|-----------|---------|------------|-----------|
| Intel QAT | 4096    | 540 MiB/s  | 113 MiB/s |
| Intel QAT | 16384   | 701 MiB/s  | 160 MiB/s |
| deflate   | 4096    | 498 MiB/s  | 107 MiB/s |
| deflate   | 16384   | 420 MiB/s  | 126 MiB/s |
"""
    rows = [("seq read, cluster 4096", 498, 540), ("randread, cluster 4096", 107, 113),
            ("seq read, cluster 16384", 420, 701), ("randread, cluster 16384", 126, 160)]
    assert _rows(text) == _rows(text, "erofs: support deflate decompress by using Intel QAT") == rows


def test_a_column_under_two_headers_takes_its_unit_from_its_own_name_before_the_text_above():
    text = """             base                 patched
             IOPS     lat(us)     IOPS     lat(us)
randread     100k     80          120k     70
randwrite    80k      90          95k      85
"""
    assert [(c.label, c.unit, c.better) for c in claims(text)][:2] == [
        ("randread IOPS", "IOPS", "higher"), ("randread lat(us)", "us", "lower")]


def test_rows_of_the_sides_under_a_caption_take_the_names_of_the_line_right_above_them():
    text = """bs=4k
             1       2       3       average
base         100     102     104     102
patched      120     122     121     121
"""
    assert _rows(text) == [("average", 102, 121)]


def test_the_patchs_words_name_groups_of_columns_not_a_column_each():
    text = """| device  | polled   | irq      |
|---------|----------|----------|
| nvme0n1 | 512k     | 498k     |
| nvme1n1 | 505k     | 490k     |
"""
    assert _rows(text, "nvme: drop polled completions from the flush path") == []


def test_rows_under_a_second_measure_take_its_unit_not_the_first_ones():
    text = """fio randread, 4k:

IOPS          1 job     2 jobs    4 jobs
base          100k      200k      380k
patched       110k      220k      400k
lat (usec)
base          10.1      10.5      11.2
patched       9.2       9.4       10.1
"""
    found = [(c.before, c.after, c.unit, c.better) for c in claims(text)]
    assert (100e3, 110e3, "IOPS", "higher") in found and (10.1, 9.2, "us", "lower") in found
    assert (10.1, 9.2, "IOPS", "higher") not in found


UNDERSCORE_BOX = """Building the images with and without the change:

 ______________________________________________________________
|_____ Image _____|________|_____ Before ______|_____ After ____|
|  Rootfs         |  Size  |__ 120000 (117 KiB) |__ 110000 (107 KiB) |
|_________________|_ Time _|_____ 2m10.500s ___|_____ 1m05.250s _|
"""


def test_a_box_ruled_with_underscores_pairs_each_measure_under_its_test_name_and_reads_minutes_seconds():
    rows = [(c.label, c.before, c.after, c.unit) for c in claims(UNDERSCORE_BOX)]
    assert ("Rootfs / Size", 120000.0, 110000.0, "") in rows
    assert ("Rootfs / Time", 130.5, 65.25, "s") in rows


REFERENCE_COLUMN = """dbench4 on xfs, compared by mmtests:

                        6.1-reference          6.2-vanilla          6.2-patched
Amean     1         10.00 (   0.00%)     12.00 ( -20.00%)     11.00 ( -10.00%)
Amean     8         40.00 (   0.00%)     48.00 ( -20.00%)     44.00 ( -10.00%)
"""


def test_beside_a_reference_kernel_the_columns_that_name_the_sides_are_compared_and_the_gains_give_the_way():
    rows = [(c.label, c.before, c.after, c.better) for c in claims(REFERENCE_COLUMN)]
    assert rows == [("Amean 1 (6.2-patched)", 12.0, 11.0, "lower"), ("Amean 8 (6.2-patched)", 48.0, 44.0, "lower")]


DASH_BANNERS = """Results on a 16-core box.

---- v6.8 ----
  jobs   read MB/s   write MB/s
  1      410         300
  4      900         610

---- v6.8 + this series ----
  jobs   read MB/s   write MB/s
  1      520         330
  4      1100        700
"""


def test_a_banner_of_dashes_names_the_table_under_it_and_two_such_tables_are_the_sides():
    assert _rows(DASH_BANNERS) == [("1 read MB/s", 410.0, 520.0), ("1 write MB/s", 300.0, 330.0),
                                   ("4 read MB/s", 900.0, 1100.0), ("4 write MB/s", 610.0, 700.0)]


CORNER_SIDES = """Results on a 16-core box.

| base      | read MB/s | write MB/s |
|-----------|-----------|------------|
| seq       | 410       | 300        |
| rand      | 90        | 61         |

| patched   | read MB/s | write MB/s |
|-----------|-----------|------------|
| rand      | 110       | 70         |
| seq       | 520       | 330        |
"""


def test_pipe_tables_whose_corner_cell_names_the_side_pair_their_cells_by_row_and_column_name():
    rows = [(c.label, c.before, c.after, c.unit) for c in claims(CORNER_SIDES)]
    assert rows == [("seq read MB/s", 410.0, 520.0, "MB/s"), ("seq write MB/s", 300.0, 330.0, "MB/s"),
                    ("rand read MB/s", 90.0, 110.0, "MB/s"), ("rand write MB/s", 61.0, 70.0, "MB/s")]


KEYED_ROWS = """Results on a 16-core box.

kernel     bs     IOPS     lat(us)
base       4k     410K     38.1
base       64k    90K      120.5
patched    4k     520K     30.2
patched    64k    110K     100.4
"""


def test_aligned_rows_opening_with_a_sides_name_and_a_key_pair_by_that_key_not_by_neighbours():
    rows = [(c.label, c.before, c.after, c.unit) for c in claims(KEYED_ROWS)]
    assert rows == [("IOPS, bs 4k", 410000.0, 520000.0, "IOPS"), ("lat(us), bs 4k", 38.1, 30.2, "us"),
                    ("IOPS, bs 64k", 90000.0, 110000.0, "IOPS"), ("lat(us), bs 64k", 120.5, 100.4, "us")]


PER_CONFIGURATION = """Results on a 16-core box.

| config   | metric | base | patched |
|----------|--------|------|---------|
| 4 jobs   | read   | 410  | 520     |
|          | write  | 300  | 330     |
| 16 jobs  | read   | 900  | 1100    |
|          | write  | 610  | 700     |
"""


def test_a_configurations_rows_under_base_and_patched_columns_are_named_by_it_and_their_measure():
    assert _rows(PER_CONFIGURATION) == [("4 jobs read", 410.0, 520.0), ("4 jobs write", 300.0, 330.0),
                                        ("16 jobs read", 900.0, 1100.0), ("16 jobs write", 610.0, 700.0)]


HEADINGS = """Results on a 16-core box.

### Before

| test | read MB/s | write MB/s |
|------|-----------|------------|
| seq  | 410       | 300        |
| rand | 90        | 61         |

### After

| test | read MB/s | write MB/s |
|------|-----------|------------|
| rand | 110       | 70         |
| seq  | 520       | 330        |
"""


def test_a_markdown_heading_names_the_side_of_the_table_under_it_and_rows_pair_by_key():
    assert _rows(HEADINGS) == [("test seq read MB/s", 410.0, 520.0), ("test seq write MB/s", 300.0, 330.0),
                               ("test rand read MB/s", 90.0, 110.0), ("test rand write MB/s", 61.0, 70.0)]


def test_a_texts_tables_of_columns_are_found_once_a_reading(monkeypatch):
    # column_tables and repeats both read the tables of columns: a long mail's search (seconds) runs once
    from iolab.mail.claimed import tables
    calls = []
    found = tables._tables
    monkeypatch.setattr(tables, "_tables", lambda lines: calls.append(1) or found(lines))
    text = TWO_LEVEL + "\n$ time make -j8\n\n  real  1m2.5s\n  user  3m1.0s\n"
    claims(text, "nvme: drop polled completions from the flush path")
    claims(text, "nvme: drop polled completions from the flush path")
    assert len(calls) == 1


SPANNED = """Random reads, three runs each:

            Baseline            Patched
qd    IOPS(k) clat(us)      IOPS(k) clat(us)
1     61.2    15.9          70.4    13.7
32    402.5   78.3          455.1   69.0
"""


def test_header_words_one_space_apart_name_the_columns_under_them_and_a_side_line_groups_them():
    assert _rows(SPANNED) == [("1 IOPS(k)", 61.2, 70.4), ("1 clat(us)", 15.9, 13.7),
                              ("32 IOPS(k)", 402.5, 455.1), ("32 clat(us)", 78.3, 69.0)]


def test_columns_whose_names_do_not_repeat_side_by_side_are_not_read_as_groups():
    text = SPANNED.replace("IOPS(k) clat(us)      IOPS(k) clat(us)", "IOPS(k) clat(us)      p99(us) p999(us)")
    assert ("1 IOPS(k)", 61.2, 70.4) not in _rows(text)


def test_a_pipe_tables_rows_of_runs_are_one_row_of_each_sides_mean_in_seconds():
    text = """Untar of a large tree, timed:

|         | Without the cache | With the cache |
|---------+-------------------+----------------|
| 1st run | 1m2.500s          | 0m40.250s      |
| 2nd run | 1m0.500s          | 0m39.750s      |
|---------+-------------------+----------------|
"""
    assert _rows(text) == [("mean of 2 runs", 61.5, 40.0)]


def test_dbenchs_breakdown_by_operation_pasted_a_side_claims_no_row_of_its_own():
    table = """ Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 NTCreateX    {0}     0.030    20.100
 Close        {1}     0.002     0.900
"""
    text = "Without the patch:\n\n" + table.format(1000, 800) + "\nWith the patch:\n\n" + table.format(1300, 1050)
    assert not [r for r in _rows(text) if r[0].startswith(("NTCreateX", "Close"))]


GROUPED_CELLS = """Throughput and load, mean of 5 runs:

                 baseline        |       patched          |   diff, %
bs  |  rw   | BW,MiB/s  load  BW/load | BW,MiB/s  load  BW/load | BW    load
----+-------+-----------------+------------------------+-------------
4K  | read  |  300  2.00  150 |  450  1.50  300        | +50   -25
64K | read  | 1200  1.00 1200 | 1260  0.90 1400        | +5    -10
"""


def test_a_pipe_cell_a_sides_figures_under_the_sides_names_pairs_each_measure_but_a_ratio_of_two_others():
    assert _rows(GROUPED_CELLS) == [("4K read BW,MiB/s", 300, 450), ("4K read load", 2.0, 1.5),
                                    ("64K read BW,MiB/s", 1200, 1260), ("64K read load", 1.0, 0.9)]
