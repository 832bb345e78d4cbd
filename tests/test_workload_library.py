"""The workload library: area files load, and real patches choose the workloads of their area."""

import shutil
from pathlib import Path

import pytest

from iolab import load
from iolab.engines import fio, fio_options
from iolab.workloads import compose, library

PATCHES = Path(__file__).parent.parent / "scenarios" / "patches"


def diff(path: str, function: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -10,6 +10,7 @@ {function}\n x\n+y\n x\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(f"Subject: [PATCH] {name}\n\n{text}")
    return path


def test_every_area_file_loads_and_names_are_unique():
    areas = library.load_areas()
    names = [w.name for a in areas for w in a.workload]
    assert {a.area for a in areas} >= {"fs/ext4", "fs/xfs", "fs/btrfs", "fs/f2fs", "fs/erofs", "fs/iomap", "block/",
                                       "mm/filemap.c", "mm/readahead.c", "mm/page-writeback.c", "io_uring/",
                                       "generic buffered/direct I/O"}
    assert len(names) == len(set((a.area, w.name) for a in areas for w in a.workload))


@pytest.mark.parametrize("patch, area, kind, workloads", [
    ("ext4-write-begin-uptodate.patch", "fs/ext4", "buffered-overwrite", {"ext4 write_u1k", "ext4 pwrite_u1k"}),
    ("f2fs-dio-iostat-skip.patch", "fs/f2fs", "direct", {"f2fs direct_read", "f2fs direct_write"}),
    ("f2fs-nat-readahead.patch", "fs/f2fs", "metadata", {"f2fs churn"}),
])
def test_the_seed_patches_choose_their_filesystem_and_path(patch, area, kind, workloads):
    info = library.read_patch(PATCHES / patch)
    chosen = library.select([info], library.load_areas()).chosen
    assert {c.workload.name for c in chosen} == workloads
    assert {(c.area.area, c.workload.kind) for c in chosen} == {(area, kind)}


@pytest.mark.parametrize("path, function, area", [
    ("fs/iomap/buffered-io.c", "static int iomap_write_begin(struct iomap_iter *iter,", "fs/iomap"),
    ("fs/xfs/xfs_iomap.c", "xfs_direct_write_iomap_begin(", "fs/xfs"),
    ("fs/btrfs/inode.c", "static int btrfs_dio_iomap_begin(struct inode *inode,", "fs/btrfs"),
    ("fs/erofs/zdata.c", "static int z_erofs_read_folio(struct file *file,", "fs/erofs"),
    ("block/blk-mq.c", "void blk_mq_end_request(struct request *rq, blk_status_t error)", "block/"),
    ("mm/filemap.c", "ssize_t filemap_read(struct kiocb *iocb,", "mm/filemap.c"),
    ("mm/readahead.c", "void page_cache_ra_order(struct readahead_control *ractl,", "mm/readahead.c"),
    ("mm/page-writeback.c", "static int balance_dirty_pages(struct bdi_writeback *wb,", "mm/page-writeback.c"),
    ("io_uring/rw.c", "static int io_read(struct io_kiocb *req, unsigned int issue_flags)", "io_uring/"),
    ("fs/buffer.c", "int __block_write_begin(struct folio *folio, loff_t pos,", "generic buffered/direct I/O"),
])
def test_paths_map_to_their_area(tmp_path, path, function, area):
    info = library.read_patch(write(tmp_path, "x.patch", diff(path, function)))
    selection = library.select([info], library.load_areas())
    assert {c.area.area for c in selection.chosen} == {area} and selection.unknown == []


def test_hints_narrow_an_area_and_no_hint_takes_its_default_workloads(tmp_path):
    areas = library.load_areas()
    dio = library.read_patch(write(tmp_path, "a.patch", diff("fs/ext4/file.c", "static ssize_t ext4_dio_read_iter(")))
    assert {c.workload.name for c in library.select([dio], areas).chosen} == {"ext4 dio_read"}
    other = library.read_patch(write(tmp_path, "b.patch", diff("fs/ext4/super.c", "static int qq(")))
    ext4 = next(a for a in areas if a.area == "fs/ext4")
    assert [c.workload.name for c in library.select([other], areas).chosen] == [w.name for w in ext4.workload
                                                                                  if w.default]
    assert len(ext4.workload) > len([w for w in ext4.workload if w.default])


def test_a_patch_of_no_known_area_names_its_paths(tmp_path):
    info = library.read_patch(write(tmp_path, "gpu.patch", diff("drivers/gpu/drm/x.c", "int f(")))
    selection = library.select([info], library.load_areas())
    assert selection.chosen == [] and selection.unknown == ["drivers/gpu/drm/x.c"]
    message = library.unknown_message(selection)
    assert "drivers/gpu/drm/x.c" in message and "[series] patches" in message


def test_the_written_experiment_loads_as_a_series(tmp_path):
    infos = [library.read_patch(PATCHES / name) for name in ("f2fs-dio-iostat-skip.patch",
                                                             "ext4-write-begin-uptodate.patch")]
    selection = library.select(infos, library.load_areas())
    choice = compose.compose(infos, selection, source="debian:linux-source-7.2", in_source=[True, True],
                             base_dir=tmp_path, timing="wall", command="iolab patch a b")
    path = tmp_path / "exp.toml"
    path.write_text(choice.text)
    experiment = load.load(path)
    assert [Path(p).name for p in experiment.series.patches] == [i.path.name for i in infos]
    assert [Path(p).name for p in experiment.kernel.reverse] == [infos[1].path.name, infos[0].path.name]
    assert {w.name for w in experiment.workload} == {"f2fs direct_read", "f2fs direct_write", "ext4 write_u1k",
                                                     "ext4 pwrite_u1k"}
    assert len(experiment.variant) == 3
    assert "(and 1 more patch)" in experiment.name


def _post_image(patch: Path) -> str:
    """A file that carries the patch already: its hunks' context and added lines, in order."""
    lines = []
    for line in patch.read_text().splitlines():
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith(("+", " ")):
            lines.append(line[1:])
    return "\n".join(lines) + "\n"


def test_iolab_patch_on_a_source_that_carries_the_patch(tmp_path):
    """The command as a user runs it: the patch is in the source, so the base reverses it."""
    import os
    import subprocess
    import sys
    import tarfile

    from tests.helpers import REPO

    patch = PATCHES / "ext4-write-begin-uptodate.patch"
    top = tmp_path / "linux-7.2.99"
    (top / "fs" / "ext4").mkdir(parents=True)
    (top / "fs" / "ext4" / "inode.c").write_text(_post_image(patch))
    (top / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n")
    (top / "Kconfig").write_text("# stand-in\n")
    tarball = tmp_path / "linux.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = tmp_path / "exp.toml"
    done = subprocess.run([sys.executable, "-m", "iolab.cli", "patch", str(patch), "--source", str(tarball),
                           "--write", str(out), "--dry-run"], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    # the plan: the source has the patch (the base takes it out); what it costs, as iolab run --dry-run
    # estimates it: both kernels to build
    assert "\n      in linux.tar.gz already: the base is the source with it taken out\n" in done.stdout
    assert "\n  kernels base, 1 ext4-write-begin-uptod: to build from linux.tar.gz (no build timed yet)\n" \
        in done.stdout
    text = out.read_text()
    assert "chose 'ext4 write_u1k' (fs/ext4, buffered-overwrite)" in text
    assert f"reverse = [{os.path.relpath(patch, tmp_path)!r}]".replace("'", '"') in text
    experiment = load.load(out)
    assert experiment.kernel.source == os.path.relpath(tarball, tmp_path) or experiment.kernel.source == str(tarball)
    # the same patch on a source without its file neither applies nor is in it
    (top / "fs" / "ext4" / "inode.c").write_text("unrelated\n")
    with tarfile.open(tmp_path / "other.tar.gz", "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    done = subprocess.run([sys.executable, "-m", "iolab.cli", "patch", str(patch), "--source",
                           str(tmp_path / "other.tar.gz"), "--dry-run"], cwd=REPO, capture_output=True, text=True,
                          env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"iolab: {patch}: fs/ext4/inode.c: hunk #1 (@@ -1182,6 +1182,7 @@ " in done.stderr
    assert "conflicts with this source: it applies neither as given nor reversed" in done.stderr
    assert "this source is other.tar.gz; give the tree it was written for: --source" in done.stderr


def _patch_command(tmp_path, *argv):
    import os
    import subprocess
    import sys

    from tests.helpers import REPO

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    return subprocess.run([sys.executable, "-m", "iolab.cli", "patch", *map(str, argv), "--dry-run"], cwd=REPO,
                          capture_output=True, text=True, env=env)


def test_iolab_patch_refuses_a_patch_given_twice_and_a_missing_source(tmp_path):
    patch = PATCHES / "ext4-write-begin-uptodate.patch"
    copy = write(tmp_path, "copy.patch", patch.read_text())
    for argv, words in (((patch, patch), f"{patch} is given twice: give each patch once"),
                        ((patch, copy), f"{copy} has the same diff as {patch}: give each patch once"),
                        ((patch, "--source", tmp_path / "nonexistent"),
                         f"--source: source '{tmp_path / 'nonexistent'}': no such file or directory")):
        done = _patch_command(tmp_path, *argv)
        assert (done.returncode, done.stdout) == (2, ""), argv
        assert done.stderr == f"iolab: {words}\n"


def test_iolab_patch_repairs_a_mail_from_a_web_archive(tmp_path):
    """The seed as given (context lines stripped, blank ones gone): its diff is
    repaired against the source, written beside the experiment, and recorded."""
    seed = Path(__file__).parent / "fixtures" / "patches" / "ext4-write-begin-large-folio.txt"
    top = tmp_path / "linux"
    (top / "fs" / "ext4").mkdir(parents=True)
    (top / "fs" / "ext4" / "inode.c").write_text(_post_image(PATCHES / "ext4-write-begin-uptodate.patch"))
    (top / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n")
    (top / "Kconfig").write_text("# stand-in\n")
    import tarfile

    with tarfile.open(tmp_path / "linux.tar.gz", "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    out = tmp_path / "exp" / "exp.toml"
    out.parent.mkdir()
    done = _patch_command(tmp_path, seed, "--source", tmp_path / "linux.tar.gz", "--write", out, "--allow", "partial-series")
    assert done.returncode == 0, done.stderr
    written = "iolab-mail/0002-ext4-avoid-tail-write_begin-walk-for-uptodate-folios.patch"
    assert f"iolab: wrote {written} (repaired; sha256 " in done.stderr.replace(str(out.parent) + "/", "")
    experiment = load.load(out)
    assert experiment.name == "ext4: avoid tail write_begin walk for uptodate folios"
    assert experiment.kernel.reverse == [written] and experiment.series.patches == [written]
    assert experiment.mail.author == "Jia Zhu" and experiment.mail.patches[0].repaired
    import hashlib

    assert experiment.mail.patches[0].sha256 == hashlib.sha256((out.parent / written).read_bytes()).hexdigest()


@pytest.mark.parametrize("area", library.load_areas(), ids=lambda a: a.area)
@pytest.mark.parametrize("timing", ["instructions", "wall"])
def test_every_area_writes_an_experiment_that_loads(tmp_path, area, timing):
    """Each area's workloads are valid experiment workloads (probe parameters, metrics, filesystems)."""
    path = area.paths[0] + ("x.c" if area.paths[0].endswith("/") else "")
    info = library.read_patch(write(tmp_path, "a.patch", diff(path, "static int no_hint_here(")))
    selection = library.select([info], library.load_areas())
    assert [c.workload.name for c in selection.chosen] == [w.name for w in area.workload if w.default]
    every = library.select([info], library.load_areas(), " ".join(w for wl in area.workload for w in wl.words))
    assert [c.workload.name for c in every.chosen] == [w.name for w in area.workload if w.words] or \
        not any(w.words for w in area.workload)
    choice = compose.compose([info], every if every.chosen else selection, source="debian:linux-source-7.2",
                             in_source=[False], base_dir=tmp_path, timing=timing, command="iolab patch a.patch")
    (tmp_path / "exp.toml").write_text(choice.text)
    experiment = load.load(tmp_path / "exp.toml")
    chosen = every.chosen or selection.chosen
    far = {c.workload.name for c in chosen if timing == "instructions" and library.wild(c.workload, timing)}
    far = far if len(far) < len(chosen) else set()  # where nothing else is left they stay, with their rounds
    assert [w.name for w in experiment.workload] == [c.workload.name for c in chosen if c.workload.name not in far]
    assert [note.split("'")[1] for note in choice.skipped if "does not repeat" in note] == sorted(far, key=[
        c.workload.name for c in chosen].index)
    assert experiment.kernel.reverse == [] and len(experiment.variant) == 2 and experiment.timing == timing


FIO_JOBS = [(area.area, w) for area in library.load_areas() for w in area.workload if w.engine == "fio"]


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("area, workload", FIO_JOBS, ids=[w.name for _, w in FIO_JOBS])
def test_every_fio_job_of_the_library_passes_the_option_check_and_fio_parses_it(area, workload):
    assert fio_options.findings(workload.job) == []
    assert fio.parse_refusal(workload.job) is None


def test_the_mails_words_choose_the_deeper_workloads(tmp_path):
    info = library.read_patch(write(tmp_path, "a.patch", diff("io_uring/sqpoll.c", "static int io_batch_work(")))
    plain = library.select([info], library.load_areas())
    assert [c.workload.name for c in plain.chosen] == ["uring qd1", "uring qd32"]
    said = library.select([info], library.load_areas(), "io_uring/sqpoll: raise the SQPOLL task_work batch")
    assert [(c.workload.name, c.reason) for c in said.chosen] == [
        ("uring sqpoll", "the mail says 'sqpoll'")]
    hinted = library.read_patch(write(tmp_path, "b.patch", diff("io_uring/sqpoll.c", "static int __io_sq_thread(")))
    assert [c.reason for c in library.select([hinted], library.load_areas()).chosen] == [
        "changed __io_sq_thread ~ sq_thread"]


STAND_IN_FILE = """\
// SPDX-License-Identifier: GPL-2.0
#include <linux/fs.h>

static int ext4_flags_ok(int flags)
{
	return flags != 0;
}

static ssize_t ext4_dio_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	ssize_t ret;
	int tries = 0;

	if (!ext4_flags_ok(iocb->ki_flags))
		return -EINVAL;
retry:
	ret = iomap_dio_rw(iocb, to, NULL, NULL, 0, NULL, 0);
	if (ret > 0)
		tries = 0;
	if (ret == -EAGAIN && tries++ < 3)
		goto retry;
	return ret;
}
"""


def test_a_diff_without_function_names_chooses_as_git_diff_does(tmp_path):
    """diff -u names no function and diff -up a label; iolab finds the function
    in the source (ctags), so all three tools' patches choose one workload."""
    import subprocess
    import tarfile

    top = tmp_path / "linux-7.2.99"
    (top / "fs" / "ext4").mkdir(parents=True)
    (top / "fs" / "ext4" / "file.c").write_text(STAND_IN_FILE)
    (top / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n")
    (top / "Kconfig").write_text("# stand-in\n")
    with tarfile.open(tmp_path / "linux.tar.gz", "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    # the same change, made three ways: git diff (cpp rule), diff -u, diff -up
    repo = tmp_path / "repo"
    (repo / "fs" / "ext4").mkdir(parents=True)
    (repo / ".gitattributes").write_text("*.c diff=cpp\n")
    (repo / "fs" / "ext4" / "file.c").write_text(STAND_IN_FILE)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    changed = STAND_IN_FILE.replace("tries++ < 3", "tries++ < 5")
    (repo / "fs" / "ext4" / "file.c").write_text(changed)
    made = {"git": subprocess.run([*git, "diff"], capture_output=True, text=True, check=True).stdout}
    (tmp_path / "a" / "fs" / "ext4").mkdir(parents=True)
    (tmp_path / "b" / "fs" / "ext4").mkdir(parents=True)
    (tmp_path / "a" / "fs" / "ext4" / "file.c").write_text(STAND_IN_FILE)
    (tmp_path / "b" / "fs" / "ext4" / "file.c").write_text(changed)
    for name, flags in (("u", "-u"), ("up", "-up")):
        made[name] = subprocess.run(["diff", flags, "a/fs/ext4/file.c", "b/fs/ext4/file.c"], cwd=tmp_path,
                                    capture_output=True, text=True).stdout
    heads = {name: next(line for line in text.splitlines() if line.startswith("@@")) for name, text in made.items()}
    assert heads["git"].endswith("@@ static ssize_t ext4_dio_read_iter(struct kiocb *iocb, struct iov_iter *to)")
    assert heads["u"].endswith("@@") and heads["up"].endswith("@@ retry:")
    chosen = {}
    for name, text in made.items():
        patch = write(tmp_path, f"{name}.patch", text)
        out = tmp_path / f"{name}.toml"
        done = _patch_command(tmp_path, patch, "--source", tmp_path / "linux.tar.gz", "--write", out)
        assert done.returncode == 0, done.stderr
        chosen[name] = [line.split(":")[0] for line in out.read_text().splitlines() if "#   chose " in line]
        assert f"#   {name}.patch: fs/ext4/file.c (ext4_dio_read_iter)" in out.read_text()
    assert chosen["u"] == chosen["up"] == chosen["git"] == ["#   chose 'ext4 dio_read' (fs/ext4, direct)"]


def test_the_function_around_a_line_from_ctags(tmp_path):
    from iolab.workloads import functions

    source = tmp_path / "file.c"
    source.write_text(STAND_IN_FILE)
    table = functions.spans(source)
    assert table == [("ext4_flags_ok", 4, 7), ("ext4_dio_read_iter", 9, 23)]
    assert [functions.enclosing(table, line) for line in (3, 5, 16, 23, 24)] == [
        "", "ext4_flags_ok", "ext4_dio_read_iter", "ext4_dio_read_iter", ""]


def test_iolab_patch_keeps_the_experiment_it_runs_in_the_cache(tmp_path, monkeypatch):
    """Without --write the experiment goes to iolab's cache (named by its
    content), not the working directory; its paths still find the patches."""
    import tarfile

    from iolab.cli import commands
    from iolab.cli import patch as cli_patch

    patch = PATCHES / "ext4-write-begin-uptodate.patch"
    top = tmp_path / "linux-7.2.99"
    (top / "fs" / "ext4").mkdir(parents=True)
    (top / "fs" / "ext4" / "inode.c").write_text(_post_image(patch))
    (top / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n")
    (top / "Kconfig").write_text("# stand-in\n")
    with tarfile.open(tmp_path / "linux.tar.gz", "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    args = commands._parser().parse_args(["patch", str(patch), "--source", str(tmp_path / "linux.tar.gz")])
    ran = []
    for _ in range(2):
        assert cli_patch.cmd_patch(args, lambda experiment, path, command: ran.append((experiment, path)) or 0,
                                   lambda: None) == 0
    assert list(work.iterdir()) == []
    (experiment, path), again = ran
    # a directory of its own per mail (its bytes and options), reused when the same mail comes again
    assert Path(path).parent.parent == tmp_path / "xdg" / "iolab" / "experiments" and again[1] == path
    assert Path(path).parent.name.startswith("mail-")
    assert [Path(experiment.base_dir, p).resolve() for p in experiment.series.patches] == [patch.resolve()]
