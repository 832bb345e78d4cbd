"""The text side of the claims reader on forms the corpus's later samples
showed (issue 36): a side named after what the row is of, a row named by
a count, fio's short units, a pair written after side first, perf's call
graph under each side."""

from iolab.mail.claimed import claims


def _rows(text: str) -> list[tuple[str, float, float, str]]:
    return [(c.label, c.before, c.after, c.unit) for c in claims(text)]


def test_a_label_that_names_its_row_and_then_its_side():
    text = """Results:

NUM_FILES=10000, before this patch: 27399 ms
NUM_FILES=10000, after this patch:   9093 ms (-66.8%)

NUM_FILES=5000, before this patch:   9241 ms
NUM_FILES=5000, after this patch:    4642 ms (-49.8%)
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(27399, 9093, "ms"), (9241, 4642, "ms")]


def test_rows_named_by_a_count_are_rows_not_samples():
    text = """before:
1048576 records - 95 seconds
2097152 records - 580 seconds
after:
1048576 records - 2 seconds
2097152 records - 3 seconds
4194304 records - 7 seconds
"""
    assert [(b, a) for _, b, a, _ in _rows(text)] == [(95, 2), (580, 3)]


def test_samples_a_second_are_still_one_row():
    text = """before:
1s: 100 MB/s
2s: 110 MB/s
after:
1s: 200 MB/s
2s: 210 MB/s
"""
    assert [(b, a) for _, b, a, _ in _rows(text)] == [(105, 205)]


def test_fio_short_units_in_a_pair():
    text = "The read performance has been greatly improved:\n\n    167M/s -> 234M/s, Increase ratio by 40%\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(167, 234, "MiB/s")]


def test_a_pair_written_after_side_first():
    text = """This increases
the size to 1472 bytes from 1216.

This also reduces the size of struct extent_map from 128 bytes down to 112
bytes, so now we can have 36 extents maps per 4K page instead of 32.
"""
    rows = [(b, a, u) for _, b, a, u in _rows(text)]
    assert (1216, 1472, "bytes") in rows and (32, 36, "") in rows and (128, 112, "bytes") in rows


def test_a_setting_with_instead_of_and_no_count_is_no_claim():
    assert _rows("We use a 4K block instead of 8K here.\n") == []


def test_perf_call_graph_shares_under_each_side():
    text = """Before:
  --46.84%--blk_mq_submit_bio
            |
            |--31.67%--blk_mq_try_issue_directly
After:
  --25.86%--blk_mq_submit_bio
            |
            |--12.95%--blk_mq_try_issue_directly
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(46.84, 25.86, "%"), (31.67, 12.95, "%")]


def test_a_size_the_same_on_both_sides_is_a_setting_not_a_claim():
    text = """Before:
File size of /mnt/ext4/test is 10485760 (2560 blocks of 4096 bytes)
fio: 120 MB/s
After:
File size of /mnt/ext4/test is 10485760 (2560 blocks of 4096 bytes)
fio: 150 MB/s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(120, 150, "MB/s")]


def test_a_vs_pair_needs_a_side_said():
    assert _rows("Dontcache multi-writer throughput now matches buffered (4,532 vs 4,616 MB/s).\n") == []
    assert [(b, a) for _, b, a, _ in _rows("Baseline vs patched: 4,532 vs 4,616 MB/s.\n")] == [(4532, 4616)]
    (row,) = claims("page copy: 37.77M vs 42.40M IOPS, +12%\n")  # the mail's own delta says which is after
    assert (row.before, row.after, row.stated) == (37.77e6, 42.40e6, "+12%")


def test_a_counter_listed_under_each_side_is_a_claim_where_the_prose_names_it():
    listing = """The series cuts the number of allocstall events seen in the test by a lot:

Before:
allocstall: 1200
pgscan: 50000
After:
allocstall: 300
pgscan: 51000
"""
    assert [(label, b, a) for label, b, a, _ in _rows(listing)] == [("allocstall", 1200, 300)]
    assert _rows(listing.replace("allocstall events", "stall events")) == []


def test_a_counter_alone_over_a_figure_is_its_heading():
    text = """before
