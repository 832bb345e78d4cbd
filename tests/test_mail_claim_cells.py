"""The claims reader's table cells that are no before and no after: a key a column names (a block
size, a depth), a spread in parentheses, a delta whose sign is written apart from it, and settings
that name the columns over a rule."""

from iolab.mail.claimed import claims


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_a_size_under_a_key_column_is_the_rows_label_not_a_figure():
    text = """Copying a file with and without the patch:

id   bs    without-patch   with-patch   change
1    64k   0m12.250s       0m9.125s     25.5%
2    2M    2m1.500s        1m30.250s    25.7%
"""
    assert _rows(text) == [("1 64k", 12.25, 9.125), ("2 2M", 121.5, 90.25)]


def test_settings_over_a_rule_name_the_columns_and_the_sizes_under_bs_are_keys():
    text = """Random reads on a loop device, IOPS:

op       bs  nowait=0  nowait=1
-------------------------------
read     8k   52,110   61,480  +18%
read    32k   20,300   20,420   +1%
"""
    assert _rows(text) == [("read 8k", 52110, 61480), ("read 32k", 20300, 20420)]


def test_a_delta_whose_sign_is_written_apart_is_the_rows_delta():
    text = """Random writes, before and after:

\tBase\tPatched\t\tDiff
QD2\t210K\t232K\t\t+ 10.5%
QD8\t480K\t505K\t\t+ 5.2%
"""
    found = claims(text)
    assert [(c.label, c.before, c.after, c.stated) for c in found] == [
        ("QD2", 210e3, 232e3, "+10.5%"), ("QD8", 480e3, 505e3, "+5.2%")]


def test_a_bare_figure_in_parentheses_after_a_figure_is_its_spread():
    text = """dbench over 5 runs:

 procs   v7.1 avg (stdev)   +series avg (stdev)   change
 -----   ----------------   -------------------   ------
 4\t20450 (310)\t\t21010 (122)\t\t+2.7%
 8\t38100 (954)\t\t39900 (801)\t\t+4.7%
"""
    assert _rows(text) == [("4", 20450, 21010), ("8", 38100, 39900)]


def test_columns_that_are_steps_of_the_series_compare_the_baseline_with_the_last_step():
    text = """Throughput, Gbit/s:

msg size   baseline   p 1     p 1+2   p 1-3
4K         1.50       1.62    1.80    2.25
64K        9.10       9.40    11.2    12.8
"""
    assert _rows(text) == [("4K", 1.50, 2.25), ("64K", 9.10, 12.8)]


def test_pipe_columns_that_are_steps_compare_the_baseline_with_the_last_step():
    text = """IOPS (k):

| job       | base | +patch1 | +patch1-2 | +patch1-3 |
|-----------|------|---------|-----------|-----------|
| randread  | 410  | 415     | 450       | 480       |
| randwrite | 220  | 240     | 236       | 260       |
"""
    assert _rows(text) == [("randread", 410, 480), ("randwrite", 220, 260)]


def test_a_line_of_words_over_pipe_rows_is_their_header():
    text = """Mean of 5 runs:
          Stock        Patched
-------------------------------
seqread  | 410 MB/s   | 455 MB/s
seqwrite | 380 MB/s   | 402 MB/s
"""
    assert _rows(text) == [("seqread", 410, 455), ("seqwrite", 380, 402)]


def test_rows_keyed_by_a_legend_compare_the_base_configuration_with_the_one_the_series_brings():
    text = """This series introduces the lazy_flush mode for the journal.

Setup A: ext4 on a plain disk (base)
Setup B: ext4 on dm-crypt (base)
Setup C: ext4 on a plain disk (lazy_flush)

Setup   commits/s   flush (ms)
A       1210        8.1
B       1090        9.5
C       1530        5.2
"""
    assert _rows(text) == [("commits/s", 1210, 1530), ("flush (ms)", 8.1, 5.2)]
    assert _rows(text.replace("introduces", "was tested with")) == []


def test_fs_mark_lines_pasted_a_side_are_one_runs_samples_claimed_by_each_sides_mean_rate():
    text = """Without the series:

FSUse%        Count         Size    Files/sec     App Overhead
     5       400000            0      81000.0          3100000
    11       800000            0      79000.0          3200000
    17      1200000            0      77000.0          3300000

With the series:

FSUse%        Count         Size    Files/sec     App Overhead
     5       400000            0      90000.0          3000000
    11       800000            0      88000.0          3050000
    18      1200000            0      86000.0          3100000
"""
    found = claims(text)
    assert [(c.before, c.after, c.unit) for c in found] == [(79000.0, 88000.0, "files/s")]


