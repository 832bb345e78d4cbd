"""The forms real list mails use for their figures, as issue 36 found them
misread: fio's own output pasted once per side, dd under banners, prose
across a line break, two sides on one line or a line each, a profile's
share, a table whose rows are the sides, a per-second series, a revert."""

import pytest

from iolab.mail.claimed import claims, unit_of
from iolab.mail.claimed.naming import side_of
from iolab.mail.claimed.model import figures


def _rows(text: str) -> list[tuple[str, float, float, str, str | None]]:
    return [(c.label, c.before, c.after, c.unit, c.better) for c in claims(text)]


def test_fio_group_lines_under_a_baseline_and_with_this_patch():
    text = """Baseline:
Run status group 0 (all jobs):
   READ: bw=4994MiB/s (5236MB/s), 4994MiB/s-4994MiB/s (5236MB/s-5236MB/s), io=48.8GiB (52.4GB), run=10001-10001msec

With this patch:
Run status group 0 (all jobs):
   READ: bw=5762MiB/s (6042MB/s), 5762MiB/s-5762MiB/s (6042MB/s-6042MB/s), io=56.3GiB (60.4GB), run=10001-10001msec

That is 15% more, from a single queue's worth of work, on every run we made.
"""
    (row,) = claims(text)
    assert (row.label, row.before, row.after, row.unit, row.better) == ("READ bw", 4994, 5762, "MiB/s", "higher")
    assert row.source.startswith("READ: bw=4994MiB/s") and " / READ: bw=5762MiB/s" in row.source


def test_fio_job_lines_under_brackets_and_a_latency_in_another_unit():
    text = """[w/o]
  w:  IOPS=62.5k, BW=244MiB/s (256MB/s)(14.3GiB/60001msec)
    lat (usec): min=20, max=241, avg=99.81, stdev=12.11
  cpu          : usr=9.91%, sys=30.12%, ctx=1234, majf=0, minf=12
[w]
  w:  IOPS=70.1k, BW=274MiB/s (287MB/s)(16.0GiB/60001msec)
    lat (msec): min=0.018, max=0.211, avg=0.08902, stdev=0.01
  cpu          : usr=8.00%, sys=28.00%, ctx=1200, majf=0, minf=12
"""
    assert _rows(text) == [("w IOPS", 62.5e3, 70.1e3, "IOPS", "higher"), ("w BW", 244, 274, "MiB/s", "higher"),
                           ("lat avg", 99.81, pytest.approx(89.02), "us", "lower")]


def test_dd_summary_lines_under_banners_that_name_branches():
    text = """==========for-next==========
4294967296 bytes (4.3 GB, 4.0 GiB) copied, 17.8832 s, 240 MB/s
1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.27 s, 471 MB/s
==========ra-expand==========
4294967296 bytes (4.3 GB, 4.0 GiB) copied, 12.1312 s, 354 MB/s
1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.22 s, 483 MB/s
"""
    subject = "btrfs: use readahead_expand on compressed extents"  # what ra-expand is (the gate asks it)
    assert [(c.before, c.after, c.unit) for c in claims(text, subject)] == [(240, 354, "MB/s"), (471, 483, "MB/s")]


def test_prose_pairs_across_a_line_break_and_two_sides_in_one_line():
    text = """With this change sequential reads on a SATA disk increase from 122 MB/s
to 167 MB/s (+36%) with the default readahead size.

On a 64-core machine, base IOPS is 562K, patch IOPS is 574K.
"""
    assert [(c.before, c.after, c.unit, c.stated) for c in claims(text)] == [
        (122, 167, "MB/s", "+36%"), (562e3, 574e3, "IOPS", "")]


def test_a_side_per_line_and_a_profile_share_per_side():
    text = """base: 6.4 Million IOPS
patch: 6.49 Million IOPS

perf shows the allocation path getting cheaper:
base code: __blk_mq_alloc_requests() 1.47%
patch: __blk_mq_alloc_requests() 0.75%
"""
    assert _rows(text) == [("IOPS", 6.4e6, 6.49e6, "IOPS", "higher"),
                           ("__blk_mq_alloc_requests()", 1.47, 0.75, "%", "lower")]


def test_a_table_whose_rows_are_the_sides_is_read_down_its_columns():
    text = """Throughput in MB/s (higher is better):

                 PCIe Gen3 SSD  PCIe Gen4 SSD  PCIe Gen5 SSD
native kernel        3012           6120          11020
modified             3305           6800          12400
"""
    assert _rows(text) == [("PCIe Gen3 SSD", 3012, 3305, "MB/s", "higher"),
                           ("PCIe Gen4 SSD", 6120, 6800, "MB/s", "higher"),
                           ("PCIe Gen5 SSD", 11020, 12400, "MB/s", "higher")]


def test_a_per_second_series_is_claimed_by_its_average_row():
    text = "sec  normal MB/s  dontcache MB/s\n" + "".join(f"{k}    {1200 + k}   {1400 - k}\n" for k in range(1, 26)) \
        + "avg  1213         1387\n"
    found = claims(text, "block: enable RWF_DONTCACHE for block devices")  # the subject says which column is after
    assert [(c.label, c.before, c.after, c.unit, c.better) for c in found] == [("avg", 1213, 1387, "MB/s", "higher")]


def test_a_revert_measured_as_a_kernel_and_the_kernel_plus_the_revert():
    text = """| Kernel | fio (B.W MiB/sec) | I/O size (iostat) |
|---|---|---|
| 6.15.1+revert | 1110 | 512 KB |
| 6.15.1 | 362 | 128 KB |
"""
    assert _rows(text)[0] == ("fio (B.W MiB/sec)", 362, 1110, "MiB/s", "higher")


@pytest.mark.parametrize("name, side", [("Baseline", "before"), ("w/o patch", "before"), ("native kernel", "before"),
                                        ("With this patch", "after"), ("modified", "after"), ("patch", "after"),
                                        ("6.15.1+revert", "after"), ("base code", "before"), ("for-next", None),
                                        ("Tested with fio", None), ("without the series", "before")])
def test_the_side_a_label_names(name, side):
    assert side_of(name) == side


@pytest.mark.parametrize("text, unit", [("Kops/s", "ops/s"), ("MIOPS", "IOPS"), ("MB/sec", "MB/s"),
                                        ("Gbps", "Gbit/s"), ("(Mbps)", "Mbit/s"), ("GBps", "GB/s"), ("MBps", "MB/s")])
def test_a_rate_in_thousands_or_millions_names_its_unit(text, unit):
    assert unit_of(text)[0] == unit


