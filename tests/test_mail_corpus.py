"""The claim reader measured on the labelled corpus of real list mails
(tests/corpus/): on each split, at least 90% of the labelled before/after
rows are read with their values and direction, and at least 90% of the rows
it returns are labelled ones (issue 36). bench/mail_corpus.py prints the
figures per split and per form."""

import pytest

from iolab.mail.claimed import Claim
from tests import mail_corpus_score as corpus
from tests.corpus import loader

GOAL = 0.90


TUNE_SHORT = pytest.mark.xfail(strict=True, reason=(
    "tune is samples 1-11 (757 mails, 3716 rows) since sample 11 was measured once held out (52.0%/81.2% at "
    "3e7c7f0) and moved to tune: recall 2522/3716 67.9%, precision 2522/2793 90.3% at that move (2026-11-29); "
    "remove this mark when the goal holds"))

# what the reader reads now: a change that reads less fails here (raise these as it improves)
FLOOR = {"tune": (2522, 0.90)}
# of the rows read, how many carry the label's better way (higher or lower): a change that loses a row's way fails
BETTER = {"tune": 2393}


HELD_OUT_SHORT = pytest.mark.xfail(strict=True, reason=(
    "held_out is every mail gathered after sample 11 (sample 12 on), labelled apart from the reader's work and "
    "measured once when it comes in; samples 1-13 were each measured once so (26.7%/55.0%, 42.1%/72.7%, "
    "18.8%/69.4%, 38.6%/35.1%, 39.4%/56.6%, 16.0%/32.1%, 26.2%/35.6%, 30.2%/66.7%, 31.5%/63.4%, "
    "45.1%/66.7%, 52.0%/81.2%, 29.3%/58.1%, 29.8%/54.8% recall/precision): below the goal; remove this mark "
    "when it holds"))


@pytest.mark.parametrize("split", [pytest.param("tune", marks=TUNE_SHORT),
                                   pytest.param("held_out", marks=HELD_OUT_SHORT)])
def test_recall_and_precision_on_each_split(split):
    found = corpus.scores(split)
    if not found:
        pytest.skip(f"{split}: no mail in this part yet (the next sample is being gathered)")
    tally = corpus.total(found)
    assert tally.labelled >= 20, f"{split}: only {tally.labelled} labelled rows"
    missed = [f"{item.slug}: {row.label} {row.before} -> {row.after}" for item in found for row in item.missed]
    wrong = [f"{item.slug}: {c.label} {c.before:g} -> {c.after:g}" for item in found for c in item.wrong]
    assert tally.recall >= GOAL, f"{split}: recall {tally.found}/{tally.labelled}; missed: {missed}"
    assert tally.precision >= GOAL, f"{split}: precision {tally.real}/{tally.returned}; wrong: {wrong}"


@pytest.mark.parametrize("split", sorted(FLOOR))
def test_the_reader_reads_no_less_than_it_did(split):
    rows, precision = FLOOR[split]
    tally = corpus.total(corpus.scores(split))
    assert tally.found >= rows, f"{split}: {tally.found} rows read, was {rows}"
    assert tally.precision >= precision, f"{split}: precision {tally.precision:.3f}, was at least {precision}"
    assert tally.better >= BETTER.get(split, 0), f"{split}: {tally.better} rows with the label's better way"


def _row(before, after, unit, before_unit=None):
    return loader.Claim("x", before, after, unit, "higher", "line", before_unit=before_unit)


def _claim(before, after, unit):
    return Claim("x", before, after, unit, "rate", "higher")


@pytest.mark.parametrize("row, claim, same", [
    (_row(562, 574, "K IOPS"), _claim(562e3, 574e3, "IOPS"), True),  # the label keeps the multiplier in its unit
    (_row(9840.65, 11.03, "usec", "nsec"), _claim(9840.65, 11030, "ns"), True),  # fio's units differ per side
    (_row(4994, 5762, "MiB/s"), _claim(5762, 4994, "MiB/s"), False),  # the other direction
    (_row(4994, 5762, "MiB/s"), _claim(5236, 6042, "MB/s"), True),  # the same figures in fio's other unit
    (_row(4994, 5762, "MiB/s"), _claim(4994, 5800, "MiB/s"), False),  # another after
    (_row(750, 750, "MB/s"), _claim(750, 750, "MB/s"), True),
    # a mean the labeller computed is written rounded; a figure the mail prints is not
    (loader.Claim("x", 55.83, 0.36, "%", "lower", "l", aggregate="mean"), _claim(55.8289, 0.363636, "%"), True),
    (loader.Claim("x", 55.83, 0.36, "%", "lower", "l", aggregate="mean"), _claim(55.8289, 0.366, "%"), False),
    (_row(55.83, 0.36, "%"), _claim(55.8289, 0.363636, "%"), False),
])
def test_a_row_matches_by_its_values_in_their_order(row, claim, same):
    assert corpus.matches(row, claim) is same