def test_variants_against_the_row_naming_a_release_in_an_org_mode_table():
    text = """This series introduces a radix allocator for the log.

|----------------------+---------+-----------|
| Allocator            | Perf    | Time      |
|----------------------+---------+-----------|
| Linear scan (v6.1)   | 900 KB/s| 4m10s     |
|----------------------+---------+-----------|
| With readahead       | 1.2 MB/s| 3m05s     |
|----------------------+---------+-----------|
| Radix allocator      | 3.6 MB/s| 1m02s     |
|----------------------+---------+-----------|
"""
    assert _rows(text) == [("Radix allocator Perf", 900, 3600), ("Radix allocator Time", 250, 62)]


def test_rows_that_are_steps_of_the_series_under_a_line_of_sizes_compare_the_first_with_the_last():
    text = """Receive throughput, Gbit/s:

             128B    2K      16K
baseline     0.42    5.1     14.2
p 1          0.45    5.3     14.9
p 2-3        0.50    5.9     16.0
p 2-4        0.61    6.8     18.4
"""
    assert _rows(text) == [("128B", 0.42, 0.61), ("2K", 5.1, 6.8), ("16K", 14.2, 18.4)]


def test_a_row_of_one_figure_more_than_the_others_reads_its_first_whole_number_as_its_label():
    text = """Latency, before and after:

           v6.8     v6.8+patch
read 1     120      95
write      140      118
trim       300      240
"""
    assert _rows(text) == [("read 1", 120, 95), ("write", 140, 118), ("trim", 300, 240)]


def test_tables_a_size_each_of_a_base_and_a_patched_row_are_read_down_not_as_twins():
    text = """fio randwrite on the kernel client:

8K:
            IOPS    BW          clat      p99       p999
base        7.7k    60MiB/s     4.1ms     9.2ms     12.1ms
patched     9.2k    72MiB/s     3.4ms     7.9ms     10.4ms

128K:
            IOPS    BW          clat      p99       p999
base        2.2k    275MiB/s    14.4ms    30.1ms    41.5ms
patched     2.5k    312MiB/s    12.9ms    26.0ms    35.2ms
"""
    assert [(label, a, b) for label, a, b in _rows(text) if label == "IOPS"] == [("IOPS", 7700, 9200),
                                                                                   ("IOPS", 2200, 2500)]


def test_step_rows_under_a_row_of_rising_settings_compare_the_first_step_with_the_last():
    text = """Send throughput, MB/s:

msg_len      512     2048    8192
baseline     410     1290    2980
p 1          415     1302    3010
p 1-3        470     1488    3395
"""
    assert _rows(text) == [("msg_len=512", 410, 470), ("msg_len=2048", 1290, 1488), ("msg_len=8192", 2980, 3395)]


def test_a_share_under_a_column_the_header_names_as_a_measure_is_a_figure_not_a_delta():
    text = """fio, 8 jobs, two rows a side:

side        IOPS     BW          clat     p99      sys
stock       7.7k     60MiB/s     4.1ms    9.8ms    31%
patched     9.2k     72MiB/s     3.4ms    8.1ms    27%
"""
    found = {c.label: (c.before, c.after, c.unit) for c in claims(text)}
    assert found["sys"] == (31, 27, "%") and found["IOPS"][:2] == (7700, 9200)


def test_a_column_named_no_patch_or_pre_patch_is_before_and_post_patch_after():
    text = """Mean of 3 runs:

workload     post-patch    pre-patch
untar        41.2s         48.9s
compile      301.5s        322.0s
"""
    assert [(a, b) for _, a, b in _rows(text)] == [(48.9, 41.2), (322.0, 301.5)]
    assert [(a, b) for _, a, b in _rows(text.replace("post-patch    pre-patch", "patch         no patch  "))] == [
        (48.9, 41.2), (322.0, 301.5)]


def test_a_column_that_adds_to_the_tree_before_it_is_after():
    text = """Throughput, MB/s:

job        for-7.1/block    +p1     +p1-2
seqread    1210             1250    1380
seqwrite   980              1010    1105
"""
    assert _rows(text) == [("seqread", 1210, 1380), ("seqwrite", 980, 1105)]


def test_a_kernel_and_the_kernel_patched_under_a_unit_in_the_corner_after_a_pipe_table():
    text = """| job | stock | patched |
|-----|-------|---------|
| rr  | 100   | 130     |

lat(us)     7.1     7.1-patched
read        88      71
write       92      80
"""
    found = [(c.label, c.before, c.after, c.unit) for c in claims(text) if c.label in ("read", "write")]
    assert found == [("read", 88, 71, "us"), ("write", 92, 80, "us")]


def test_the_rows_of_the_table_above_give_no_unit_to_the_next_table():
    text = """Latency:

job        stock     patched
p99        1.2 ms    0.9 ms

job        stock     patched    delta
randread   1.21M     1.45M      +19.8%
"""
    found = {c.label: c.unit for c in claims(text)}
    assert found == {"p99": "ms", "randread": ""}