def test_cells_of_named_figures_one_a_side_under_a_header_naming_the_sides():
    text = ("\t\tdefault\t\t\tpatched\nrwmixwrite=10%\n"
            "Job 1\tr=27.5GiB/s,w=3125MiB/s\t\tr=75.9GiB/s,w=8636MiB/s\n"
            "Job 2\tr=25.5GiB/s,w=2898MiB/s\t\tr=87.6GiB/s,w=9967MiB/s\n")
    assert _rows(text) == [("rwmixwrite=10% Job 1 r", 27.5, 75.9, "GiB/s", "higher"),
                           ("rwmixwrite=10% Job 1 w", 3125, 8636, "MiB/s", "higher"),
                           ("rwmixwrite=10% Job 2 r", 25.5, 87.6, "GiB/s", "higher"),
                           ("rwmixwrite=10% Job 2 w", 2898, 9967, "MiB/s", "higher")]
    # the same cells under columns that are modes, not sides: no claim
    assert claims(text.replace("default\t\t\tpatched", "read\t\t\twrite")) == []


def test_two_rows_of_one_figure_each_named_as_a_kernel_and_the_kernel_plus_the_change():
    text = "Kernel\t\tTime\t\tDiff\n==========================\n-git\t\t4720 usec\n-git+commit\t4311 usec\t-8.7%\n"
    assert _rows(text) == [("Time", 4720, 4311, "us", "lower")]


@pytest.mark.parametrize("text, row", [
    ("- page copy:  37.77M vs. 42.40M(BATCH_IO), +12%\n", (37.77e6, 42.40e6, "+12%")),
    ("- page copy:  42.40M(BATCH_IO) vs. 37.77M, +12%\n", (37.77e6, 42.40e6, "+12%")),
    ("random reads: ~20% more (~2100 MB/s -> ~2600 MB/s)\n", (2100, 2600, "")),
    ("random writes: no difference (~750 MB/s)\n", (750, 750, "")),
    ("IOPS base: 570K, patch: 590K\n", (570e3, 590e3, "")),
    ("time in the function was 1.39%, which decreased to 0.82%\n", (1.39, 0.82, "")),
])
def test_pairs_in_prose_the_list_writes(text, row):
    (claim,) = claims(text)
    assert (claim.before, claim.after, claim.stated) == row


def test_a_table_takes_its_unit_from_the_sentence_that_says_it_well_above():
    text = ("The results below are in IOPS, median of 5 runs.\n\n" + "More words about the setup here.\n" * 8 +
            "|  | base | patched |\n|---|---|---|\n| psync | 3683 | 3564 |\n| libaio | 2853 | 2825 |\n")
    assert [(c.unit, c.better) for c in claims(text)] == [("IOPS", "higher"), ("IOPS", "higher")]


def test_two_tables_of_one_shape_a_side_each_pair_their_cells():
    text = """  buffer_head:
  bs      write cache    uncached write
  1k       423  MiB/s      36.3 MiB/s
  64k      4321 MiB/s      869  MiB/s

  iomap:
  bs      write cache    uncached write
  1k       403  MiB/s      57   MiB/s
  64k      6488 MiB/s      1206 MiB/s
"""
    found = claims(text, "ext4: use iomap for regular file's buffered I/O path")  # iomap is the change's
    assert [(c.label, c.before, c.after, c.unit, c.better) for c in found] == [
        ("1k write cache", 423, 403, "MiB/s", "higher"), ("1k uncached write", 36.3, 57, "MiB/s", "higher"),
        ("64k write cache", 4321, 6488, "MiB/s", "higher"), ("64k uncached write", 869, 1206, "MiB/s", "higher")]


def test_a_cell_per_variant_pairs_the_base_with_the_base_plus_this_change():
    text = """                base          other+series      base+this series
 type     bs    IOPS  BW(M/s) IOPS  BW(M/s)     IOPS   BW(M/s)
 ----------------------------------------------------------------
 hole     4K  | 576k  2253  | 762k  2975(+32%) | 747k  2918(+29%)
 nvme     1M  | 2012  2012  | 2153  2153(+7%)  | 2122  2122(+5%)
"""
    assert [(c.label, c.before, c.after, c.better, c.stated) for c in claims(text)] == [
        ("hole 4K IOPS", 576e3, 747e3, "higher", ""), ("hole 4K BW(M/s)", 2253, 2918, "higher", "+29%"),
        ("nvme 1M IOPS", 2012, 2122, "higher", ""), ("nvme 1M BW(M/s)", 2012, 2122, "higher", "+5%")]


def test_a_range_of_percentages_is_no_pair():
    assert claims("It gives an improvement of approximately 30% to 50% in large writes.\n") == []
    (row,) = claims("The share went from 0.22% to 0.01% of the profile.\n")
    assert (row.before, row.after, row.better) == (0.22, 0.01, "lower")


def test_a_series_a_side_without_an_average_is_claimed_by_its_means():
    before = "".join(f"  {k}s: {v}MB/sec, MB={k * v}\n" for k, v in enumerate([1856, 1907, 1830, 1745, 1829], 1))
    after = "".join(f"  {k}s: {v}MB/sec, MB={k * v}\n" for k, v in enumerate([1863, 1903, 1860, 1864, 1860], 1))
    text = f"Without uncached reads:\n{before}\nWith uncached reads:\n{after}"
    (row,) = claims(text)
    assert (row.before, row.after, row.unit) == (pytest.approx(1833.4), pytest.approx(1870.0), "MB/s")


def test_rows_that_pair_as_sides_within_one_table_and_cells_with_units_on_their_figures():
    text = """                |  Nodatasum   | Device speed |
----------------+--------------+--------------+
Read (Vanilla)  | 2064.6 GiB/s | 2582.8 GiB/s |
Read (Patched)  | 1719.0 GiB/s | 2556.7 GiB/s |
Diff            | -16.7 %      | -1%          |
Write (Vanilla) | 2424.8 GiB/s | 2309.6 GiB/s |
Write (Patched) | 1800.2 GiB/s | 2232.7 GiB/s |
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("Read Nodatasum", 2064.6, 1719.0, "GiB/s"), ("Read Device speed", 2582.8, 2556.7, "GiB/s"),
        ("Write Nodatasum", 2424.8, 1800.2, "GiB/s"), ("Write Device speed", 2309.6, 2232.7, "GiB/s")]
    box = "| File size | Before  | After   | Reduction |\n|---|---|---|---|\n| 5GB | 101.8ms | 37.0ms | 72.1% |\n"
    assert [(c.before, c.after, c.unit, c.stated) for c in claims(box)] == [(101.8, 37.0, "ms", "72.1%")]


def test_significance_marks_exponents_and_remarks_after_a_rows_figures():
    text = """      metric           baseline       current        stdev            diff
avg_commit_ms               68.58         58.44          3.35   -14.79% *
end_state_umount_ns      1.90e+09      1.50e+09   14186226.85   -21.38% *
"""
    assert [(c.label, c.before, c.after, c.stated) for c in claims(text)] == [
        ("avg_commit_ms", 68.58, 58.44, "-14.79%"), ("end_state_umount_ns", 1.9e9, 1.5e9, "-21.38%")]
    rows = "v6.11-rc7\t\t103561295\nv6.11-rc7 + v7 series\t101357203 (~2% slower)\n"
    assert [(c.before, c.after, c.stated) for c in claims(rows)] == [(103561295, 101357203, "2%")]


def test_time_outputs_under_before_and_after_a_sentence_that_opens_over_two_lines():
    text = """Before this change was merged, when creating 2000 files,
