"""The readers widened in the seventh session toward mails never seen: mmtests' comparison pasted
as its means alone (no statistic's name), and a header's columns named by what the change brings."""

from iolab.mail.claimed import claims


def _rows(text: str, subject: str = "") -> list[tuple[str, float, float]]:
    return [(c.label, c.before, c.after) for c in claims(text, subject)]


def test_a_comparison_of_means_alone_reads_each_key_against_the_baseline():
    text = """Average of 5 runs:

Clients        baseline (ops/s)       patched (ops/s)
clients-1      1200.50 (   0.00%)     1180.25 *  -1.69%*
clients-4      4010.00 (   0.00%)     4522.40 (  12.78%)
clients-16     9000.00 (   0.00%)    15230.75 *  69.23%*
"""
    found = claims(text)
    assert [(c.label, c.before, c.after) for c in found] == [
        ("clients-1", 1200.5, 1180.25), ("clients-4", 4010, 4522.4), ("clients-16", 9000, 15230.75)]
    assert {c.unit for c in found} == {"ops/s"}


def test_a_comparison_of_means_alone_with_other_names_and_three_kernels():
    text = """dbench4 throughput, MB/sec:

                   6.1-vanilla        6.1-patched
threads-8      812.10 (   0.00%)      850.40 (   4.72%)
threads-64    1002.00 (   0.00%)     1303.90 *  30.13%*
"""
    assert _rows(text) == [("threads-8", 812.1, 850.4), ("threads-64", 1002, 1303.9)]



def test_columns_an_acronym_of_what_the_subject_adds_names_against_the_plain_one():
    text = """Per-cgroup bandwidth, MiB/s:

job        RR        DRR
-----------------------------
small:     410       602
large:     1240      1013
"""
    assert _rows(text, "Subject: [PATCH 0/3] block: Introduce Deficit Round Robin queueing") == [
        ("small:", 410, 602), ("large:", 1240, 1013)]
    assert _rows(text, "Subject: [PATCH 0/3] block: tune queueing") == []


def test_a_reference_column_beside_the_thing_and_its_absence_is_context():
    text = """Direct write throughput, MB/s:

              buffered    dio-nobatch    dio-batch
seq-1M        2100        1850           2480
seq-64K       1400        900            1390
"""
    assert _rows(text, "Subject: [PATCH v2 0/4] iomap: add batch support for direct writes") == [
        ("seq-1M", 1850, 2480), ("seq-64K", 900, 1390)]


def test_a_pipe_column_extended_by_what_the_subject_introduces_is_after():
    text = """Swap-out latency (usec):

| workload | none | zram | zram-writeback |
|----------|------|------|----------------|
| kbuild   | 812  | 402  | 311            |
| redis    | 930  | 455  | 390            |
"""
    assert _rows(text, "Subject: [PATCH 0/5] zram: introduce writeback to a backing device") == [
        ("kbuild", 402, 311), ("redis", 455, 390)]


def test_two_columns_a_baseline_word_and_what_the_subject_adds():
    text = """Page faults per second, mean of 5 runs:

test           default      hugepage
anon-fault     120000       410000
file-fault     98000        250000
"""
    assert [(b, a) for _, b, a in _rows(text, "Subject: [PATCH] shmem: add hugepage support for tmpfs")] == [
        (120000, 410000), (98000, 250000)]
    assert _rows(text.replace("default", "cached "), "Subject: [PATCH] shmem: add hugepage support") == []


def test_columns_of_modes_the_subject_only_mentions_are_no_sides():
    text = """Throughput (MB/s):

device        read       write
nvme0         3100       2800
sda           510        480
"""
    assert _rows(text, "Subject: [PATCH] nvmet: add write support for passthru") == []


def test_a_sentence_ending_in_a_full_width_colon_is_no_tables_header():
    text = """The bandwidth results are as follows：
            old kernel       new kernel
seq read       410              602
seq write      300              388
"""
    assert _rows(text) == [("seq read", 410, 602), ("seq write", 300, 388)]