SEGS_PER_SEC 128
2145MiB/s
after
SEGS_PER_SEC 128
2556MiB/s

With SEGS_PER_SEC set to 128 the write speed goes back to what it was.
"""
    assert [(b, a) for _, b, a, _ in _rows(text)] == [(2145, 2556)]


def test_the_sides_named_after_a_pairs_figures_say_which_is_before():
    assert [(b, a) for _, b, a, _ in _rows("Results: 1.5 GB/s (patched) vs 1.1 GB/s (unpatched).\n")] == [(1.1, 1.5)]
    assert [(b, a) for _, b, a, _ in _rows("6745489(before) -> 203571(after) extents\n")] == [(6745489, 203571)]


def test_a_figure_after_a_name_that_says_its_unit():
    """Not a name per second (a setting), nor 0 on both sides."""
    text = """Case A: jobs = 8
  without patch:
    LOGS_PER_SEC 16
    Mean ops/sec:      1200.5
    worst_wait_ms 310
    idle_wait_ms 0
  with patch:
    LOGS_PER_SEC 16
    Mean ops/sec:      1350.0
    worst_wait_ms 120
    idle_wait_ms 0
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1200.5, 1350.0, "ops/s"), (310, 120, "ms")]


def test_fio_status_iops_and_time_with_its_tabs_lost():
    text = """Before:
[91K/0/0 iops]
[95K/0/0 iops]

After:
[120K/0/0 iops]
[124K/0/0 iops]

Without patch:
real3m0.500s
user0m0.001s
With patch:
real0m2.250s
user0m0.001s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(93000, 122000, "IOPS"), (180.5, 2.25, "s")]


def test_a_kernel_named_alone_and_then_with_the_change():
    text = """Results with fio randwrite:

v6.9:           write: IOPS=1200, BW=4800KiB/s
v6.9 (patched): write: IOPS=2400, BW=9600KiB/s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1200, 2400, "IOPS"), (4800, 9600, "KiB/s")]


def test_output_pasted_between_from_and_to():
    text = """Sequential reads do get faster, from

Run status group 0 (all jobs):
   READ: bw=100MiB/s (105MB/s), 100MiB/s-100MiB/s (105MB/s-105MB/s), io=1024MiB

on the old path to

Run status group 0 (all jobs):
   READ: bw=130MiB/s (136MB/s), 130MiB/s-130MiB/s (136MB/s-136MB/s), io=1024MiB

with the new one.
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(100, 130, "MiB/s")]


def test_a_side_opened_mid_line_by_a_sentence_ending_in_a_colon():
    text = """The test copies a large file. Without
the change, a cold copy takes about
four seconds:

real\t0m4.100s

With the change, it takes:

real\t0m3.200s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(4.1, 3.2, "s")]


def test_a_row_label_under_both_sides_is_no_side():
    text = """Before the change, runtime:

with $nr == 1000:  20 seconds
with $nr == 2000:  45 seconds

After the change, runtime:

with $nr == 1000:  18 seconds
with $nr == 2000:  40 seconds
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(20, 18, "s"), (45, 40, "s")]


def test_a_vs_pair_oriented_by_a_delta_joined_with_or():
    text = "On my box the test ran at 300KIOPS vs 360KIOPS, or +20% on bare metal.\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(300e3, 360e3, "IOPS")]  # KIOPS: thousands of IOPS


def test_two_variants_both_named_with_the_subject_says_which_is_after():
    text = """Profile of a 64k read test:

With cached zone map:

  --40.00%--zone_lookup
            |
            |--30.00%--zone_walk

With cached extent map:

  --20.00%--zone_lookup
            |
            |--10.00%--zone_walk