the results are as follows:
$ time ./create 2000
0m14.83s real     0m00.00s user     0m14.30s system
0m15.61s real     0m00.00s user     0m15.04s system
After this change was merged, the results are as follows:
$ time ./create 2000
0m08.17s real     0m00.00s user     0m07.86s system
0m08.15s real     0m00.00s user     0m07.86s system

Before:
real    0m0.706s
user    0m0.000s
After:
real    0m0.620s
user    0m0.008s
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [
        (pytest.approx(15.22), pytest.approx(8.16), "s"), (0.706, 0.62, "s")]


def test_a_baseline_row_and_a_row_with_the_mails_delta_and_a_row_of_figures_alone():
    text = "        Base XFS                : 308 MiB/s\n        Parallel Writeback XFS  : 1534 MiB/s  (+398%)\n"
    assert [(c.before, c.after, c.stated) for c in claims(text)] == [(308, 1534, "+398%")]
    text = "baseline\twith_cache\n774 MB/s\t858 MB/s (+11%)\n"
    assert [(c.before, c.after, c.unit, c.stated) for c in claims(text)] == [(774, 858, "MB/s", "+11%")]


def test_sides_named_without_a_colon_alternating_pair_with_their_neighbours():
    text = """with this patch (offloading checksum to workqueues)
    WRITE: bw=2084MiB/s (2185MB/s), 2084MiB/s-2084MiB/s (2185MB/s-2185MB/s), io=750GiB (806GB), run=368752-368752msec
without this patch (inline checksum)
    WRITE: bw=1447MiB/s (1517MB/s), 1447MiB/s-1447MiB/s (1517MB/s-1517MB/s), io=517GiB (555GB), run=366017-366017msec
For reference, here is a result on 1 device RAID0 setup. No degradation introduced as expected.
with this patch:
    WRITE: bw=445MiB/s (467MB/s), 445MiB/s-445MiB/s (467MB/s-467MB/s), io=302GiB (324GB), run=694199-694199msec
without this patch
    WRITE: bw=441MiB/s (462MB/s), 441MiB/s-441MiB/s (462MB/s-462MB/s), io=300GiB (322GB), run=696125-696125msec

Before -
  write throughput: 675MiB/s
After -
  write throughput: 1760MiB/s
"""
    assert [(c.before, c.after) for c in claims(text)] == [(1447, 2084), (441, 445), (675, 1760)]


def test_t_io_uring_samples_a_side_zsh_time_and_a_bisections_good_tree():
    text = ("Before:\n" + "IOPS=3700000, BW=1806MiB/s, IOS/call=32/31\n" * 2 + "IOPS=3800000, BW=1855MiB/s, IOS/call=32/31\n"
            "After:\n" + "IOPS=4000000, BW=1953MiB/s, IOS/call=32/32\n" * 3)
    assert [(c.label.split()[0], round(c.before), round(c.after)) for c in claims(text)] == [
        ("IOPS", 3733333, 4000000), ("BW", 1822, 1953)]
    text = ("Good:\n./run  0.01s user 0.02s system 95% cpu 0.031 total\nBad:\n./run  0.01s user 0.09s system 95% cpu"
            " 0.103 total\nFixed:\n./run  0.01s user 0.02s system 95% cpu 0.032 total\n")
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(0.103, 0.032, "s")]


def test_perf_diff_rows_unless_the_prose_names_the_symbol_and_a_structures_size():
    text = """     0.84%     -0.49%  [kernel.kallsyms]  [k] blk_mq_get_tag
     0.25%     +9.33%  [kernel.kallsyms]  [k] _copy_from_user

where we drop more than 9% of _copy_from_user() time.
This also shrinks struct extent_map from 128 bytes down to 112 bytes.
"""
    assert [(c.label, c.before, c.after, c.better) for c in claims(text)] == [
        ("also shrinks struct extent_map", 128, 112, "lower"), ("blk_mq_get_tag share", 0.84, 0.35, "lower")]


def test_columns_that_are_modes_or_settings_with_no_delta_are_no_before_and_after():
    assert claims("bs      read      write\n4k      1200 MB/s  900 MB/s\n64k     3000 MB/s  2500 MB/s\n") == []
    box = ("|   iodepth |   1   |   4   |   8   |\n|-----------|-------|-------|-------|\n"
           "|utilization| 2.9%  | 8.8%  | 10.9% |\n|    idle   | 97.1% | 91.2% | 89.1% |\n")
    assert claims(box) == []


def test_fio_before_3_and_a_banner_of_the_base_kernel_beside_one_of_the_base_plus_the_series():
    text = """===== v6.12 =====
  read : io=1024.0MB, bw=102400KB/s, iops=25600, runt= 10001msec
===== v6.12 + this series =====
  read : io=1024.0MB, bw=122880KB/s, iops=30720, runt= 10001msec
"""
    assert [(c.label, c.before, c.after) for c in claims(text)] == [("read IOPS", 25600, 30720),
                                                                    ("read BW", 102400, 122880)]


def test_minutes_and_rates_of_files():
    assert [(c.before, c.after, c.unit) for c in claims("The run went from 10 minutes to 2 minutes.\n")] == [
        (10, 2, "min")]
    assert [(c.unit, c.better) for c in claims("creates: 1200 files/sec -> 1500 files/sec\n")] == [
        ("files/s", "higher")]


def test_rows_that_are_the_sides_with_a_column_a_run_and_their_average_or_none():
    text = "           run1   run2   run3   avg\nbase       100    110    105    105\npatched    120    125    130    125\n"
    assert [(c.label, c.before, c.after) for c in claims(text)] == [("avg", 105, 125)]
    text = "           run1   run2\ndisabled   100 MB/s    110 MB/s\nenabled    120 MB/s    130 MB/s\n"
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [("mean of 2 runs", 105, 125, "MB/s")]


def test_header_rows_that_name_the_sides_over_the_columns_of_a_pipe_table():
    text = """|CPU: Kunpeng 920   |          P80           |            P1           |
|Memory: 512GB      |------------------------|-------------------------|
|960GB SSD (0.5GB/s)| base  |    patched     | base   |    patched     |
|-------------------|-------|----------------|--------|----------------|
|mb_optimize_scan=0 | 2667  | 20049 (+651%)  | 314065 | 316724 (+0.8%) |

-------------------------------------------------------------|
                         |       base      |      patched    |
-------------------------|--------|--------|--------|--------|
mb_optimize_scan         | linear |opt_scan| linear |opt_scan|
-------------------------|--------|--------|--------|--------|
bw(MiB/s)                | 217    | 217    | 5718   | 5626   |
"""
    assert [(c.label, c.before, c.after, c.stated) for c in claims(text)] == [
        ("mb_optimize_scan=0 P80", 2667, 20049, "+651%"), ("mb_optimize_scan=0 P1", 314065, 316724, "+0.8%"),
        ("bw(MiB/s) linear", 217, 5718, ""), ("bw(MiB/s) opt_scan", 217, 5626, "")]


