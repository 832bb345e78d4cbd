"""The claims reader's tables by their axes (iolab.mail.claimed.axes): a kernel beside the same
kernel with the change among other kernels' columns, a first row of a setting's values over the two
rows that are the sides, pipe rows that look like a diffstat, and a share that is no delta."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.axes import kernel_pairs, side_columns
from iolab.mail.message import split_body


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_a_kernel_and_the_same_kernel_patched_pair_among_other_kernels():
    assert kernel_pairs(["qd", "6.1", "6.6", "6.6-patched"]) == [(2, 3, "6.6")]
    assert kernel_pairs(["v6.8", "v6.9+series", "v6.9"]) == [(2, 1, "v6.9")]
    assert kernel_pairs(["bs", "6.1", "6.1-patched", "6.6", "6.6+fix"]) == [(1, 2, "6.1"), (3, 4, "6.6")]
    assert kernel_pairs(["gen3", "gen4", "gen5"]) == []
    assert side_columns(["test", "base", "patched"]) == [(1, 2, "")]


def test_pipe_columns_of_kernels_read_the_patched_kernel_against_its_own():
    text = """randwrite IOPS on a loop device:

qd | 6.1   | 6.6    | 6.6-patched
1  | 9120  | 8800   | 9450
32 | 40110 | 38020  | 45005
"""
    assert _rows(text) == [("qd 1", 8800, 9450), ("qd 32", 38020, 45005)]


def test_markdown_columns_of_kernels_with_two_pairs_give_a_row_a_pair():
    text = """Latency of a 4k sync write (usec):

| test     | 6.1 | 6.1-patched | 6.6 | 6.6-patched |
|----------|-----|-------------|-----|-------------|
| seq      | 41  | 35          | 44  | 36          |
| rand     | 52  | 47          | 55  | 49          |
"""
    assert _rows(text) == [("seq (6.1)", 41, 35), ("seq (6.6)", 44, 36), ("rand (6.1)", 52, 47),
                           ("rand (6.6)", 55, 49)]


def test_aligned_columns_of_kernels_read_the_kernel_plus_its_series():
    text = """fs_mark files/sec, one run each:

threads    v6.8     v6.9     v6.9+series
4          21034    20988    24410
16         50112    49870    61200
"""
    assert [(b, a) for _, b, a in _rows(text)] == [(20988, 24410), (49870, 61200)]


def test_a_row_of_sizes_over_old_and_new_rows_reads_a_claim_per_size():
    text = """t/io_uring on null_blk, polled:

BS           512     4K      16K     64K
=============================================
old (KIOPS)  2010    1990    1400    690
new (KIOPS)  2100    2080    1510    760
"""
    assert [(b, a) for _, b, a in _rows(text)] == [(2010, 2100), (1990, 2080), (1400, 1510), (690, 760)]
    assert {c.unit for c in claims(text)} == {"IOPS"}


def test_a_row_of_queue_depths_over_base_and_patched_rows_is_the_columns_settings():
    text = """randread MB/s by queue depth:

QD          1      4      16     64
vanilla     310    980    2210   2890
patched     330    1100   2650   3300
"""
    assert _rows(text) == [("QD=1", 310, 330), ("QD=4", 980, 1100), ("QD=16", 2210, 2650), ("QD=64", 2890, 3300)]


def test_a_row_of_jobs_over_pairs_of_side_rows_reads_each_measure_down():
    text = """dd throughput (MB/s) by jobs:

jobs            1      2      4
read base       410    790    1400
read patched    450    860    1620
write base      300    520    800
write patched   310    600    950
"""
    assert _rows(text) == [("read jobs=1", 410, 450), ("read jobs=2", 790, 860), ("read jobs=4", 1400, 1620),
                           ("write jobs=1", 300, 310), ("write jobs=2", 520, 600), ("write jobs=4", 800, 950)]


def test_a_pipe_row_ending_in_a_whole_number_is_no_diffstat():
    body = """Results:

jobs | base | patched
1    | 120  | 131
8    | 640  | 702

 block/blk-mq.c | 12 ++++++------
 1 file changed, 6 insertions(+), 6 deletions(-)

