"""The patch mail an experiment was written from ([mail], set by iolab patch)
is stored with the run and named in the header of every report format."""

from dataclasses import replace
import json

from iolab.analysis import reports
from iolab.report import renderer
from iolab.report import reply
from iolab.run import runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment

MAIL = {"title": "ext4: avoid tail write_begin walk for uptodate folios", "author": "Jia Zhu <jia@example.org>",
        "date": "Mon, 08 Jun 2026 23:52:41 -0400", "message_id": "20260609035241.1-2-jia@example.org",
        "patches": [{"file": "iolab-mail/0002-ext4-avoid-tail.patch", "sha256": "ab" * 32, "repaired": True,
                     "subject": "[PATCH v3 2/2] ext4: avoid tail write_begin walk for uptodate folios"}]}
LINE = ("mail: from Jia Zhu <jia@example.org>, Mon, 08 Jun 2026 23:52:41 -0400, Message-Id "
        "<20260609035241.1-2-jia@example.org>; diff repaired against the source: iolab-mail/0002-ext4-avoid-tail.patch "
        "(sha256 abababababab)")


def test_every_report_names_the_mail(tmp_path):
    store = Store(tmp_path / "runs.db")
    levels = {"base": 100.0, "patched": 120.0}
    run_id = runner.run(experiment(list(levels), iterations=3, mail=MAIL, name=MAIL["title"]), store,
                        host=ScriptedHost(levels))
    report = reports.run_report(store, run_id)  # the experiment as the store kept it
    assert report.analysis.experiment.mail is not None
    assert report.analysis.experiment.mail.message_id == MAIL["message_id"]
    flat = {fmt: " ".join(renderer(fmt)(report).split()) for fmt in ("markdown", "json")}
    flat["text"] = " ".join(renderer("text")(replace(report, verbose=True)).split())  # the header in full
    assert all(" ".join(LINE.split()) in text for text in flat.values())
    assert renderer("text")(replace(report, verbose=True)).startswith(f"iolab: {MAIL['title']}\nmail: from Jia Zhu")
    assert renderer("text")(report).startswith(f"iolab: {MAIL['title']}\nmail: <{MAIL['message_id']}>\n")
    html = renderer("html")(report)
    assert "Message-Id &lt;20260609035241.1-2-jia@example.org&gt;" in html
    document = json.loads(renderer("json")(report))
    assert document["mail"]["message_id"] == MAIL["message_id"] and document["mail"]["patches"][0]["repaired"]
    block = reply.render(report)
    assert f"\nmail:      {MAIL['title']}\n" in block  # its title; too long a line for the author too
    assert f"b4 am -o - '{MAIL['message_id']}' > mail.mbx" in block


def test_a_report_without_a_mail_has_no_mail_line(tmp_path):
    store = Store(tmp_path / "runs.db")
    run_id = runner.run(experiment(["base", "patched"], iterations=3), store,
                        host=ScriptedHost({"base": 1.0, "patched": 1.0}))
    report = reports.run_report(store, run_id)
    assert "mail:" not in renderer("text")(report) and "mail" not in json.loads(renderer("json")(report))
