"""Prose pairs in their common shapes (iolab.mail.claimed.prose): the unit a pair's sentence names
on the lines above it or, for thousands, after it; the after side first with "rather than"; things
done a second; a side said by its tense."""

from iolab.mail.claimed import claims


def _rows(text: str) -> list[tuple[float, float, str]]:
    return [(c.before, c.after, c.unit) for c in claims(text)]


def test_a_pairs_unit_named_by_its_sentence_on_the_line_above():
    assert _rows("With the batched submission we see IOPS go\nfrom 410K to 520K.") == [(410000, 520000, "IOPS")]
    assert _rows("On the slow disk the sequential read bandwidth, in MB/s, moves\nfrom 95 to 130 with it.") == \
        [(95, 130, "MB/s")]


def test_thousands_take_the_rate_their_sentence_names_after_them():
    assert _rows("Random writes go from 210K to 330K, close to the 350K IOPS the raw device gives.") == \
        [(210000, 330000, "IOPS")]
    assert _rows("Lookups go from 90k to 140k; the cache holds 2k entries.") == []  # no rate named: no unit
    assert _rows("Streams went from 3M to 5M, each of 10 seconds.") == []  # a time is no unit of thousands


def test_the_after_side_first_with_rather_than():
    assert _rows("The profile now shows spin_lock() at ~4% rather than ~35% of the cycles.") == [(35, 4, "%")]
    assert _rows("We keep 40 ms rather than 90 ms of slack.")[0][:2] == (90, 40)


def test_a_share_rather_than_another_is_a_pair_only_where_it_is_a_profiles():
    assert _rows("with huge pages the tables cost 0.4% instead of 1.6% of total memory") == []
    assert _rows("The speedup is -12% instead of -30% on this box.") == []


def test_things_done_a_second_that_no_unit_names():
    assert _rows("Creation throughput went from 9k creates/s to 36k\ncreates/s.") == [(9000, 36000, "creates/s")]
    assert [(c.unit, c.better) for c in claims("unlinks improve from 1200 unlinks/sec to 2100 unlinks/sec")] == \
        [("unlinks/s", "higher")]


def test_a_side_said_by_its_tense():
    assert _rows("The copy was 12.5s, now it is 8.1s.") == [(12.5, 8.1, "s")]
    assert _rows("The lock hold time was about 80 us and now about 20 us.") == [(80, 20, "us")]


def test_a_clause_that_names_its_side_between_its_measure_and_its_figure():
    assert _rows("The peak IOPS for this patch is 314K, while the old one is 249K.") == [(249000, 314000, "IOPS")]
    assert _rows("Read latency with the fix is 80 us while with the baseline it was 120 us.") == [(120, 80, "us")]
    assert _rows("Throughput on the patched kernel reaches 2.1 GB/s; on the stock kernel it is 1.6 GB/s.") == \
        [(1.6, 2.1, "GB/s")]
    assert _rows("Throughput with 4 jobs is 2.1 GB/s, and with 8 jobs it is 2.6 GB/s.") == []  # no side named


def test_runs_of_figures_either_side_of_an_arrow_pair_by_place():
    assert _rows("Walk latency per size:\n  64k: 5.10ns  5.40ns  7.20ns -> 4.90ns  5.60ns  7.00ns\n") == \
        [(5.10, 4.90, "ns"), (5.40, 5.60, "ns"), (7.20, 7.00, "ns")]
    assert _rows("Read latency p50, p99, p999: 10, 20, 30 us -> 8, 15, 25 us with the patch.") == \
        [(10, 8, "us"), (20, 15, "us"), (30, 25, "us")]
    assert _rows("seq write, 1 and 4 streams: 410 MB/s 900 MB/s => 450 MB/s 1210 MB/s") == \
        [(410, 450, "MB/s"), (900, 1210, "MB/s")]


def test_runs_of_unequal_length_or_without_a_unit_are_no_places():
    assert _rows("queue depths 1 2 4 -> 8 16 32 were tried") == []
    assert (5.1, 4.9, "ns") not in _rows("sizes: 5.10ns 5.40ns -> 4.90ns")


def test_one_figure_said_of_both_sides_is_a_pair_of_no_change():
    assert _rows("Result without and with this patch: 555 K IOPS.") == [(555000, 555000, "IOPS")]
    assert _rows("Sequential reads before and after the series: about 1.2 GB/s") == [(1.2, 1.2, "GB/s")]
    assert _rows("Latency with and without the fix: 80 usec") == [(80, 80, "us")]
    assert _rows("Before and after: 10 MB/s -> 20 MB/s") == [(10, 20, "MB/s")]  # two figures: the pair's
    assert _rows("before and after: 5 / 6 ms") == []
