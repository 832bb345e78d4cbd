"""Forms of outputs and prose pasted per side (issue 36): each side's figure in its own unit,
fio's lines per operation, runs of one side by their mean, a setting turned on as the after side."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.sides import segments


def _rows(text: str, subject: str = "") -> list[tuple[float, float, str]]:
    return [(round(c.before, 2), round(c.after, 2), c.unit) for c in claims(text, subject)]


def test_a_pipe_table_whose_sides_write_other_units_of_one_kind():
    text = """Sequential read on the array, before and after:

| case       | before     | after      |
|------------|------------|------------|
| 1 job      | 870 MiB/s  | 1.5 GiB/s  |
| completion | 2100 usec  | 1.8 msec   |
"""
    assert _rows(text) == [(870, 1536, "MiB/s"), (2100, 1800, "us")]


def test_blocks_a_side_whose_figures_are_in_other_units_of_one_kind():
    text = """Buffered write on a loop device:

Unpatched:
  stream copy:   720 MiB/s
  small files:   640 KiB/s

Patched:
  stream copy:   1.25 GiB/s
  small files:   0.75 MiB/s
"""
    assert _rows(text) == [(720, 1280, "MiB/s"), (640, 768, "KiB/s")]


def test_a_mixed_jobs_latencies_are_each_of_their_own_direction():
    text = """Without the patch:
  read: IOPS=800, BW=3200KiB/s (3277kB/s)(188MiB/60001msec)
     lat (usec): min=70, max=91000, avg=14000.50, stdev=700.10
  write: IOPS=802, BW=3208KiB/s (3285kB/s)(188MiB/60001msec)
     lat (usec): min=70, max=91000, avg=9000.50, stdev=700.10

With the patch:
  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(234MiB/60001msec)
     lat (usec): min=60, max=81000, avg=12000.50, stdev=600.10
  write: IOPS=1003, BW=4012KiB/s (4108kB/s)(235MiB/60001msec)
     lat (usec): min=60, max=81000, avg=7000.50, stdev=600.10
"""
    rows = _rows(text)
    assert (14000.5, 12000.5, "us") in rows and (9000.5, 7000.5, "us") in rows
    assert not any("mean of" in c.label for c in claims(text))


def test_lines_of_grep_over_run_files_a_side_each_by_their_mean():
    text = """# grep IOPS *.log

stock-run1.log:   write: IOPS=41.0k, BW=160MiB/s
stock-run2.log:   write: IOPS=45.0k, BW=176MiB/s
patched-run1.log: write: IOPS=52.0k, BW=203MiB/s
patched-run2.log: write: IOPS=56.0k, BW=219MiB/s
"""
    assert (43000, 54000, "IOPS") in _rows(text) and (168, 211, "MiB/s") in _rows(text)


def test_run_files_of_a_switch_off_and_on_the_subject_names():
    text = """Random reads on pmem, io_uring:

# grep IOPS *.fio
poll-off-1.fio:   read: IOPS=2100k, BW=8203MiB/s
poll-off-2.fio:   read: IOPS=2300k, BW=8984MiB/s

poll-on-1.fio:    read: IOPS=3000k, BW=11.4GiB/s
poll-on-2.fio:    read: IOPS=3200k, BW=12.2GiB/s
"""
    assert (2200000, 3100000, "IOPS") in _rows(text, "[PATCH] pmem: let users turn on polling")
    assert _rows(text) == []  # a switch no subject names: modes of one kernel, no before and after


def test_lines_that_differ_by_a_size_are_rows_not_samples():
    text = """Before:
fsync of a 4k file:   2100 us
fsync of a 1M file:   9800 us

