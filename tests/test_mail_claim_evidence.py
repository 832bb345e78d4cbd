"""The gate a candidate row passes before the reader returns it (iolab.mail.claimed.evidence): the
row shows its two sides. Lines written for these tests, in the forms people paste."""

from iolab.mail.claimed import Claim, claims
from iolab.mail.claimed.evidence import delta_agrees, paired_with_itself

# dbench's per-operation table under a setting's name: its columns are a count and two latencies
DBENCH = """The array was measured with dbench for ten minutes:

 'queue_depth = 32'

  Op          Count     AvgLat    MaxLat
  ----------------------------------------
  Create     812345     0.031    41.200
  Remove     401122     0.052    38.900
  Lookup    2210987     0.004    12.300
"""


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_columns_that_are_no_sides_give_no_row():
    assert _rows(DBENCH) == []


def test_a_delta_that_is_not_the_rows_change_is_no_evidence():
    text = DBENCH.replace("41.200\n", "41.200  (-12%)\n")
    assert _rows(text) == []


def test_a_header_that_names_both_sides_is_evidence():
    text = DBENCH + """
And the create rate with and without the series:

  test        base      patched
  create      1120      1387
  remove      2210      2290
"""
    assert _rows(text) == [("create", 1120, 1387), ("remove", 2210, 2290)]


def test_a_gain_column_that_agrees_is_evidence():
    text = """Numbers from my box:

  job          run1      run2     gain
  seqread      1510      1822     20.7%
  randread      310       333      7.4%
"""
    assert _rows(text) == [("seqread", 1510, 1822), ("randread", 310, 333)]


def test_a_column_the_subject_names_is_the_after_side():
    text = """Results:

 sec   plain MB/s   nowaitio MB/s
   1     1201.5       1388.0
   2     1199.5       1392.0
 avg     1200.5       1390.0
"""
    assert _rows(text) == []
    assert _rows(text, "[PATCH] block: add NOWAITIO for buffered reads") == [("avg", 1200.5, 1390)]


def test_a_sides_stdev_is_no_claim_its_mean_is():
    text = """Before:
    Mean:     40.12 msec
    Stdev:     1.20 msec
After:
    Mean:     22.50 msec
    Stdev:     3.40 msec
"""
    assert _rows(text) == [("Mean ms", 40.12, 22.5)]


def _claim(before: float, after: float, stated: str = "", source: str = "") -> Claim:
    return Claim("x", before, after, "MB/s", "bandwidth", "higher", stated, source)


def test_a_delta_agrees_against_either_side_and_as_a_factor():
    assert delta_agrees(_claim(100, 120, "+20%"))
    assert delta_agrees(_claim(120, 100, "20%"))  # a gain written against the after side
    assert delta_agrees(_claim(43.59, 0, "-100.00%"))
    assert delta_agrees(_claim(1117, 1921, source="1117  1921  1.72x"))
    assert not delta_agrees(_claim(100, 120, "+45%"))
    # a share in each cell ("1.8M (33%)") is no delta: its digits are not a sign
    assert not delta_agrees(_claim(1.8e6, 1.87e6, source="4k  1.8M (33%)  1.87M (32%)"))


TWINS = """Buffered writes, MiB/s:

  legacy:
  bs      cached     uncached
  4k      1010       58.0
  64k     4120       790

  folios:
  bs      cached     uncached
  4k      1090       61.0
  64k     6210       1150
"""


def test_twin_tables_named_by_no_side_give_no_row():
    assert _rows(TWINS) == []


def test_twin_tables_whose_second_the_subject_brings():
    assert _rows(TWINS, "[PATCH] mm: use large folios for buffered writes") == [
        ("4k cached", 1010, 1090), ("4k uncached", 58, 61), ("64k cached", 4120, 6210), ("64k uncached", 790, 1150)]


BANNERS = """Sequential reads of a 4 GiB file:

========== lab-a ==========
dd if=/mnt/f of=/dev/null bs=1M
4294967296 bytes (4.3 GB, 4.0 GiB) copied, 17.2000 s, 250 MB/s

========== lab-b ==========
dd if=/mnt/f of=/dev/null bs=1M
4294967296 bytes (4.3 GB, 4.0 GiB) copied, 3.9000 s, 1.1 GB/s
"""


