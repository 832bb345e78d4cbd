"""The experiment `iolab patch` writes carries, after the claim rows, each
block of figures no claim row came from (iolab.mail.unread) as comments: its
lines in the mail, its first line, and a commented [[claims.row]] with the
keys a written row has and its values left to the user, so that a missed
claim is one edit away. Tested on a mail written here."""

import json
import re
import tomllib

import pytest

from iolab import load
from iolab.analysis.table import expected_rows
from iolab.spec import SpecError
from iolab.workloads import compose
from iolab.workloads.library import load_areas
from tests.helpers import FIXTURES
from tests.test_patch_mail import _experiment, _old_side

DIFF = """---
 block/blk-core.c | 2 ++
 1 file changed, 2 insertions(+)

diff --git a/block/blk-core.c b/block/blk-core.c
--- a/block/blk-core.c
+++ b/block/blk-core.c
@@ -1200,6 +1200,8 @@ void blk_finish_plug(struct blk_plug *plug)
 {
 \tif (plug == current->plug) {
 \t\t__blk_flush_plug(plug, false);
+\t\tif (plug->started)
+\t\t\tplug->held += ktime_get_ns() - plug->started;
 \t\tcurrent->plug = NULL;
 \t}
 }
-- 
2.47.3
"""
# one claim read (the IOPS pair), two blocks of figures not read: a table of the patched side, a sentence
MAIL = """From: Ana Reviewer <ana@example.org>
Date: Wed, 25 Nov 2026 09:40:11 +0100
Subject: [PATCH] block: skip the plug for a single request
Message-Id: <20261125094011.3333-1-ana@example.org>

A single request does not need a plug. Tested with:

  fio --name=randread --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 --size=1G

randread IOPS: 562K -> 574K

Latency with this patch (clat):

  percentile    usec
  50.00th         42
  99.00th         87
  99.90th        133

A run over the whole disk took 41.2 s, of which 12.5 s were spent
in blk_finish_plug().

Signed-off-by: Ana Reviewer <ana@example.org>
""" + DIFF


def _written(tmp_path, monkeypatch, mail=MAIL):
    (tmp_path / "plug.mbox").write_text(mail)
    return _experiment(tmp_path, monkeypatch, tmp_path / "plug.mbox", files=_old_side(DIFF))


def _template(text: str, first_line: int) -> list[str]:
    """The commented row under the block that starts at this line of the mail."""
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith(f"# lines {first_line}-"))
    end = next((k for k in range(at + 2, len(lines)) if not re.match(r"# \w+ =", lines[k])), len(lines))
    return lines[at + 1:end]


def test_each_block_not_read_follows_the_claim_rows_with_its_lines_and_a_row_to_fill(tmp_path, monkeypatch):
    experiment, text = _written(tmp_path, monkeypatch)
    assert [r.label for r in experiment.claims.row] == ["IOPS"]  # the comments add no row
    comments = text[text.index("[[claims.row]]"):].splitlines()
    assert "# lines 14-17 of plug.mbox (6 figures): percentile usec" in comments  # the mail file's own lines
    assert any(line.startswith("# lines 19-19 of plug.mbox (2 figures): A run over the whole disk")
               for line in comments)
    row = _template(text, 14)
    assert row[0] == "# [[claims.row]]"
    # the keys of the row written above it, in its order: none is typed twice
    written = [line.split(" =")[0] for line in comments[1:comments.index("")]]
    left = ("stated", "source", "reason")  # what the reader saw, why none checks it: not the user's to fill
    assert [line[2:].split(" =")[0] for line in row[1:]] == [k for k in written if k not in left]
    assert "# before =" in row and "# after =" in row  # no figure guessed from the block: the user writes them
    assert '"block-skip-the-plug-for-a-single-request"' in next(line for line in row if line.startswith("# workload"))
    assert re.search(r'# metric = ""\s+# its header\'s words suggest "read_lat_mean", "read_p50", "read_p99"',
                     "\n".join(row))  # "usec": a time, of the workload's metrics


def _filled(text: str, first_line: int, values: dict[str, str]) -> str:
    """The experiment with the row under this block uncommented and filled with these values."""
    row = "\n".join(_template(text, first_line))
    filled = ["[[claims.row]]", *(f"{key} = {values[key]}" for key in re.findall(r"^# (\w+) =", row, re.M))]
    at = text.index(row, text.index(f"\n# lines {first_line}-"))
    return text[:at] + "\n".join(filled) + text[at + len(row):]