def test_pipe_tables_a_side_each_pair_by_their_corner_cell_and_row_key():
    text = """Before(PAGE_SIZE=4096):

      BIO     | bs=4k    | bs=8k
--------------|----------|----------
 4k           | 1.5 GB/s | 2.1 GB/s
 8k (bigalloc)| 1.4 GB/s | 2.0 GB/s

      DIO     | bs=4k    | bs=8k
--------------|----------|----------
 4k           | 194 MB/s | 366 MB/s

Patched(PAGE_SIZE=4096):

   BIO   | bs=4k    | bs=8k
---------|----------|----------
 4k      | 1.5 GB/s | 2.1 GB/s
 8k (LBS)| 1.7 GB/s | 2.3 GB/s

   DIO   | bs=4k    | bs=8k
---------|----------|----------
 4k      | 204 MB/s | 0.4 GB/s
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("BIO 4k bs=4k", 1.5, 1.5, "GB/s"), ("BIO 4k bs=8k", 2.1, 2.1, "GB/s"), ("BIO 8k bs=4k", 1.4, 1.7, "GB/s"),
        ("BIO 8k bs=8k", 2.0, 2.3, "GB/s"), ("DIO 4k bs=4k", 194, 204, "MB/s"),
        ("DIO 4k bs=8k", 366, pytest.approx(400), "MB/s")]


def test_averages_under_a_side_whose_name_gives_the_unit_and_fio_lines_of_iops_alone_or_bw_averages():
    text = """I'm getting the following latencies (in usecs) as a baseline:
- seq write: avg 186 stddev 331
- rand read: avg 150 stddev 68

Enabling the 'latency' iopolicy:
- seq write: avg 178 stddev 113
- rand read: avg 141 stddev 58
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("seq write avg", 186, 178, "us"), ("rand read avg", 150, 141, "us")]
    text = ("Before:\nseq read: IOPS=96.6k\n  bw (  MiB/s): min= 2056, max= 2308, per=100.00%, avg=2186.40\n"
            "After:\nseq read: IOPS=96.3k\n  bw (  MiB/s): min= 2000, max= 2300, per=100.00%, avg=2186.20\n")
    assert [(c.label, c.before, c.after) for c in claims(text)] == [("seq read IOPS", 96.6e3, 96.3e3),
                                                                    ("bw avg", 2186.4, 2186.2)]


def test_fio_run_twice_a_side_is_claimed_by_the_mean_of_its_runs_and_c6_enabled_is_no_side():
    run = "    slat (nsec): min=1769, max=73247, avg={}, stdev=2115.90\n     lat (usec): min=12, max=250, avg={}\n"
    text = ("Before:\n" + run.format(6960.96, 30.73) + run.format(6970.61, 30.52) +
            "After:\n" + run.format(7194.01, 29.43) + run.format(7239.68, 29.73))
    assert [(c.label.split(" (")[0], round(c.before, 3), round(c.after, 3)) for c in claims(text)] == [
        ("slat avg", 6965.785, 7216.845), ("lat avg", 30.625, 29.58)]
    assert claims("C6 enabled:\n" + run.format(1, 2) + "C6 disabled:\n" + run.format(3, 4)) == []


def test_a_row_of_two_measures_each_followed_by_its_delta():
    text = """case                               iopsB iopsBL   iops%  p99Bms p99BLms    p99%
meta_create_unlink_fsync2          11.0k  10.9k  -1.27%   1.876   0.963 -48.67%
fio_randread                      5.529M 5.549M  +0.36%   0.210   0.218  +3.81%
"""
    assert [(c.label, c.before, c.after, c.stated, c.better) for c in claims(text)] == [
        ("meta_create_unlink_fsync2", 11.0e3, 10.9e3, "-1.27%", "higher"),
        ("meta_create_unlink_fsync2 (p99Bms)", 1.876, 0.963, "-48.67%", "lower"),  # the second measure's column
        ("fio_randread", 5.529e6, 5.549e6, "+0.36%", "higher"), ("fio_randread (p99Bms)", 0.210, 0.218, "+3.81%", "lower")]


def test_perf_diff_rows_the_prose_restates_are_context():
    text = """0.25%     +9.33%  [kernel.kallsyms]     [k] _copy_from_user
4.47%     -3.32%  [kernel.kallsyms]     [k] __io_msg_copy_hdr.constprop.0

where we drop more than 9% of _copy_from_user() time, and consequently
add time to __io_msg_copy_hdr() where the copies are now attributed to,
but with a net win of 6%.
"""
    assert claims(text) == []


def test_sides_pair_with_the_neighbour_that_measures_the_same_and_side_rows_under_a_row_of_columns():
    text = """Original frequency scaling takes about 30ms to react:
  Test case 1:
     enabled: \tclat (usec): min=141, max=872, avg=550
     disabled:\tclat (usec): min=210, max=899, avg=635
"""
    assert [(c.before, c.after) for c in claims(text)] == [(635, 550)]
    text = ("rtextsize       8k      16k      32k\nbefore:       9.601s  10.229s  11.153s\n"
            "after:        9.710s   9.642s   9.958s\n")
    assert [(c.before, c.after) for c in claims(text)] == [(9.601, 9.710), (10.229, 9.642), (11.153, 9.958)]


def test_rows_of_two_variants_paired_by_key_the_one_the_patch_introduces_after():
    text = """This patch introduces the use of the Intel QAT to decompress data.

|           | Cluster size | sequential read | randread  |
|-----------|--------------|-----------------|-----------|
| Intel QAT |    4096      |    538  MiB/s   | 112 MiB/s |
| Intel QAT |    16384     |    699  MiB/s   | 158 MiB/s |
| deflate   |    4096      |    499  MiB/s   | 108 MiB/s |
| deflate   |    16384     |    422  MiB/s   | 125 MiB/s |
"""
    assert [(c.label, c.before, c.after) for c in claims(text)] == [
        ("sequential read, Cluster size 4096", 499, 538), ("randread, Cluster size 4096", 108, 112),
        ("sequential read, Cluster size 16384", 422, 699), ("randread, Cluster size 16384", 125, 158)]


def test_a_baseline_row_and_the_row_that_names_it_with_the_change():
    text = "        Base XFS                : 166593\n        Parallel Writeback XFS  : 161554\n"
    assert [(c.before, c.after) for c in claims(text)] == [(166593, 161554)]
    assert claims("        Base XFS                : 166593\n        Parallel btrfs  : 161554\n") == []