def test_banners_that_name_no_side_give_no_row():
    assert _rows(BANNERS) == []
    named = BANNERS.replace("lab-a", "vanilla").replace("lab-b", "patched")
    assert [(label, before, after) for label, before, after in _rows(named)] == [("dd", 250, 1100)]


def test_dds_seconds_are_not_a_row_beside_its_rate():
    runs = "2147483648 bytes (2.1 G) copied, {} s, {} M/s\n"
    text = "Before:\n" + runs.format("16.4200", 131) + runs.format("15.9100", 135) + \
        "\nAfter:\n" + runs.format("4.7700", 450) + runs.format("4.6100", 466)
    found = claims(text)
    assert found and all(c.unit != "s" for c in found)
    assert (131, 450) in [(c.before, c.after) for c in found]


def test_a_runs_user_and_system_time_are_its_breakdown():
    text = """Before:
  Time (mean ± σ):     48.512 s ±  0.310 s   [User: 47.004 s, System: 1.203 s]
After:
  Time (mean ± σ):     12.640 s ±  0.041 s    [User: 11.187 s, System: 1.317 s]
"""
    assert [(c.before, c.after) for c in claims(text)] == [(48.512, 12.64)]


def test_a_sweep_of_a_setting_written_with_arrows_is_no_change():
    sweep = "Raising the queue cap: 8 tags -> ~410 MB/s    16 -> ~520 MB/s    64 -> ~600 MB/s\n"
    assert claims(sweep) == []
    assert [(c.before, c.after) for c in claims("Reads went from 410 MB/s -> 600 MB/s with the cap raised.\n")] == \
        [(410, 600)]


def test_a_sides_percentile_is_a_row_only_where_the_sentences_speak_of_it():
    text = """Before:
    Avg:     40.10 msec
    P99:     92.00 msec
After:
    Avg:     22.50 msec
    P99:     61.00 msec
"""
    assert _rows(text) == [("Avg ms", 40.1, 22.5)]
    said = "With the patch the p99 falls by a third while the average halves.\n\n"
    assert _rows(said + text) == [("Avg ms", 40.1, 22.5), ("P99 ms", 92, 61)]


ROWS = "\n\n  seqread     1510    1822\n  randread     310     333\n"


def test_a_caption_that_names_both_sides_is_evidence():
    assert _rows("Reads on my box, MB/s:" + ROWS) == []
    for caption in ("Reads, MB/s, before/after:", "Reads on 6.18 and 6.18+this series, MB/s:"):
        assert _rows(caption + ROWS) == [("seqread", 1510, 1822), ("randread", 310, 333)], caption


def test_a_count_of_things_arrowed_to_a_figure_is_a_setting():
    assert claims("Throughput scales with the CPUs (~0.4 GB/s at 4 vCPU -> ~1.9 GB/s at 32 vCPU).\n") == []


def test_a_row_that_reads_alike_in_both_tables_is_no_change_not_a_cell_with_itself():
    alike = TWINS.replace("4k      1090       61.0", "4k      1010       58.0")
    found = _rows(alike, "[PATCH] mm: use large folios for buffered writes")
    assert ("4k cached", 1010, 1010) in found and ("4k uncached", 58, 58) in found
    line = "  4k      1010       58.0"
    assert paired_with_itself(Claim("4k", 1010, 1010, "", "count", None, "", f"{line.strip()} / {line.strip()}"),
                              {line.strip(): [3]})


MMTESTS = """                      6.9.0-rc2              6.9.0-rc2
                        vanilla          batchfix-v2r1
Amean     1        100.10 (   0.00%)       90.20 *   9.89%*
Amean     4        200.50 (   0.00%)      180.30 *  10.07%*

                 6.9.0-rc2   6.9.0-rc2
                   vanillabatchfix-v2r1
Duration User         100.11      99.20
Duration System       400.30     380.12
Duration Elapsed      900.76     850.05
"""


def test_columns_in_their_order_need_a_baseline_named_above_them():
    assert ("Duration Elapsed", 900.76, 850.05) in _rows(MMTESTS)  # "vanilla", glued to the next name
    two_kernels = MMTESTS.replace("vanillabatchfix-v2r1", "").replace("vanilla          batchfix-v2r1", "") \
        .replace("6.9.0-rc2", "6.9.0")  # a regression between two releases: no baseline named
    assert "Duration Elapsed" not in [label for label, _, _ in _rows(two_kernels)]


