"""A mail's series placed on the source step by step, a mail written on another
base placed as a port, and a series cut short refused. The mails are real
`git format-patch` output from a temp git repo; the kernel trees are stand-ins
of a few C files (and, when iolab's cache has it, a file of the real 7.2
source); GNU patch and wiggle run for real; `iolab patch` runs as a user runs it."""

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from iolab import load
from iolab.kernels import port
from iolab.mail import read
from iolab.mail.series import PARTIAL, whole
from iolab.spec import MailPatch, MailRecord, MovedHunk
from tests.helpers import REPO

CORE = """\
// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 1991, 1992 Linus Torvalds
 */
#include <linux/blkdev.h>
#include <linux/blk-mq.h>

static int blk_queue_enter_slow(struct request_queue *q)
{
\tint ret = 0;

\tif (!q)
\t\treturn -EINVAL;
\tret = percpu_ref_tryget_live(&q->q_usage_counter);
\treturn ret;
}

void blk_start_plug(struct blk_plug *plug)
{
\tplug->mq_list = NULL;
\tplug->cached_rq = NULL;
\tplug->nr_ios = 1;
}
EXPORT_SYMBOL(blk_start_plug);
"""

HELPERS = "".join(f"""\
static unsigned int blk_mq_depth_{n}(struct blk_mq_hw_ctx *hctx)
{{
\tif (!hctx)
\t\treturn 0;
\treturn hctx->queue_depth >> {n};
}}

""" for n in range(10))  # 70 lines

ISSUE = """\
static void blk_mq_plug_issue(struct blk_plug *plug, bool from_schedule)
{
\tstruct request *rq;
\tunsigned int depth = 0;

\twhile ((rq = rq_list_pop(&plug->mq_list))) {
\t\tdepth++;
\t\tblk_mq_issue_one(rq, from_schedule);
\t}
\tplug->rq_count = 0;
}

"""

MQ_OLD = "// SPDX-License-Identifier: GPL-2.0\n#include <linux/blk-mq.h>\n\n" + ISSUE
# the tree the port lands on: 70 lines of new functions above, and the last context line said otherwise
MQ_NEW = ("// SPDX-License-Identifier: GPL-2.0\n#include <linux/blk-mq.h>\n\n" + HELPERS
          + ISSUE.replace("\tplug->rq_count = 0;", "\tWRITE_ONCE(plug->rq_count, 0);"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=A Developer", "-c", "user.email=a@example.org",
                           *args], check=True, capture_output=True, text=True).stdout


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    return repo


def commit(repo: Path, name: str, old: str, new: str, message: str) -> None:
    path = repo / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    git(repo, "commit", "-qam", message)


def format_patch(repo: Path, count: int, out: Path, *extra: str) -> list[Path]:
    git(repo, "format-patch", "-q", "--thread", "--base=HEAD~%d" % count, "-o", str(out), f"HEAD~{count}", *extra)
    return sorted(p for p in out.iterdir() if p.suffix == ".patch")


def tarball(tmp_path: Path, files: dict[str, str], name: str = "linux.tar.gz") -> Path:
    top = tmp_path / "tree" / name / "linux-7.2.99"
    for path, text in {**files, "Makefile": "VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n",
                       "Kconfig": "# stand-in\n"}.items():
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_text(text)
    out = tmp_path / name
    with tarfile.open(out, "w:gz") as archive:
        archive.add(top, arcname=top.name)
    return out