@pytest.mark.parametrize("name, unit", [("write_clat_ns_mean", "ns"), ("max_commit_ms", "ms"), ("write_bw_bytes", None)])
def test_a_metric_name_of_words_joined_by_underscores_names_its_unit(name, unit):
    found = unit_of(name)
    assert (found[0] if found else None) == unit


def test_pidstat_lines_a_side_are_claimed_by_the_mean_of_their_cpu_share():
    run = "08:36:{:02d}        0        93    0.00   {}    0.00    0.00   {}     3  kswapd0\n"
    header = "08:36:26      UID       PID    %usr %system  %guest   %wait    %CPU   CPU  Command\n"
    text = ("Read test data without the patch:\n" + header + run.format(27, "50.00", "50.00") +
            run.format(28, "60.00", "60.00") + "\nRead test data with the patch:\n" + header +
            run.format(30, " 0.50", " 0.50") + run.format(31, " 0.00", " 0.00"))
    assert [(c.label, c.before, c.after, c.unit, c.better) for c in claims(text)] == [
        ("kswapd0 %CPU (mean of 2 and 2 samples)", 55.0, 0.25, "%", "lower")]


def test_list_items_that_name_a_side_and_dd_summary_tails_under_them():
    text = """- Fallback to buffered IO (unpatched)
  Mount option: default (with data checksum)

  20.7763 s, 207 MB/s

- True zero-copy (unpatch)
  Mount option: nodatasum

  1.95422 s, 2.2 GB/s

- Bounce then zero-copy (patched)
  Mount option: nodatasum

  2.5453 s, 1.7 GB/s
"""
    assert [(c.before, c.after, c.unit, c.better) for c in claims(text)] == [(2.2, 1.7, "GB/s", "higher")]
    items = "* Without the cache\n\n  read: 100 MB/s\n\n* With the cache\n\n  read: 150 MB/s\n"
    assert [(c.before, c.after) for c in claims(items)] == [(100, 150)]
    assert claims("- use a new cache (faster)\n  read: 100 MB/s\n- the old path\n  read: 150 MB/s\n") == []


def test_variants_named_in_parentheses_the_one_the_change_brings_after():
    runs = """(passthru) read: IOPS=17.2k, BW=67.4MiB/s (70.6MB/s)
lat (usec): min=44, max=288, avg=57.45, stdev= 8.28
(block) read: IOPS=15.3k, BW=59.8MiB/s (62.7MB/s)
lat (usec): min=43, max=349, avg=64.73, stdev=10.21
"""
    said = "This patchset implements io_uring passthrough in the driver.\n\n"
    assert [(c.before, c.after) for c in claims(said + runs)] == [(15300, 17200), (59.8, 67.4), (64.73, 57.45)]
    assert claims(runs) == []  # which one the change brings, the text does not say: their order is no evidence


def test_two_lines_of_a_tool_and_a_flag_the_change_brings_after():
    runs = "    #1G\n    dd:                     0.5s\n    FALLOC_FL_WRITE_ZEROES: 0.17s\n"
    said = "- Switch to add a new write zeroes operation, FALLOC_FL_WRITE_ZEROES, in fallocate.\n\n"
    assert [(c.before, c.after, c.unit) for c in claims(said + runs)] == [(0.5, 0.17, "s")]
    assert claims(runs) == []  # which one the change brings, the text does not say
    assert claims("Add IOVA support.\n\n  Streaming DMA total:    16.0 us\n  IOVA DMA total:         15.8 us\n") == []


def test_a_changelog_item_is_no_side():
    table = """|         | Real  | devid1 | devid2 |
|---------|-------|--------|--------|
| pid     | {}| 3810   | 0      |
"""
    text = ("Changes in v5:\n - Introduce a framework to track read counts. (New patch)\n\n" + table.format("18.00s") +
            "\n--------- original v1 ------------\n\n" + table.format("21.61s"))
    assert claims(text) == []


def test_box_rows_of_two_lines_against_the_row_the_text_calls_the_baseline():
    text = """For ZWP, the result show the performance percentage increase (or
decrease) against ZWL (baseline) case.

             +--------+--------+
             |seqw4K1 |rndw4K16|
             |(MB/s)  | (KIOPS)|
 +-----------+--------+--------+
 |    ZWL    | 940    | 424    |
 |mq-deadline|        |        |
 +-----------+--------+--------+
 |    ZWP    | 943    | 461    |
 |mq-deadline| (+0%)  | (+8%)  |
 +-----------+--------+--------+
 |    ZWP    | 2639   | 344    |
 |   none    | (+180%)| (-18%) |
 +-----------+--------+--------+
"""
    assert [(c.before, c.after, c.unit, c.stated) for c in claims(text)] == [
        (940, 943, "MB/s", "+0%"), (424, 461, "IOPS", "+8%"), (940, 2639, "MB/s", "+180%"), (424, 344, "IOPS", "-18%")]
    assert all(c.label.startswith("ZWP") for c in claims(text))


def test_a_table_a_side_whose_headers_name_the_side_and_an_average_column():
    text = """1.androidbench test result(ufs RAM:6GB kernel6.6):

before:\t\t\t\t\t\t\t\t avg
seq read\t1812\t1735\t1879\t1887\t1817\t1849\t1829
seq write\t1271\t1294\t1287\t1305\t1296\t1296\t1291

after:\t\t\t\t\t\t\t\t avg
seq read\t1923\t1919\t1946\t1921\t1953\t1937\t1933\t+5.65%
seq write\t1277\t1301\t1301\t1296\t1291\t1299\t1294\t+0.21%
"""
    assert [(c.before, c.after) for c in claims(text)] == [(1829, 1933), (1291, 1294)]
    jobs = "Before:\n  read            IOPS=95.7k, BW=374MiB/s\n  randread        IOPS=102k, BW=397MiB/s\n\n" \
           "After:\n  read            IOPS=112k, BW=436MiB/s\n  randread        IOPS=111k, BW=432MiB/s\n"
    assert [(c.before, c.after, c.unit) for c in claims(jobs)][:2] == [(95.7e3, 112e3, "IOPS"), (374, 436, "MiB/s")]


def test_gnu_time_lines_each_followed_by_its_side():
    text = """When cache is cold, it's
4.29user 28.48system 0:43.39elapsed 75%CPU without the patch, and
4.52user 22.53system 0:38.16elapsed 70%CPU with the patch.
"""
    assert [(c.before, c.after, c.unit, c.better) for c in claims(text)] == [(43.39, 38.16, "s", "lower")]


def test_a_row_of_settings_heads_columns_and_the_prose_defines_the_rows_sides():
    table = """Figures are p50 in ms.

    K       4      8     16     32
    A    81.6  242.0  432.9  826.6
    B    60.9   64.5   65.4   64.4
"""
    said = "A is stock nfsd-testing; B is the same plus this series.\n\n"
    assert [(c.label, c.before, c.after) for c in claims(said + table)][:2] == [("K=4", 81.6, 60.9), ("K=8", 242, 64.5)]
    assert claims(table) == []  # the columns are settings, the rows' sides unsaid