# runs per line a side, with their total and average: the average is the row
RUNS = """Each case was timed five times, seconds per round.
Before:
32 jobs:  41s 40s 42s 41s 40s total: 204s, avg: 40.8s
4  jobs:  58s 57s 59s 58s 57s total: 289s, avg: 57.8s

After:
32 jobs:  36s 37s 35s 36s 36s total: 180s, avg: 36s
4  jobs:  50s 51s 50s 52s 50s total: 253s, avg: 50.6s
"""


def test_a_line_of_runs_with_their_average_gives_the_average_alone():
    found = {(before, after) for _, before, after in _rows(RUNS)}
    assert (40.8, 36) in found and (57.8, 50.6) in found
    assert not found - {(40.8, 36), (57.8, 50.6)}  # no run, no total, no mean of runs


# pahole per side: the size is the row, the holes and the last cacheline are its layout
PAHOLE = """Before:
struct request_slot {
        unsigned int               tag;                  /*     0     4 */

        /* XXX 4 bytes hole, try to pack */

        void *                     priv;                 /*     8     8 */

        /* size: 208, cachelines: 4, members: 9 */
        /* sum members: 200, holes: 2, sum holes: 8 */
        /* last cacheline: 16 bytes */
};

After:
struct request_slot {
        void *                     priv;                 /*     0     8 */

        /* XXX 1 bytes hole, try to pack */

        /* size: 200, cachelines: 4, members: 9 */
        /* sum members: 199, holes: 1, sum holes: 1 */
        /* last cacheline: 8 bytes */
};
"""


def test_paholes_layout_is_no_row_beside_the_structs_size():
    found = _rows(PAHOLE, "[PATCH] blk-mq: shrink struct request_slot")
    assert all((before, after) in {(208, 200)} for _, before, after in found), found


# a table's row read across cells of different measures: a size, a count, a rate
LEVELS = """Dedup table build, per index level:

|--------------+---------+-----------+------------|
| Index        | Memory  | # buckets | Throughput |
|--------------+---------+-----------+------------|
| Flat         | -       |         - | 3.1 MB/s   |
|--------------+---------+-----------+------------|
| Tree level 1 | 12.5 MB |       310 | 41.0 MB/s  |
|--------------+---------+-----------+------------|
"""

# columns whose header gives each its own unit: an IOPS and two sizes of writes
SETUPS = """Random writes on three setups (same drive):

DevW: writes that reach the drive
SpareW: writes beyond the app's own

Buffered writes
---------------------------------
Setup\t\tIOPS(K)\t\tDevW(G)\t\tSpareW(G)
1\t\t210\t\t95\t\t12
2\t\t198\t\t120\t\t31
"""


def test_cells_of_different_measures_on_one_row_are_no_sides():
    assert _rows(LEVELS, "ext4: a tree index for the dedup table") == []
    assert _rows(SETUPS, "xfs: offload buffered writes to the drive") == []
    same = "Copy rate:\n\n| test | base | patched |\n| copy | 3.1 MB/s | 3500 KB/s |\n"
    assert _rows(same) == [("copy", 3.1, 3.5)]  # two rates in their own units are one measure


def test_a_kernel_named_as_before_a_regression_is_not_the_changes_before():
    text = """Sequential reads on the test array:
- v6.1.40 (before regression): 910 MB/s
- v6.1.44 (regression introduced): 420 MB/s
- v6.1.44 with this fix: 905 MB/s
"""
    assert (910, 905) not in {(b, a) for _, b, a in _rows(text)}


# each side pasted per device, three cases before and two after: a before of one device is not an after of another
DEVICES = """Reads on each kernel and device:

stock, reading from the old SATA disk:
  read: IOPS=410, BW=1640KiB/s (1679kB/s)(96.1MiB/60001msec)
stock, reading from the NVMe drive:
  read: IOPS=92.1k, BW=360MiB/s (377MB/s)(21.1GiB/60001msec)
stock, reading from a ramdisk:
  read: IOPS=301k, BW=1176MiB/s (1233MB/s)(68.9GiB/60001msec)
With the patch, two SATA disks striped:
  read: IOPS=815, BW=3260KiB/s (3338kB/s)(191MiB/60001msec)
With the patch, a mirror of SATA and NVMe:
  read: IOPS=71.0k, BW=277MiB/s (291MB/s)(16.2GiB/60001msec)
"""


