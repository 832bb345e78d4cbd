"""Figures a tool prints as named values, pasted a side each (iolab.mail.claimed.named)."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.named import named_values
from iolab.mail.claimed.outputs import line_figures


def _rows(text: str) -> list[tuple[float, float, str]]:
    return [(c.before, c.after, c.unit) for c in claims(text)]


def test_a_line_of_named_values_keys_each_by_its_name():
    found = named_values("conns=64 (sent=1234567), qps=81234 (KB/s=40617)")
    assert found == [("qps", 81234, ("queries/s", "rate", "higher")), ("KB/s", 40617, ("KB/s", "bandwidth", "higher"))]


def test_a_value_written_with_its_unit_and_a_thousands_suffix():
    found = named_values("server: rps:97.5k Bps:  3.2M")
    assert [(k, v, u[0]) for k, v, u in found or []] == [("rps", 97500, "req/s"), ("Bps", 3.2e6, "B/s")]


def test_a_time_is_a_figure_only_where_its_name_names_a_measure():
    assert named_values("timeout=30 sec, retries=3") is None  # a setting's time and a count: no figure
    assert named_values("warmup=5s ramp=10s") is None
    found = named_values("latency=350us ops=1200/s")
    assert [(k, u[0]) for k, _, u in found or []] == [("latency", "us")]


def test_a_line_with_a_figure_outside_its_tokens_is_not_such_a_line():
    assert named_values("8 threads: read=120MB/s write=80MB/s") is None  # "8 threads": the words' reader's


def test_the_same_name_twice_or_a_side_named_is_not_one_run():
    assert named_values("seq  BW=410MB/s  BW=530MB/s") is None  # two columns
    assert named_values("stock: 910MB/s, patched: 1040MB/s") is None  # two sides on a line: the clauses' reader's


def test_a_setting_names_the_figures_after_it():
    found = named_values("rw=randwrite bs=16k   IOPS=7.1k, BW=111MiB/s")
    assert [k for k, _, _ in found or []] == ["rw=randwrite bs=16k IOPS", "rw=randwrite bs=16k BW"]


def test_a_sysfs_file_and_its_value():
    found = named_values("/sys/fs/xfs/sdb1/stats/flush_wait_time_us:812")
    assert found == [("flush_wait_time_us", 812, ("us", "time", "lower"))]
    assert named_values("/sys/block/sdb/queue/io_poll_delay_us = 5") is None  # written, not read: a setting


def test_the_words_reading_is_kept_where_it_reads_a_figure():
    figures = line_figures("Throughput: 900 MB/s in 12 s")
    assert [f.key for f in figures] != []  # not a line of named values: read as before
    assert [(f.key, f.value) for f in line_figures("bs=16k   IOPS=7.1k, BW=111MiB/s")] == \
        [("bs=16k IOPS", 7100), ("bs=16k BW", 111)]


def test_runs_per_side_of_named_values_pair_by_name():
    text = """Results, three runs each.

Before:
  qps=80100 (KB/s=40050)
  qps=80300 (KB/s=40150)
After:
  qps=90100 (KB/s=45050)
  qps=90300 (KB/s=45150)
"""
    assert _rows(text) == [(80200, 90200, "queries/s"), (40100, 45100, "KB/s")]


def test_sysfs_values_per_side_pair_by_file():
    text = """The flush wait drops with the patch.

Before:
/sys/fs/xfs/sdb1/stats/flush_wait_time_us:812
/sys/fs/xfs/sdb1/stats/flush_wait_count:40

After:
/sys/fs/xfs/sdb1/stats/flush_wait_time_us:301
/sys/fs/xfs/sdb1/stats/flush_wait_count:40
"""
    assert _rows(text) == [(812, 301, "us")]


def test_settings_rows_per_side_pair_by_setting():
    text = """fio randwrite, direct=1, a run per block size.

Without the patch:
bs=4k      IOPS=10.5k, BW=41.0MiB/s
bs=64k     IOPS=9.8k, BW=612MiB/s

With the patch:
bs=4k      IOPS=20.1k, BW=78.5MiB/s
bs=64k     IOPS=12.0k, BW=750MiB/s
"""
    assert _rows(text) == [(10500, 20100, "IOPS"), (41.0, 78.5, "MiB/s"), (9800, 12000, "IOPS"), (612, 750, "MiB/s")]
