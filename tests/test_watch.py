"""iolab watch, the list robot (iolab.run.watch): inboxes built here as the
lists' public-inbox mirrors are (a commit per message, in file m), a stand-in
kernel source unpacked in the test's cache, the real GNU patch and git, and
the suite's real PostgreSQL for the queue (procrastinate)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
