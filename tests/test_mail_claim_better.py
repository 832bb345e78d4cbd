"""Which way a claim row is better when its unit does not say: by the words of its name
(joined by underscores or a capital too), by the mail's own delta against the figures, and by
what the lines above the row say is measured (iolab.mail.claimed.better)."""

import pytest

from iolab.mail.claimed import claims
from iolab.mail.claimed.better import _said_above
from iolab.mail.claimed.model import better_of


@pytest.mark.parametrize("name, better", [
    ("write_bw_bytes", "higher"), ("sys_cpu", "lower"), ("p99Bms", "lower"), ("iopsBL", "higher"),
    ("tps_med", "higher"), ("Fragmentation score", "lower"), ("Avg. extents per file", "lower"),
    ("Num. free extent", "lower"), ("Number of extents per file", "lower"), ("Avg. size per extent(KB)", "higher"),
    ("Avg. free extent size(KB)", "higher"), ("commits", None), ("post mount", None),
    ("frag_pct_mean", "lower"), ("major page faults", "lower"), ("L2 misses", "lower"), ("key comparisons", "lower"),
    ("lock contention", "lower"), ("memory usage", "lower"), ("Hmean tput-8", "higher"), ("copy in KBps", "higher"), ("compressed blocks", "lower"),
    ("cache miss rate", "lower"), ("packet drop rate", "lower"), ("write amplification", "lower"), ("%sys", "lower"),
    ("syscalls", "lower"), ("wakeups", "lower"), ("page allocations", "lower"), ("calls/s", None),
    ("power", "lower"), ("package energy (J)", "lower"), ("jank", "lower"), ("janks per minute", "lower"),
    ("energy efficiency", None), ("power efficiency", None), ("Network utilisation", "lower"),
    ("host CPU utilization", "lower"),
])
def test_the_words_of_a_name_say_which_way_is_better(name, better):
    assert better_of(name) == better


def _better(text: str) -> list[tuple[str, float, float, str | None]]:
    return [(c.label, c.before, c.after, c.better) for c in claims(text)]


def test_a_delta_against_the_figures_move_is_a_gain():
    text = """metric        baseline     patched    gain%
foo_total          1.876       0.963  +48.69%
bar_total          4.0         5.0    +25.00%
"""
    assert _better(text) == [("foo_total", 1.876, 0.963, "lower"), ("bar_total", 4.0, 5.0, None)]


def test_the_line_above_a_table_says_what_it_measures():
    text = """Test result: iops

|                 | deadline | bfq      |
| --------------- | -------- | -------- |
| before this set | 263k     | 124k     |
| after this set  | 475k     | 292k     |
"""
    assert [(c.label, c.better) for c in claims(text)] == [("deadline", "higher"), ("bfq", "higher")]


def test_a_table_header_of_rates_says_an_average_row_is_better_higher():
    text = """Results:

 sec   normal MB/s  dontcache MB/s
----  ------------  --------------
   1         993.9          1799.6
   2         992.8          1693.8
   3         923.4          2565.9
----  ------------  --------------
 avg         970.0          2019.7  (+108%)
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(970.0, 2019.7, "higher")]


def test_a_sentence_above_the_header_rows_says_it_not_the_header_cells():
    text = """Observation: Average fallocate operations per container per second.

|CPU: Kunpeng 920   |          P80            |
|Memory: 512GB      |-------------------------|
|960GB SSD (0.5GB/s)| base  |    patched      |
|-------------------|-------|-----------------|
|mb_optimize_scan=0 | 2667  | 4821  (+80.7%)  |
|mb_optimize_scan=1 | 2643  | 4784  (+81.0%)  |
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(2667, 4821, "higher"), (2643, 4784, "higher")]


def test_a_column_of_after_over_before_makes_the_two_before_it_a_pair_and_a_gain_says_higher():
    text = """paged reads
-----------
            128K IO size                      1024K IO size
jobs   /dev/fuse     uring    gain     /dev/fuse    uring   gain
 1        1117        1921    1.72        1902       1942   1.02
 2        2502        3527    1.41        3066       3260   1.06
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [
        (1117, 1921, "higher"), (1902, 1942, "higher"), (2502, 3527, "higher"), (3066, 3260, "higher")]
    no_ratio = text.replace("1.72", "1.99").replace("1.41", "1.99").replace("1.02", "1.99").replace("1.06", "1.99")
    assert claims(no_ratio) == []  # no ratio and no side named: columns that are settings


def test_a_factor_under_a_gain_column_below_one_says_the_other_way():
    text = """jobs   base   patched   gain
