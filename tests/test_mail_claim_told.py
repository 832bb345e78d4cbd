"""A numbered side told in a sentence before its figures, and a side's samples under their stated average
(iolab.mail.claimed.told)."""

from iolab.mail.claimed import claims


def _rows(text: str) -> list[tuple[str, float, float, str]]:
    return [(c.label, round(c.before, 2), round(c.after, 2), c.unit) for c in claims(text, "")]


def test_a_numbered_side_with_a_sentence_under_it_and_each_case_by_its_stated_average():
    text = """Throughput of the cache device, in MB/s.

1. Without the write-back change
Each case was run four times and the mean is shown below.

a) Small writes:
Rate: 101MB/s, 99MB/s, 97MB/s, 103MB/s
Mean rate: 100MB/s

b) Large writes:
Rate: 410MB/s, 390MB/s, 400MB/s, 400MB/s
Mean rate: 400MB/s

2. With the write-back change
Each case was run four times and the mean is shown below.

a) Small writes:
Rate: 121MB/s, 119MB/s, 117MB/s, 123MB/s
Mean rate: 120MB/s

b) Large writes:
Rate: 450MB/s, 430MB/s, 440MB/s, 440MB/s
Mean rate: 440MB/s
"""
    assert [r[1:] for r in _rows(text)] == [(100, 120, "MB/s"), (400, 440, "MB/s")]