def iolab_patch(tmp_path: Path, *argv: object) -> subprocess.CompletedProcess:
    """`iolab patch ... --dry-run` in an empty working directory, with its own cache."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "iolab.cli", "patch", *map(str, argv), "--dry-run"], cwd=work,
                          capture_output=True, text=True, env=env)


def plug_series(tmp_path: Path) -> list[Path]:
    """[PATCH 1/2] adds two lines to blk_start_plug, [PATCH 2/2] changes one of them."""
    repo = repo_with(tmp_path, {"block/blk-core.c": CORE})
    commit(repo, "block/blk-core.c", "\tplug->nr_ios = 1;\n",
           "\tplug->nr_ios = 1;\n\tplug->rq_count = 0;\n\tplug->multiple_queues = false;\n",
           "block: count the requests in a plug\n\nIOPS 562K -> 574K.")
    commit(repo, "block/blk-core.c", "\tplug->rq_count = 0;\n", "\tplug->rq_count = 1;\n",
           "block: start a plug's count at one")
    return format_patch(repo, 2, tmp_path / "out", "--cover-letter")


def test_a_series_whose_second_patch_edits_the_firsts_lines_dry_runs_as_two_steps(tmp_path):
    cover, first, second = plug_series(tmp_path)
    box = tmp_path / "series.mbox"
    box.write_text(cover.read_text() + "\n" + first.read_text() + "\n" + second.read_text())
    done = iolab_patch(tmp_path, box, "--source", tarball(tmp_path, {"block/blk-core.c": CORE}))
    assert done.returncode == 0, done.stderr
    assert "repaired" not in done.stderr and "as a port" not in done.stderr  # both apply as written, one on the other
    assert ("patches: 2 patches\n  1/2 block: count the requests in a plug\n"
            "  2/2 block: start a plug's count at one\n") in done.stdout and "already" not in done.stdout
    assert "  kernels base, 1 block-count-the-reques, 2 block-start-a-plug-s-c: to build from linux.tar.gz" \
        in done.stdout
    assert list((tmp_path / "work").iterdir()) == []  # a dry run writes nothing where it runs
    written = next((tmp_path / "xdg").glob("iolab/experiments/mail-*/iolab-mail"))
    assert sorted(p.name for p in written.iterdir()) == ["0001-block-count-the-requests-in-a-plug.patch",
                                                         "0002-block-start-a-plug-s-count-at-one.patch"]
    assert "-\tplug->rq_count = 0;\n+\tplug->rq_count = 1;\n" in (written / "0002-block-start-a-plug-s-count-at-one"
                                                                   ".patch").read_text()


def test_a_series_missing_a_patch_is_refused_naming_it_unless_allowed(tmp_path):
    cover, first, second = plug_series(tmp_path)
    source = tarball(tmp_path, {"block/blk-core.c": CORE})
    done = iolab_patch(tmp_path, cover, second, "--source", source)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"iolab: {second}: patch 1/2 of this series not given (a truncated mbox, or a "
                                  "series not whole): give the whole series (b4 am MESSAGE-ID), or --allow "
                                  f"{PARTIAL} to run")
    assert len(done.stderr.splitlines()) == 1 and "unpacking" not in done.stderr  # refused before the source
    # allowed by name, it runs what it was given: 2/2 alone changes a line the source has not
    done = iolab_patch(tmp_path, cover, second, "--source", source, "--allow", PARTIAL)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"iolab: patch 1/2 of this series not given: run without it (--allow {PARTIAL})" in done.stderr
    assert (f"iolab: {second}: [PATCH 2/2] block: start a plug's count at one: block/blk-core.c: hunk #1 "
            "(@@ -20,7 +20,7 @@ void blk_start_plug(struct blk_plug *plug)) conflicts with this source") in done.stderr
    base = git(tmp_path / "repo", "rev-parse", "HEAD~2").strip()
    assert (f"(the mail says it was written on base-commit {base}; this source is linux.tar.gz; give the tree it "
            "was written for: --source pointing at a git tree that has that commit") in done.stderr


def test_a_truncated_mbox_is_refused_as_such(tmp_path):
    cover, first, second = plug_series(tmp_path)
    text = first.read_text() + "\n" + second.read_text()
    cut = tmp_path / "cut.mbox"
    cut.write_text(text[:text.index("+\tplug->rq_count = 1;")])  # inside 2/2's hunk
    done = iolab_patch(tmp_path, cut, "--source", tarball(tmp_path, {"block/blk-core.c": CORE}))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"iolab: {cut}: [PATCH 2/2] block: start a plug's count at one: its diff ends 4 line(s) "
                           "short of its last hunk's count (a truncated mbox?): give the whole mail "
                           "(b4 am MESSAGE-ID)\n")
    cut.write_text(text[:text.index("From ", len(first.read_text()))])  # 2/2 gone whole
    done = iolab_patch(tmp_path, cut, "--source", tarball(tmp_path, {"block/blk-core.c": CORE}))
    assert done.returncode == 2 and "patch 2/2 of this series not given" in done.stderr


def test_a_mail_written_on_another_base_applies_as_a_port_and_says_so(tmp_path):
    repo = repo_with(tmp_path, {"block/blk-mq.c": MQ_OLD})
    commit(repo, "block/blk-mq.c", "\t\tdepth++;\n", "\t\tdepth++;\n\t\tif (depth > 32)\n\t\t\tcond_resched();\n",
           "block: yield while issuing a long plug\n\nIOPS 562K -> 574K.")
    [mail] = format_patch(repo, 1, tmp_path / "out")
    out = tmp_path / "work" / "exp.toml"
    done = iolab_patch(tmp_path, mail, "--source", tarball(tmp_path, {"block/blk-mq.c": MQ_NEW}), "--write", out)
    assert done.returncode == 0, done.stderr
    assert (f"iolab: {mail}: does not apply to linux.tar.gz as given; placed as a port, written to "
            f"{out.parent}/iolab-mail/0001-block-yield-while-issuing-a-long-plug.port.patch\n") in done.stderr
    assert ("iolab:   block/blk-mq.c: hunk #1 (@@ -8,6 +8,8 @@ static void blk_mq_plug_issue(struct blk_plug *plug, "
            "bool from_schedule)) moved +70 lines, placed by GNU patch's fuzz (up to 2 context lines ignored); "
            "context differs: 'plug->rq_count = 0;' is 'WRITE_ONCE(plug->rq_count, 0);' here\n") in done.stderr
    experiment = load.load(out)  # loading checks the series applies, at fuzz 0, as a build applies it
    assert experiment.series.patches == ["iolab-mail/0001-block-yield-while-issuing-a-long-plug.port.patch"]
    [record] = experiment.mail.patches
    assert record.port == [MovedHunk(file="block/blk-mq.c", hunk=1, header=record.port[0].header, offset=70,
                                     how="fuzz", context=["'plug->rq_count = 0;' is "
                                                          "'WRITE_ONCE(plug->rq_count, 0);' here"])]
    assert "applied as a port (written on another base): iolab-mail/0001-block-yield-while-issuing-a-long-plug" \
           ".port.patch: block/blk-mq.c hunk #1 +70 lines (1 context line(s) differ)" in experiment.mail.header()
    ported = (out.parent / record.file).read_text()
    assert "@@ -78,6 +78,8 @@ static void blk_mq_plug_issue" in ported and "\tWRITE_ONCE(plug->rq_count, 0);\n" in ported


# -- the port alone, on a scratch tree -----------------------------------------------------------------


def _scratch(tmp_path: Path, text: str) -> Path:
    top = tmp_path / "scratch" / "linux"
    (top / "block").mkdir(parents=True)
    (top / "block" / "blk-mq.c").write_text(text)
    return top


def _unified(old: str, new: str) -> list[str]:
    import difflib

    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     "a/block/blk-mq.c", "b/block/blk-mq.c"))


RESCHED = ("\t\tdepth++;\n", "\t\tdepth++;\n\t\tif (depth > 32)\n\t\t\tcond_resched();\n")


def test_a_hunk_at_an_offset_only_moved(tmp_path):
    top = _scratch(tmp_path, MQ_NEW.replace("WRITE_ONCE(plug->rq_count, 0);", "plug->rq_count = 0;"))
    placed = port.place(top, "".join(_unified(MQ_OLD, MQ_OLD.replace(*RESCHED))))
    assert [(m.hunk, m.offset, m.how, m.context) for m in placed.moved] == [(1, 70, "offset", ())]
    assert "\t\tif (depth > 32)\n" in (top / "block" / "blk-mq.c").read_text()


def test_an_inner_context_line_changed_is_placed_by_wiggle(tmp_path):
    tree = MQ_NEW.replace("blk_mq_issue_one(rq, from_schedule);", "blk_mq_issue_one(rq, from_schedule, true);")
    top = _scratch(tmp_path, tree)
    placed = port.place(top, "".join(_unified(MQ_OLD, MQ_OLD.replace(*RESCHED))))
    [moved] = placed.moved
    assert (moved.offset, moved.how) == (70, "wiggle")
    assert moved.context == ("'blk_mq_issue_one(rq, from_schedule);' is 'blk_mq_issue_one(rq, from_schedule, "
                             "true);' here", "'plug->rq_count = 0;' is 'WRITE_ONCE(plug->rq_count, 0);' here")
    assert "\t\tdepth++;\n\t\tif (depth > 32)\n\t\t\tcond_resched();\n\t\tblk_mq_issue_one(rq, from_schedule, true);" \
           in (top / "block" / "blk-mq.c").read_text()
    check = tmp_path / "port.patch"  # the port applies to the tree as it was, at fuzz 0
    check.write_text(placed.diff)
    fresh = _scratch(tmp_path / "again", tree)
    assert port.gnu_patch(fresh, check).returncode == 0


FAR = MQ_OLD.replace("rq_list_pop(&plug->mq_list)", "elv_next(&plug->xyz_list)").replace(
    "\t\tdepth++;\n\t\tblk_mq_issue_one(rq, from_schedule);\n",
    "\t\tcount_thing(zz);\n\t\tblk_mq_issue_two(rq, from_elsewhere);\n").replace("rq_count", "foo_count")


@pytest.mark.parametrize("mail, changed, header, why", [
    # the line it removes is said otherwise here
    (MQ_OLD, MQ_OLD.replace("\t\tdepth++;\n", "\t\tdepth += 1;\n"), "@@ -7,7 +7,7 @@",
     "it applies neither as given nor reversed (GNU patch), nor with fuzz 2, nor word by word (wiggle)"),
    # wiggle aligns a few words of a hunk whose context is not here at all: refused, not placed
    (FAR, FAR.replace("\t\tcount_thing(zz);\n", "\t\tcount_thing(zz);\n\t\tmore_stuff();\n"),
     "@@ -8,6 +8,7 @@", "wiggle finds only some of its words (its removed lines, or most of its context, are not here)"),
])
def test_a_hunk_with_a_conflict_is_refused_naming_it(tmp_path, mail, changed, header, why):
    top = _scratch(tmp_path, MQ_NEW.replace("\t\tdepth++;\n", "\t\tdepth += 2;\n"))
    with pytest.raises(port.Conflict) as refused:
        port.place(top, "".join(_unified(mail, changed)))
    assert (refused.value.path, refused.value.number, refused.value.header) == ("block/blk-mq.c", 1, header)
    assert str(refused.value) == f"block/blk-mq.c: hunk #1 ({header}) conflicts with this source: {why}"


def test_a_port_carries_no_new_file():
    with pytest.raises(port.PortError, match="created, deleted, renamed or binary"):
        port.place(Path("/nonexistent"), "--- /dev/null\n+++ b/block/new.c\n@@ -0,0 +1 @@\n+int x;\n")


def test_the_report_header_names_a_port_and_its_hunks():
    record = MailRecord(title="block: yield", patches=[MailPatch(
        file="iolab-mail/0001-block-yield.port.patch", sha256="0" * 64,
        port=[MovedHunk(file="block/blk-mq.c", hunk=1, header="@@ -7,6 +7,8 @@", offset=70, how="fuzz",
                        context=["'a' is 'b' here"])])])
    assert record.header() == ("mail: no Message-Id; applied as a port (written on another base): "
                               "iolab-mail/0001-block-yield.port.patch: block/blk-mq.c hunk #1 +70 lines "
                               "(1 context line(s) differ)")


def test_whole_reads_a_series_as_given(tmp_path):
    cover, first, second = plug_series(tmp_path)
    assert whole(read([cover, first, second]), ()) == []
    assert whole(read([first]), (PARTIAL,)) == [f"patch 2/2 of this series not given: run without it "
                                                f"(--allow {PARTIAL})"]


# -- on the real 7.2 source, when iolab's cache has it unpacked ------------------------------------------


def _real_72() -> Path:
    from iolab.kernels import sources

    for found in sorted(sources.cache_root().glob("*/source.json")):
        if '"linux-source-7.2"' in found.read_text() and (found.parent / "linux" / "Makefile").is_file():
            return found.parent / "linux"
    pytest.skip("no unpacked linux-source-7.2 in iolab's cache (iolab kernel build unpacks it)")


def _older_base(real: str) -> tuple[list[str], int, str]:
    """7.2's block/blk-mq.c as a mail written on an older base saw it: 70 lines above
    blk_mq_end_request not there yet, and a line of its body said otherwise; the line the
    mail adds a line after, and the line as 7.2 says it."""
    lines = real.splitlines(keepends=True)
    at = next(k for k, line in enumerate(lines) if line.startswith("void blk_mq_end_request(struct request *rq"))
    body = next(k for k in range(at, at + 20) if lines[k].strip().startswith("if ("))
    old = lines[:at - 80] + lines[at - 10:]  # 70 lines above it not written yet
    k = body - 70
    context = old[k + 2]
    old[k + 2] = context.replace(";", "; /* old */", 1) if ";" in context else context.rstrip("\n") + " /* old */\n"
    return old, k, context


def _real_mail(tmp_path: Path, real: str) -> tuple[Path, list[str], int, str]:
    old, k, context = _older_base(real)
    repo = repo_with(tmp_path, {"block/blk-mq.c": "".join(old)})
    (repo / "block" / "blk-mq.c").write_text("".join(old[:k + 1] + ["\tmight_sleep();\n"] + old[k + 1:]))
    git(repo, "commit", "-qam", "block: may sleep in blk_mq_end_request\n\nfio randread: IOPS 562K -> 574K.")
    [mail] = format_patch(repo, 1, tmp_path / "out")
    return mail, old, k, context


def test_a_real_72_file_takes_a_hunk_written_70_lines_higher_as_a_port(tmp_path):
    """A mail written on an older base of block/blk-mq.c (_older_base), placed on 7.2's file."""
    from iolab.kernels.patches import pristine_files

    real = pristine_files(_real_72(), ["block/blk-mq.c"])["block/blk-mq.c"]
    assert real is not None
    mail, old, k, context = _real_mail(tmp_path, real)
    top = tmp_path / "scratch" / "linux"
    (top / "block").mkdir(parents=True)
    (top / "block" / "blk-mq.c").write_text(real)
    diff = mail.read_text().split("\n---\n", 1)[1]
    [moved] = port.place(top, diff).moved
    assert (moved.file, moved.hunk, moved.offset) == ("block/blk-mq.c", 1, 70)
    assert moved.context == (f"'{old[k + 2].strip()}' is '{context.strip()}' here",)
    assert "\tmight_sleep();\n" in (top / "block" / "blk-mq.c").read_text()