"""
    rows = [(c.label, c.before, c.after) for c in claims(text, "zonefs: add a cached extent map")]
    assert [(b, a) for _, b, a in rows] == [(40, 20), (30, 10)]
    assert claims(text, "zonefs: tidy up the lookup") == []  # no subject names either: no sides
    jobs = text.replace("cached zone map", "4 jobs").replace("cached extent map", "8 jobs")
    assert claims(jobs, "[PATCH v2 4/8] zonefs: add a cached extent map") == []  # a setting's two values


def test_a_pair_of_approximate_figures_in_words():
    text = "Write throughput went from about 1.1GB/s to about 1.5GB/s here.\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1.1, 1.5, "GB/s")]


def test_cases_of_a_side_one_after_the_other_pair_by_position():
    text = """Before the change, a cold run takes:

real\t0m5.000s

and a warm run looks like this:

real\t0m1.000s

After the change, a cold run takes:

real\t0m4.000s

and the warm run looks like this:

real\t0m0.500s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(5, 4, "s"), (1, 0.5, "s")]


def test_time_v_and_time_p_and_a_duration_in_words():
    text = """Without the patch:
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:23.45
With the patch:
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:03.45

Before:
real 12.50
user 0.10
After:
real 10.00
user 0.10

Before: Total run time: 3 minutes, 38 seconds
After: Total run time: 1 minute, 2 seconds
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(83.45, 63.45, "s"), (12.5, 10, "s"), (218, 62, "s")]
    prose = "With the patch, mkfs time drops from 3 minutes, 38 seconds to 1 minute 2 seconds.\n"
    assert [(b, a, u) for _, b, a, u in _rows(prose)] == [(218, 62, "s")]


def test_stress_ng_and_sysbench_rates_under_each_side():
    text = """Before:
stress-ng: info:  [101] dispatching hogs: 4 hdd
stress-ng: info:  [101] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
stress-ng: info:  [101] hdd              20000     60.00      1.00     20.00       333.33         952.38
stress-ng: info:  [101] successful run completed in 60.02s
    transactions:                        60000 (1000.00 per sec.)
After:
stress-ng: info:  [202] dispatching hogs: 4 hdd
stress-ng: info:  [202] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
stress-ng: info:  [202] hdd              24000     60.00      1.00     19.00       400.00        1200.00
stress-ng: info:  [202] successful run completed in 60.01s
    transactions:                        66000 (1100.00 per sec.)
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(333.33, 400, "ops/s"), (1000, 1100, "/s")]


def test_hdparm_rates_and_busybox_time_under_each_side():
    text = """Before:
 Timing buffered disk reads: 600 MB in  3.00 seconds = 200.00 MB/sec
real    0m 9.50s
After:
 Timing buffered disk reads: 750 MB in  3.00 seconds = 250.00 MB/sec
real    0m 7.25s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(200, 250, "MB/s"), (9.5, 7.25, "s")]


def test_two_clauses_each_a_figure_followed_by_its_side():
    text = "Throughput is 562K IOPS without the patch and 574K IOPS with it.\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(562000, 574000, "IOPS")]
    text = "It takes 12.3s on the vanilla kernel and 9.8s on the patched one.\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(12.3, 9.8, "s")]
    assert _rows("We run 4 jobs at 128 MB/s and 8 jobs at 64 MB/s.\n") == []  # no side said


def test_prose_sides_by_sentence_tense_and_names_after_the_pair():
    assert [(b, a) for _, b, a, _ in _rows("Before this patch: 1200 MB/s. After this patch: 1500 MB/s.\n")] == \
        [(1200, 1500)]
    assert [(b, a) for _, b, a, _ in _rows("Runtime was 120s and is now 95s.\n")] == [(120, 95)]
    assert [(b, a) for _, b, a, _ in _rows("The throughput is now 2.5 GB/s, compared to 2.0 GB/s before.\n")] == \
        [(2.0, 2.5)]
    assert [(b, a) for _, b, a, _ in _rows("I saw 3.2 GB/s vs 2.9 GB/s (patched vs unpatched).\n")] == [(2.9, 3.2)]


def test_perf_stat_times_under_each_side_are_its_real_time():
    text = """Without the patch:
       2.000000000 seconds time elapsed
       0.100000000 seconds user
       1.800000000 seconds sys
