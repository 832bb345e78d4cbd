"""Layouts read as pairs they are not (iolab.mail.claimed.misread). Lines written for these tests, in the
forms people paste."""

from iolab.mail.claimed import claims


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_a_histograms_buckets_are_no_rows():
    text = """Wait times of the lock, in usecs, before and after the series:

  bucket              before       after       change
  [0, 1)              5,120        4,480       -12.50%
  [1, 10)             2,200        1,100       -50.00%
  [1K, 2K)              310           12       -96.13%
"""
    assert _rows(text) == []


def test_a_row_of_a_histogram_is_refused_and_a_row_beside_it_kept():
    text = """Results before and after this patch:

  metric              before       after       change
  [10, 100)             640          200       -68.75%
  p99 wait (us)         900          410       -54.44%
"""
    assert _rows(text) == [("p99 wait (us)", 900, 410)]


def test_two_columns_that_pass_over_the_change_are_no_pair():
    for header in ("  randread      original     after   this commit", "  randread      v6.1     v6.2     v6.2 + fix"):
        text = f"""fio results, mean of 3 runs:

{header}
    IOPS          41,200     30,150      40,980
    BW MB/s        161.0      117.8       160.1
"""
        found = [(before, after) for _, before, after in _rows(text)]
        assert (41200, 30150) not in found and (161.0, 117.8) not in found, header


def test_columns_that_each_name_a_side_still_pair():
    for header in ("  randread      baseline     patched", "  randread      good     bad     fixed"):
        text = f"""fio results, mean of 3 runs:

{header}
    IOPS          {"41,200  " if "good" in header else ""}30,150      40,980
"""
        assert _rows(text) == [("IOPS", 30150, 40980)], header


def test_a_table_captioned_as_a_regression_is_the_bugs_story():
    text = """Since the allocator rework, small file creation shows a regression of
up to 12% with many threads on my test box:

                     baseline               allocator-rework
Hmean     files-1       5120.10 (   0.00%)     5011.20 (  -2.13%)
Hmean     files-8      38000.50 (   0.00%)    33440.40 * -12.00%*
"""
    assert _rows(text) == []


def test_a_caption_that_denies_a_regression_or_speaks_of_the_patch_keeps_its_rows():
    rows = """
                     baseline               patched
Hmean     files-1       5120.10 (   0.00%)     5311.20 (   3.73%)
"""
    denied = "Small file creation on my test box, there were no regressions with many threads:\n" + rows
    fixed = "This patch fixes the regression in small file creation with many threads on my box:\n" + rows
    for text in (denied, fixed):
        assert _rows(text) == [("Hmean files-1", 5120.10, 5311.20)], text


def test_runs_a_side_are_not_paired_one_by_one():
    run = "real\t0m {}s\nuser\t0m 0.00s\nsys\t0m {}s\n"
    text = "Time to write back 100000 pages.\n\nbefore modification:\n" + "\n".join(
        run.format(*pair) for pair in (("12.40", "4.10"), ("12.80", "4.30"), ("12.60", "4.20"))) + \
        "\nafter modification:\n" + "\n".join(run.format(*pair) for pair in (("2.10", "1.20"), ("2.30", "1.40"),
                                                                            ("2.20", "1.30")))
    found = [(label, round(before, 2), round(after, 2)) for label, before, after in _rows(text)]
    assert found == [("real (mean of 3 and 3 samples)", 12.6, 2.2)]


def test_a_time_s_minutes_against_its_own_seconds_is_no_row():
    text = """Time to write back 100000 pages.

before this patch:
real\t0m 12.40s
sys\t0m 4.10s

after this patch:
real\t0m 2.10s
sys\t0m 1.20s
"""
    assert _rows(text) == [("real", 12.4, 2.1)]


def test_a_header_that_names_the_after_side_first_turns_the_row_round():
    for header in ("Depth\t\tPatchset IOPS\t\tMainline IOPS", "Jobs\t\twith patch\t\twithout patch"):
        text = f"""The job file:

[global]
rw=randread
bs=4k
runtime=10s

{header}
1\t\t9100\t\t\t8200
8\t\t61.5k\t\t\t30.2k
"""
        assert [(c.before, c.after) for c in claims(text)] == [(8200, 9100), (30200, 61500)], header


def test_sides_named_before_and_after_an_earlier_commit_are_the_regressions_story():
    run = ("stress-ng: info:  [2001] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n"
           "stress-ng: info:  [2001]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n"
           "stress-ng: info:  [2001] linkfs           {ops}     60.00     10.00    150.00     {rate}        4000.00\n")
    text = ("The robot found the lookup slower since 0123456789ab (\"fs: cache the lookups\").\n\n"
            "1) before commit 0123456789ab:\n\n" + run.format(ops="700100", rate="11668.33") +
            "\n2) after commit 0123456789ab:\n\n" + run.format(ops="150050", rate="2500.83") +
            "\n3) with this series:\n\n" + run.format(ops="720300", rate="12005.00"))
    found = [(before, after) for _, before, after in _rows(text)]
    assert (11668.33, 2500.83) not in found and (11668.33, 12005.0) not in found, found