def test_a_git_tree_as_source_builds_on_the_mails_base_commit(tmp_path):
    """--source a git tree, no --commit: the mail's base-commit, where the tree has it (the tree
    moved on since, so at its head the mail would need a port); one it has not is refused."""
    kernel = {"block/blk-mq.c": MQ_OLD, "Makefile": "VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n",
              "Kconfig": "# stand-in\n"}
    repo = repo_with(tmp_path, kernel)
    base = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "block/blk-mq.c", *RESCHED, "block: yield while issuing a long plug")
    [mail] = format_patch(repo, 1, tmp_path / "out")
    git(repo, "reset", "-q", "--hard", base)
    (repo / "block" / "blk-mq.c").write_text(MQ_NEW)
    git(repo, "commit", "-qam", "block: helpers, and the plug's count written once")
    done = iolab_patch(tmp_path, mail, "--source", repo, "--verbose")  # the experiment's text after the plan
    assert done.returncode == 0, done.stderr
    assert f"iolab: --source {repo} is a git tree: building on the mail's base-commit {base[:12]}\n" in done.stderr
    assert "as a port" not in done.stderr
    assert f'source = "{repo}"\ncommit = "{base}"\n' in done.stdout
    (tmp_path / "out" / "gone.patch").write_text(mail.read_text().replace(base, "1" * 40))
    done = iolab_patch(tmp_path, tmp_path / "out" / "gone.patch", "--source", repo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"iolab: --source {repo}: the mail's base-commit {'1' * 40} is not in this git tree: "
                           "fetch it (git fetch), or give --commit\n")


