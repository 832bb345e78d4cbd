"""The mail's claim beside what iolab measured: one word per claimed row, in
every format, from scripted runs (patched reads 20% faster; ctx unchanged)."""

import json
import re

import pytest

from iolab.analysis import reports
from iolab.analysis.claims import WORDS
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
    for form in ("text", "reply"):
        text = renderer(form)(report)
        assert max(len(line) for line in text.splitlines()) <= 72
        table = text[text.index("the mail's claim, checked"):]
        assert re.search(r"randread BW \(MiB/s\) +\+20\.0% +\+2\d\.\d% +\* +agrees", table)
        assert "agrees" in table and "opposite" in table and "no change found" in table
        assert "not reproduced: NAT blocks read: a count iolab does not measure" in table
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