def test_rounds_of_time_under_each_side_are_claimed_by_their_mean():
    side = "******* {}:\n\n*** Executing round 1 ***\n\nreal\t{}\nuser\t81m29.401s\n\n" \
           "*** Executing round 2 ***\n\nreal\t{}\nuser\t81m20.558s\n\n"
    text = side.format("Without the patchset", "8m0.000s", "8m2.000s") + \
        side.format("With the patchset", "7m40.000s", "7m42.000s")
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(481.0, 461.0, "s")]


def test_a_hex_dump_and_xfs_io_confirmations_measure_nothing():
    side = "{}:\n\nwrote 4096/4096 bytes at offset 32768\n4 KiB, 1 ops; 0.0000 sec ({} MiB/sec and 58823.5294 ops/sec)\n" \
           "00000c00:  {} {} {} {} {} {} {} {}\n\n"
    text = side.format("Before", "229.779", *["58"] * 8) + side.format("After", "150.240", *["00"] * 8)
    assert claims(text) == []


def test_a_row_of_figures_under_a_side_is_keyed_by_column():
    text = "Before this change:\n\n  Latency   411ms   11914us   119ms\n\n" \
           "After this change:\n\n  Latency   320ms   11237us   77779us\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(411, 320, "ms"), (11914, 11237, "us"),
                                                                   (119, 77.779, "ms")]


def test_a_commit_against_mainline_by_the_mean_it_states_not_again_by_its_runs():
    run = "READ: bw={0}MiB/s (1MB/s), {0}MiB/s-{0}MiB/s (1MB/s-1MB/s), io=15.6GiB (16.8GB), run=30137-30137msec\n"
    text = "mainline: 513MiB/s\n" + run.format(531) + run.format(495) + "\ncommit: 633MiB/s\n" + run.format(640) + \
        run.format(626)
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(513, 633, "MiB/s")]


def test_a_test_suites_totals_before_and_after_are_no_claim():
    text = "Before:\nbtrfs/default: 1061 tests, 3 failures, 290 skipped, 13152 seconds\n\n" \
           "After:\nbtrfs/default: 1061 tests, 2 failures, 290 skipped, 13446 seconds\n"
    assert claims(text) == []


def test_a_row_of_a_time_and_a_rate_is_two_measures_not_a_before_and_an_after():
    text = "Runtime for the test:\n\nSend ring:\t\t3462 msec\t\t1183Mbit\nSend ring, again:\t 844 msec\t\t4853Mbit\n"
    assert claims(text) == []
    assert unit_of("4853Mbit") is None and unit_of("Mbit")[0] == "Mbit/s"


def test_a_bare_side_over_lines_that_name_each_figure():
    text = "before\nSEGS_PER_SEC 1\n2556MiB/s\nSEGS_PER_SEC 128\n2145MiB/s\n\n" \
           "after\nSEGS_PER_SEC 1\n2556MiB/s\nSEGS_PER_SEC 128\n2556MiB/s\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(2556, 2556, "MiB/s"), (2145, 2556, "MiB/s")]


def test_a_commands_time_table_shown_again_after_the_change():
    table = " $ time {}\n\n parent=0               parent=1\n ==================     ==================\n" \
            " real    {}      real    {}\n user    0m41.196s      user    0m47.489s\n sys     {}     sys     {}\n\n"
    text = (table.format("fs_mark -d ...", "0m57.573s", "1m2.934s", "19m44.440s", "25m14.810s") +
            table.format("rm -rf ...", "0m59.649s", "1m12.505s", "13m9.566s", "20m33.844s") +
            "Parent pointers increase the system time by 28%.  Now the overhead looks like:\n\n" +
            table.format("fs_mark -d ...", "0m58.030s", "1m0.983s", "19m57.003s", "21m30.605s"))
    assert [(c.label, c.before, c.after) for c in claims(text)] == [
        ("real parent=0", 57.573, 58.03), ("real parent=1", 62.934, 60.983),
        ("sys parent=0", 1184.44, 1197.0), ("sys parent=1", 1514.81, 1290.61)]


def test_bonnie_rates_under_each_side():
    row = "  debian0       7501M  {}  99  1.4g  97  117m  14 1546k  99  2.3g  98 +++++ +++\n"
    text = "Before this change:\n\n" + row.format("376k") + "\nAfter this change:\n\n" + row.format("375k")
    assert [(c.before, c.after, c.better) for c in claims(text)][:2] == [(376e3, 375e3, "higher"), (1.4e9, 1.4e9, "higher")]


def test_a_pipe_row_of_a_time_and_a_count_is_no_pair():
    text = "|         | Time  | Read I/O Count  | gain  |\n|         | Real  | devid1 | devid2 |       |\n" \
           "|---------|-------|--------|--------|-------|\n| pid     | 11.14s| 3808   | 0      |  -    |\n" \
           "| devid:1 | 10.95s| 3807   | 0      | 1.70% |\n"
    assert claims(text) == []


def test_perf_diff_rows_are_not_prose_that_restates_them():
    text = """Perf diff of 8M fio randread test:

Before          After           Symbol
.....................................................
3.98%           -3.95%          [k] dma_direct_map_sg
1.37%           -1.36%          [k] sg_next

Perf diff of 8K fio randread test:

Before          After           Symbol
......................................................
1.74%                           [k] dma_direct_map_sg
0.67%                           [k] sg_next
"""
    assert [(c.before, c.after) for c in claims(text)] == [(3.98, 0.03), (1.37, 0.01)]


def test_a_sentence_ending_in_from_and_a_line_to_are_the_sides():
    text = """On a basic peak IOPS test case, this changes the performance from:

IOPS=108.41M, BW=52.93GiB/s, IOS/call=31/31
IOPS=108.43M, BW=52.95GiB/s, IOS/call=32/32

to

IOPS=118.79M, BW=58.00GiB/s, IOS/call=31/32
IOPS=118.61M, BW=57.92GiB/s, IOS/call=31/31

which is more than a 9% improvement in performance.
"""
    assert [(c.before, c.after) for c in claims(text)] == [(108.42e6, 118.7e6), (52.94, 57.96)]


def test_bonnie_files_rows_whose_rates_repeat_are_a_row_each():
    row = "  20:384100:384100/20 20480  32 20480  58 {}  48 20480  39\n"
    text = "Before this change:\n\n" + row.format("20480") + "\nAfter this change:\n\n" + row.format("20480")
    assert [(c.before, c.after) for c in claims(text)] == [(20480, 20480)] * 4