With the patch:
       1.500000000 seconds time elapsed
       0.100000000 seconds user
       1.300000000 seconds sys
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(2.0, 1.5, "s")]


def test_fio_job_iops_with_thousands_commas_under_each_side():
    text = """Before:
  read: IOPS=1,234,567, BW=4822MiB/s (5056MB/s)(10.0GiB/2001msec)
After:
  read: IOPS=1,345,000, BW=5254MiB/s (5509MB/s)(10.0GiB/2001msec)
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1234567, 1345000, "IOPS"), (4822, 5254, "MiB/s")]


def test_from_to_with_each_figure_again_in_another_unit():
    text = "With this patch the copy time drops from 1500s (25 min, 1.2G) to 180s (3 min, 1.1G).\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1500, 180, "s")]


def test_runs_on_a_line_with_their_stated_average_are_that_average():
    text = """Without the patch:
4 jobs:  12.0s 12.4s 11.8s  total: 36.2s, avg: 12.07s
With the patch:
4 jobs:  9.1s 9.3s 9.0s  total: 27.4s, avg: 9.13s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(12.07, 9.13, "s")]


def test_an_average_written_as_a_setting_or_twice_a_line_stands_for_the_runs_before_it():
    # 'mean=' reads like a setting's value ('delay=10 usec'); two averages a line each end their own runs
    text = """Without the patch:
unlink: 3.1s 3.3s 3.2s mean=3.2s   rmdir: 1.4s 1.6s 1.5s mean=1.5s
With the patch:
unlink: 2.1s 2.2s 2.0s mean=2.1s   rmdir: 1.0s 1.2s 1.1s mean=1.1s
"""
    assert sorted((b, a) for _, b, a, _ in _rows(text)) == [(1.5, 1.1), (3.2, 2.1)]


def test_durations_in_time1s_short_form_are_seconds_in_prose_and_under_sides():
    assert [(b, a, u) for _, b, a, u in _rows("The image build drops from 1h2m3s to 4m30.5s.\n")] == \
        [(3723, 270.5, "s")]
    text = """Before:
  untar  2m10.5s
After:
  untar  1m58.0s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(130.5, 118, "s")]


def test_a_block_size_before_a_colon_names_the_row():
    text = """Unmodified 6.1:
4k:  bw=1004MiB/s
64K: bw=2074MiB/s

Modified 6.1:
4k:  bw=1193MiB/s
64K: bw=2258MiB/s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1004, 1193, "MiB/s"), (2074, 2258, "MiB/s")]


def test_a_long_caption_names_its_side_in_its_first_clause():
    text = """For unmodified 6.1, with every write completion deferred to the workqueue:
4k:  bw=1004MiB/s

For modified 6.1, with every write completion called in the interrupt handler:
4k:  bw=1193MiB/s
"""
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(1004, 1193, "MiB/s")]


def test_a_spread_in_exponent_form_leaves_the_figure_its_unit():
    text = """Before:
Average rate: 40210.5+/-1.9e+04 files/sec.
After:
Average rate: 45118.0+/-2.1e+04 files/sec.
"""
    assert [(b, a) for _, b, a, _ in _rows(text)] == [(40210.5, 45118.0)]


def test_a_vs_pair_whose_clauses_name_the_sides_after_the_figures():
    text = "With the series we measured 3.1 GB/s vs 2.4 GB/s without it.\n"
    assert [(b, a, u) for _, b, a, u in _rows(text)] == [(2.4, 3.1, "GB/s")]


def test_a_pair_from_a_peak_or_a_maximum_of_one_figure_to_another():
    text = "With the new queue mapping the array's write rate went from a peak of 900 MB/s to 1.3 GB/s.\n"
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(900, 1300, "MB/s")]


def test_a_pair_in_prose_counted_in_a_filesystems_blocks():
    text = "The new layout cuts the journal's footprint from 5120 blocks (20M) to 2048 blocks (8M).\n"
    assert [(c.before, c.after, c.unit, c.better) for c in claims(text)] == [(5120, 2048, "blocks", "lower")]
