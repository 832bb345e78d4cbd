"""`iolab mail --read SPEC` and `iolab patch --dry-run --read SPEC` as a user runs them (a subprocess, a
stand-in source): the rows of a block the reader did not read, named by the user, join the claims (marked
as the hint's), the block leaves the "not read" list, and the experiment carries them as [[claims.row]];
a bad spec exits 2 with one line naming it."""

import json
import tomllib

from tests.helpers import source_tarball
from tests.test_mail_command import mail_command
from tests.test_patch_dry_run import iolab
from tests.test_patch_mail import _old_side
from tests.test_patch_unread import DIFF, MAIL

# the mail of tests/test_patch_unread.py with a latency table of two runs whose columns name no side: the
# reader reads its IOPS pair only, and lists the table (lines 14-17 of the file) as not read
TABLE = """Latency (clat) of two runs, the first without this patch:

  percentile    run 1    run 2
  50.00th       45       42
  99.00th       90       87
  99.90th       140      133

"""
TWO_RUNS = MAIL[:MAIL.index("Latency with this patch")] + TABLE + MAIL[MAIL.index("A run over"):]


def _mail(tmp_path, *argv):
    (tmp_path / "plug.mbox").write_text(TWO_RUNS)
    return mail_command(tmp_path, tmp_path / "plug.mbox", *argv)


def test_without_a_hint_the_table_is_not_read(tmp_path):
    done = _mail(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "claims (1)" in done.stdout and "  lines 14-17 (11 figures): percentile run 1 run 2" in done.stdout


def test_the_hints_rows_join_the_claims_marked_as_the_users_and_the_block_is_no_longer_unread(tmp_path):
    done = _mail(tmp_path, "--read", "14-17:1,2")
    assert (done.returncode, done.stderr) == (0, "")
    out = done.stdout.splitlines()
    assert "claims (4, 3 read by your hints)" in out
    at = out.index("      | hinted: 99.00th 90 87")
    assert out[at - 1].split() == ["99.00th", "90", "87", "-", "lower", "-3.3%", "-"]  # "latency": lower better
    assert "  read by your hint 14-17:1,2: 3 rows" in out
    assert "lines 14-17" not in done.stdout and "  lines 19-19 (2 figures): A run over" in done.stdout


def test_json_marks_each_row_by_its_form_and_says_what_each_hint_read(tmp_path):
    done = _mail(tmp_path, "--read", "15-17:1,2", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    read = json.loads(done.stdout)
    assert [(c["label"], c["before"], c["after"], c["form"]) for c in read["claims"]] == [
        ("IOPS", 562e3, 574e3, "prose"), ("50.00th", 45, 42, "hinted"), ("99.00th", 90, 87, "hinted"),
        ("99.90th", 140, 133, "hinted")]
    assert read["hints"] == [{"spec": "15-17:1,2", "rows": 3, "skipped": 0, "lines_of": "plug.mbox"}]
    assert [b["first_line"] for b in read["unread"]] == [19]


def test_a_bad_spec_exits_2_with_one_line_naming_it(tmp_path):
    done = _mail(tmp_path, "--read", "14-17:2,3")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("iolab: --read '14-17:2,3': no line of 14-17 holds a 3rd figure (the most a line "
                           "holds: 2)\n")


def test_patch_dry_run_shows_the_hints_rows_and_the_experiment_carries_them(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "plug.mbox").write_text(TWO_RUNS)
    tarball = source_tarball(tmp_path, _old_side(DIFF))
    done = iolab(tmp_path, work, "patch", "plug.mbox", "--source", tarball, "--dry-run", "--read", "14-17:1,2",
                 "--write", "exp.toml")
    assert done.returncode == 0, done.stderr
    assert "claims: 4 read, 1 checkable here" in done.stdout
    assert "50.00th  45 -> 42 (-6.7%)" in done.stdout
    assert "not read: 1 block of figures, lines 19-19 of plug.mbox" in done.stdout
    text = (work / "exp.toml").read_text()
    assert text.startswith("# ") and "--read=14-17:1,2" in text.splitlines()[0]  # the command that remakes it
    rows = tomllib.loads(text)["claims"]["row"]
    assert [(r["label"], r["before"], r["after"], r.get("better")) for r in rows] == [
        ("IOPS", 562e3, 574e3, "higher"), ("50.00th", 45, 42, "lower"), ("99.00th", 90, 87, "lower"),
        ("99.90th", 140, 133, "lower")]
    assert rows[1]["source"] == "50.00th 45 42"