def test_iolab_patch_on_the_real_72_source_runs_that_mail_as_a_port(tmp_path):
    """The same mail through `iolab patch` on the cached 7.2 source itself (its version named,
    so no package index is read); the experiment is written in tmp_path, the source only read."""
    import json

    from iolab.kernels.patches import pristine_files

    root = _real_72()
    version = json.loads((root.parent / "source.json").read_text())["identity"].removeprefix("debian:")
    real = pristine_files(root, ["block/blk-mq.c"])["block/blk-mq.c"]
    assert real is not None
    mail, _, _, _ = _real_mail(tmp_path, real)
    out = tmp_path / "exp" / "exp.toml"
    out.parent.mkdir()
    done = subprocess.run([sys.executable, "-m", "iolab.cli", "patch", str(mail), "--source", f"debian:{version}",
                           "--write", str(out), "--dry-run"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "does not apply to linux-source-7.2 " in done.stderr and "placed as a port" in done.stderr
    assert "block/blk-mq.c: hunk #1 (@@ " in done.stderr and ") moved +70 lines, placed by GNU patch's fuzz" in done.stderr
    experiment = load.load(out)
    [record] = experiment.mail.patches
    assert [(m.file, m.offset, m.how, len(m.context)) for m in record.port] == [("block/blk-mq.c", 70, "fuzz", 1)]


def test_hunks_are_placed_one_by_one_and_only_those_that_moved_are_said(tmp_path):
    """Two hunks in one file: the first at its lines, the second 70 lines lower (the tree
    has new functions between them); numbers count per file."""
    mail = CORE + "\n" * 4 + ISSUE
    changed = mail.replace("\tplug->nr_ios = 1;\n", "\tplug->nr_ios = 1;\n\tplug->rq_count = 0;\n").replace(
        *RESCHED)
    top = tmp_path / "scratch" / "linux"
    (top / "block").mkdir(parents=True)
    (top / "block" / "blk-mq.c").write_text(CORE + "\n" * 4 + HELPERS + ISSUE)
    placed = port.place(top, "".join(_unified(mail, changed)))
    assert [(m.hunk, m.offset, m.how) for m in placed.moved] == [(2, 70, "offset")]
    assert (top / "block" / "blk-mq.c").read_text() == CORE.replace(
        "\tplug->nr_ios = 1;\n", "\tplug->nr_ios = 1;\n\tplug->rq_count = 0;\n") + "\n" * 4 + HELPERS + \
        ISSUE.replace(*RESCHED)