def test_a_template_uncommented_and_filled_loads_as_a_row(tmp_path, monkeypatch):
    _, text = _written(tmp_path, monkeypatch)
    values = {"label": '"clat p99 (patched)"', "before": "90", "after": "87", "unit": '"usec"', "better": '"lower"',
              "workload": '"block-skip-the-plug-for-a-single-request"',
              "metric": '"read_p99"'}
    (tmp_path / "exp.toml").write_text(_filled(text, 14, values))
    rows = load.load(tmp_path / "exp.toml").claims.row
    assert [(r.label, r.before, r.after, r.unit, r.better, r.workload, r.metric) for r in rows] == [
        ("IOPS", 562000.0, 574000.0, "IOPS", "higher", "block-skip-the-plug-for-a-single-request", "read_iops"),
        ("clat p99 (patched)", 90.0, 87.0, "usec", "lower", "block-skip-the-plug-for-a-single-request", "read_p99")]
    # uncommented but not filled: refused, naming the line, never a row of zeros
    row = "\n".join(_template(text, 14))
    (tmp_path / "exp.toml").write_text(text.replace(row, row.replace("\n# ", "\n").removeprefix("# "), 1))
    with pytest.raises(SpecError, match=r"line \d+"):
        load.load(tmp_path / "exp.toml")


def test_blocks_beyond_the_cap_are_counted_and_a_control_character_stays_out(tmp_path, monkeypatch):
    percentiles = ("50.00th", "90.00th", "99.00th", "99.90th")  # tables of 2, 3, 4 rows: unlike (unread joins alike)
    tables = "".join(f"Run {n}:\n\n  {name} percentile    usec\n"
                     + "".join(f"  {p}    {40 + n + k}\n" for k, p in enumerate(percentiles[:n + 2])) + "\n"
                     for n, name in enumerate(("read", "write", "flush")[:compose.UNREAD_SHOWN]))  # 2 blocks and these
    mail = MAIL.replace("Signed-off-by:", tables + "Signed-off-by:")
    mail = mail.replace("  read percentile", "  read \x1bpercentile")  # a control character in a header shown
    _, text = _written(tmp_path, monkeypatch, mail)
    assert text.count("# [[claims.row]]") == compose.UNREAD_SHOWN
    assert "# and 2 more blocks not read: iolab mail lists them" in text
    assert re.search(r"# lines 2\d-2\d of plug\.mbox \(\d figures\): read \?percentile usec\n", text)
    assert "\x1b" not in text
    tomllib.loads(text)  # it parses


def test_a_mail_of_no_claim_read_gets_rows_to_fill_after_the_workloads(tmp_path, monkeypatch):
    """No [claims] table is written when nothing was read: a filled row makes one."""
    mail = (FIXTURES / "mail" / "unread-one-side.mbox").read_text()
    experiment, text = _written(tmp_path, monkeypatch, mail)
    assert experiment.claims is None and "[claims]" not in text and text.count("# [[claims.row]]") == 2
    assert "# lines 11-14 of plug.mbox (6 figures): percentile usec" in text
    values = {"label": '"clat p50"', "before": "45", "after": "42", "unit": '"usec"', "better": '"lower"',
              "workload": '""', "metric": '""'}
    (tmp_path / "exp.toml").write_text(_filled(text, 11, values))
    (row,) = load.load(tmp_path / "exp.toml").claims.row
    assert (row.label, row.before, row.after, row.unit, row.better, row.workload) == ("clat p50", 45, 42, "usec",
                                                                                     "lower", "")


def _hinted(text: str) -> dict[str, list[str]]:
    """The workloads the comment names once, each with the metrics it shows (without its "...")."""
    at = text.index("# Its workloads and the metrics that check them")
    lines = text[at:].splitlines()[1:]
    found = [re.match(r'#   ("[^"]+"): (.*)$', line) for line in lines[:next(k for k, line in enumerate(lines)
                                                                            if not line.startswith("#   "))]]
    return {tomllib.loads(f"n = {m.group(1)}")["n"]: [n for n in m.group(2).split(", ") if n != "..."]
            for m in found if m}