def test_cells_of_several_figures_under_a_corner_naming_the_parts():
    text = """ebs / leaves / Index |   bare for-next    |      with fix
---------------------+--------------------+-------------------
\tpost mount   |   16 /  11 / 10e5c |   16 /  10 / 4240
\tpost test    | 5810 / 891 / 11cfc | 4420 / 252 / 473a
"""
    assert [(c.label, c.before, c.after) for c in claims(text)] == [
        ("post mount", 16, 16), ("post mount leaves", 11, 10), ("post test", 5810, 4420), ("post test leaves", 891, 252)]


def test_a_setting_written_name_space_equals_value_names_its_row():
    text = "Default:\nParallel Writeback (nr_wb_ctx = 1)    :  16.4MiB/s\nParallel Writeback (nr_wb_ctx = 8)    :  40.8MiB/s\n" \
           "\nAfter optimization (4 AGs utilized):\nParallel Writeback (nr_wb_ctx = 8)    :  47.1MiB/s (4 active contexts)\n"
    assert [(c.before, c.after) for c in claims(text)] == [(40.8, 47.1)]


def test_sides_glued_or_in_a_list_and_figures_of_one_kind_in_other_units():
    text = """without patch:
libaio read bs=4k direct=1 numjobs=1:
bw=1845KiB/s
libaio randwrite bs=4k direct=1 numjobs=1:
bw=9312B/s

withpatch:
libaio read bs=4k direct=1 numjobs=1:
bw=19.1MiB/s
libaio randwrite bs=4k direct=1 numjobs=1:
bw=23.0KiB/s

Test results on RT kernel:
- Before: 153 MB/s
- After:  640 MB/s
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [
        (1845, 19.1 * 1024, "KiB/s"), (9312, 23.0 * 1024, "B/s"), (153, 640, "MB/s")]


def test_a_setting_and_a_pair_under_a_side_are_not_its_figures():
    text = """before this change:

init_flags=3000, delay=10 usec
t/io_uring, 16K:
  34 -> 46 GiB/s

and after:

init_flags=3000, delay=10 usec
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(34, 46, "GiB/s")]


def test_fio_output_from_one_sentence_to_another_with_its_iops_average():
    text = """This improves the following fio workload from:

/dev/nvme0n1: (groupid=0, jobs=32): err= 0: pid=1113: Fri Jan 19 20:59:26 2024
  read: IOPS=567k, BW=277MiB/s (290MB/s)(1820MiB/6575msec)
   iops        : min=549648, max=582312, avg=567860.31, stdev=286.01, samples=416

with 96% lock contention and 86% sys time, to:

/dev/nvme0n1: (groupid=0, jobs=32): err= 0: pid=8922: Sat Jan 20 11:16:20 2024
  read: IOPS=1550k, BW=757MiB/s (794MB/s)(19.6GiB/26471msec)
   iops        : min=1509336, max=1697793, avg=1550918.83, stdev=1248.87, samples=1664
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [
        (567e3, 1550e3, "IOPS"), (277, 757, "MiB/s"), (567860.31, 1550918.83, "IOPS")]


def test_a_range_is_no_claim_and_perf_reports_and_iostat_pair_by_side():
    assert claims("The improvement varies from 16% to 49% depending on the load.\n") == []
    text = """Before:
  12.50%  fio  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
After:
   2.10%  fio  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath

w/o patch:
Device  r/s   rkB/s   r_await  %util
nvme0n1 1000.0 4000.0 0.50 100.0

w/ patch:
Device  r/s   rkB/s   r_await  %util
nvme0n1 1200.0 4800.0 0.40 100.0
"""
    assert [(c.label, c.before, c.after) for c in claims(text)] == [
        ("nvme0n1 r/s", 1000, 1200), ("nvme0n1 rkB/s", 4000, 4800), ("nvme0n1 r_await", 0.5, 0.4),
        ("nvme0n1 %util", 100, 100), ("native_queued_spin_lock_slowpath()", 12.5, 2.1)]


def test_columns_paired_by_the_sides_their_header_names():
    text = """test       base    patched   diff     base   patched  diff
randread   100     120       +20%     50     40       -20%
"""
    assert [(c.before, c.after, c.stated) for c in claims(text)] == [(100, 120, "+20%"), (50, 40, "-20%")]
    text = """                 patched     unpatched
swap-out time    49908       68711
compression      16.9%       20.49%
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(68711, 49908, ""), (20.49, 16.9, "%")]


def test_a_script_a_supposed_change_and_a_range_of_each_side():
    text = """The following test script reproduces the bug:

   $ cat test.sh
   #!/bin/bash
   run_test()
   {
        mkfs.btrfs -f $DEV > /dev/null
   }
   run_test 0 0
   run_test 1 0

Running the test shows it.

Note: If we rolled up the loop on x86_64 too, the change would be
7024 bytes => 1584 bytes and 1960 MB/s => 1396 MB/s (gcc), or
6848 bytes => 1696 bytes and 1920 MB/s => 1263 MB/s (clang).

64k sequential reads improve from 2.4GB/s - 2.6GB/s to 3.5GB/s - 3.9GB/s.
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(2.5, 3.7, "GB/s")]


def test_rows_of_the_variants_a_series_brings_against_the_one_it_does_not():
    text = """This patch introduces three balancing methods: rotation, latency, and devid.

|         | Time  | Read I/O Count  |
|         | Real  | devid1 | devid2 |
|---------|-------|--------|--------|
| pid     | 18.00s| 3800   | 0      |
| rotation|       |        |        |
|     4096|  8.95s| 1900   | 1901   |
| latency | 17.18s| 3800   | 0      |

|         | Read       | Write      |
|---------|------------|------------|
| pid     | 20.3MiB/s  | 20.5MiB/s  |
| devid:1 | 14.8MiB/s  | 14.9MiB/s  |
"""
    assert [(c.label, c.before, c.after, c.unit) for c in claims(text)] == [
        ("rotation 4096 Real", 18.0, 8.95, "s"), ("latency Real", 18.0, 17.18, "s"),
        ("devid:1 Read", 20.3, 14.8, "MiB/s"), ("devid:1 Write", 20.5, 14.9, "MiB/s")]


def test_sides_named_in_parentheses_and_no_change_within_a_percent():
    text = """Number of extents:   6745489(before) -> 203571(after)

Aggregate throughput is within 1% A vs B at
saturation (~1290 ops/s) -- the dispatcher reorders.

1 MiB, 1 ops; 0.0103 sec (96.665 MiB/sec and 96.6651 ops/sec)
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(6745489, 203571, ""), (1290, 1290, "ops/s")]


def test_slashed_figures_a_label_before_a_colon_and_a_spread_under_a_side():
    assert _rows("p50/p99/p999 latency: 10/20/30 us -> 8/15/25 us\n") == [
        ("p50", 10, 8, "us", "lower"), ("p99", 20, 15, "us", "lower"), ("p999", 30, 25, "us", "lower")]
    assert [(c.before, c.after, c.unit) for c in claims("IOPS: 100K → 120K\n")] == [(100e3, 120e3, "IOPS")]
    text = "Before:\n  Time (mean ± σ):      1.234 s ±  0.010 s\nAfter:\n  Time (mean ± σ):      1.000 s ±  0.010 s\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(1.234, 1.0, "s")]


