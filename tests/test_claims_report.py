"""The mail's claim beside what iolab measured: one word per claimed row, in
every format, from scripted runs (patched reads 20% faster; ctx unchanged)."""

import json
import re

import pytest

from iolab.analysis import reports
from iolab.analysis import claims
from iolab.analysis.claims import WORDS
from iolab.spec import ClaimRow
from iolab.report import renderer
from iolab.run import runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment

ROWS = [
    # a faster read claimed: iolab's bandwidth rises
    {"label": "randread BW (MiB/s)", "before": 100.0, "after": 120.0, "unit": "MiB/s", "better": "higher",
     "workload": "randread", "metric": "read_bw", "stated": "+20%"},
    # the same claim as a time per op: its fall is a rise of iolab's bandwidth
    {"label": "randread lat (us)", "before": 10.0, "after": 8.0, "unit": "us", "better": "lower",
     "workload": "randread", "metric": "read_bw"},
    # a claim the other way
    {"label": "randread slower", "before": 120.0, "after": 100.0, "unit": "MiB/s", "better": "higher",
     "workload": "randread", "metric": "read_bw"},
    # a claim on a row that did not move (ctx is noise around one level)
    {"label": "context switches", "before": 3.67e6, "after": 3.59e6, "workload": "randread", "metric": "ctx"},
    # a row iolab does not measure
    {"label": "NAT blocks read", "before": 1191.0, "after": 1242.0, "reason": "a count iolab does not measure"},
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("claims") / "runs.db")
    claims = {"source": "[PATCH] block: faster reads", "row": ROWS, "scaled": ["numjobs 16 -> 4"],
              "not_reproduced": ["will-it-scale: not a benchmark iolab runs"],
              "refused": ["[j] exec_prerun=/bin/true: runs a program"]}
    run = runner.run(experiment(["base", "patched"], claims=claims), store,
                     host=ScriptedHost({"base": 100.0, "patched": 120.0}))
    return reports.run_report(store, run)


def test_each_claim_gets_its_word(report):
    words = [(a.label, a.word) for a in report.analysis.claims]
    assert words == [("randread BW (MiB/s)", "agrees"), ("randread lat (us)", "agrees"),
                     ("randread slower", "opposite"), ("context switches", "no change found"),
                     ("NAT blocks read", "not reproduced")]
    first = report.analysis.claims[0]
    assert first.mail_delta == pytest.approx(0.2) and first.delta == pytest.approx(0.2, abs=0.03)
    assert {a.word for a in report.analysis.claims} <= set(WORDS)


def test_text_and_reply_show_the_table_and_what_was_left_out(report):
    for form, title in (("text", "the mail's claim, checked"), ("reply", "claimed row")):
        text = renderer(form)(report)
        assert max(len(line) for line in text.splitlines()) <= 72
        table = " ".join(text[text.index(title):].split())
        assert re.search(r"randread BW \(MiB/s\) +\+20\.0% +\+2\d\.\d% +\* +agrees", table)
        assert "agrees" in table and "opposite" in table and "no change found" in table
        assert "NAT blocks read: a count iolab does not measure" in table
        assert "will-it-scale" in table and "exec_prerun" in table and "numjobs 16 -> 4" in table


def test_json_markdown_and_html(report):
    document = json.loads(renderer("json")(report))["claims"]
    assert [r["agreement"] for r in document["rows"]] == ["agrees", "agrees", "opposite", "no change found",
                                                          "not reproduced"]
    assert document["rows"][0]["mail_delta"] == pytest.approx(0.2) and document["rows"][4]["delta"] is None
    assert document["not_reproduced"] == ["will-it-scale: not a benchmark iolab runs"]
    markdown = renderer("markdown")(report)
    assert "| randread BW (MiB/s) | +20.0% |" in markdown and "| no change found |" in markdown
    html = renderer("html")(report)
    assert "the mail&#x27;s claim, checked" in html and "not reproduced" in html


def test_a_claim_naming_a_workload_the_experiment_lacks_is_refused():
    from iolab.spec import SpecError

    with pytest.raises(SpecError, match="claims: row 'x' names no workload 'nope'"):
        experiment(claims={"row": [{"label": "x", "before": 1, "after": 2, "workload": "nope", "metric": "read_bw"}]})