@pytest.mark.parametrize("mail", ["test", "unread-one-side.mbox"])
def test_the_workloads_and_metrics_named_once_are_the_experiments_and_each_loads_in_a_filled_row(
        tmp_path, monkeypatch, mail):
    text_of = MAIL if mail == "test" else (FIXTURES / "mail" / mail).read_text()
    experiment, text = _written(tmp_path, monkeypatch, text_of)
    assert text.count("# Its workloads and the metrics that check them") == 1  # once, not per block
    hinted = _hinted(text)
    assert list(hinted) == [w.name for w in experiment.workload]  # every workload the file defines, in its order
    first = next(iter(hinted))
    assert f"# workload = \"\"  # {json.dumps(first)} or another above" in text
    block = 14 if mail == "test" else 11
    for workload, metrics in hinted.items():
        assert metrics and all(re.fullmatch(r"[a-z_.0-9]+", m) for m in metrics)
        for metric in metrics:  # the real loader takes each: none invented
            values = {"label": '"clat"', "before": "45", "after": "42", "unit": '"usec"', "better": '"lower"',
                      "workload": json.dumps(workload), "metric": json.dumps(metric)}
            (tmp_path / "exp.toml").write_text(_filled(text, block, values))
            rows = load.load(tmp_path / "exp.toml").claims.row
            assert (rows[-1].workload, rows[-1].metric) == (workload, metric)


def test_a_filled_row_with_a_metric_its_workload_cannot_give_is_refused_and_one_it_can_is_a_row(tmp_path, monkeypatch):
    _, text = _written(tmp_path, monkeypatch)
    workload = '"block-skip-the-plug-for-a-single-request"'  # a randread job: it gives no write metric
    values = {"label": '"clat"', "before": "45", "after": "42", "unit": '"usec"', "better": '"lower"',
              "workload": workload, "metric": '"write_p99"'}
    (tmp_path / "exp.toml").write_text(_filled(text, 14, values))
    with pytest.raises(SpecError, match=r"claims\.row\['clat'\]\.metric: .*reads only \(rw=randread\)"):
        load.load(tmp_path / "exp.toml")
    (tmp_path / "exp.toml").write_text(_filled(text, 14, {**values, "metric": '"read_p99.9"'}))
    experiment = load.load(tmp_path / "exp.toml")
    assert "read_p99.9" in expected_rows(experiment, json.loads(workload), frozenset({"read"}))  # measured


def test_a_header_that_names_a_unit_suggests_the_workloads_metrics_of_its_kind_and_side_only(tmp_path, monkeypatch):
    blocks = ("Bandwidth with this patch:\n\n  jobs   MB/s\n  1      812\n  4     1640\n\n"
              "Write side:\n\n  jobs   write MB/s\n  1      512\n  4      990\n  16    1210\n  32    1250\n\n")  # 4 rows
    _, text = _written(tmp_path, monkeypatch, MAIL.replace("Latency with this patch", blocks + "Latency with"))
    lines = text.splitlines()
    suggested = {line: lines[k + 8] for k, line in enumerate(lines) if line.startswith("# lines ")}
    assert [v.split("# ", 2)[2] for v in suggested.values()] == [
        'its header\'s words suggest "read_bw"',  # MB/s: a bandwidth; the randread job's only
        "one of its metrics above",  # write MB/s: the job only reads, so nothing is suggested
        'its header\'s words suggest "read_lat_mean", "read_p50", "read_p99"']
    assert "= 812" not in text and "= 1640" not in text  # a suggestion, never a value


def test_every_library_workloads_hinted_metrics_load_as_its_rows(tmp_path, monkeypatch):
    """The names the hint takes from the code, for each of the library's workloads (probe modes, fio
    jobs of each direction, a workload's own metrics): the loader takes every one on that workload."""
    _, text = _written(tmp_path, monkeypatch)
    at = text.index("\n[run]\n")  # the tables added here go before its [run] and [vm]
    tables, engines = [], set()
    for area in load_areas():
        for workload in (w for w in area.workload if area.fs != "erofs"):  # erofs: a target of its own
            table = {**workload.table(area.fs, area.io), "name": f"{area.area}/{workload.name}"}
            names = compose._checked_by(table)
            engines.add((table["engine"], str((table.get("probe") or {}).get("mode", table.get("job", ""))[:9])))
            tables.append("\n[[workload]]\n" + "\n".join(f"{k} = {compose._toml(v)}" for k, v in
                                                           {**table, "primary": names}.items()))
    assert len(engines) > 5  # several engines, modes and jobs
    (tmp_path / "exp.toml").write_text(text[:at] + "".join(tables) + text[at:])
    loaded = load.load(tmp_path / "exp.toml")  # the loader checks each workload's primary names against it
    assert len(loaded.workload) > len(tables)