def test_a_header_of_one_word_names_puts_the_after_side_first():
    text = "case patched base\nread 120 100\nwrite 210 200\n"
    assert [(c.before, c.after) for c in claims(text)] == [(100, 120), (200, 210)]
    text = "| case | patched | base |\n|---|---|---|\n| read | 120 | 100 |\n"
    assert [(c.before, c.after) for c in claims(text)] == [(100, 120)]


@pytest.mark.parametrize("first, second", [
    ("Results on 6.12-rc1:", "Results on 6.12-rc1 + this series:"), ("o Without patch", "o With patch"),
    ("Current:", "Proposed:"), ("1) w/o patch", "2) w/ patch"), ("# without the fix", "# with the fix"),
    ("next-20250101", "next-20250101 + patch"), ("Vanilla 6.8", "6.8 + series"),
    ("Stock kernel results", "Kernel with patches results")])
def test_a_side_named_in_a_list_a_comment_or_a_kernel_and_the_kernel_plus_the_change(first, second):
    text = (f"{first}\n  read: IOPS=100k, BW=400MiB/s (419MB/s)(23.4GiB/60001msec)\n\n"
            f"{second}\n  read: IOPS=120k, BW=480MiB/s (503MB/s)(28.1GiB/60001msec)\n")
    assert [(c.before, c.after) for c in claims(text)] == [(100e3, 120e3), (400, 480)]
    assert claims("1048576+0 records in\n4294967296 bytes (4.3 GB, 4.0 GiB) copied, 6.02 s, 712 MB/s\n") == []


def test_the_problem_a_patch_fixes_is_no_claim():
    text = """Problem in RT kernel:
- IRQ threads serialize and enter D-state waiting for lock
- Throughput drops from 640 MB/s to 153 MB/s

Test results on RT kernel with this patch: throughput goes from 153 MB/s to 640 MB/s.
"""
    assert [(c.before, c.after) for c in claims(text)] == [(153, 640)]
    solved = "This problem is solved by X. With it, throughput goes from 100 MB/s to 200 MB/s.\n"
    assert [(c.before, c.after) for c in claims(solved)] == [(100, 200)]


@pytest.mark.parametrize("text, pair", [
    ("We get 120 MB/s patched vs. 100 MB/s unpatched.\n", (100, 120)),
    ("Latency is 50us with the patch vs 80us without.\n", (80, 50)),
    ("(like generic/522 ~2400s /dev/fuse vs. ~1600s patched), though\n", (2400, 1600))])
def test_two_figures_either_side_of_vs_each_named(text, pair):
    assert [(c.before, c.after) for c in claims(text)] == [pair]
    assert claims("It is 50us patched vs 80us patched.\n") == []


def test_time_s_system_time_a_claim_where_the_text_speaks_of_it():
    runs = "without the patch:\nreal\t8m2.692s\nuser\t1m0.000s\nsys\t41m37.005s\n\n" \
           "with the patch:\nreal\t7m46.124s\nuser\t1m0.000s\nsys\t37m11.361s\n"
    assert [c.label for c in claims(runs)] == ["real"]
    rows = [(c.label, c.before, c.after) for c in claims("It cuts the system time.\n\n" + runs)]
    assert rows == [("real", 482.692, 466.124), ("sys", 2497.005, 2231.361)]


def test_rows_of_sides_pair_within_their_key_and_a_figure_compared_to_another():
    text = """                 IOPS     lat(us)
4k base          100k     10
4k patched       120k     9
64k base         20k      50
64k patched      22k      45
"""
    assert [(c.before, c.after) for c in claims(text)] == [(100e3, 120e3), (10, 9), (20e3, 22e3), (50, 45)]
    text = "The copy takes 10.5s with the patch compared to 21.0s without it.\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(21.0, 10.5, "s")]


@pytest.mark.parametrize("text", ["This patch changes the default timeout from 30 s to 60 s.\n",
                                  "Bump the writeback interval from 5s to 30s so that it batches.\n",
                                  "Lowered the default latency target from 2 ms to 1 ms for SSDs.\n"])
def test_a_setting_changed_is_no_claim(text):
    assert claims(text) == []
    assert [(c.before, c.after) for c in claims("With the default settings, throughput improves from 100 MB/s "
                                                "to 120 MB/s.\n")] == [(100, 120)]
    assert [(c.before, c.after) for c in claims("Throughput with the default scheduler goes from 100 MB/s to "
                                                "120 MB/s.\n")] == [(100, 120)]


def test_a_figure_and_what_it_was_in_parentheses():
    text = "Dontcache now reaches 81% of buffered throughput (was 35%).\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(35, 81, "%")]


def test_a_function_named_in_a_list_is_no_script():
    text = "The fix touches:\nblk_mq_run_hw_queue()\n\nBefore:\n  read: 100 MB/s\nAfter:\n  read: 120 MB/s\n"
    assert [(c.before, c.after) for c in claims(text)] == [(100, 120)]
    script = "run_test()\n{\n   mkfs.btrfs -f $DEV\n}\nrun_test 0 0\nrun_test 1 0\n"
    assert claims(script) == []


def test_tables_a_side_each_pair_their_rows_by_key():
    text = ("Before:\n  qd   MB/s   lat\n  1    100    10\n  8    400    20\n  32   900    35\n"
            "After:\n  qd   MB/s   lat\n  8    450    18\n  32   1000   30\n  64   1200   50\n")
    assert [(c.before, c.after) for c in claims(text)] == [(400, 450), (20, 18), (900, 1000), (35, 30)]


def test_a_path_and_the_path_plus_the_feature_the_series_adds():
    text = ("The real meat is adding support for what I dubbed bundles here.\n\n"
            "Send ring:\t\t3462 msec\t\t1183Mbit\nSend ring + bundles\t 844 msec\t\t4853Mbit\n")
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(3462, 844, "ms"), (1183, 4853, "Mbit/s")]
    other = "unwritten file:  IOPS=20.1k\nunwritten file + fast_commit:  IOPS=42.9k\n"
    assert claims("The series adds FALLOC_FL_WRITE_ZEROES.\n\n" + other) == []


def test_a_rate_written_in_thousands_keeps_its_multiplier_where_the_figure_is_read():
    assert [(v, u[0]) for v, u, _ in figures("120 kops/s")] == [(120000.0, "ops/s")]
    text = "Random 4k reads on the array went from 350 KIOPS to 420 KIOPS with this patch.\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(350000.0, 420000.0, "IOPS")]
    text = "Small writes went from 80 to 96 kops/s with this series.\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(80000.0, 96000.0, "ops/s")]
