"""A patch mail read once: every input form (the seeds as given, real git
format-patch output, mboxes and b4 am output, plain diffs, web archive copies)
becomes one Mail of Patches; what is not a patch is a MailError."""

import subprocess
from pathlib import Path

import pytest

from iolab.mail import Mail, MailError, read

SEEDS = Path(__file__).parent / "fixtures" / "mail"


def one(path: Path) -> Mail:
    mail = read([path])
    assert len(mail.patches) == 1
    return mail


def test_a_web_archive_copy_with_lost_context_prefixes():
    mail = one(SEEDS / "ext4-write-begin-large-folio.txt")
    patch = mail.patches[0]
    assert mail.title == patch.title == "ext4: avoid tail write_begin walk for uptodate folios"
    assert (patch.revision, patch.counter, patch.total, patch.form) == (3, 2, 2, "web")
    assert (patch.author, patch.date, patch.message_id) == ("Jia Zhu", "Mon Jun 08 2026 - 23:52:41 EST", None)
    assert "write_u1k 1.418 0.3405 76.0%" in patch.body and patch.body.startswith("Ext4 buffered writes")
    assert "1 file changed" not in patch.body and "diff --git" not in patch.body
    assert patch.diff.startswith("diff --git a/fs/ext4/inode.c b/fs/ext4/inode.c\n")
    assert "@@ -1220,7 +1221,7 @@" in patch.diff
    assert mail.text() == patch.body


def test_a_web_archive_copy_with_blank_lines_between_its_headers_and_a_signature():
    patch = one(SEEDS / "f2fs-dio-iostat.txt").patches[0]
    assert (patch.title, patch.author, patch.form) == ("f2fs: skip direct I/O iostat work when disabled",
                                                       "Wenjie Qi", "web")
    assert "direct_write recheck 66873.51 ns 56309.44 ns" in patch.body
    assert patch.diff.rstrip().endswith("struct bio *bio, struct bio_post_read_ctx *ctx) {}")
    assert "2.43.0" not in patch.diff and patch.diff.count("diff --git") == 2


def test_a_copy_on_one_line():
    mail = one(SEEDS / "f2fs-nat-readahead.txt")
    patch = mail.patches[0]
    assert patch.form == "one-line"
    assert mail.title == "f2fs: optimize NAT block loading during checkpoint write"
    assert (patch.author, patch.date) == ("Yongpeng Yang", "Tue, 13 Jan 2026 23:23:15 +0800")
    assert patch.body.startswith("Under stress tests") and "|Before change|1205" in patch.body
    assert "fs/f2fs/node.c | 14" not in patch.body
    assert patch.diff.startswith("diff --git a/fs/f2fs/node.c b/fs/f2fs/node.c index 63252ff1e5c3..74992fd9c9b6")
    assert patch.diff.endswith("err = __flush_nat_entry_set(sbi, set, cpc);")


def test_an_mbox_of_one_mail():
    mail = one(SEEDS / "erofs-compressed-dio-v2.mbox")
    patch = mail.patches[0]
    assert (mail.title, mail.message_id) == ("erofs: add direct I/O support for compressed data",
                                             "20250923135421.460215-1-guochunhai@vivo.com")
    assert (patch.revision, patch.form, patch.author) == (2, "mail", "Chunhai Guo <guochunhai@vivo.com>")
    assert patch.date == "Tue, 23 Sep 2025 21:54:21 +0800"
    assert "The table below shows" in patch.body and "diff --git" not in patch.body
    assert patch.diff.startswith("diff --git a/fs/erofs/data.c") and not patch.diff.rstrip().endswith("2.34.1")
    assert "\n-- \n" not in patch.diff