def test_a_measure_with_its_multiplier_in_the_corner_names_the_unit():
    text = """IOPS (k)      7.0      7.0+series
randread      512      601
randwrite     402      455
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(512, 601, "IOPS"), (402, 455, "IOPS")]


def test_a_pipe_tables_header_names_its_unit_and_gives_none_to_the_next_table():
    text = """| Workload   | 7.0 (MB/s) | 7.0 + series (MB/s) |
|------------|------------|---------------------|
| seq read   | 2010       | 2300                |

| Setup        | Baseline IOPS | Patched IOPS | Gain |
|--------------|---------------|--------------|------|
| nvme, 1 job  | 512K          | 601K         | 17%  |
"""
    assert [(c.label, c.unit) for c in claims(text)] == [("seq read", "MB/s"), ("nvme, 1 job", "IOPS")]


def test_rows_whose_side_word_is_joined_to_their_key_by_a_dash_pair_by_that_key():
    text = """fio, 4 jobs:

test                IOPS     lat(us)
8k-seqread-base     210k     152
8k-seqread-patched  260k     121
8k-seqwrite-base    180k     177
8k-seqwrite-patched 199k     160
"""
    assert _rows(text) == [("8k-seqread IOPS", 210e3, 260e3), ("8k-seqread lat(us)", 152, 121),
                           ("8k-seqwrite IOPS", 180e3, 199e3), ("8k-seqwrite lat(us)", 177, 160)]


def test_pipe_columns_of_an_option_switched_off_and_on_are_sides_when_the_subject_brings_it():
    text = """| job       | dio_batch=0 | dio_batch=1 |
|-----------|-------------|-------------|
| randread  | 410 MB/s    | 515 MB/s    |
| randwrite | 380 MB/s    | 402 MB/s    |

| msg size | recv   | recv-mshot |
|----------|--------|------------|
| 4K       | 9.1    | 11.8       |
"""
    subject = "block: add dio_batch knob\nio_uring/net: add recv-mshot support"
    assert _rows(text, subject) == [("randread", 410, 515), ("randwrite", 380, 402), ("4K", 9.1, 11.8)]
    assert _rows(text, "block: tune the plug") == []


def test_two_rows_of_an_option_switched_off_and_on_are_read_down_when_the_subject_brings_it():
    text = """fio randread, 8 jobs:

              IOPS     BW          lat
batch=0       410k     1601MiB/s   78us
batch=1       515k     2011MiB/s   62us

| mode       | IOPS | lat  |
|------------|------|------|
| recv       | 210k | 91us |
| recv-mshot | 266k | 70us |
"""
    subject = "nvme: add batch knob\nio_uring/net: add recv-mshot support"
    assert _rows(text, subject) == [("IOPS", 210e3, 266e3), ("lat", 91, 70), ("IOPS", 410e3, 515e3),
                                    ("BW", 1601, 2011), ("lat", 78, 62)]
    assert _rows(text, "nvme: tune the queue") == []


def test_a_figure_then_the_same_run_in_another_measure_in_parentheses_is_a_cell_of_its_own():
    text = """Before the series:

  bs      seq read             seq write
  8K      11.3k (88.3MiB/s)    5.1k (39.8MiB/s)
  1M      310 (310MiB/s)       120 (120MiB/s)

After the series:

  bs      seq read             seq write
  8K      14.0k (109MiB/s)     5.9k (46.1MiB/s)
  1M      402 (402MiB/s)       131 (131MiB/s)
"""
    found = [(c.label, c.before, c.after, c.unit) for c in claims(text)]
    assert ("8K seq read", 11300, 14000, "") in found and ("8K seq read", 88.3, 109, "MiB/s") in found
    assert ("1M seq write", 120, 131, "") in found


def test_two_tables_named_as_the_sides_pair_across_the_prose_between_them():
    text = """Without the patch:

  bs      IOPS     lat(us)
  8K      97k      330
  128K    9.0k     3540

Most of the time goes to the queue lock; with the patch applied the
lock is gone from the profile, and the same job on the same machine,
three runs each, averaged, reads as follows, which is what we hoped
for when we started on this series of changes.

With the patch:

  bs      IOPS     lat(us)
  8K      118k     271
  128K    9.4k     3390
"""
    assert _rows(text) == [("8K IOPS", 97e3, 118e3), ("8K lat(us)", 330, 271),
                           ("128K IOPS", 9e3, 9.4e3), ("128K lat(us)", 3540, 3390)]
    assert _rows(text.replace("Without the patch:", "On nvme0:").replace("With the patch:", "On nvme1:")) == []