1      2023   3998      2.42
2      3375   1950      0.58
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(2023, 3998, "higher"), (3375, 1950, "higher")]


def test_mmtests_prints_each_change_as_a_gain_whichever_way_is_better():
    text = """compare-kernels, 4 clients:

                        7.1-vanilla         7.1-patched
Amean     fsync-4        12.40 (   0.00%)      10.10 *  18.55%*
Hmean     4            4100.00 (   0.00%)    3900.00 (  -4.88%)
Hmean     8            5200.00 (   0.00%)    5460.00 (   5.00%)
Amean     16             30.00 (   0.00%)      33.00 * -10.00%*
"""
    assert _better(text) == [("Amean fsync-4", 12.4, 10.1, "lower"), ("Hmean 4", 4100.0, 3900.0, "higher"),
                             ("Hmean 8", 5200.0, 5460.0, "higher"), ("Amean 16", 30.0, 33.0, "lower")]


def test_the_header_over_the_two_figures_names_what_they_count():
    text = """Sorting a million keys, before and after:

| keys | comparisons(base) | comparisons(patched) |
|------|-------------------|----------------------|
| 1000 |      81234        |      61023           |
| 2000 |     172221        |     130444           |
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(81234, 61023, "lower"), (172221, 130444, "lower")]


def test_a_caption_in_other_words_says_the_way():
    text = """Replaying the log (smaller is better):

| journal | before | after |
|---------|--------|-------|
| 64M     | 812    | 640   |
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(812, 640, "lower")]


def test_the_unit_written_after_the_figure_says_the_way():
    text = """Before:
  seqwrite 4k blocks     41230.0 KBps
After:
  seqwrite 4k blocks     45510.0 KBps
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(41230.0, 45510.0, "higher")]


def test_a_gain_column_is_found_over_a_long_table():
    rows = "\n".join(f"{n:<5d}{1000 + n:>8d}{2000 + n:>8d}   {(2000 + n) / (1000 + n):.2f}" for n in range(1, 12))
    text = "jobs    base  patched  gain\n" + rows + "\n"
    assert {c.better for c in claims(text)} == {"higher"}


def test_mmtests_names_its_mean_by_the_way_a_row_that_did_not_move_is_better():
    text = """compare-kernels:

                        7.1-vanilla         7.1-patched
Hmean     4            4100.00 (   0.00%)    4100.00 (   0.00%)
Amean     8              12.00 (   0.00%)      12.00 (   0.00%)
"""
    assert _better(text) == [("Hmean 4", 4100.0, 4100.0, "higher"), ("Amean 8", 12.0, 12.0, "lower")]


def test_the_header_over_the_rows_names_says_what_they_count():
    text = """Results:

| faults    | base   | patched |
|-----------|--------|---------|
| small     | 81234  | 61023   |
| large     | 172221 | 130444  |
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(81234, 61023, "lower"), (172221, 130444, "lower")]


def test_a_share_of_a_measure_is_better_its_way():
    text = "With the patch the uncached path reaches 74% of buffered bandwidth (was 41%).\n"
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(41, 74, "higher")]


def test_a_compression_ratio_in_percent_is_a_size_better_lower():
    text = """Compressing a kernel tree:

                    before      after
compression ratio   38.2%       35.7%
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(38.2, 35.7, "lower")]


def test_meminfo_says_free_memory_is_better_higher_and_what_the_kernel_holds_lower():
    text = """Before:
MemFree:         7340032 kB
Slab:             804112 kB
Cached:          2990000 kB

After:
MemFree:         7650000 kB
Slab:             498000 kB
Cached:          3120000 kB
"""
    assert [(c.label, c.better) for c in claims(text)] == [("MemFree", "higher"), ("Slab", "lower"), ("Cached", None)]


def test_a_structure_size_is_better_lower():
    text = """                   before   after
sizeof(struct bio)    136      128
sizeof(struct req)    384      360
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(136, 128, "lower"), (384, 360, "lower")]


