"""The claims reader's tables of tools and of blocks: mmtests' comparison of kernels (the mean row of
each key against the first column), and blocks of labelled figures pasted once a side."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.mmtests import compare_tables

MMTESTS = """dbench4 latency on the test box:

                   6.9-rc2-base          6.9-rc2-series
Min       8        31.04 (   0.00%)       29.87 (   3.77%)
1st-qrtle 8        33.00 (   0.00%)       31.00 (   6.06%)
Amean     8        40.10 (   0.00%)       36.52 *   8.93%*
Stddev    8         4.20 (   0.00%)        3.11 (  25.95%)
Amean     32      120.50 (   0.00%)      118.25 (   1.87%)
Hmean     4-ops/sec   911.20 (   0.00%)      950.40 (   4.30%)

                 6.9-rc2      6.9-rc2
                    base       series
Duration User      88.10       86.70
Duration System   310.44      305.90
Duration Elapsed  622.75      610.02
"""


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_an_mmtests_comparison_claims_each_mean_row_and_the_elapsed_duration():
    found, used = compare_tables(MMTESTS.splitlines())
    assert [(c.label, c.before, c.after, c.unit) for c in found] == [
        ("Amean 8", 40.10, 36.52, ""), ("Amean 32", 120.50, 118.25, ""),
        ("Hmean 4-ops/sec", 911.20, 950.40, "ops/s"), ("Duration Elapsed", 622.75, 610.02, "")]
    assert found[2].better == "higher" and found[3].better == "lower"
    assert len(used) == 7  # its six rows (a quartile's too) and the Elapsed line, which no other table reads


def test_the_samples_statistics_of_an_mmtests_comparison_are_no_claims():
    assert {label.split()[0] for label, _, _ in _rows(MMTESTS)} <= {"Amean", "Hmean", "Duration"}


def test_three_kernels_claim_each_later_column_against_the_first():
    text = """                 base        v1        v2
Amean     1     10.00 (   0.00%)     9.00 (  10.00%)     8.00 *  20.00%*
"""
    assert _rows(text) == [("Amean 1 (v1)", 10.0, 9.0), ("Amean 1 (v2)", 10.0, 8.0)]


def test_columns_without_a_baseline_change_are_no_mmtests_comparison():
    assert compare_tables(["Amean  1   10.00 (  1.00%)   9.00 (  10.00%)"]) == ([], set())


LISTS = """Two runs of the create test, with and without the change.

Run A: 8 threads
  without patch:
    Average Files/sec:      5120.5
    311 commits (311 requested), each up to 4096 blocks
  with patch:
    Average Files/sec:      5480.0
    298 commits (298 requested), each up to 4096 blocks

Run B: 16 threads
  without patch:
    Average Files/sec:      8003.0
  with patch:
    Average Files/sec:      9010.0
"""


def test_labelled_figures_under_each_side_pair_by_their_label_block_by_block():
    assert _rows(LISTS) == [("Average Files/sec", 5120.5, 5480.0), ("Average Files/sec", 8003.0, 9010.0)]


def test_a_labels_figures_among_its_words_and_a_unit_after_the_figure():
    text = """Before:
box1   Copy 512 bufsize 100 maxblocks     40210.0 KBps
box2   Copy 512 bufsize 100 maxblocks     51000.0 KBps

After:
box1   Copy 512 bufsize 100 maxblocks     44100.0 KBps
box2   Copy 512 bufsize 100 maxblocks     56020.0 KBps
"""
    assert _rows(text) == [("box1 Copy 512 bufsize 100 maxblocks", 40210.0, 44100.0),
                           ("box2 Copy 512 bufsize 100 maxblocks", 51000.0, 56020.0)]


NUMBERED = """Each case three times, the average of the three:
1.Static queue depth
1) Random write:
Speed: 80 81 82
Average speed: 81MB/S

2) Random read:
Average speed: 50MB/S

2.Adaptive queue depth
1) Random write:
Speed: 90 91 92
Average speed: 91MB/S

2) Random read:
Average speed: 50MB/S
"""


def test_two_numbered_headings_are_the_sides_by_the_word_the_subject_names():
    assert _rows(NUMBERED, "mmc: make the queue depth adaptive") == [
        ("Random write: Average speed", 81.0, 91.0), ("Random read: Average speed", 50.0, 50.0)]
    assert _rows(NUMBERED, "mmc: tune the queue depth") == []


def test_a_sides_samples_and_its_settings_are_no_entries_its_total_is():
    text = """[before]
threads = 4
Speed: 80 81 82
disk.img (2560 blocks of 4096 bytes)
total files/sec: 81