@pytest.fixture(scope="module")
def undecided(tmp_path_factory):
    """Three rounds: too few for any test, so no claimed row is decided."""
    store = Store(tmp_path_factory.mktemp("undecided") / "runs.db")
    run = runner.run(experiment(["base", "patched"], iterations=3, claims={"row": ROWS[:4]}), store,
                     host=ScriptedHost({"base": 100.0, "patched": 120.0}))
    return reports.run_report(store, run)


def test_an_undecided_claim_is_never_no_change_found_in_any_format(undecided):
    assert [a.word for a in undecided.analysis.claims] == ["undecided"] * 4
    assert all(a.rounds == 3 and a.needed > 3 for a in undecided.analysis.claims)
    says = f"undecided, 3 of ~{undecided.analysis.claims[0].needed} rounds"
    for form in ("text", "markdown", "html", "reply"):
        text = renderer(form)(undecided)
        assert "no change found" not in text and says in text, form
    rows = json.loads(renderer("json")(undecided))["claims"]["rows"]
    assert {(r["agreement"], r["rounds"]) for r in rows} == {("undecided", 3)}
    assert all(r["rounds_needed"] > 3 for r in rows)


def test_no_change_found_only_where_the_ci_leaves_the_claimed_size_out(tmp_path):
    """8 rounds of 10% noise: a CI of several % holds both 0 and the mail's -2.2%, so the row is
    undecided; the same rounds at 1% noise leave -2.2% out of the CI: no change found."""
    words = {}
    for noise in (0.1, 0.01):
        store = Store(tmp_path / f"{noise}.db")
        run = runner.run(experiment(["base", "patched"], claims={"row": [ROWS[3]]}), store,
                         host=ScriptedHost({"base": 100.0, "patched": 100.0}, noise=noise))
        claim = reports.run_report(store, run).analysis.claims[0]
        words[noise] = (claim.word, claim.needed)
    assert words[0.01] == ("no change found", 0)
    assert words[0.1][0] == "undecided" and words[0.1][1] > 8


@pytest.mark.parametrize("levels, rounds, reason", [
    ({"base": 100.0, "patched": 120.0}, 4, "claimed rows decided after 4 rounds"),
    ({"base": 100.0, "patched": 100.0}, 8, "claimed rows undecided at the limit of 8 rounds ([run] "
                                           "claims_rounds): randread BW (MiB/s)")])
def test_rounds_are_added_while_a_claimed_row_is_undecided_up_to_the_limit(tmp_path, levels, rounds, reason):
    """3 rounds planned, as iolab patch plans an instructions-mode run, and claims_rounds = 8: a 20%
    faster read is decided as soon as the planned test can (4 rounds: Mann-Whitney U's smallest p is
    2/70); values 30% apart from round to round around no change leave the claimed +20% undecided up
    to the limit, which the stop reason names."""
    store = Store(tmp_path / "runs.db")
    exp = experiment(["base", "patched"], run={"iterations": 3, "claims_rounds": 8, "order": "alternate", "seed": 5},
                     claims={"row": ROWS[:1]})
    run = runner.run(exp, store, host=ScriptedHost(levels, noise=0.3 if levels["patched"] == 100.0 else 0.01))
    report = reports.run_report(store, run)
    assert report.analysis.rounds_done == rounds and report.analysis.run.stop_reason == reason
    assert report.analysis.claims[0].word == ("agrees" if rounds == 4 else "undecided")


def test_a_claim_of_no_change_is_met_by_an_exact_comparison_within_a_percent():
    """The plug-batch-tags mail's 'column 1' row: 553k -> 553k IOPS, the modeled device's exact rows
    +0.0% with values within 0.1%: no change found (it read 'undecided: its values spread +0.1%, wider
    than the claim'); a claimed change needs a resolution finer than its size, as before."""
    from iolab.stats import compare_exact

    base, cand = [49633.0, 49640.0, 49610.0], [49633.0, 49620.0, 49645.0]
    comparison = compare_exact(base, cand, higher_is_better=True, tolerance=0.01)
    assert comparison.exact is not None and 0 < comparison.resolution < 0.01
    none = ClaimRow(label="column 1", before=553000.0, after=553000.0, unit="IOPS", better="higher",
                    workload="w", metric="read_iops")
    assert claims._word(none, comparison) == "no change found"
    assert claims._word(none.model_copy(update={"after": 554000.0}), comparison) == "undecided"  # +0.18%
    wide = compare_exact([100.0, 101.5, 99.0], [100.0, 101.0, 99.5], higher_is_better=True, tolerance=0.03)
    assert claims._word(none, wide) == "undecided"  # values 2.5% apart: no claim of no change is met