def test_the_seeds_without_a_diff_are_refused():
    with pytest.raises(MailError, match="no patch in it"):  # a reply in the thread
        read([SEEDS / "block-task-context-completion.txt"])
    with pytest.raises(MailError, match="no diff in it"):  # an archive's copy of a reply, no diff
        read([SEEDS / "erofs-compressed-dio.txt"])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=A Developer", "-c", "user.email=a@example.org",
                           *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def series(tmp_path) -> list[Path]:
    """git format-patch --cover-letter of two commits: real files, as git writes them."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "fs").mkdir()
    (repo / "fs" / "a.c").write_text("int a;\n\nint b;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / "fs" / "a.c").write_text("int a;\nint a2;\n\nint b;\n")
    git(repo, "commit", "-qam", "fs: add a2\n\nFaster: 100 -> 120 MiB/s.")
    (repo / "fs" / "a.c").write_text("int a;\nint a2;\n\nint b;\nint b2;\n")
    git(repo, "commit", "-qam", "fs: add b2\n\nThe second step.")
    out = tmp_path / "out"
    git(repo, "format-patch", "-q", "--cover-letter", "-v2", "-o", str(out), "HEAD~2")
    files = sorted(out.iterdir())
    cover = files[0]
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "fs: add two ints")
                     .replace("*** BLURB HERE ***", "Together: 562K -> 574K IOPS."))
    return files


def test_git_format_patch_files_with_a_cover_letter(series):
    mail = read(list(reversed(series)))  # given in any order: [PATCH n/m] orders them
    assert mail.title == "fs: add two ints"
    assert [p.title for p in mail.patches] == ["fs: add a2", "fs: add b2"]
    assert [(p.counter, p.total, p.revision) for p in mail.patches] == [(1, 2, 2), (2, 2, 2)]
    assert mail.message_id is None and mail.patches[0].message_id is None  # format-patch writes none
    assert mail.author == "A Developer <a@example.org>"
    assert mail.cover is not None and "562K -> 574K IOPS" in mail.cover and "a.c |" not in mail.cover
    assert mail.text().index("562K") < mail.text().index("100 -> 120") < mail.text().index("second step")
    assert all(p.diff.startswith("diff --git a/fs/a.c b/fs/a.c") for p in mail.patches)
    assert all(p.form == "mail" and p.diff.endswith(" int b;\n+int b2;\n") is (p.counter == 2) for p in mail.patches)


def test_an_mbox_of_a_series_with_its_cover_and_a_reply(series, tmp_path):
    """An mbox as a list archive gives it (b4 mbox, a mail client's folder):
    messages in any order with Message-Ids, threaded, and a reply with a
    trailer; the series comes out in [PATCH n/m] order, the reply left out."""
    parts = []
    for n, path in enumerate(series):
        text = path.read_text()
        ids = f"Message-Id: <{n}.series@example.org>\n" + ("" if n == 0 else "In-Reply-To: <0.series@example.org>\n")
        parts.append(text.replace("\nSubject:", f"\n{ids}Subject:", 1))
    reply = ("From nobody Mon Sep 17 00:00:00 2001\nFrom: R <r@example.org>\nSubject: Re: [PATCH v2 1/2] fs: add a2\n"
             "Message-Id: <r@example.org>\nIn-Reply-To: <1.series@example.org>\nDate: Tue, 1 Jul 2026 10:00:00 +0000\n"
             "\n> Faster\n\nReviewed-by: R <r@example.org>\n")
    box = tmp_path / "thread.mbox"
    box.write_text(parts[2] + "\n" + reply + "\n" + parts[0] + "\n" + parts[1])
    mail = read([box])
    assert [p.title for p in mail.patches] == ["fs: add a2", "fs: add b2"]
    assert [p.message_id for p in mail.patches] == ["1.series@example.org", "2.series@example.org"]
    assert (mail.title, mail.message_id) == ("fs: add two ints", "0.series@example.org")
    assert "Reviewed-by" not in mail.text()


def test_a_series_with_a_patch_not_given_says_which(series, tmp_path):
    """One mail of a series may be tried alone (a web copy of patch 2/2, as
    seed 004): the mail says which of the series were not given."""
    box = tmp_path / "partial.mbox"
    box.write_text(series[0].read_text() + "\n" + series[2].read_text())
    mail = read([box])
    assert [p.counter for p in mail.patches] == [2] and mail.missing == (1,) and mail.title == "fs: add two ints"
    assert read([SEEDS / "ext4-write-begin-large-folio.txt"]).missing == (1,)
    assert read([series[1], series[2]]).missing == ()


def test_b4_am_output(series, tmp_path):
    """b4 am writes an .mbx of the series (its 'From git@z' separators, no
    cover) and a .cover beside it: both read, the cover not applied."""
    mbx = tmp_path / "v2_fs_add_two_ints.mbx"
    mbx.write_text("".join("From git@z Thu Jan  1 00:00:00 1970\n" + p.read_text().split("\n", 1)[1] + "\n"
                           for p in series[1:]))
    mail = read([mbx])
    assert [p.counter for p in mail.patches] == [1, 2] and mail.cover is None and mail.title == "fs: add a2"
    mail = read([mbx, series[0]])
    assert mail.title == "fs: add two ints" and len(mail.patches) == 2


def test_real_b4_am_output_with_its_cover_found_beside_it(tmp_path):
    """b4 am -m of a thread git format-patch --cover-letter --thread wrote
    (fixtures readahead-b4.*): its .mbx alone brings the .cover b4 wrote beside it."""
    mail = read([SEEDS / "readahead-b4.mbx"])
    assert [p.subject for p in mail.patches] == [
        "[PATCH 1/2] mm/readahead: start sequential reads with a larger first window",
        "[PATCH 2/2] block: double the minimum readahead of a queue"]
    assert mail.title == "readahead: larger windows for sequential readers on HDDs" and "[seqread]" in mail.text()
    assert mail.cover is not None and "diff --git" not in mail.cover
    alone = tmp_path / "x.mbx"
    alone.write_text((SEEDS / "readahead-b4.mbx").read_text())
    assert read([alone]).cover is None and read([alone]).title.startswith("mm/readahead: start")
    assert read([SEEDS / "readahead-b4.mbx", SEEDS / "readahead-b4.cover"]).title == mail.title  # named too: once
    assert [p.counter for p in read([SEEDS / "readahead-series.mbox"]).patches] == [1, 2]


def test_a_plain_diff_is_named_after_its_first_file_never_a_hunk_header(tmp_path):
    path = tmp_path / "fix.diff"
    path.write_text("--- a/fs/ext4/inode.c\n+++ b/fs/ext4/inode.c\n@@ -20,7 +20,7 @@ int f(void)\n x\n-y\n+z\n x\n"
                    "--- a/fs/ext4/file.c\n+++ b/fs/ext4/file.c\n@@ -1,1 +1,1 @@\n-a\n+b\n")
    mail = one(path)
    assert mail.title == "fs/ext4/inode.c (and 1 more file)"
    assert (mail.patches[0].form, mail.patches[0].body, mail.message_id) == ("diff", "", None)
    assert mail.patches[0].diff == path.read_text()


def test_prose_above_a_plain_diff_gives_the_title_and_the_body(tmp_path):
    path = tmp_path / "fix.patch"
    path.write_text("block: batch tag allocation\n\nIOPS 562K -> 574K.\n\ndiff --git a/block/blk-mq.c b/block/blk-mq.c\n"
                    "--- a/block/blk-mq.c\n+++ b/block/blk-mq.c\n@@ -1 +1 @@\n-a\n+b\n")
    mail = one(path)
    assert (mail.title, mail.patches[0].body, mail.patches[0].form) == ("block: batch tag allocation",
                                                                        "IOPS 562K -> 574K.", "diff")


def test_web_copies_of_a_series_are_put_in_order(tmp_path):
    files = []
    for n in (2, 1):
        path = tmp_path / f"p{n}.txt"
        path.write_text(f"[PATCH {n}/2] mm: step {n}\nFrom: Someone\nDate: Mon Jun 08 2026\nStep {n}.\n---\n"
                        f"diff --git a/mm/x.c b/mm/x.c\n--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,2 +1,2 @@\nctx\n-a{n}\n+b{n}\n")
        files.append(path)
    mail = read(files)
    assert [p.title for p in mail.patches] == ["mm: step 1", "mm: step 2"] and mail.title == "mm: step 1"
    assert [p.form for p in mail.patches] == ["web", "web"] and mail.patches[0].body == "Step 1."


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("just some words\nand more\n", "no diff in it"),
    ("@@ -20,7 +20,7 @@\n x\n-y\n+z\n", "no diff in it"),
    ("From: a@b\nSubject: hello\n\nno patch here\n", "no patch in it"),
    ("\x00\x01binary", "binary"),
])
def test_what_is_not_a_patch_is_refused(tmp_path, text, message):
    path = tmp_path / "input"
    path.write_text(text)
    with pytest.raises(MailError, match=message):
        read([path])


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(MailError, match="No such file"):
        read([tmp_path / "nope.patch"])


DIFF = ("diff --git a/fs/x.c b/fs/x.c\nindex 1..2 100644\n--- a/fs/x.c\n+++ b/fs/x.c\n@@ -1,3 +1,3 @@\n int a;\n"
        "-int b = 1;\n+int b = 2; /* caf\u00e9 */\n int c;\n")


@pytest.mark.parametrize("encoding", ["quoted-printable", "base64"])
def test_a_mail_as_a_client_sends_it(tmp_path, encoding):
    """Encoded body, CRLF line ends, an encoded author, a folded subject with
    a list prefix, one patch of a larger series: as Python's email writes it."""
    import email.policy
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "J\u00f6rg M\u00fcller <j@example.org>"
    message["Subject"] = "[PATCH net-next v2 3/5] net: do less work in the hot path of xmit for small packets"
    message["Date"] = "Tue, 09 Jun 2026 11:52:41 +0800"
    message["Message-ID"] = "<abc@example.org>"
    message.set_content("Faster: 562K -> 574K IOPS " + "x" * 90 + "\n\nSigned-off-by: J\u00f6rg <j@example.org>\n---\n"
                        " fs/x.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n" + DIFF + "-- \n2.43.0\n",
                        cte=encoding)
    path = tmp_path / "mail.eml"
    path.write_bytes(message.as_bytes(policy=email.policy.SMTP))
    assert b"\r\n" in path.read_bytes() and b"=?utf-8?" in path.read_bytes()
    mail = read([path])
    patch = mail.patches[0]
    assert mail.title == "net: do less work in the hot path of xmit for small packets"
    assert (patch.revision, patch.counter, patch.total, mail.missing) == (2, 3, 5, (1, 2, 4, 5))
    assert (mail.author, mail.message_id) == ("J\u00f6rg M\u00fcller <j@example.org>", "abc@example.org")
    assert patch.body == "Faster: 562K -> 574K IOPS " + "x" * 90 + "\n\nSigned-off-by: J\u00f6rg <j@example.org>"
    assert patch.diff == DIFF


def test_a_patch_attached_to_a_mail(tmp_path):
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "A <a@example.org>"
    message["Subject"] = "[RFC PATCH] mm: read ahead more"
    message["Message-ID"] = "<att@example.org>"
    message.set_content("Please see the attached patch.\n\nThroughput 4994 MiB/s -> 5762 MiB/s.\n")
    message.add_attachment(("From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH] mm\n\n"
                            "Its own words.\n---\n" + DIFF).encode(), maintype="text", subtype="x-patch",
                           filename="0001-mm.patch")
    path = tmp_path / "mail.eml"
    path.write_bytes(bytes(message))
    patch = read([path]).patches[0]
    assert patch.title == "mm: read ahead more" and patch.diff == DIFF
    assert patch.body == "Please see the attached patch.\n\nThroughput 4994 MiB/s -> 5762 MiB/s.\n\nIts own words."


def test_an_archive_copy_whose_headers_are_tab_separated(tmp_path):
    """lkml.org's copy: 'From<TAB>Name', 'Subject<TAB>[PATCH ...]'."""
    path = tmp_path / "copy.txt"
    path.write_text("From\tJia Zhu <>\nSubject\t[PATCH v3 2/2] ext4: avoid tail walk\nDate\tTue, 9 Jun 2026\n\n"
                    "Ext4 writes are faster.\n\n---\n" + DIFF.replace("\n ", "\n"))
    mail = read([path])
    assert (mail.title, mail.author, mail.date, mail.patches[0].form) == ("ext4: avoid tail walk", "Jia Zhu <>",
                                                                           "Tue, 9 Jun 2026", "web")
    assert mail.patches[0].body == "Ext4 writes are faster."


def test_a_mail_whose_headers_name_fields_with_an_underscore_is_a_mail():
    # RFC 5322 field names are any printable characters but the colon: Outlook adds msip_labels:, and the
    # corpus's block rt-quiesce mail was read as a web copy, its quoted-printable diff undecoded
    # (files 'block/blk-core.c=0A=', the title its Return-Path: line)
    mail = one(Path(__file__).parent / "corpus" / "mails" / "linux-block-rt-quiesce-sync-lock.eml")
    patch = mail.patches[0]
    assert patch.form == "mail" and patch.message_id is not None
    assert patch.title == "block/blk-mq: fix RT kernel regression with dedicated quiesce_sync_lock"
    assert patch.diff.startswith("diff --git a/block/blk-core.c b/block/blk-core.c\n")
    assert "=0A=" not in patch.diff



@pytest.mark.parametrize("name", ["linux-block-rt-quiesce-sync-lock",  # quoted-printable, Outlook's =0A=
                                  "linux-f2fs-devel-inline-crypto-serialize"])  # base64
def test_a_mail_sent_transfer_encoded_is_applied_from_its_decoded_diff(tmp_path, name):
    # GNU patch reads a file's bytes: the mail's own file, quoted-printable or base64, was given to it as is
    # ("malformed patch at line 275: ts *lim, int node_id)=0A=", "Only garbage was found in the patch input.")
    from iolab.mail import files

    mail = one(Path(__file__).parent / "corpus" / "mails" / f"{name}.eml")
    (written,) = files.write(mail, [None], tmp_path, "linux-source-7.2")
    assert written.written and written.path.parent == tmp_path / files.FOLDER
    check = subprocess.run(["patch", "-p1", "--dry-run", "-d", str(tmp_path), "-i", str(written.path)],
                           capture_output=True, text=True)
    assert "malformed" not in check.stderr and "garbage" not in check.stderr
    assert mail.patches[0].diff.rstrip("\n") in written.path.read_text()
