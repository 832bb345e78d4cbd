"""`iolab mail MAIL` as a user runs it (a subprocess, no kernel source): the
patches, the benchmark and the claims it reads, as text and JSON; bad input
exits 2 with one short line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

FIXTURES = Path(__file__).parent / "fixtures" / "mail"


def mail_command(tmp_path: Path, *argv: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "iolab.cli", "mail", *map(str, argv)], cwd=tmp_path,
                          capture_output=True, text=True, env=env)


def test_json_has_the_patches_the_benchmark_and_each_claim_with_its_line(tmp_path):
    done = mail_command(tmp_path, FIXTURES / "sqpoll-tw-batch.mbox", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    read = json.loads(done.stdout)
    assert list(read) == ["mail", "patches", "benchmark", "claims", "unread", "hints"]
    (patch,) = read["patches"]
    assert patch["files"] == ["io_uring/sqpoll.c"] and patch["base_commit"] is None
    (workload,) = read["benchmark"]["workloads"]
    assert workload["origin"] == "fio command line" and "iodepth=128" in workload["maps_to"]
    (claim,) = read["claims"]
    assert {k: claim[k] for k in ("label", "before", "after", "unit", "better", "stated")} == {
        "label": "BW", "before": 2874, "after": 3305, "unit": "MiB/s", "better": "higher", "stated": "+15.0%"}
    assert claim["source"] == "BW     2874MiB/s   3305MiB/s   +15.0%"
    assert not (tmp_path / "iolab-mail").exists()


def test_text_shows_a_series_its_cover_and_base_commit(tmp_path):
    mbox = (FIXTURES / "readahead-series.mbox").read_text()
    given = tmp_path / "series.mbox"
    given.write_text(mbox.replace("\n-- \n", "\nbase-commit: 0123456789abcdef0123456789abcdef01234567\n-- \n", 1))
    done = mail_command(tmp_path, given)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "patches (2, cover letter read)" in out and "files: mm/readahead.c" in out
    assert "base-commit: 0123456789abcdef0123456789abcdef01234567" in out
    assert "8 readers" in out and "+189%" in out and "| 8 readers 38 110 +189%" in out
    assert not (tmp_path / "iolab-mail").exists()


ONE_SIDE = FIXTURES / "unread-one-side.mbox"  # figures of the patched kernel alone: a table and a sentence


def test_text_lists_the_blocks_of_figures_no_claim_was_read_from(tmp_path):
    done = mail_command(tmp_path, ONE_SIDE)
    assert (done.returncode, done.stderr) == (0, "")
    after = done.stdout.split("claims: none read\n", 1)[1]
    assert after.splitlines()[1:4] == [
        "not read (2 blocks with figures)",
        "  lines 11-14 (6 figures): percentile usec",
        "  lines 16-16 (2 figures): A run over the whole disk took 41.2 s, of which 12.5 s we..."]
    assert "[[claims.row]]" in after and "docs/mails.md" in after
    lines = ONE_SIDE.read_text().splitlines()
    assert lines[10].split() == ["percentile", "usec"] and lines[13].split() == ["99.90th", "133"]


def test_json_lists_the_blocks_not_read_and_a_mail_read_whole_has_none(tmp_path):
    done = mail_command(tmp_path, ONE_SIDE, "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    read = json.loads(done.stdout)
    assert read["claims"] == []
    assert read["unread"] == [
        {"first_line": 11, "last_line": 14, "header": "percentile usec", "figures": 6, "lines_of": str(ONE_SIDE)},
        {"first_line": 16, "last_line": 16, "header": "A run over the whole disk took 41.2 s, of which 12.5 s we...",
         "figures": 2, "lines_of": str(ONE_SIDE)}]
    done = mail_command(tmp_path, FIXTURES / "sqpoll-tw-batch.mbox", "--format", "json")
    assert json.loads(done.stdout)["unread"] == []
    assert "not read" not in mail_command(tmp_path, FIXTURES / "sqpoll-tw-batch.mbox").stdout


@pytest.mark.parametrize("text, words", [
    ("Hello,\n\nthanks for the review.\n", "no diff in it"),
    ("From: a@example.org\nSubject: Re: [PATCH] x\n\n> quoted\n", "no patch in it"),
    ("", "empty"),
])
def test_what_is_not_a_patch_exits_2_with_one_short_line(tmp_path, text, words):
    path = tmp_path / "input.txt"
    path.write_text(text)
    done = mail_command(tmp_path, path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"iolab: {path}: {words}") and len(done.stderr.splitlines()) == 1


def test_a_missing_file_exits_2(tmp_path):
    done = mail_command(tmp_path, tmp_path / "nope.mbox")
    assert done.returncode == 2 and "nope.mbox" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_cover_letter_alone_sent_in_reply_to_an_earlier_version_is_read(tmp_path):
    path = tmp_path / "cover.eml"
    path.write_text("From: A <a@example.org>\nSubject: [RFC PATCH 0/2] block: plug harder\n"
                    "Message-Id: <c2@example.org>\nIn-Reply-To: <c1@example.org>\nReferences: <c1@example.org>\n\n"
                    "Random reads went from 562K -> 574K IOPS.\n\nA (2):\n  block: one\n  block: two\n")
    done = mail_command(tmp_path, path, "--format", "json")
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert read["patches"] == [] and read["mail"]["cover"] is True
    assert [(c["before"], c["after"]) for c in read["claims"]] == [(562e3, 574e3)]
    reply = tmp_path / "reply.eml"
    reply.write_text(path.read_text().replace("Subject: [RFC", "Subject: Re: [RFC"))
    assert mail_command(tmp_path, reply).returncode == 2


def test_a_cover_letter_alone_without_a_counter_is_read(tmp_path):
    path = tmp_path / "cover.eml"
    path.write_text("From: A <a@example.org>\nSubject: [PATCHSET v3] mq-deadline scalability\n"
                    "Message-Id: <c3@example.org>\n\nRandom reads went from 562K -> 574K IOPS.\n")
    done = mail_command(tmp_path, path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [(c["before"], c["after"]) for c in json.loads(done.stdout)["claims"]] == [(562e3, 574e3)]