def test_a_negative_delta_against_a_rise_says_no_way():
    text = """metric        baseline     patched    change
foo_total          4.0         5.0    -20.00%
"""
    assert _better(text) == [("foo_total", 4.0, 5.0, None)]  # a loss, or the change of the inverse measure


def test_an_unsigned_change_says_no_way_and_a_gain_column_per_pair_is_read_by_its_cell():
    assert _better("test        before   after    diff\nfoo_run      10.0     12.0     20%\n") == [
        ("foo_run", 10.0, 12.0, None)]  # the change's size only
    text = """jobs   base   patched   gain    base   patched   gain
1      2023   3998      1.98    1902   1800      0.95
"""
    assert [(c.before, c.after, c.better) for c in claims(text)] == [(2023, 3998, "higher"), (1902, 1800, "higher")]


@pytest.mark.parametrize("name, better", [
    ("4K READ loadavg", "lower"), ("load average", "lower"), ("memory used", "lower"), ("fork runtimes", "lower"),
    ("durations", "lower"), ("cache hit rate", "higher"), ("hit ratio", "higher"), ("improvement by cache hits", None),
])
def test_load_memory_runtimes_and_hits_say_their_way(name, better):
    assert better_of(name) == better


def test_shorter_or_longer_is_better_says_the_way():
    for said, way in (("shorter is better", "lower"), ("longer is better", "higher")):
        text = f"""Runs of the test, mean of 5 ({said}):

 Size  | base     | patched
 ------+----------+---------
 4KiB  | 0.0143   | 0.0140
 64KiB | 0.0140   | 0.0104
"""
        assert [c.better for c in claims(text)] == [way, way], said


def test_the_size_of_what_is_built_is_better_lower():
    for caption in ("2. sizeof .text section from vmlinux:", "Kernel image size:", "Size of the module:"):
        text = f"""{caption}
 | config       | old      | new      | delta |
 | defconfig    | 16180040 | 16180616 |   576 |
 | allmodconfig | 19556424 | 19561352 |  4928 |
"""
        assert [c.better for c in claims(text)] == ["lower", "lower"], caption


def test_a_sentence_with_figures_above_a_table_says_what_it_measures():
    text = """With 4 submission queues and one thread a queue we measured 4K IOPS
using fio:

fio --rw=randread --bs=4k --iodepth=64 --numjobs=$N

which went up like:

threads\tbase\tpolled
1\t210K\t290K
2\t400K\t560K
"""
    assert [(c.label, c.better) for c in claims(text)] == [("1", "higher"), ("2", "higher")]


def test_a_tables_rule_and_header_are_no_lines_that_say_what_is_measured():
    text = """Polling brings IOPS for small blocks up by 5-18% on a four queue device.

- Disk: Example Corporation NVMe Datacenter SSD [1234:5678]

Results:
rw          bs base  polled
------------------------------
randread    4k 149,426 170,763 +14%
randread   16k 118,939 134,269 +12%
"""
    assert [c.better for c in claims(text)] == ["higher", "higher"]


def test_a_time_word_after_per_names_a_rate_not_a_time():
    text = """Table: absolute numbers in average file creates per sec (from the benchmark, thousands)
#no.    Dirs    without-patch(K)    with-patch(K)    Diff(%)
1       1       16.90               17.51            +3.60
2       2       32.08               31.80            -0.87
"""
    assert [(c.unit, c.better) for c in claims(text)] == [("", "higher"), ("", "higher")]


@pytest.mark.parametrize("name, better", [
    ("context switch per second", "lower"), ("cache misses/s", "lower"), ("interrupts per second", "lower"),
    ("wakeups a second", "lower"), ("we flush the queue each time it fills", None), ("every time a waiter sleeps", None),
])
def test_a_rate_of_what_costs_is_lower_and_a_time_that_counts_occasions_no_way(name, better):
    assert better_of(name) == better


def test_a_measure_named_with_its_setting_in_parentheses_says_its_way():
    text = """The waiter is woken up each time a tag is freed, so most wakeups are wasted.

IOPS (bs=1MB)
jobs | v6.1   | v6.1-patched |
1    | 118    | 121
24   | 101    | 120

context switch per second
jobs | v6.1   | v6.1-patched |
1    | 1160   | 1190
24   | 1710   | 1100
"""
    assert [c.better for c in claims(text)] == ["higher", "higher", "lower", "lower"]


