"""The learned confidence of a claim row, tried as a filter and not taken (bench/mail_confidence.py,
docs/claims.md): the features of rows written here, the threshold's choice, the model's odds, and the
scorer's matching that the bench shares with tests/mail_corpus_score.py."""

import math

import pytest

from bench import claim_features as features
from bench import mail_confidence as bench
from iolab.mail.claimed import Claim, claims
from iolab.mail.message import Mail, Patch
from tests import mail_corpus_score as corpus
from tests.corpus import loader

COVER = """\
Hi,

This series makes buffered reads faster.

Results on an NVMe drive (fio, 4k):

  test        base      patched
  randread    410 MB/s  520 MB/s  +26.8%
  seqread     900 MB/s  905 MB/s  +0.6%
"""

BODY = """\
The lock is taken once per batch now.

Before: 12.5 ms
After:  10.0 ms
"""


def _mail(cover: str | None = COVER, body: str = BODY) -> Mail:
    patch = Patch("[PATCH 1/1] mm: take the lock once", "mm: take the lock once", 1, 1, 1, None, None, None,
                  body, "")
    return Mail("buffered reads", None, None, None, cover, (patch,))


def _row(label: str, before: float, after: float, source: str, **kw: object) -> Claim:
    given = {"unit": "MB/s", "kind": "bandwidth", "better": "higher", "form": "columns", "sides": "names"}
    given.update(kw)
    return Claim(label, before, after, source=source, **given)  # type: ignore[arg-type]


def test_a_table_rows_features_name_its_form_way_change_and_place():
    rows = [_row("randread", 410, 520, "  randread    410 MB/s  520 MB/s  +26.8%", stated="+26.8%"),
            _row("seqread", 900, 905, "  seqread     900 MB/s  905 MB/s  +0.6%", stated="+0.6%")]
    ctx = features.context(_mail(), rows)
    names = features.features(rows[0], ctx)
    for want in ("form:columns", "sides:names", "form_sides:columns/names", "kind:bandwidth", "unit:written",
                 "better:unit", "moves:better", "stated:agrees", "change:<0.3", "figures:whole", "size:<3",
                 "place:cover", "parts:one", "block_rows:<4", "label:randread", "head:test", "head:base",
                 "head:patched", "mail_rows:<4", "mail_better:all", "mail_stated:all", "text:improves",
                 "label_repeats:<2"):
        assert want in names, want
    # the header is the block's first line, the caption the nearest line of words above the block
    assert "head:results" in names and "head:nvme" in names and "head:series" not in names
    assert "line:not_found" not in names
    assert "change:<0.02" in features.features(rows[1], ctx)  # +0.6%


def test_per_side_lines_in_a_patch_and_a_way_from_words():
    row = _row("time", 12.5, 10.0, "Before: 12.5 ms / After:  10.0 ms", unit="ms", kind="time", better="lower",
               form="sides", sides="")
    names = features.features(row, features.context(_mail(), [row]))
    for want in ("form:sides", "sides:rule", "parts:two", "apart:<2", "place:patch", "better:unit", "moves:better",
                 "stated:none", "figures:fraction"):
        assert want in names, want
    worded = _row("faults", 300, 200, "Before: 12.5 ms / After:  10.0 ms", unit="", kind="count", better="lower")
    assert {"better:words", "unit:none", "kind:count"} <= set(features.features(worded, features.context(
        _mail(), [worded])))


def test_a_row_whose_line_is_not_in_the_mail_and_a_zero_side():
    row = _row("x", 0, 5, "nowhere to be found", better=None, stated="")
    names = features.features(row, features.context(_mail(cover=None), [row]))
    assert {"line:not_found", "change:zero_side", "better:none", "mail_better:empty"} <= set(names)
    assert not any(n.startswith(("place:", "head:")) for n in names)


def test_the_reader_s_own_rows_are_described_without_a_figure_of_the_mail():
    text = "Before: 1200 MB/s\nAfter: 1500 MB/s\n"
    found = claims(text)
    assert found, "the reader reads this pair"
    names = features.features(found[0], features.context(_mail(cover=text, body=""), found))
    assert not any(any(ch.isdigit() for ch in n.partition(":")[2].lstrip("<>=")) and n.partition(":")[2][:1]
                   not in "<>" for n in names if not n.startswith(("label:", "head:"))), names
    assert not any(d in n for n in names for d in ("1200", "1500"))