After:
fsync of a 4k file:   800 us
fsync of a 1M file:   7600 us
"""
    assert _rows(text) == [(2100, 800, "us"), (9800, 7600, "us")]


def test_a_prose_pair_with_each_side_again_in_another_measure():
    text = "With the series random writes rose from ~880K IOPS (or ~3440MiB/sec) to ~960K IOPS (or ~3750MiB/sec).\n"
    assert _rows(text) == [(880000, 960000, "IOPS"), (3440, 3750, "MiB/s")]


def test_hours_and_minutes_written_short_are_one_duration():
    text = "With this patch the full rebuild dropped from 9h41m to 3h05m on the same array.\n"
    assert _rows(text) == [(34860, 11100, "s")]


def test_two_output_lines_alike_but_a_setting_switched_off_and_on():
    text = """This series enables jcsum (journal checksums) by default. The cost:

meta-data=/dev/vdb  isize=512  agcount=4, crc=1, jcsum=0
real    0m41.200s

meta-data=/dev/vdb  isize=512  agcount=4, crc=1, jcsum=1
real    0m43.900s
"""
    assert _rows(text) == [(41.2, 43.9, "s")]
    assert _rows(text.replace("enables jcsum (journal checksums)", "keeps the defaults")) == []


def test_labels_of_a_setting_switched_off_and_on_that_the_subject_names():
    text = """Sequential reads, 3 runs each:

iostats=0:
  seq read:   2250 MB/s
iostats=1:
  seq read:   2.1 GB/s
"""
    assert _rows(text, "[PATCH] nvme: make iostats=1 cheaper") == [(2250, 2100, "MB/s")]


def test_banners_naming_an_option_and_its_no_option_the_subject_names_the_on_one_first():
    text = """Fragmented free space:

===== discard =====
  write: IOPS=330k, BW=1289MiB/s (1352MB/s)(75.5GiB/60001msec)
===== nodiscard =====
  write: IOPS=410k, BW=1602MiB/s (1680MB/s)(93.9GiB/60001msec)
"""
    assert _rows(text, "[PATCH] btrfs: turn on async discard by default") == [(410000, 330000, "IOPS"),
                                                                              (1602, 1289, "MiB/s")]
    assert _rows(text, "[PATCH] btrfs: fix a leak in the free space cache") == []


def test_a_side_then_a_comma_then_its_output_on_one_line():
    text = """Random writes, 8 jobs:
without the series， IOPS=141k, BW=551MiB/s (578MB/s)(64.6GiB/120001msec)
with the series,  IOPS=163k, BW=637MiB/s (668MB/s)(74.6GiB/120001msec)
"""
    assert _rows(text) == [(141000, 163000, "IOPS"), (551, 637, "MiB/s")]


def test_a_rule_under_a_tables_header_is_no_banner_that_ends_the_side():
    side = """
 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 Create       {c}     0.041    12.500

Throughput {t} MB/sec  8 clients  8 procs  max_latency=12.512 ms
"""
    text = "dbench on the stock and the patched kernel.\n\nStock kernel:\n" + \
        side.format(c=500100, t="401.25") + "\nPatched kernel:\n" + side.format(c=610200, t="488.5")
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(401.25, 488.5, "MB/s")]


def test_runs_between_rules_that_name_nothing_are_no_sides_in_their_order():
    run = """{name}
{rule}

$ setpolicy /mnt {name} && run

 READ: bw={bw}MiB/s ({bw}MB/s), {bw}MiB/s-{bw}MiB/s ({bw}MB/s-{bw}MB/s), io=5.3GiB (5.7GB), run=60001-60001msec

