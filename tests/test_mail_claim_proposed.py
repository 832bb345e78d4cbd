"""The learned proposer's candidates, features and choice (iolab.mail.claimed.oneline, .proposed), on
text written here; and the stored weights are what training on the corpus gives."""

import json
import sys
from pathlib import Path

import pytest

from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.oneline import candidates, figures
from iolab.mail.claimed.proposed import FORM, Model, model_of, proposed, stored

TABLE = """Results on a four disk array:

             base      patched    change
read IOPS    1200      1500       +25.0%
write BW     870MiB/s  1.5GiB/s
""".splitlines()


def _values(line):
    return [(f.value, f.unit) for f in figures(line)]


@pytest.mark.parametrize("line, values", [
    ("read IOPS    1200      1500       +25.0%", [(1200, ""), (1500, ""), (25.0, "%")]),
    ("write BW     870MiB/s  1.5GiB/s", [(870, "MiB/s"), (1.5, "GiB/s")]),
    ("randread: 350 KIOPS -> 420 KIOPS", [(350e3, "IOPS"), (420e3, "IOPS")]),
    ("latency 2.0ms, was 1,800us", [(2.0, "ms"), (1800, "us")]),
    ("on 6.8.0-rc1 and v6.9: 10 and 12", [(10, ""), (12, "")]),  # versions are no figures
    ("see [1], 0x1f, a 64-bit ext4 box, 5-10 runs, the 4th is 2x: 7 8", [(7, ""), (8, "")]),
    ("(1.5+2.5+3.5)/3 = 2.5, was 4 (~5 at most)", [(2.5, ""), (4, ""), (5, "")]),  # a sum's terms are none
    ("mean 22.58 +- 0.38%, was 20.97 ± 1.28%", [(22.58, ""), (20.97, "")]),  # nor is a spread
])
def test_a_lines_figures_leave_out_what_measures_nothing(line, values):
    assert _values(line) == values


@pytest.mark.parametrize("line", [
    "$ fio --bs=4k --iodepth=32 --numjobs=4 --runtime=60",  # a command line
    "Date: Tue, 12 Mar 2024 10:11:12 +0100",
    "ran on 2024-01-02 with 100 and 120",
])
def test_a_command_or_a_dated_line_has_no_figures(line):
    assert figures(line) == []


def test_pairs_come_in_both_orders_and_only_of_one_units_kind():
    found = {(c.line, c.before.value, c.after.value) for c in candidates(TABLE)}
    assert {(3, 1200, 1500), (3, 1500, 1200), (4, 870, 1.5), (4, 1.5, 870)} <= found
    assert not any(c.before.percent != c.after.percent for c in candidates(TABLE))  # 25% pairs with no count


def test_a_pairs_features_name_its_columns_label_and_stated_change():
    pair = next(c for c in candidates(TABLE) if (c.line, c.before.value, c.after.value) == (3, 1200, 1500))
    assert {"bh:base", "ah:patched", "lab:read", "lab:iops", "sides:before-after", "delta_agrees",
            "percent_after", "forward", "before_first", "count:3", "ratio:2", "up"} <= pair.features
    other = next(c for c in candidates(TABLE) if (c.line, c.before.value, c.after.value) == (3, 1500, 1200))
    assert {"reversed", "sides:after-before"} <= other.features and "delta_sign" not in other.features
    units = next(c for c in candidates(TABLE) if (c.line, c.before.value) == (4, 870))
    assert "ratio:3" in units.features  # 1.5GiB/s is 1536MiB/s: 1.77 times, not 0.0017


def test_a_pipe_tables_header_cells_go_by_their_index():
    lines = ["| test | old | new |", "|------|-----|-----|", "| fsync | 10.5 | 8.25 |"]
    pair = next(c for c in candidates(lines) if c.before.value == 10.5)
    assert {"bh:old", "ah:new", "pipes", "lab:fsync"} <= pair.features


def test_a_sentences_words_between_and_around_its_figures():
    pair = next(c for c in candidates(["Throughput went from 100 MB/s to 120 MB/s here."]) if c.before.value == 100)
    assert {"pre:from", "btw:to", "post:here", "unit:MB/s", "kind:bandwidth"} <= pair.features
    assert not any(f.startswith("bh:") and f != "bh:-" for f in pair.features)  # a sentence has no header


SIDES = Model(bias=-4.0, weights={"sides:before-after": 5.0, "delta_agrees": 1.0}, threshold=0.5)


def test_the_proposer_returns_the_pairs_its_weights_choose_once_each():
    rows = proposed(TABLE, [], SIDES)
    assert [(c.before, c.after, c.unit, c.form) for c in rows] == [
        (1200, 1500, "", FORM), (870, 1536, "MiB/s", FORM)]
    assert rows[0].label == "read IOPS" and rows[0].stated == "+25.0%" and rows[1].better == "higher"


def test_the_proposer_leaves_what_the_reader_returned_and_its_lines_figures():
    read = Claim("read IOPS", 1200, 1500, "", "count", None, source="read IOPS    1200      1500       +25.0%")
    assert [(c.before, c.after) for c in proposed(TABLE, [read], SIDES)] == [(870, 1536)]
    elsewhere = Claim("x", 1500, 1200, "", "count", None, source="another line")
    assert [(c.before, c.after) for c in proposed(TABLE, [elsewhere], SIDES)] == [(870, 1536)]


def test_below_the_threshold_nothing_is_proposed():
    assert proposed(TABLE, [], Model(bias=-4.0, weights={"sides:before-after": 3.0}, threshold=0.5)) == []


def test_the_stored_weights_load_as_a_model():
    data = json.loads((Path(__file__).parents[1] / "iolab/mail/claimed/proposed.json").read_text())
    assert model_of(data) == stored() and 0.0 < stored().threshold <= 1.0 and stored().weights


def test_training_on_the_corpus_gives_the_stored_weights():
    sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))
    import train_proposer
    from tests.corpus import loader
    settings = json.loads(train_proposer.WEIGHTS.read_text())["settings"]
    model, c = train_proposer.train(train_proposer.gather(loader.load("tune")), c=settings["C"])
    assert train_proposer.same(model, stored()), "retrain: PYTHONPATH=. python scripts/train_proposer.py"


def test_a_tab_separated_rows_figures_find_the_header_cell_over_them():
    lines = ["case\tbaseline\tthis series", "fsync\t10.5\t\t8.25"]
    pair = next(c for c in candidates(lines) if c.before.value == 10.5)
    assert {"bh:baseline", "ah:this", "ah:series", "tabs"} <= pair.features
