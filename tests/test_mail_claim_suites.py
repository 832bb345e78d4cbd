"""The result lines of benchmark suites pasted per side (iolab.mail.claimed.suites, outputs)."""

from iolab.mail.claimed import claims
from iolab.mail.claimed.outputs import line_figures


def _figures(line: str) -> list[tuple[str, float, str]]:
    return [(f.key, f.value, f.unit[0]) for f in line_figures(line)]


def test_filebench_io_summary_in_both_versions():
    assert _figures("58.3: IO Summary: 2741201 ops 45683.2 ops/s 4153/8306 rd/wr 712.4mb/s 1.212ms/op") == \
        [("IO Summary ops/s", 45683.2, "ops/s"), ("IO Summary MB/s", 712.4, "MB/s"), ("IO Summary latency", 1.212, "ms")]
    assert _figures(" 60.1: IO Summary: 901233 ops, 15020.500 ops/s, (1365/2731 r/w), 95.0mb/s, 410us cpu/op, 4.8ms latency") \
        == [("IO Summary ops/s", 15020.5, "ops/s"), ("IO Summary MB/s", 95.0, "MB/s"), ("IO Summary latency", 4.8, "ms")]


def test_unixbench_results_and_score_keyed_by_test():
    assert _figures("Dhrystone 2 using register variables       38109127.3 lps   (10.0 s, 7 samples)") == \
        [("Dhrystone 2 using register variables", 38109127.3, "lps")]
    assert _figures("Shell Scripts (8 concurrent)                    4120.9 lpm   (60.0 s, 2 samples)") == \
        [("Shell Scripts (8 concurrent)", 4120.9, "lpm")]
    assert _figures("System Benchmarks Index Score                                         2205.1") == \
        [("System Benchmarks Index Score", 2205.1, "index")]


def test_stress_ng_metrics_row_with_its_newer_columns():
    row = "stress-ng: metrc: [4120] iomix           815022     60.00     12.31     41.07     13583.57      15268.39        22.24       8364"
    assert _figures(row) == [("iomix bogo ops/s", 13583.57, "ops/s")]


def test_a_suites_result_under_each_side_pairs_by_test():
    text = """UnixBench, one copy.

Before:
File Copy 4096 bufsize 8000 maxblocks       1712330.0 KBps  (30.0 s, 2 samples)
System Benchmarks Index Score                                         1801.4

After:
File Copy 4096 bufsize 8000 maxblocks       1901452.5 KBps  (30.0 s, 2 samples)
System Benchmarks Index Score                                         1893.2
"""
    assert [(c.before, c.after, c.unit, c.better) for c in claims(text)] == \
        [(1712330.0, 1901452.5, "KB/s", "higher"), (1801.4, 1893.2, "index", "higher")]