def test_cases_of_different_configurations_a_side_do_not_pair():
    assert _rows(DEVICES) == []
    jobs = """Random reads, a case of each kernel beside the other's:

Without the patch, 4 jobs:
  read: IOPS=410, BW=1640KiB/s (1679kB/s)(96.1MiB/60001msec)
With the patch, 4 jobs:
  read: IOPS=815, BW=3260KiB/s (3338kB/s)(191MiB/60001msec)
Without the patch, 16 jobs:
  read: IOPS=92.1k, BW=360MiB/s (377MB/s)(21.1GiB/60001msec)
With the patch, 16 jobs:
  read: IOPS=71.0k, BW=277MiB/s (291MB/s)(16.2GiB/60001msec)
Without the patch, 64 jobs:
  read: IOPS=301k, BW=1176MiB/s (1233MB/s)(68.9GiB/60001msec)
"""
    assert [(b, a) for _, b, a in _rows(jobs)] == [(410, 815), (1640, 3260), (92100, 71000), (360, 277)]


def test_a_pair_in_a_paragraph_naming_the_commit_that_brought_it_is_the_regression_not_the_change():
    text = """Commit 0123abcd4567 ("xfs: flush the log before every fsync") caused a lot of extra
journal traffic, and since then small synchronous writes on slow disks dropped
from 9100 IOPS to 5200 IOPS.

Skip the flush when the log is already stable.
"""
    assert _rows(text) == []
    fixed = text.replace("Skip the flush when the log is already stable.",
                         "With this patch they are back from 5200 IOPS to 9000 IOPS.")
    assert [(b, a) for _, b, a in _rows(fixed)] == [(5200, 9000)]


def test_a_thing_with_and_without_it_on_one_line_is_two_modes_unless_the_change_brings_it():
    text = "On the test box the copy ran at 2.4 GB/s with compression and at 3.1 GB/s without compression.\n"
    assert _rows(text) == []
    brought = "This series adds compression to the copy path.\n\n" + text
    assert [(b, a) for _, b, a in _rows(brought)] == [(3.1, 2.4)]


def test_a_step_of_a_series_that_goes_on_is_no_after():
    text = """Receive throughput (Gbps) as each patch is applied:

buf size    base      1/3       2/3       3/3
4K          12.5      13.0      14.1      15.2
64K         30.1      31.0      33.8      36.5
"""
    assert (12.5, 13.0) not in {(b, a) for _, b, a in _rows(text)}
    ratio = "Dirty pages written:\n\n    batch   before     after      after/before\n    0       1240       966        0.779\n"
    assert [(b, a) for _, b, a in _rows(ratio)] == [(1240, 966)]  # a ratio of the sides is no step


# bloat-o-meter's output: the image's total is the claim, its symbols' rows are parts of it
BLOAT = """The helpers are now inlined only where they pay off; bloat-o-meter on an x86_64 defconfig:

add/remove: 1/2 grow/shrink: 2/3 up/down: 88/-260 (-172)
Function                                     old     new   delta
blk_mq_end_request_batch                     812     860     +48
__blk_rq_map_sg                              930     874     -56
blk_account_io_done                           84       -     -84
Total: Before=22813402, After=22813230, chg -0.00%
"""


def test_bloat_o_meters_total_is_the_claim_and_its_symbols_rows_are_not():
    found = claims(BLOAT, "block: inline the completion helpers")
    assert [(c.label, c.before, c.after, c.unit, c.better) for c in found] == [
        ("bloat-o-meter total", 22813402, 22813230, "bytes", "lower")]


def test_dbench_operations_per_side_are_counters_beside_its_throughput():
    side = """
 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 Create       {c}     0.041    12.500
 Remove       {r}     0.020     3.125

Throughput {t} MB/sec  8 clients  8 procs  max_latency=12.512 ms
"""
    text = "dbench on the patched and the stock kernel.\n\nStock kernel:\n" + \
        side.format(c=500100, r=250300, t="401.25") + "\nPatched kernel:\n" + side.format(c=610200, r=301100, t="488.5")
    assert {(c.before, c.after) for c in claims(text)} <= {(401.25, 488.5)}