diff --git a/block/blk-mq.c b/block/blk-mq.c
"""
    described, _ = split_body(body)
    assert "1    | 120  | 131" in described and "8    | 640  | 702" in described
    assert "blk-mq.c" not in described


def test_a_share_beside_two_figures_is_no_delta_and_a_change_that_agrees_is():
    shares = """Three eviction policies:

policy | reads | writes | cpu
lru    | 450   | 300    | 75%
lfu    | 520   | 200    | 72%
"""
    assert _rows(shares) == []
    changes = """Three runs:

test  | first | second | note
seq   | 100   | 120    | +20%
rand  | 200   | 150    | -25%
"""
    assert _rows(changes) == [("seq", 100, 120), ("rand", 200, 150)]


def test_pipe_tables_under_banners_alike_but_for_a_before_word_pair_by_key():
    text = """Sequential read, fio psync:

=== kernel: stock  fs: xfs ===
bs    | BW (MiB/s) | IOPS
------+------------+------
4k    | 410.5      | 105088
64k   | 1210.0     | 19360
1M    | 1800.2     | 1800

=== kernel: folios  fs: xfs ===
bs    | BW (MiB/s) | IOPS
------+------------+------
4k    | 520.0      | 133120
1M    | 2650.9     | 2650
"""
    assert _rows(text) == [("kernel fs xfs 4k BW (MiB/s)", 410.5, 520.0), ("kernel fs xfs 4k IOPS", 105088, 133120),
                           ("kernel fs xfs 1M BW (MiB/s)", 1800.2, 2650.9), ("kernel fs xfs 1M IOPS", 1800, 2650)]


def test_rows_of_named_figures_under_side_captions_pair_by_key_in_each_section():
    text = """rbd fio, numjobs=16:

== WRITE ==

upstream, rw=randwrite

  4k   IOPS=50.1k, BW=196MiB/s, lat=320.5usec
  64k  IOPS=9120, BW=570MiB/s, lat=1.75msec

with the series, rw=randwrite

  4k   IOPS=55.0k, BW=215MiB/s, lat=290.1usec
  64k  IOPS=10.2k, BW=638MiB/s, lat=1.57msec
"""
    found = claims(text)
    assert [(c.before, c.after) for c in found] == [(50100, 55000), (196, 215), (320.5, 290.1), (9120, 10200),
                                                    (570, 638), (1.75, 1.57)]
    assert [c.unit for c in found][:3] == ["IOPS", "MiB/s", "us"]


def test_runs_of_one_key_and_captions_naming_no_side_are_no_tables_a_side():
    runs = """Before:

read  IOPS=549k, BW=2146MiB/s
read  IOPS=544k, BW=2125MiB/s

After:

read  IOPS=562k, BW=2194MiB/s
read  IOPS=560k, BW=2188MiB/s
"""
    assert not [c for c in claims(runs) if c.form == "columns"]
    unnamed = """ext4, rw=randwrite

  4k   IOPS=50.1k, BW=196MiB/s
  64k  IOPS=9120, BW=570MiB/s

xfs, rw=randwrite

  4k   IOPS=55.0k, BW=215MiB/s
  64k  IOPS=10.2k, BW=638MiB/s
"""
    assert claims(unnamed) == []


def test_a_cells_delta_glued_to_its_figure_or_spaced_in_its_parentheses_stays_the_cells():
    text = """fio results, MB/s:

test      base    patched
seq       100     120(+20.0%)
rand      200     150 (-25.0% )
"""
    assert _rows(text) == [("seq", 100, 120), ("rand", 200, 150)]
    assert [c.stated for c in claims(text)] == ["+20.0%", "-25.0%"]
    grid = """Energy (J), lower is better:

case          4 jobs          8 jobs          16 jobs
base          2010            2804            8768
patched       2115(5.22%)     2388 (-14.84% ) 8700(-0.78%)
"""
    assert [(b, a) for _, b, a in _rows(grid)] == [(2010, 2115), (2804, 2388), (8768, 8700)]


def test_cells_of_both_sides_read_in_the_order_the_header_names():
    text = """fio, 8 jobs:

bs        randread IOPS (before/after)      randwrite IOPS (before/after)
-------   ----------------------------      -----------------------------
4k        410K/455K                         300K/320K

