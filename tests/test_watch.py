"""iolab watch, the list robot (iolab.run.watch): inboxes built here as the
lists' public-inbox mirrors are (a commit per message, in file m), a stand-in
kernel source unpacked in the test's cache, the real GNU patch and git, and
the suite's real PostgreSQL for the queue (procrastinate)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.analysis.results import WORDS
from tests import inboxes
from tests.helpers import REPO
from tests.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.stand_in_kernel import cache  # noqa: F401 (fixture: XDG_CACHE_HOME in tmp_path)

BLOCK_FIX = inboxes.patch_mail("[PATCH] block: drop a line from blk-mq", "Drop it.",
                               inboxes.diff("block/blk-mq.c", 5, "int blk_line_five;"), msgid="blk-1@example.org")
EXT4_FIX = inboxes.patch_mail("[PATCH] ext4: rename a line in the inode code", "Rename it.",
                              inboxes.diff("fs/ext4/inode.c", 7, "int ext4_line_seven;"), msgid="ext4-1@example.org",
                              author="Other <other@example.org>", date=1)
COVER = inboxes.mail("[PATCH 0/2] ext4: two steps", "Two steps.\n\nwrite_u1k: 10.0 -> 8.0 us\n\n"
                     " fs/ext4/inode.c | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)\n",
                     msgid="steps-0@example.org", date=2)
STEP_1 = inboxes.patch_mail("[PATCH 1/2] ext4: step one", "One.", inboxes.diff("fs/ext4/inode.c", 20, "int one;"),
                            msgid="steps-1@example.org", reply_to="steps-0@example.org", date=2)
STEP_2 = inboxes.patch_mail("[PATCH 2/2] ext4: step two", "Two.", inboxes.diff("fs/ext4/inode.c", 25, "int two;"),
                            msgid="steps-2@example.org", reply_to="steps-0@example.org", date=2)
REPLY = inboxes.mail("Re: [PATCH] block: drop a line from blk-mq", "> Drop it.\n\nLooks good.\n",
                     msgid="reply-1@example.org", reply_to="blk-1@example.org", date=3)
ELSEWHERE = inboxes.patch_mail("[PATCH] block: written on another tree", "Another base.",
                               inboxes.diff("block/blk-mq.c", 9, "int nine;", before=inboxes.MISC.replace("misc", "blk"
                                                                                                           ).upper()),
                               msgid="other-1@example.org", date=4)
INBOX = [BLOCK_FIX, EXT4_FIX, COVER, STEP_1, STEP_2, REPLY, ELSEWHERE]


def watch(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp_path / "data"),
                   **(env or {})}
    return subprocess.run([sys.executable, "-m", "iolab.cli", "watch", *args], capture_output=True, text=True,
                          env=environment, timeout=300)


@pytest.fixture
def source(tmp_path):
    tarball = inboxes.source_tarball(tmp_path)
    inboxes.unpacked(tarball)
    return tarball


def test_a_dry_run_names_the_patches_and_the_series_and_says_why_it_skips_the_others(tmp_path, source):
    inboxes.append(tmp_path / "list" / "git" / "0.git", INBOX)
    done = watch(tmp_path, str(tmp_path / "list"), "--once", "--dry-run")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    would = [line for line in out.splitlines() if line.startswith("  would")]
    assert len(would) == 3, out
    assert "<blk-1@example.org>" in would[0] and "block/: block" in would[0]
    assert "<ext4-1@example.org>" in would[1]
    assert "<steps-0@example.org> \"[PATCH 0/2] ext4: two steps\" (v1, 2 patches, with a cover letter)" in would[2]
    assert "  skip   <reply-1@example.org> \"Re: [PATCH] block: drop a line from blk-mq\": a reply" in out
    assert "<other-1@example.org>" in out and "does not apply to any source iolab has: linux-7.2.99.tar.gz: patch " \
        "1-of-1.patch does not apply: block/blk-mq.c: hunk #1" in out, out
    assert "7 messages read, would queue 3 series, skipped 2" in out
    assert not (tmp_path / "data").exists()  # a dry run makes no store


@pytest.mark.usefixtures("postgres_server")
def test_it_queues_the_testable_series_once_and_a_second_pass_queues_nothing(tmp_path, source, postgres_url):
    from iolab.run import queue
    from iolab.store import Store
    from iolab.store import watch as memory

    repo = tmp_path / "list" / "git" / "0.git"
    inboxes.append(repo, INBOX)
    first = watch(tmp_path, str(tmp_path / "list"), "--once", "--store", postgres_url)
    assert first.returncode == 0, first.stderr
    assert "7 messages read, queued 3 series, skipped 2" in first.stdout, first.stdout + first.stderr
    store = Store(postgres_url)
    checked = memory.checked(store)
    queued = [c for c in checked if c.status == "queued"]
    assert [c.message_id for c in queued] == ["blk-1@example.org", "ext4-1@example.org", "steps-0@example.org"]
    assert [c.message_id for c in checked if c.status == "skipped"] == ["other-1@example.org"]
    jobs = store.db.execute("SELECT count(DISTINCT (args->>'run_id')) FROM procrastinate_jobs").fetchone()[0]
    assert jobs == 3 and all(queue.rounds_by_status(store, c.run_id).get("todo") for c in queued)
    head = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert memory.positions(store, str(tmp_path / "list")) == {"0": head}
    before = store.db.execute("SELECT count(*) FROM procrastinate_jobs").fetchone()[0]

    again = watch(tmp_path, str(tmp_path / "list"), "--once", "--store", postgres_url)
    assert again.returncode == 0, again.stderr
    assert "0 messages read, queued 0 series, skipped 0" in again.stdout
    assert store.db.execute("SELECT count(*) FROM procrastinate_jobs").fetchone()[0] == before

    inboxes.append(repo, [STEP_1.replace(b"steps-1@", b"resent-1@")])  # a new message: only it is read
    third = watch(tmp_path, str(tmp_path / "list"), "--once", "--store", postgres_url)
    assert "1 message read" in third.stdout and "queued 0 series" in third.stdout, third.stdout
    store.close()


CLAIMED = inboxes.patch_mail(
    "[PATCH] block: a faster completion", "Faster.\n\nfio randread 4k, IOPS:\nbefore: 100000 IOPS\nafter: 120000 IOPS",
    inboxes.diff("block/blk-mq.c", 11, "int blk_line_eleven;"), msgid="fast-1@example.org")


@pytest.mark.integration
@pytest.mark.usefixtures("needs_root_tools", "postgres_server")
def test_a_queued_mail_run_by_an_agent_leaves_a_reply_mail_and_a_row_on_the_page(tmp_path, source, postgres_url,
                                                                                 cache):
    """What is real: the inbox, b4's grouping, GNU patch, iolab patch's
    experiment, the queue (procrastinate in PostgreSQL), a real `iolab agent`
    that builds both kernels with make (the stand-in tree of the fleet tests)
    and starts QEMU on them, the report and its reply block, the maildir. What
    is not: the stand-in image does not boot, so every cell fails (the test
    shortens the stored run's boot limit to 3 s, as the fleet test's own
    experiment does): the reply says so, with no number."""
    import json
    import mailbox

    from iolab.store import Store

    (cache / "kernels" / "tools" / "busybox-1").mkdir(parents=True, exist_ok=True)
    (cache / "kernels" / "tools" / "busybox-1" / "busybox").write_bytes(b"\x7fELF busybox")
    inboxes.append(tmp_path / "list" / "git" / "0.git", [CLAIMED])
    maildir, page = tmp_path / "Maildir", tmp_path / "www" / "index.html"
    args = [str(tmp_path / "list"), "--once", "--store", postgres_url, "--maildir", str(maildir), "--page", str(page)]
    queued = watch(tmp_path, *args)
    assert "queued 1 series" in queued.stdout, queued.stdout + queued.stderr
    store = Store(postgres_url)
    [run_id] = [row[0] for row in store.db.execute("SELECT id FROM runs")]
    stored = json.loads(store.run(run_id).experiment_json)
    stored.setdefault("vm", {}).update({"boot_timeout": 3.0, "timeout": 5.0})
    store.db.execute("UPDATE runs SET experiment_json = %s WHERE id = %s", (json.dumps(stored), run_id))
    assert "<td>queued</td>" in page.read_text() and not maildir.exists()

    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CACHE_HOME": str(cache.parent)}
    log = tmp_path / "agent.log"
    with open(log, "w") as out:
        agent = subprocess.run([sys.executable, "-m", "iolab.cli", "agent", "--until-idle", "--heartbeat", "1",
                                "--name", "robot-agent", "--store", postgres_url], env=env, stdout=out, stderr=out,
                               timeout=600)
    assert agent.returncode == 0, log.read_text()[-3000:]
    assert store.run(run_id).status == "complete", log.read_text()[-3000:]

    answered = watch(tmp_path, *args)
    assert answered.returncode == 0, answered.stderr
    assert f"answer <fast-1@example.org>: run {run_id}'s reply <" in answered.stdout, answered.stdout
    [message] = list(mailbox.Maildir(str(maildir)))
    assert message["In-Reply-To"] == "<fast-1@example.org>" and message["References"] == "<fast-1@example.org>"
    assert message["Subject"] == "Re: [PATCH] block: a faster completion"
    assert message["To"] == "Dev <dev@example.org>"
    assert "linux-block@vger.kernel.org" in message["Cc"] and "maint@example.org" in message["Cc"]
    assert message["Message-Id"].startswith("<") and "iolab.run" in message["Message-Id"]
    body = message.get_payload(decode=True).decode()
    flat = " ".join(body.split())
    assert "FAILED" in flat and "no sample from the VM" in flat, body  # the reply block (iolab.report.reply)
    assert re.search(r"IOPS\s+\+20\.0%\s+-\s+not reproduced", body), body  # the claim, answered without a number
    text = page.read_text()
    assert "[PATCH] block: a faster completion" in text and "<td>answered</td>" in text
    assert f'href="runs/run-{run_id}.html"' in text and (page.parent / "runs" / f"run-{run_id}.html").exists()
    again = watch(tmp_path, *args)  # answered once
    assert "answer <" not in again.stdout and len(list(mailbox.Maildir(str(maildir)))) == 1
    store.close()


def test_epochs_versions_and_names_outside_the_tree(tmp_path, source):
    """Two epochs read in order; v1 and v2 of one series: v1 superseded; a
    diff naming ../../etc/passwd is refused before GNU patch sees it; a
    series missing a patch is kept for the next pass."""
    from iolab.run.watch import inbox, one_pass

    v1 = inboxes.patch_mail("[PATCH] ext4: rename a line", "v1.", inboxes.diff("fs/ext4/inode.c", 3, "int three;"),
                            msgid="v1@example.org")
    v2 = inboxes.patch_mail("[PATCH v2] ext4: rename a line", "v2.", inboxes.diff("fs/ext4/inode.c", 3, "int 3;"),
                            msgid="v2@example.org", date=5)
    evil = inboxes.patch_mail("[PATCH] block: fix", "Fix.", inboxes.diff("block/blk-mq.c", 2, "x;").replace(
        "a/block/blk-mq.c", "a/../../etc/passwd").replace("b/block/blk-mq.c", "b/../../etc/passwd"),
        msgid="evil@example.org")
    half = inboxes.patch_mail("[PATCH 1/2] block: half", "Half.", inboxes.diff("block/blk-mq.c", 4, "y;"),
                              msgid="half-1@example.org")
    merged = inboxes.patch_mail("[PATCH] ext4: merged already", "In.", inboxes.diff(
        "fs/ext4/inode.c", 9, "int ext4_line_9;", before=inboxes.EXT4.replace("int ext4_line_9;", "int nine;")),
        msgid="merged@example.org")
    inboxes.append(tmp_path / "list" / "git" / "0.git", [BLOCK_FIX])
    inboxes.append(tmp_path / "list" / "git" / "1.git", [v1, evil, v2, half, merged])
    assert list(inbox.epochs(tmp_path / "list")) == ["0", "1"]
    messages, position = inbox.read(tmp_path / "list", {"0": "0" * 40, "1": "0" * 40}, backlog=10)  # unknown: backlog
    assert [m.epoch for m in messages] == ["0", "1", "1", "1", "1", "1"] and set(position) == {"0", "1"}
    said: list[str] = []
    tally = one_pass([tmp_path / "list"], None, queue=None, backlog=10, say=said.append)
    out = "\n".join(said)
    assert [s.message_id for s, _ in tally.queued] == ["v2@example.org"], out
    assert "<v1@example.org> \"[PATCH] ext4: rename a line\": superseded by v2 <v2@example.org>" in out
    assert "<evil@example.org> \"[PATCH] block: fix\": patch 1: names a file outside the source tree " \
        "('../../etc/passwd')" in out
    assert "<half-1@example.org> \"[PATCH 1/2] block: half\": v1: patch 2 of 2 not read yet (kept for the next " \
        "pass)" in out
    assert "<merged@example.org> \"[PATCH] ext4: merged already\": already in the source iolab has (GNU patch " \
        "finds it applied): linux-7.2.99.tar.gz: patch 1-of-1.patch does not apply: fs/ext4/inode.c: already " \
        "applied in this source" in out, out
    assert "5 messages to read" in said[0] and "blk-1@" not in out  # a first pass: the newest epoch's backlog


def test_the_page_sets_two_versions_side_by_side_and_the_reply_answers_the_cover():
    from iolab.report import robot

    def line(revision: int, word: str, run_id: int) -> robot.Line:
        answer = robot.Answer(run_id, "complete", (("IOPS", "+20.0%", "+3.1%", "*", word),), f"runs/run-{run_id}.html",
                              None)
        return robot.Line(f"[PATCH v{revision}] block: faster", revision, "dev@x block faster", f"v{revision}@x",
                          "queued", None, ({"label": "IOPS", "before": 1.0, "after": 1.2, "unit": "IOPS"},), answer)

    text = robot.page([line(1, "opposite", 3), line(2, "agrees", 7)])
    assert "versions side by side" in text and "<th>v1 (run 3)</th><th>v2 (run 7)</th>" in text
    assert "<td class=opposite>+3.1% * opposite</td><td class=agrees>+3.1% * agrees</td>" in text
    assert "IOPS: 1 -&gt; 1.2 IOPS" in text and 'href="runs/run-7.html"' in text
    assert "versions side by side" not in robot.page([line(2, "agrees", 7)])
    assert "<td class=undecided>undecided</td>" in robot.page([line(2, "undecided", 7)])
    assert set(robot.WORD_CLASS) == set(WORDS)
    headers = {"from": "Dev <dev@x>", "to": ["list@vger"], "cc": ["Dev <dev@x>", "m@y"], "subject": "[PATCH 0/2] x",
               "message_id": "cover@x", "references": ["older@x"]}
    mail = robot.reply(headers, "table\n", "iolab <bot@lab.example>", 7)
    assert (mail["To"], mail["Cc"], mail["Subject"]) == ("Dev <dev@x>", "list@vger, m@y", "Re: [PATCH 0/2] x")
    assert (mail["In-Reply-To"], mail["References"]) == ("<cover@x>", "<older@x> <cover@x>")
    assert mail["Message-Id"].endswith("@lab.example>")


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_without_once_it_polls_and_stops_cleanly_on_a_signal(tmp_path, signum):
    import signal
    import time

    inboxes.append(tmp_path / "list.git", [REPLY])
    environment = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp_path / "data")}
    process = subprocess.Popen([sys.executable, "-m", "iolab.cli", "watch", str(tmp_path / "list.git"), "--dry-run",
                                "--interval", "0.5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline(), process.stdout.readline(), process.stdout.readline()]
        assert "would queue 0 series, skipped 1" in lines[2], lines
        time.sleep(1.2)  # a second pass or two
        process.send_signal(getattr(signal, signum))
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and "Traceback" not in err, err
    assert "iolab watch: stopped by a signal" in err and out.count("iolab watch:") >= 1


def test_a_second_message_with_a_message_id_already_read_is_skipped_and_said(tmp_path):
    from iolab.run.watch import one_pass

    inboxes.append(tmp_path / "list.git", [BLOCK_FIX, BLOCK_FIX.replace(b"Drop it.", b"Drop it again.")])
    said: list[str] = []
    one_pass([tmp_path / "list.git"], None, queue=None, backlog=10, say=said.append)
    assert any("<blk-1@example.org>" in line and "its Message-Id again (the first message of that Message-Id, "
               "commit " in line for line in said), said