def test_figures_chained_by_arrows_are_one_change_first_to_last():
    text = "Patch by patch the rate went 40 KIOPS -> 37 -> 39 -> 38 -> 44 with the whole series.\n"
    found = [(before, after) for _, before, after in _rows(text)]
    assert (40000, 37000) not in found and (39000, 38000) not in found and (40, 37) not in found, found


def test_a_time_in_minutes_and_seconds_is_not_two_figures():
    text = """Build time of the tree, before and after this series:

  Before:   real ~ 2min 41sec
  After:    real ~ 2min 05sec
"""
    found = [(before, after) for _, before, after in _rows(text)]
    assert (2, 2) not in found and (41, 5) not in found, found


TIMED = """Time to build the tree{said}:

            base        patched
real    0m12.345s   0m10.123s
user    0m1.234s    0m1.111s
sys     0m5.678s    0m4.321s
"""


def test_time_s_user_and_sys_rows_under_its_real_row_are_its_breakdown():
    assert _rows(TIMED.format(said="")) == [("real", 12.345, 10.123)]
    table = """Time to build the tree (seconds):

       without the patch    with the patch
real   12.34                10.12
user   1.23                 1.11
sys    5.67                 4.32
"""
    assert [label for label, _, _ in _rows(table)] == ["real"]


def test_user_and_sys_rows_stay_where_a_sentence_speaks_of_system_time():
    text = TIMED.format(said=", where the series cuts the system time by a quarter")
    assert [label for label, _, _ in _rows(text)] == ["real", "user", "sys"]


def test_variants_of_a_base_other_than_the_patches_are_alternatives():
    run = "\tWRITE: bw={}MiB/s ({}MB/s), 70.0MiB/s-80.0MiB/s (73.4MB/s-83.9MB/s)\n"
    text = ("Buffered writes over the share, three runs each:\n\n  Base:\n" +
            "".join(run.format(v, v + 15) for v in (300, 304, 308)) +
            "\n  Base + Own page cache walk:\n" + "".join(run.format(v, v + 15) for v in (280, 284, 288)) +
            "\n  Base + Writeback rework (these patches):\n" + "".join(run.format(v, v + 15) for v in (350, 354, 358)))
    found = [(round(before), round(after)) for _, before, after in _rows(text)]
    assert (304, 284) not in found and (304, 354) in found, found


def test_a_histograms_ranges_are_no_rows():
    for unit in ("us", "ms", ""):
        text = f"""Lock wait times before and after the series:

  wait            before       after      change
  0-1 {unit}          51,200      48,100      -6.05%
  1-5 {unit}           9,300       2,100     -77.42%
  5-10 {unit}            840          12     -98.57%
  mean wait (us)    2.41        1.12     -53.53%
"""
        assert _rows(text) == [("mean wait (us)", 2.41, 1.12)]


def test_a_range_that_no_other_range_goes_on_from_is_a_row():
    text = """Results before and after this patch:

  threads         before       after      change
  1-4              1,200       1,450     +20.83%
  16               3,100       3,900     +25.81%
"""
    assert ("1-4", 1200, 1450) in _rows(text)


def test_settings_then_a_result_across_an_arrow_are_no_pair():
    for line in ("poll_ns=0 / guest_poll_ns=200000  --> 52.10   (93.2%)", "iodepth=32 -> 41.2 us"):
        assert _rows(f"Results of the tuning with the new governor:\n{line}\n") == []


_FSPERF = """
          metric              baseline       current        stdev            diff
========================================================================================
avg_commit_ms                     120.50        180.25          2.10     49.59%
write_iops                        210.40        170.10          1.50    -19.15%
"""


def test_columns_of_modes_of_one_kernel_are_no_pair():
    for said in ("I ran fsperf with 2 configurations using the patched kernel:\n- default mount\n- nodatasum mount\n",
                 "Note that all runs used the same kernel, one mount option switched.\n"):
        assert _rows(said + _FSPERF) == []


def test_columns_of_a_kernel_and_the_patched_one_are_a_pair():
    text = "I ran fsperf on the base kernel and with this series applied:\n" + _FSPERF
    assert ("write_iops", 210.4, 170.1) in _rows(text)


def test_other_changes_against_one_baseline_are_no_rows_of_this_one():
    for mark in ("-", "*"):
        text = f"""Sequential read on the eMMC, dd of 1 GiB:

{mark} Baseline: 150.2 MB/s
{mark} The readahead fix [1]: 171.5 MB/s
{mark} This patch: 190.4 MB/s
"""
        assert [(before, after) for _, before, after in _rows(text)] == [(150.2, 190.4)]


def test_variants_none_of_which_is_named_the_patch_are_kept():
    text = """Sequential read on the eMMC, dd of 1 GiB:

- Baseline: 150.2 MB/s
- The readahead fix [1]: 171.5 MB/s
- Bigger request queue: 190.4 MB/s
"""
    assert (150.2, 171.5) in [(before, after) for _, before, after in _rows(text)]