[after]
threads = 4
Speed: 90 91 92
disk.img (2560 blocks of 4096 bytes)
total files/sec: 91
"""
    assert _rows(text) == [("total files/sec", 81.0, 91.0)]


def test_a_tables_spread_rows_beside_their_mean_are_no_claims_unless_marked_significant():
    text = """metric               baseline     current     stdev      diff
read_lat_ns_mean        5000.00     4000.00     20.00   -20.00%
read_lat_ns_max        90000.00    80000.00    900.00   -11.11%
read_lat_ns_p99        20000.00    10000.00    300.00   -50.00% *
avg_sync_ms               12.00       10.00      0.50   -16.67%
max_sync_ms               30.00       24.00      2.00   -20.00%
"""
    assert [label for label, _, _ in _rows(text)] == ["read_lat_ns_mean", "read_lat_ns_p99", "avg_sync_ms"]


def test_two_paragraphs_of_the_same_rows_but_one_word_are_the_sides_that_word_names():
    text = """Image sizes of a kernel tree:

tree-6.1 (lz4, 4k packed)\t204800
tree-6.1 (lz4, 16k packed)\t188416

tree-6.1 (lz4, 4k vanilla)\t229376
tree-6.1 (lz4, 16k vanilla)\t212992
"""
    assert _rows(text) == [("tree-6.1 (lz4, 4k)", 229376.0, 204800.0), ("tree-6.1 (lz4, 16k)", 212992.0, 188416.0)]


def test_a_pipe_tables_change_column_compares_the_two_columns_before_it_even_in_rows_named_as_sides():
    text = """4k randread, 2 jobs:

            | IOPS (sync mode) | IOPS (async mode) | diff
----------- | ---------------- | ----------------- | ----
without fix |      100k        |        90k        | ~-10%
with fix    |      102k        |       120k        | ~18%
"""
    assert _rows(text) == [("without fix", 100e3, 90e3), ("with fix", 102e3, 120e3)]
    one = text.replace("without fix |      100k        |        90k        | ~-10%\n", "")
    assert _rows(one) == [("with fix", 102e3, 120e3)]


def test_a_table_a_side_under_a_caption_naming_it_pairs_its_cells_not_its_columns():
    text = """Results without the patch
test       read     write
job1       100      200
job2       110      210

Results with the patch
test       read     write
job1       150      250
job2       160      260
"""
    assert _rows(text) == [("job1 read", 100, 150), ("job1 write", 200, 250),
                           ("job2 read", 110, 160), ("job2 write", 210, 260)]


def test_rows_that_name_their_side_in_a_column_take_the_names_of_the_columns_after_it():
    text = """  bs    kernel     IOPS     lat(us)
  4k    base       100k     320
  4k    patched    120k     270
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("IOPS", 100e3, 120e3, "IOPS"), ("lat(us)", 320, 270, "us")]


def test_a_blocks_rows_the_sides_reader_leaves_are_still_read():
    text = """1) Without the patch:
   Throughput: 1200 MB/s
   Latency: 85 us
2) With the patch:
   Throughput: 1500 MB/s
   Latency: 70 us
"""
    assert sorted((c.before, c.after, c.unit) for c in claims(text)) == [(85, 70, "us"), (1200, 1500, "MB/s")]


def test_a_line_of_units_under_a_header_gives_each_column_its_unit():
    text = """            base        patched
            (MB/s)      (MB/s)
read        2100        2600
write       1800        1900
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("read", 2100, 2600, "MB/s"), ("write", 1800, 1900, "MB/s")]


def test_a_spread_named_as_the_gate_names_it_beside_a_mean_is_no_claim():
    # one set of names for a spread (model.SPREAD): a percentile written '99.9th', a deviation written 'σ'
    text = """metric              baseline    current    diff
commit_lat_us_mean     410.00     380.00   -7.32%
commit_lat_us_99.9th  2900.00    2100.00  -27.59%
commit_lat_us_σ        120.00     150.00  +25.00%
"""
    assert [label for label, _, _ in _rows(text)] == ["commit_lat_us_mean"]


def test_a_comparison_whose_last_kernel_alone_is_named_patched_is_against_the_kernel_before_it():
    text = """Fixes the stall with writeback_batch=1:

                     writeback_batch=0    writeback_batch=1    patched
Amean     4           50.10 (   0.00%)       71.30 * -42.32%*     52.00 (  -3.79%)
Hmean     16         400.50 (   0.00%)      310.25 ( -22.53%)    395.75 (  -1.19%)
"""
    assert [(c.label, c.before, c.after) for c in compare_tables(text.splitlines())[0]] == [
        ("Amean 4 (patched)", 71.30, 52.00), ("Hmean 16 (patched)", 310.25, 395.75)]
    assert [(c.before, c.after) for c in claims(text)] == [(71.30, 52.00), (310.25, 395.75)]  # the gate keeps them
