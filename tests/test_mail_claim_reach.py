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