def test_times_in_minutes_and_seconds_are_not_read_as_their_minutes():
    text = """Copying the tree, before and after the series:

| run     | before      | after       |
|---------|-------------|-------------|
| first   | 7m12.400s   | 3m05.118s   |
"""
    assert all((c.before, c.after) != (7, 3) for c in claims(text))


def test_a_tables_first_column_that_is_a_settings_value_is_no_before():
    text = """The series fixes the slowdown that readahead_boost=1 brought, with the kernel's compare:

                  readahead_boost=0   readahead_boost=1   patched
Hmean   seq-4k       812.40 (  0.00%)    640.15 * -21.20%*    805.77 ( -0.82%)
Hmean   seq-64k     1504.90 (  0.00%)   1210.33 * -19.57%*   1498.02 ( -0.46%)
"""
    assert [(c.before, c.after) for c in claims(text) if c.before in (812.40, 1504.90)] == []


def test_a_kernel_with_the_regressing_commit_reverted_is_the_regressions_story():
    text = """Random reads on the NVMe pair since the cache rework:

v6.3-rc2 baseline:            410K IOPS
With reverting 0123abcd4567:  780K IOPS

This series makes the cache's range a knob instead.
"""
    assert claims(text, "[PATCH 0/3] cache: make the range configurable") == []
    assert claims(text, "[PATCH] Revert \"cache: rework\"") != []


def test_a_latency_distributions_bounds_are_no_samples():
    before = "\n".join(f"{p}% <= {b} milliseconds" for p, b in (("2.50", 0.2), ("97.50", 0.4), ("100.00", 0.8),
                                                                  ("100.00", 1.5), ("100.00", 2)))
    after = "\n".join(f"{p}% <= {b} milliseconds" for p, b in (("8.10", 0.2), ("99.95", 0.4), ("100.00", 0.6)))
    text = "A key-value server on the ring, stock kernel:\n" + before + "\n411200.00 requests per second\n\n" + \
        "patched kernel:\n" + after + "\n489100.00 requests per second\n"
    assert not [c for c in claims(text) if "milli" in c.source]


_DBENCH = """Before this patch:

Throughput 500.25 MB/sec  16 clients  16 procs  max_latency=120.500 ms

After this patch:

Throughput 540.75 MB/sec  16 clients  16 procs  max_latency=98.250 ms
"""


def test_a_max_is_a_row_where_a_line_states_its_change():
    assert [(c.before, c.after) for c in claims(_DBENCH)] == [(500.25, 540.75)]
    for told in ("+8.1% throughput, -18.5% max latency", " --> +8.1% throughput, -18.5% max latency"):
        assert [(c.before, c.after) for c in claims(f"{_DBENCH}\n{told}\n")] == [(500.25, 540.75), (120.5, 98.25)]


def test_a_pipe_rows_two_cells_under_units_of_two_kinds_are_no_pair():
    text = """The send path copies through a loop now; 'Buffered loop' is with the patch applied.
Values over 10 iterations:

|--------------------------------------------------------|
|        |        Current        |     Buffered loop     |
|--------------------------------------------------------|
|        | Throughput | CPU sys  | Throughput | CPU sys  |
|        | (MB/s)     | time (s) | (MB/s)     | time (s) |
|--------------------------------------------------------|
| Min    |     407    |   7.048  |    401     |  5.958   |
|--------------------------------------------------------|
| Avg    |     440    |   7.411  |    451     |  6.639   |
|--------------------------------------------------------|
"""
    found = [(c.before, c.after) for c in claims(text, "vsock: send through a buffered loop")]
    assert (407, 7.048) not in found and (440, 7.411) not in found, found


def test_a_relative_standard_deviation_is_no_row():
    text = """Runtime in seconds over 10 runs; lower is better.

+-----------+-------------------+----------------------+
|           | Without series    | With series          |
+-----------+--------+----------+-------------+--------+
| test      | Mean   | RSD*     | Mean        | RSD*   |
+-----------+--------+----------+-------------+--------+
| fsstress  |  9.40  | 3.10%    |  9.10 (-3.2%) | 0.70% |
+-----------+--------+----------+-------------+--------+

*RSD: relative standard deviation (std dev / mean)
"""
    found = [(c.before, c.after) for c in claims(text)]
    assert (3.1, 0.7) not in found, found