"""
    text = "Each read policy on two mirrors:\n\n---------- 8< ----------\n\n" + run.format(name="legacy", rule="----", bw="90.5") + \
        run.format(name="balanced", rule="----------", bw="72.1") + "mirror3\n=======\n\n" + \
        run.format(name="legacy", rule="----", bw="88.0") + run.format(name="balanced", rule="----------", bw="60.2")
    assert "-" not in [s.name for s in segments(text.splitlines())]  # a rule opens no side of its own
    assert claims(text, "[PATCH 0/2] mnt: a balanced read policy") == []


def test_a_label_that_opens_with_a_count_then_names_its_side():
    for opening in ("8 jobs, before patchset", "4 threads, without the series", "2 clients, baseline"):
        after = opening.replace("before", "after").replace("without", "with").replace("baseline", "patched")
        run = "{}:\n\nseq: (groupid=0, jobs=8): err= 0: pid=1201\n  write: IOPS={}k, BW={}MiB/s (430MB/s)\n\n"
        text = "Sequential writes, a run each.\n\n" + run.format(opening, "102", "410") + run.format(after, "128", "515")
        assert _rows(text) == [(102000, 128000, "IOPS"), (410, 515, "MiB/s")], opening


def test_dbench_runs_a_side_each_claim_each_runs_throughput():
    side = """{n} clients, {side} the patch set:

 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 Create       {c}     0.041    12.500

Throughput {t} MB/sec  {n} clients  {n} procs  max_latency=12.512 ms
"""
    text = "dbench, before and after.\n\n" + "\n".join(
        side.format(n=n, side=s, c=c, t=t) for n, s, c, t in
        ((8, "before", 500100, "401.25"), (8, "after", 610200, "488.5"), (16, "before", 700100, "650.0"),
         (16, "after", 810200, "701.5")))
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(401.25, 488.5, "MB/s"), (650.0, 701.5, "MB/s")]


def test_a_rate_in_words_and_the_cpu_a_run_took_under_each_side():
    text = """An echo server, 16 threads.

Stock kernel:
{rate}
~{cpu}% CPU

Patched kernel:
{rate2}
~{cpu2}% CPU
"""
    for rate, rate2, unit in (("801200.50 requests per second", "955000.00 requests per second", "req/s"),
                              ("Transactions per second: 1200", "Transactions per second: 1500", "tps"),
                              ("52000 msgs per sec", "61000 msgs per sec", "msgs/s")):
        found = claims(text.format(rate=rate, cpu=1500, rate2=rate2, cpu2=1200))
        assert [(c.unit, c.better) for c in found] == [(unit, "higher"), ("%", "lower")], rate
        assert [c.before < c.after for c in found] == [True, False]


def test_a_cpu_share_alone_on_its_line_in_its_common_shapes():
    for before, after in (("CPU usage: 82%", "CPU usage: 52%"), ("CPU\t~82%", "CPU\t~52%"), ("82%CPU", "52%CPU")):
        text = f"Buffered reads.\n\nBefore:\n  read: 410 MB/s\n  {before}\n\nAfter:\n  read: 620 MB/s\n  {after}\n"
        assert _rows(text) == [(410, 620, "MB/s"), (82, 52, "%")], before


def test_a_caption_naming_its_side_then_its_runs_settings():
    for before, after in (("current master, rw=randwrite, numjobs=8", "this patchset, rw=randwrite, numjobs=8"),
                          ("without the fix, rw=randwrite iodepth=32", "with the fix, rw=randwrite iodepth=32"),
                          ("v6.8 stock, qd=64", "v6.8 + series, qd=64")):
        text = f"""Random writes, one run a case.

{before}

  4k  IOPS=92.7k, BW=362MiB/s, Lat=11.03msec
 64k  IOPS=34.0k, BW=2186MiB/s, Lat=29.23msec

{after}

  4k  IOPS=94.7k, BW=370MiB/s, Lat=10802.43usec
 64k  IOPS=40.9k, BW=2554MiB/s, Lat=24.99msec