IMPROVED = """This series should also improve the performance of other callers of the helper.

Running the benchmark with 5 repetitions:

 Th.   base avg (stdev)    +series avg (stdev)   change
 ---   ----------------    -------------------   ------
 1     1152000 (7400)      1169000 (9000)        +1.5%
 2     1545000 (12500)     1584000 (10400)       +2.5%
 4     2480000 (12000)     {after} (12800)       {change}
"""


def test_rows_that_nearly_all_move_one_way_under_an_improvement_are_better_that_way():
    text = IMPROVED.format(after="2518000", change="+1.5%")
    assert [c.better for c in claims(text)] == ["higher"] * 3
    runtimes = """Each launch of the 36 apps is faster with the series:

 cycle   baseline   with series   diff
 1       272.4      264.9         -7.5
 2       250.4      248.2         -2.2
 3       226.2      227.6         +1.4
 4       230.6      214.8         -15.8
"""
    assert [c.better for c in claims(runtimes)] == ["lower"] * 4


def test_no_way_from_moves_that_split_or_under_words_of_a_regression():
    split = IMPROVED.replace(" 2     1545000 (12500)     1584000 (10400)       +2.5%\n",
                             " 2     1545000 (12500)     1504000 (10400)       -2.6%\n")
    assert [c.better for c in claims(split.format(after="2418000", change="-2.5%"))] == [None] * 3
    worse = IMPROVED.replace("should also improve", "should improve, though it may regress,")
    assert [c.better for c in claims(worse.format(after="2518000", change="+1.5%"))] == [None] * 3


def test_gains_and_reductions_the_text_claims_are_improvements_too():
    gains = IMPROVED.replace("This series should also improve the performance of other callers of the helper.",
                             "Gains are pretty evident for other callers of the helper.")
    assert [c.better for c in claims(gains.format(after="2518000", change="+1.5%"))] == ["higher"] * 3
    fewer = IMPROVED.replace("This series should also improve the performance of other callers of the helper.",
                             "This series reduces the work done by other callers of the helper.")
    text = fewer.format(after="2418000", change="-2.5%").replace("1169000", "1119000").replace(
        "1584000", "1504000").replace("+1.5%", "-2.9%").replace("+2.5%", "-2.6%")
    assert [c.better for c in claims(text)] == ["lower"] * 3


def test_a_way_stated_for_each_of_several_measures_goes_to_the_measure_the_row_names():
    text = """Results on my laptop
(Power less is better, Rate more is better,
OPJ--Operations per Joule more is better)
=========  ============  ======  ======
 Setting    Clients       1       2
=========  ============  ======  ======
 old        Power/Watts   2010    2804
            Rate/(MB/s)   114     259
            OPJ           0.0567  0.0923
 new        Clients       1       2
            Power/Watts   2115    2388
            Rate/(MB/s)   122     234
            OPJ           0.0576  0.0979
"""
    lines = text.splitlines()
    assert _said_above(lines, 10, "Power/Watts Clients 1") == "lower"
    assert _said_above(lines, 12, "OPJ Clients 1") == "higher"
    assert _said_above(lines, 11, "Rate/(MB/s) Clients 1") == "higher"


def test_a_header_wrapped_over_two_lines_says_each_columns_way():
    text = ("Results, mean of 5 runs:\n\n"
            "2 dd jobs\tread/write\tBandwidth\tIOPS\tHost CPU\tVM CPU\n"
            "\t\t\t\t(MB/s)\t\t(k)\tusage\t\tusage\n"
            "stock\t\tread\t\t1210\t\t301\t140.50\t\t99.50\n"
            "\t\twrite\t\t1150\t\t287\t138.50\t\t98.25\n"
            "patched\t\tread\t\t1480\t\t369\t122.00\t\t97.75\n"
            "\t\twrite\t\t1390\t\t347\t119.50\t\t96.50\n")
    found = {(before, after): better for _, before, after, better in _better(text)}
    assert found == {(1210, 1480): "higher", (301, 369): "higher", (140.5, 122.0): "lower", (99.5, 97.75): "lower",
                     (1150, 1390): "higher", (287, 347): "higher", (138.5, 119.5): "lower", (98.25, 96.5): "lower"}