64k       52.1K/60.3K                       40K/41.5K
"""
    found = claims(text)
    assert [(c.label, c.before, c.after) for c in found] == [
        ("randread IOPS 4k", 410000, 455000), ("randwrite IOPS 4k", 300000, 320000),
        ("randread IOPS 64k", 52100, 60300), ("randwrite IOPS 64k", 40000, 41500)]
    assert {c.unit for c in found} == {"IOPS"}
    turned = """Build time in seconds, patched/vanilla:

tree       time
linux      412/498
llvm       1210/1300
"""
    assert _rows(turned) == [("time linux", 498, 412), ("time llvm", 1300, 1210)]


def test_cells_of_two_measures_under_a_header_naming_no_sides_are_no_pairs():
    text = """Create time (s) / rate (files/s):

files      xfs                ext4
10k        0.41 / 24.3k       0.42 / 23.8k
20k        0.75 / 26.7k       0.76 / 26.3k
"""
    assert _rows(text) == []


SETTING_TABLES = """netperf with 64 queue entries
------------------------------
streams | Gbit/s | retrans
------------------------------
1       | 9.1    | 1,200
8       | 38.0   | 4,410

netperf with 256 queue entries
------------------------------
streams | Gbit/s | retrans
------------------------------
1       | 9.4    | 310
8       | 39.2   | 95
"""


def test_tables_under_captions_of_two_values_of_a_setting_the_subject_sets_after():
    assert _rows(SETTING_TABLES, "net: foo: raise the default queue entries to 256") == [
        ("netperf with queue entries 1 Gbit/s", 9.1, 9.4), ("netperf with queue entries 1 retrans", 1200, 310),
        ("netperf with queue entries 8 Gbit/s", 38.0, 39.2), ("netperf with queue entries 8 retrans", 4410, 95)]
    assert _rows(SETTING_TABLES, "net: foo: lower the default queue entries to 64")[0][1:] == (9.4, 9.1)


def test_tables_under_two_values_of_a_setting_no_subject_names_give_no_row():
    assert _rows(SETTING_TABLES, "net: foo: tune the queue") == []


def test_neighbouring_tables_a_side_open_with_the_same_setting_row_that_names_the_columns():
    text = """fio randread, bs=4k:

stock kernel
----------------------------------------
numjobs    |      1 |      4 |     16
IOPS       |   210k |   700k |  1100k
cpu        |    98% |    99% |   100%%
----------------------------------------

with the series
----------------------------------------
numjobs    |      1 |      4 |     16
IOPS       |   230k |   810k |  1400k
cpu        |    80% |    85% |    90%
----------------------------------------
"""
    assert _rows(text) == [("IOPS numjobs 1", 210000, 230000), ("IOPS numjobs 4", 700000, 810000),
                           ("IOPS numjobs 16", 1100000, 1400000), ("cpu numjobs 1", 98, 80), ("cpu numjobs 4", 99, 85),
                           ("cpu numjobs 16", 100, 90)]


def test_a_table_in_two_bands_named_as_the_sides_pairs_its_rows_by_name():
    text = """pgbench, 3 runs averaged:

base       clients      1       8       32
           tps          410     2900    7100
           lat (ms)     2.4     2.8     4.5
patched    clients      1       8       32
           tps          430     3300    8800
           lat (ms)     2.3     2.4     3.6
"""
    assert _rows(text) == [("tps clients 1", 410, 430), ("tps clients 8", 2900, 3300), ("tps clients 32", 7100, 8800),
                           ("lat (ms) clients 1", 2.4, 2.3), ("lat (ms) clients 8", 2.8, 2.4),
                           ("lat (ms) clients 32", 4.5, 3.6)]


BANDS_OF_A_SETTING = """Results on a 16-core box:

=========  ============  ========  ========
 64ms       threads       4         16
            ops/s         5120      9900
            p99 (us)      840       1210
 16ms       threads       4         16
            ops/s         5400(5.47%)   10420 (5.25% )
            p99 (us)      610       900
=========  ============  ========  ========
"""


def test_bands_of_two_values_of_a_setting_the_text_sets_one_of():
    text = BANDS_OF_A_SETTING + "\nSo this patch lowers the default slice to 16ms.\n"
    assert _rows(text) == [("ops/s threads 4", 5120, 5400), ("ops/s threads 16", 9900, 10420),
                           ("p99 (us) threads 4", 840, 610), ("p99 (us) threads 16", 1210, 900)]
    assert _rows(BANDS_OF_A_SETTING) == []