"""
        assert _rows(text) == [(92700, 94700, "IOPS"), (362, 370, "MiB/s"), (11.03, 10.8, "ms"),
                               (34000, 40900, "IOPS"), (2186, 2554, "MiB/s"), (29.23, 24.99, "ms")], before


def test_the_cases_of_two_captioned_sides_pair_with_their_twins():
    case = "{side}, rw={rw}, numjobs=32\n\n  4k  IOPS={iops}k, BW={bw}MiB/s\n\n"
    text = "=== WRITE ===\n\n" + case.format(side="current master", rw="randwrite", iops="92.7", bw="362") + \
        case.format(side="this patchset", rw="randwrite", iops="94.7", bw="370") + "=== READ ===\n\n" + \
        case.format(side="current master", rw="randread", iops="62.5", bw="244") + \
        case.format(side="this patchset", rw="randread", iops="62.6", bw="245")
    assert _rows(text) == [(92700, 94700, "IOPS"), (362, 370, "MiB/s"), (62500, 62600, "IOPS"), (244, 245, "MiB/s")]


def test_the_befores_of_several_cases_then_their_afters_pair_by_case():
    for first, second in (("", "bind node "), ("4k ", "64k "), ("cold cache, ", "hot cache, ")):
        text = f"""Random reads:

arm64 box:
{first}before this patchset:   3.2 GiB/s
{second}before this patchset: 6.9 GiB/s
{first}after this patchset:    7.9 GiB/s
{second}after this patchset:  8.0 GiB/s

x86 box:
{first}before this patchset:   7.0 GiB/s
{first}after this patchset:    9.3 GiB/s
"""
        assert _rows(text) == [(3.2, 7.9, "GiB/s"), (6.9, 8.0, "GiB/s"), (7.0, 9.3, "GiB/s")], second


def test_a_caption_naming_no_side_over_what_the_named_after_side_shows():
    for caption, after in (("The submission time is much worse for the tail:", "After this fix, the timings are:"),
                           ("Reading the whole file takes:", "With the patch applied it takes:"),
                           ("On the current tree a million opens take:", "With this series:")):
        text = f"""Opening files in a loop.

{caption}

  open to the start of the file: 11238 ns
  open to the end of the file:   1039879 ns

That is two orders of magnitude, because the walk starts at the first page every time.
{after}

  open to the start of the file: 10135 ns
  open to the end of the file:   1377 ns
"""
        assert _rows(text) == [(11238, 10135, "ns"), (1039879, 1377, "ns")], caption


def test_a_reproducers_session_under_an_unnamed_caption_is_no_before_side():
    text = """Running this reproducer:

  $ ./test.sh
  1 MiB, 256 ops; 0.0008 sec (1.188 GiB/sec and 311435.5231 ops/sec)

After this change the test passes:

  $ ./test.sh
  1 MiB, 256 ops; 0.0007 sec (1.262 GiB/sec and 330749.3540 ops/sec)
"""
    assert _rows(text) == []


def test_two_headings_of_a_setting_the_subject_names_are_its_sides():
    runs = """{head}
I ran each case 3 times and give the average.

1) Sequential read:
Speed: {a}MiB/s, {a}MiB/s, {a}MiB/s
Average speed: {a}MiB/s
"""
    subject = "[PATCH] mmc: block: add a cache_flush option"
    for off, on in (("2. cache_flush = 0 (default 0)", "1. cache_flush = 1"), ("cache_flush=off:", "cache_flush=on:"),
                    ("1) cache_flush = 0", "2) cache_flush = 1")):
        text = "Tested with dd.\n\n" + runs.format(head=on, a="265.5") + "\n" + runs.format(head=off, a="257.5")
        assert _rows(text, subject) == [(257.5, 265.5, "MiB/s")], off
        assert _rows(text, "[PATCH] mmc: block: fix a hang") == []  # modes of one kernel: no side


def test_with_a_feature_disabled_against_with_it_enabled():
    from iolab.mail.claimed.naming import side_of
    assert [side_of(n) for n in ("With async dirops disabled", "with the cache turned off", "With polling off",
                                 "With async dirops enabled")] == ["before", "before", "before", "after"]
    text = """Creating 10000 files:

With write batching disabled:

real\t0m9.865s

With write batching enabled:

real\t0m5.272s
"""
    assert _rows(text) == [(9.87, 5.27, "s")]


def test_a_script_cut_out_between_scissors_ends_at_the_closing_scissors():
    text = """The test:

-------------------8<-------------------
#!/bin/sh
for i in `seq 1 10000`; do
    echo "foo" > $DIR/$i
done
-------------------8<-------------------

Stock:

real\t0m9.865s

Patched:

real\t0m5.272s
"""
    assert _rows(text) == [(9.87, 5.27, "s")]


def test_a_rate_in_words_keyed_and_followed_or_named_by_its_key_alone():
    text = "Key-value store throughput.\n\nBefore:\n{a}\n{b}\n\nAfter:\n{c}\n{d}\n"
    for a, b, c, d, rows in (
            ("PUT: 41000.50 requests per second, p99=1.2 msec", "DEL: 52000.00 requests per second (avg 0.1 ms)",
             "PUT: 45000.00 requests per second, p99=1.1 msec", "DEL: 57000.25 requests per second (avg 0.1 ms)",
             [(41000.5, 45000.0, "req/s"), (52000.0, 57000.25, "req/s")]),
            ("Ops/sec:    9100.10", "Transfer/sec:    2.50MB", "Ops/sec:   12000.40", "Transfer/sec:    3.10MB",
             [(9100.1, 12000.4, "ops/s"), (2.5, 3.1, "MB/s")]),
            ("Writes/s = 310", "Throughput/sec: 1.5GiB", "Writes/s = 420", "Throughput/sec: 1.9GiB",
             [(310, 420, "writes/s"), (1.5, 1.9, "GiB/s")])):
        assert _rows(text.format(a=a, b=b, c=c, d=d)) == rows, a


def test_fio_latency_lines_each_led_by_its_case_pair_by_case():
    text = "Random reads by queue depth.\n\nBefore:\n{a}\n{b}\n\nAfter:\n{c}\n{d}\n"
    lines = ("  1     lat (usec): min=5, max=900, avg={x}, stdev=3.1", "  8     lat (usec): min=6, max=950, avg={y}, stdev=4.2")
    rows = _rows(text.format(a=lines[0].format(x=12.5), b=lines[1].format(y=40.25), c=lines[0].format(x=10.5),
                             d=lines[1].format(y=30.75)))
    assert rows == [(12.5, 10.5, "us"), (40.25, 30.75, "us")]
    named = "{0}  clat (nsec): min=500, max=9000, avg={1}, stdev=10.0"
    rows = _rows(text.format(a=named.format("randread", 900), b=named.format("seqread", 700),
                             c=named.format("randread", 800), d=named.format("seqread", 650)))
    assert rows == [(900, 800, "ns"), (700, 650, "ns")]


def test_a_side_said_by_previously_or_formerly():
    text = "Sequential reads on the array.\n\n{0}\n\nread: IOPS=41.5k, BW=162MiB/s\n\n{1}\n\nread: IOPS=47.0k, BW=184MiB/s\n"
    for first, second in (("Previously we got:", "With the change:"), ("The kernel formerly scored:", "Patched:"),
                          ("and after the fix:", "Previously:")):
        rows = _rows(text.format(first, second))
        assert rows[:1] == ([(41500, 47000, "IOPS")] if first[0] != "a" else [(47000, 41500, "IOPS")]), first


def test_a_runs_share_named_by_the_words_after_it():
    for before, after, name in (("about 30% system load", "about  5% system load", "system load"),
                                ("~42% CPU utilization", "~17% CPU utilization", "CPU utilization"),
                                ("12.5% user CPU", "9% user CPU", "user CPU")):
        text = f"Copying the tree.\n\n    Without the patch: {before}\n    With the patch:    {after}\n"
        assert [(c.label, c.unit, c.better) for c in claims(text)] == [(name, "%", "lower")], before
    assert all(c.unit != "%" for c in claims("Copying.\n\nBefore: 30% CPU load of 4\nAfter: 5% CPU load of 4\n"))