def test_how_long_a_run_took_above_a_table_is_no_unit_of_its_figures():
    text = """Transactions per client, each run for 10 minutes:

client    vanilla    patched
pg-1      1520       1601
pg-2      2210       2390
"""
    found = claims(text)
    assert [(c.before, c.after) for c in found] == [(1520, 1601), (2210, 2390)]
    assert {c.unit for c in found} == {""}


def test_a_settings_assignment_in_a_rows_label_names_the_row_not_a_figure():
    text = """Mean of 5 runs:

                         baseline       patched
  [write] iodepth=1        12.10s         10.20s
  [write] iodepth=32       30.50s         21.75s
  [read] sync=0            8.00s          7.90s
"""
    assert _rows(text) == [("[write] iodepth=1", 12.1, 10.2), ("[write] iodepth=32", 30.5, 21.75),
                           ("[read] sync=0", 8, 7.9)]


def test_a_kernel_named_vanilla_beside_the_kernel_with_what_the_subject_introduces():
    text = """Results (average of 3 runs):

                     6.1-vanilla    6.1-async_discard
  fstrim time        41.20s         12.70s
  rm -rf time        18.10s         17.40s
"""
    subject = "Subject: [PATCH 0/2] btrfs: introduce async discard"
    assert [(b, a) for _, b, a in _rows(text, subject)] == [(41.2, 12.7), (18.1, 17.4)]


def test_a_table_under_a_neutral_heading_after_the_baseline_table_is_the_after_side():
    text = """Baseline:
| jobs | IOPS (k) | avg lat (us) |
|------|----------|--------------|
| 1    | 120      | 8.1          |
| 8    | 610      | 12.9         |

Batched completions:
| jobs | IOPS (k) | avg lat (us) |
|------|----------|--------------|
| 1    | 131      | 7.4          |
| 8    | 702      | 11.0         |
"""
    assert [(b, a) for _, b, a in _rows(text)] == [(120, 131), (8.1, 7.4), (610, 702), (12.9, 11.0)]


def test_a_header_cell_opening_with_a_percentile_names_its_column():
    text = """Before:
| QD | 99.9% lat (us) | 50th lat (us) |
|----|----------------|--------------|
| 1  | 41.2           | 20.1         |

After:
| QD | 99.9% lat (us) | 50th lat (us) |
|----|----------------|--------------|
| 1  | 35.0           | 19.8         |
"""
    assert [(b, a) for _, b, a in _rows(text)] == [(41.2, 35.0), (20.1, 19.8)]


def test_two_sides_a_tab_apart_under_groups_are_two_columns():
    text = "Walk time in seconds:\n\n\t\txfs\t\t\tbtrfs\n" \
        "threads\t\tdefault\t patched\tdefault\tpatched\n" \
        "4\t\t 5.100\t  4.200\t\t 6.300\t 5.900\n" \
        "16\t\t20.400\t  9.800\t\t22.100\t12.700\n"
    assert sorted((b, a) for _, b, a in _rows(text)) == [(5.1, 4.2), (6.3, 5.9), (20.4, 9.8), (22.1, 12.7)]


def test_two_rows_named_by_what_the_subject_adds_and_the_plain_one_are_read_down():
    text = """Throughput (MB/s):

mode          seq-read    rand-read   rand-write
lz4           410         380         1510
lz4-batch     602         1300        1620
"""
    subject = "Subject: [PATCH 0/4] zram: add batch compression support"
    assert [(b, a) for _, b, a in _rows(text, subject)] == [(410, 602), (380, 1300), (1510, 1620)]


def test_two_rows_the_plain_one_and_the_initials_of_what_is_introduced():
    text = "Mean latency under contention (usec):\n\nsched\tread\twrite\tmixed\nRR:\t41\t380\t210\nDRR:\t44\t210\t90\n"
    subject = "Subject: [PATCH v2 0/3] blk-mq: Introduce Deficit Round Robin dispatch"
    assert [(b, a) for _, b, a in _rows(text, subject)] == [(41, 44), (380, 210), (210, 90)]