def test_the_model_s_odds_count_each_feature_once():
    model = features.Model({"a": 1.0, "b": -2.0}, 0.5, 0.3)
    assert model.confidence(["a", "a", "c"]) == pytest.approx(1 / (1 + math.exp(-1.5)))
    assert model.confidence(["b"]) == pytest.approx(1 / (1 + math.exp(1.5)))
    assert features.Model({"a": -1000.0}, 0.0, 0.0).confidence(["a"]) == 0.0


def test_the_threshold_drops_wrong_rows_only_where_they_pay_twice_over():
    # two wrong rows under one real one: dropping the three gains 2 - 2 = 0, dropping the two gains 2
    scored = [(0.1, False), (0.2, False), (0.3, True), (0.6, True), (0.9, True)]
    assert bench.choose(scored) == pytest.approx(0.25)
    assert bench.choose([(0.1, True), (0.2, False), (0.9, True)]) == 0.0  # nothing gains: no filter
    # rows of one confidence go together: a real row tied with a wrong one is not split from it
    assert bench.choose([(0.1, False), (0.1, True), (0.9, True)]) == 0.0


def _mails(*marks: tuple[str, tuple[tuple[str, ...], ...], tuple[bool, ...]]) -> list[bench.MailRows]:
    return [bench.MailRows(f"m{k}", sample, (), tuple(_row("x", 1, 2, "") for _ in names), names, real)
            for k, (sample, names, real) in enumerate(marks)]


def test_words_are_features_only_where_enough_mails_use_them():
    many = _mails(*[("s1", (("form:x", "label:common", f"label:rare{k}"),), (True,)) for k in range(bench.MIN_MAILS)])
    names = bench.vocabulary(many)
    assert "label:common" in names and "form:x" in names
    assert not any(n.startswith("label:rare") for n in names)
    assert bench.vocabulary(many, cap=0) == ["form:x"]


def test_fitting_is_deterministic_and_learns_the_mark():
    pytest.importorskip("sklearn")
    rows = [("s1" if k % 2 else "s2", (("form:a",) if k % 3 else ("form:b", "unit:none"),),
             (bool(k % 3),)) for k in range(60)]
    first, again = bench.fit(_mails(*rows)), bench.fit(_mails(*rows))
    assert first == again
    assert first.confidence(["form:a"]) > 0.5 > first.confidence(["form:b", "unit:none"])


def test_matching_is_greedy_in_the_labels_order():
    label = loader.Claim("x", 1.0, 2.0, "MB/s", "higher", "line")
    found = [_row("a", 3, 4, ""), _row("b", 1, 2, ""), _row("c", 1, 2, "")]
    assert corpus.matched((label, label, label), found) == [1, 2, None]


def _fixed_since() -> tuple[list[bench.MailRows], list[bench.MailRows]]:
    """Today's rows of form b are real (the rules fixed them), the first-sight rows of form b wrong."""
    today = _mails(*[(f"s{k % 3}", (("form:a",), ("form:b",)), (True, True)) for k in range(30)])
    seen = _mails(*[(f"s{k % 3}", (("form:a",), ("form:b",), ("form:b",)), (True, False, False)) for k in range(30)])
    return today, seen


def test_the_first_sight_bench_chooses_its_threshold_on_first_sight_rows():
    pytest.importorskip("sklearn")
    from bench import mail_confidence_first as first

    model = first.train(*_fixed_since())
    assert model.confidence(["form:b"]) < model.threshold <= model.confidence(["form:a"])


def test_a_saved_model_is_the_one_trained(tmp_path, capsys):
    pytest.importorskip("sklearn")
    from bench import mail_confidence_first as first

    path = tmp_path / "model.json"
    first.save(path, *_fixed_since())
    assert first.load(path) == first.train(*_fixed_since())
    assert "threshold" in capsys.readouterr().out


def test_a_mail_is_dropped_whole_only_where_its_wrong_rows_pay_twice_over():
    from bench import mail_confidence_mails as per_mail

    wrong, mixed, real = _mails(("s1", (("form:a",),) * 3, (False, False, True)),
                                ("s1", (("form:a",), ("form:b",)), (False, True)), ("s1", (("form:b",),), (True,)))
    assert per_mail.shares(mixed) == {"form:a": 0.5, "form:b": 0.5}
    assert per_mail.mostly_wrong(wrong) and per_mail.mostly_wrong(mixed) and not per_mail.mostly_wrong(real)
    # the first mail gains 2 - 2 = 0, so nothing gains: no mail is dropped
    assert per_mail.choose([(0.9, wrong), (0.5, mixed), (0.1, real)]) > 1.0
    twice = _mails(("s1", (("form:a",),) * 3, (False, False, False)))[0]
    assert per_mail.choose([(0.9, twice), (0.5, mixed), (0.1, real)]) == 0.9
