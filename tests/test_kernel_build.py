"""Kernels built from source: config fragments, patches, cache keys, the
build pipeline, the [kernel] table.

No real kernel is built here (that is bench/kernel_build.py): patches are
applied by the real GNU patch to a small real tree, and the pipeline runs
real make on a tarball whose Makefile stands in for the kernel's
(tinyconfig, olddefconfig, vmlinux, bzImage; it prints kbuild's "  CC  file.o"
lines and copies an ELF with a PVH note, or a fake bzImage around it).
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from iolab import load, spec
from iolab import kernels
from iolab.kernels import build, kconfig, make, patches, sources
from iolab.kernels.build import BuildRequest
from iolab.kernels.kconfig import ConfigError, Option
from iolab.kernels.make import BuildError
from iolab.kernels.patches import Patch, PatchError
from iolab.kernels.sources import SourceRef
from tests.stand_in_kernel import LINES, cache, diff, fake_source  # noqa: F401 (fixtures)


# -- config fragments ---------------------------------------------------------------


def test_fragment_lines_and_their_origin():
    options = kconfig.parse_fragment("# a comment\nCONFIG_A=y\n\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\nCONFIG_D=n\n",
                                     "mine.config")
    assert options == [Option("CONFIG_A", "y", "mine.config:2"), Option("CONFIG_B", None, "mine.config:4"),
                       Option("CONFIG_C", '"x y"', "mine.config:5"), Option("CONFIG_D", None, "mine.config:6")]


def test_a_bad_fragment_line_names_its_place():
    with pytest.raises(ConfigError, match=r"kernel.config:2: not a .config line: 'TRANSPARENT_HUGEPAGE=y'"):
        kconfig.parse_fragment("CONFIG_A=y\nTRANSPARENT_HUGEPAGE=y\n", "kernel.config")


def test_merge_later_lines_win_and_say_so():
    base = kconfig.parse_fragment("CONFIG_A=y\nCONFIG_B=y\n", "base.config")
    mine = kconfig.parse_fragment("# CONFIG_B is not set\nCONFIG_A=y\nCONFIG_C=m\n", "kernel.config")
    merged, notes = kconfig.merge(base, mine)
    assert {name: option.value for name, option in merged.items()} == {"CONFIG_A": "y", "CONFIG_B": None,
                                                                      "CONFIG_C": "m"}
    assert notes == ["CONFIG_B: CONFIG_B=y (base.config:2) redefined as # CONFIG_B is not set (kernel.config:1)"]


def test_apply_writes_the_requests_over_a_config():
    merged, _ = kconfig.merge(kconfig.parse_fragment("CONFIG_A=y\n# CONFIG_B is not set\n", "f"))
    out = kconfig.apply("CONFIG_X=y\n# CONFIG_A is not set\nCONFIG_B=y\n", merged)
    assert out == "CONFIG_X=y\nCONFIG_A=y\n# CONFIG_B is not set\n"


def test_canonical_ignores_order_and_comments():
    one, _ = kconfig.merge(kconfig.parse_fragment("CONFIG_A=y\n# c\nCONFIG_B=y\n", "x"))
    two, _ = kconfig.merge(kconfig.parse_fragment("CONFIG_B=y\nCONFIG_A=y\n", "y"))
    assert kconfig.canonical(one) == kconfig.canonical(two) == "CONFIG_A=y\nCONFIG_B=y\n"


def test_check_names_every_dropped_option(tmp_path):
    merged, _ = kconfig.merge(kconfig.parse_fragment(
        "CONFIG_KEPT=y\nCONFIG_EROFS_FS=y\n# CONFIG_GONE is not set\nCONFIG_MOD=m\n", "base.config"))
    final = "CONFIG_KEPT=y\n# CONFIG_EROFS_FS is not set\nCONFIG_GONE=y\nCONFIG_MOD=y\n"
    with pytest.raises(ConfigError) as error:
        kconfig.check(merged, final, tmp_path / ".config")
    message = str(error.value)
    assert "3 requested kernel options did not survive olddefconfig" in message
    assert "CONFIG_EROFS_FS=y (base.config:2): the .config has CONFIG_EROFS_FS not set" in message
    assert "# CONFIG_GONE is not set (base.config:3): the .config has CONFIG_GONE =y" in message
    assert "CONFIG_MOD=m (base.config:4): the .config has CONFIG_MOD =y" in message
    assert "CONFIG_KEPT" not in message
    assert str(tmp_path / ".config") in message
    kconfig.check(merged, "CONFIG_KEPT=y\nCONFIG_EROFS_FS=y\nCONFIG_MOD=m\n", tmp_path / ".config")  # absent = not set


def test_a_renamed_option_survives_under_its_new_name_only_where_the_old_one_is_gone(tmp_path):
    merged, _ = kconfig.merge(kconfig.parse_fragment("CONFIG_PROC_SYSCTL=y\n", "base.config"))
    kconfig.check(merged, "CONFIG_SYSCTL=y\n", tmp_path / ".config")  # 7.3: PROC_SYSCTL is SYSCTL
    with pytest.raises(ConfigError, match="CONFIG_PROC_SYSCTL=y"):
        kconfig.check(merged, "# CONFIG_SYSCTL is not set\n", tmp_path / ".config")
    with pytest.raises(ConfigError, match="CONFIG_PROC_SYSCTL=y"):  # 7.2 knows the old name: it must be set
        kconfig.check(merged, "# CONFIG_PROC_SYSCTL is not set\nCONFIG_SYSCTL=y\n", tmp_path / ".config")


def test_the_base_fragment_reads_and_asks_for_what_the_seeds_need():
    merged, notes = kconfig.merge(kconfig.parse_fragment(kconfig.BASE.read_text(), "base.config"))
    assert notes == []
    for name in ("CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_F2FS_IOSTAT", "CONFIG_EROFS_FS", "CONFIG_PVH",
                 "CONFIG_9P_FS", "CONFIG_VIRTIO_BLK", "CONFIG_IO_URING", "CONFIG_MEMCG", "CONFIG_FTRACE"):
        assert merged[name].value == "y", name


# -- patches (real GNU patch on a small real tree) ----------------------------------------


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "src" / "linux"
    (root / "fs").mkdir(parents=True)
    (root / "fs" / "x.c").write_text(LINES)
    return root


def test_a_patch_applies_and_reset_restores(tmp_path, tree):
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"))
    work = patches.Tree(tree)
    work.apply([Patch(fix)])
    assert "line five" in (tree / "fs" / "x.c").read_text()
    assert work.applied()[0].startswith(f"{fix} sha256:")
    work.reset()
    assert (tree / "fs" / "x.c").read_text() == LINES
    assert work.applied() == []


def test_reverse_takes_a_change_out(tmp_path, tree):
    (tree / "fs" / "x.c").write_text(LINES.replace("line 5\n", "line five\n"))  # the tree has the change
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"))
    patches.Tree(tree).apply([Patch(fix, reverse=True)])
    assert (tree / "fs" / "x.c").read_text() == LINES


def test_the_same_patches_again_touch_nothing(tmp_path, tree):
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"))
    work = patches.Tree(tree)
    work.apply([Patch(fix)])
    before = (tree / "fs" / "x.c").stat().st_mtime_ns
    time.sleep(0.01)
    work.apply([Patch(fix)])
    assert (tree / "fs" / "x.c").stat().st_mtime_ns == before  # make rebuilds nothing


def test_switching_patches_restores_first_and_creates_files_once(tmp_path, tree):
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    two = diff(tmp_path, "two", "", "new file\n", path="fs/new.c")
    two.write_text(two.read_text().replace("--- a/fs/new.c", "--- /dev/null"))
    work = patches.Tree(tree)
    work.apply([Patch(one), Patch(two)])
    assert (tree / "fs" / "new.c").read_text() == "new file\n"
    work.apply([Patch(one)])
    assert not (tree / "fs" / "new.c").exists()
    assert "line five" in (tree / "fs" / "x.c").read_text()


def test_a_series_step_applies_only_its_own_patch_and_a_jump_back_takes_later_ones_off(tmp_path, tree):
    """Step k after step k-1: patch k goes on, the files of patches 1..k-1 keep their times (make
    recompiles nothing of theirs); back to step 1: patches 3 and 2 come off, patch 1's file untouched."""
    (tree / "fs" / "y.c").write_text(LINES)
    (tree / "fs" / "z.c").write_text(LINES)
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    two = diff(tmp_path, "two", LINES, LINES.replace("line 7\n", "line seven\n"), path="fs/y.c")
    three = diff(tmp_path, "three", LINES, LINES.replace("line 9\n", "line nine\n"), path="fs/z.c")
    work = patches.Tree(tree)
    work.apply([Patch(one)])
    first = (tree / "fs" / "x.c").stat().st_mtime_ns
    time.sleep(0.01)
    work.apply([Patch(one), Patch(two)])
    work.apply([Patch(one), Patch(two), Patch(three)])
    assert (tree / "fs" / "x.c").stat().st_mtime_ns == first
    assert "line nine" in (tree / "fs" / "z.c").read_text() and "line seven" in (tree / "fs" / "y.c").read_text()
    two_at = (tree / "fs" / "y.c").stat().st_mtime_ns
    time.sleep(0.01)
    work.apply([Patch(one)])
    assert (tree / "fs" / "x.c").stat().st_mtime_ns == first
    assert (tree / "fs" / "y.c").read_text() == (tree / "fs" / "z.c").read_text() == LINES
    assert (tree / "fs" / "y.c").stat().st_mtime_ns > two_at  # changed back: make recompiles it
    assert [entry.split()[0] for entry in work.applied()] == [str(one)]
    work.apply([Patch(one), Patch(three)])  # another branch from step 1
    assert "line nine" in (tree / "fs" / "z.c").read_text() and (tree / "fs" / "y.c").read_text() == LINES
    work.reset()
    assert [(tree / "fs" / name).read_text() for name in ("x.c", "y.c", "z.c")] == [LINES] * 3


def test_the_same_change_from_another_file_keeps_the_tree_and_a_tree_edited_by_hand_is_reset(tmp_path, tree):
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    two = diff(tmp_path, "two", LINES, LINES.replace("line 25\n", "line 25 two\n"))
    copy = tmp_path / "stored-copy.patch"
    shutil.copyfile(one, copy)
    work = patches.Tree(tree)
    work.apply([Patch(one), Patch(two)])
    one.unlink()  # the step's patch file is gone: the tree keeps its own copy to take a patch off
    work.apply([Patch(copy)])
    assert (tree / "fs" / "x.c").read_text() == LINES.replace("line 5\n", "line five\n")
    assert work.applied()[0].startswith(f"{copy} sha256:")
    (tree / "fs" / "x.c").write_text("edited by hand\n")  # nothing takes `copy` off now: reset, then apply
    work.apply([Patch(two)])
    assert (tree / "fs" / "x.c").read_text() == LINES.replace("line 25\n", "line 25 two\n")
    assert [entry.split()[0] for entry in work.applied()] == [str(two)]


def test_a_patched_tree_says_so_at_its_top_and_a_pristine_one_does_not(tmp_path, tree):
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    (tree / "fs" / "x.c").write_text(LINES.replace("line 9\n", "line nine\n"))
    taken = diff(tmp_path, "taken", LINES, LINES.replace("line 9\n", "line nine\n"))
    work = patches.Tree(tree)
    work.apply([Patch(taken, reverse=True), Patch(one)])
    note = (tree / patches.NOTE).read_text()
    assert "not the source as it came" in note
    assert f"1. {taken} (reversed) sha256:" in note and f"2. {one} sha256:" in note
    assert str(tree.parent / patches.SAVED) in note
    assert (tree.parent / patches.SAVED / "fs" / "x.c").read_text() == LINES.replace("line 9\n", "line nine\n")
    work.apply([])
    assert not (tree / patches.NOTE).exists()


def test_a_hunk_that_does_not_apply_names_file_and_hunk(tmp_path, tree):
    changed = LINES.replace("line 5\n", "line five\n").replace("line 25\n", "line twenty-five\n")
    fix = diff(tmp_path, "fix", LINES, changed)
    (tree / "fs" / "x.c").write_text(LINES.replace("line 24\n", "line 24 (edited upstream)\n"))
    with pytest.raises(PatchError) as error:
        patches.Tree(tree).apply([Patch(fix)])
    message = str(error.value)
    assert message.startswith(f"patch {fix} does not apply:")
    assert "fs/x.c: hunk #2 @@ -22,7 +22,7 @@ line 21 does not apply (tried at line 22)" in message
    assert "#1" not in message
    # nothing half-applied: hunk #1 is not in the tree
    assert (tree / "fs" / "x.c").read_text() == LINES.replace("line 24\n", "line 24 (edited upstream)\n")


def test_an_applied_patch_and_a_missing_one_say_which_list(tmp_path, tree):
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"))
    (tree / "fs" / "x.c").write_text(LINES.replace("line 5\n", "line five\n"))
    with pytest.raises(PatchError, match=r"fs/x.c: already applied in this source .*list it under reverse"):
        patches.Tree(tree).apply([Patch(fix)])
    (tree / "fs" / "x.c").write_text(LINES)
    with pytest.raises(PatchError, match=r"fs/x.c: not in this source, so it cannot be reversed"):
        patches.Tree(tree).apply([Patch(fix, reverse=True)])


def test_a_patch_that_looks_applied_but_does_not_reverse_says_which_hunk(tmp_path, tree):
    """patch guesses 'previously applied' from the first hunk: the build tries the reverse before saying so."""
    changed = LINES.replace("line 5\n", "line five\n").replace("line 25\n", "line twenty-five\n")
    fix = diff(tmp_path, "fix", LINES, changed)
    (tree / "fs" / "x.c").write_text(changed.replace("line 23\n", "line 23 (edited upstream)\n"))
    with pytest.raises(PatchError) as error:
        patches.Tree(tree).apply([Patch(fix)])
    assert str(error.value) == (f"patch {fix} neither applies nor is in this source (it applies neither forward "
                                "nor reversed):\n"
                                "  reversed: fs/x.c: hunk #2 @@ -22,7 +22,7 @@ line 21 does not apply "
                                "(tried at line 22)")


def test_a_patch_of_a_missing_file_and_a_file_that_is_no_patch(tmp_path, tree):
    other = diff(tmp_path, "other", LINES, LINES.replace("line 5\n", "x\n"), path="mm/y.c")
    with pytest.raises(PatchError, match=r"mm/y.c: not in this source tree"):
        patches.Tree(tree).apply([Patch(other)])
    junk = tmp_path / "junk.patch"
    junk.write_text("not a diff\n")
    with pytest.raises(PatchError, match=r"junk.patch: no unified diff in it"):
        patches.Tree(tree).apply([Patch(junk)])
    with pytest.raises(PatchError, match=r"gone.patch: No such file"):
        patches.Tree(tree).apply([Patch(tmp_path / "gone.patch")])


def test_a_failure_after_a_good_patch_leaves_the_tree_pristine(tmp_path, tree):
    good = diff(tmp_path, "good", LINES, LINES.replace("line 5\n", "line five\n"))
    bad = diff(tmp_path, "bad", LINES, LINES.replace("line 9\n", "line nine\n"))
    bad.write_text(bad.read_text().replace(" line 8\n", " line 8 (not there)\n"))
    with pytest.raises(PatchError, match="bad.patch does not apply"):
        patches.Tree(tree).apply([Patch(good), Patch(bad)])
    assert (tree / "fs" / "x.c").read_text() == LINES
    assert patches.Tree(tree).applied() == []


def test_check_tries_the_patches_in_order_on_a_copy(tmp_path, tree):
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    two = diff(tmp_path, "two", LINES.replace("line 5\n", "line five\n"),
               LINES.replace("line 5\n", "line five\n").replace("line 6\n", "line six\n"))
    patches.check(tree, [Patch(one), Patch(two)])  # two needs one under it
    assert (tree / "fs" / "x.c").read_text() == LINES and not patches.Tree(tree).journal.exists()
    with pytest.raises(PatchError, match=r"two.patch does not apply:\n  fs/x.c: hunk #1 @@ -3,7 \+3,7 @@ line 2 does not apply"):
        patches.check(tree, [Patch(two)])
    with pytest.raises(PatchError, match=r"one.patch does not apply:\n  fs/x.c: already applied"):
        patches.check(tree, [Patch(one), Patch(one)])


def test_check_reads_the_source_as_it_came_under_a_builds_patches(tmp_path, tree):
    """A build left the shared tree patched: the check starts from the saved originals."""
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "line five\n"))
    new = diff(tmp_path, "new", "", "new file\n", path="fs/new.c")
    new.write_text(new.read_text().replace("--- a/fs/new.c", "--- /dev/null"))
    patches.Tree(tree).apply([Patch(one), Patch(new)])
    patches.check(tree, [Patch(one), Patch(new)])
    assert patches.state_in(tree, Patch(one)) == "applies" and patches.state_in(tree, Patch(new)) == "applies"
    assert "line five" in (tree / "fs" / "x.c").read_text()  # the build's tree as it was


def test_a_patch_in_neither_direction_says_which_hunks_fail(tmp_path, tree):
    """One wrong context line in a patch that is in the tree: reversed only that hunk fails."""
    changed = LINES.replace("line 5\n", "line five\n").replace("line 25\n", "line twenty-five\n")
    fix = diff(tmp_path, "fix", LINES, changed)
    fix.write_text(fix.read_text().replace(" line 4\n", " line four\n"))
    (tree / "fs" / "x.c").write_text(changed)
    with pytest.raises(PatchError) as error:
        patches.state_in(tree, Patch(fix))
    assert str(error.value) == (f"patch {fix} neither applies nor is in this source (it applies neither forward "
                                "nor reversed):\n"
                                "  reversed: fs/x.c: hunk #1 @@ -2,7 +2,7 @@ line 1 does not apply (tried at line 2)\n"
                                "  forward: 2 of 2 hunks do not apply")
    # a file the tree does not have: patch's own words, both ways
    (tree / "fs" / "x.c").unlink()
    with pytest.raises(PatchError, match=r"forward: fs/x.c: not in this source tree\n  reversed: fs/x.c: not in"):
        patches.state_in(tree, Patch(fix))


def test_a_patch_from_a_web_archive_is_malformed_at_its_line(tmp_path, tree):
    """The seed mail as a web archive shows it: its context lines lost their leading blank."""
    seed = Path(__file__).parent / "fixtures" / "patches" / "ext4-write-begin-large-folio.txt"
    (tree / "fs" / "ext4").mkdir()
    (tree / "fs" / "ext4" / "inode.c").write_text(LINES)
    expected = (r"malformed at line 40 \('int nr_wait = 0;'\): a diff line without its leading ' ', '\+' or "
                r"'-' \(context lines stripped")
    with pytest.raises(patches.MalformedPatch, match=expected):
        patches.state_in(tree, Patch(seed))
    with pytest.raises(patches.MalformedPatch, match=expected):
        patches.check(tree, [Patch(seed)])


# -- sources --------------------------------------------------------------------------------


def test_source_names(tmp_path):
    assert sources.parse("debian:linux-source-7.2") == SourceRef("debian", "linux-source-7.2")
    assert sources.parse("debian:linux-source-7.2=7.2.13-1").version == "7.2.13-1"
    assert sources.parse("linux-7.2.tar.xz", base_dir=str(tmp_path)) == SourceRef(
        "tarball", str(tmp_path / "linux-7.2.tar.xz"))
    assert sources.parse("/src/linux", "v7.2") == SourceRef("git", "/src/linux", "v7.2")


@pytest.mark.parametrize("text,commit,words", [
    ("debian:linux-image-7.2", None, "name a Debian kernel source package"),
    ("/nonexistent/linux", None, r"source '/nonexistent/linux': no such file or directory"),
    ("debian:linux-source-7.2", "v7.2", "commit goes with a git tree"),
    ("/src/linux.tar.gz", "v7.2", "commit goes with a git tree"),
])
def test_bad_source_names(text, commit, words):
    with pytest.raises(kernels.KernelError, match=words):
        sources.parse(text, commit)


def test_a_git_tree_needs_its_commit(tmp_path):
    with pytest.raises(kernels.KernelError, match="a git tree needs commit"):
        sources.parse(str(tmp_path))
    with pytest.raises(kernels.KernelError, match="no such file or directory: /nonexistent"):
        sources.resolve(sources.parse("/nonexistent", "v7.2"))


def test_the_private_apt_configuration_stays_in_the_cache(cache, monkeypatch):
    monkeypatch.setenv("IOLAB_APT_SUITE", "sid")
    conf = sources.apt_config()
    assert conf == cache / "apt" / "apt.conf"
    text = conf.read_text()
    for key in ("Dir::Etc::sourcelist", "Dir::Etc::sourceparts", "Dir::State::lists", "Dir::Cache",
                "Dir::State::status"):
        assert f'{key} "{cache}/apt/' in text, key
    assert "/etc/apt" not in text
    # experimental is listed for binary packages only, pinned below 0: apt never picks from it
    assert "Suites: sid experimental\n" in (cache / "apt" / "etc" / "sources.list.d" / "iolab.sources").read_text()
    pin = (cache / "apt" / "etc" / "preferences.d" / "iolab-experimental.pref").read_text()
    assert "Package: *\nPin: release a=experimental\nPin-Priority: -10\n" == pin
    sources.apt_config(sources=True)
    assert "Suites: sid\n" in (cache / "apt-src" / "etc" / "sources.list.d" / "iolab.sources").read_text()


# apt-cache madison with unstable's 7.2 and experimental's 7.3 listed (this host's private index)
MADISON_73 = f"linux-source-7.3 | 7.3~rc7-1~exp1 | {sources.ARCHIVE} experimental/main amd64 Packages\n"
MADISON_72 = f"linux-source-7.2 |  7.2.13-1 | {sources.ARCHIVE} unstable/main amd64 Packages\n"
POLICY_NONE = "linux-source-7.3:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n"


def test_a_package_only_experimental_carries_resolves_to_its_version_and_says_so(cache, monkeypatch):
    (cache / "apt" / "lists").mkdir(parents=True)
    (cache / "apt" / "lists" / "x_Packages").write_text("")
    answers = {"policy": POLICY_NONE, "madison": MADISON_73}
    monkeypatch.setattr(sources, "_apt", lambda argv, what, **_: answers[argv[1]])
    said = []
    source = sources.resolve(sources.parse("debian:linux-source-7.3"), said.append)
    assert source.identity == "debian:linux-source-7.3=7.3~rc7-1~exp1"
    assert any("only in Debian's experimental suite" in line for line in said)
    answers["madison"] = MADISON_72  # unstable's only: never taken by this path
    assert sources._experimental("linux-source-7.2", said.append) is None


def test_a_candidate_is_asked_of_apt_once_while_the_lists_stay_the_same(cache, monkeypatch):
    lists = cache / "apt" / "lists"
    lists.mkdir(parents=True)
    (lists / "x_Packages").write_text("")
    asked = []

    def apt(argv, what, **_):
        asked.append(argv[1])
        return POLICY_NONE.replace("linux-source-7.3", "linux-source-7.2").replace("(none)\n  V", "7.2.13-1\n  V")

    monkeypatch.setattr(sources, "_apt", apt)
    monkeypatch.setattr(sources, "_candidates", {})
    assert sources.resolve(sources.parse("debian:linux-source-7.2")).identity == "debian:linux-source-7.2=7.2.13-1"
    monkeypatch.setattr(sources, "_candidates", {})  # another process: the kept answer
    assert sources.resolve(sources.parse("debian:linux-source-7.2")).identity == "debian:linux-source-7.2=7.2.13-1"
    assert asked == ["policy"]
    (lists / "y_Packages").write_text("")  # apt-get update moved the lists: asked again
    sources.resolve(sources.parse("debian:linux-source-7.2"))
    assert asked == ["policy", "policy"]


def test_a_git_source_resolves_its_commit(tmp_path):
    repo = tmp_path / "linux"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 0\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    subprocess.run([*git, "tag", "v7.2"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    source = sources.resolve(sources.parse(str(repo), "v7.2"))
    assert source.identity == f"git:{head}"
    with pytest.raises(kernels.KernelError, match="has no commit 'v9.9'"):
        sources.resolve(sources.parse(str(repo), "v9.9"))


# -- the build pipeline, on a stand-in kernel tree ---------------------------------------

class Recorder:
    def __init__(self):
        self.phases, self.counts, self.finished = [], [], 0

    def phase(self, name, detail=""):
        self.phases.append(name)

    def files(self, done, expected, eta_s):
        self.counts.append((done, expected))

    def finish(self):
        self.finished += 1


def test_a_build_from_a_tarball_with_a_patch(tmp_path, fake_source, cache):
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    request = BuildRequest(SourceRef("tarball", str(fake_source)), (Patch(fix),),
                           (("kernel.config", "CONFIG_EXTRA=y\n"),))
    shown = Recorder()
    kernel = build.ensure(request, reporter=shown)
    assert shown.phases == ["source", "patch", "configure", "compile", "link", "initramfs"]
    assert shown.counts == [(1, None), (2, None)] and shown.finished == 1
    assert kernel.kver == "7.2.99" and kernel.pvh and kernel.image.name == "vmlinux"
    manifest = kernel.manifest
    assert manifest["kind"] == "build" and manifest["version"] == "7.2.99"
    assert manifest["patches"] == [str(fix)] and manifest["compiled_files"] == 2
    assert "CONFIG_EXTRA=y" in (kernel.directory / "config").read_text()
    assert "CC      src/a.o" in build.build_log(kernel)
    obj = cache / "builds" / manifest["tree_key"] / "obj"
    assert "line five" in (obj / "built-from.txt").read_text()
    # the same request again: the cached kernel, nothing run
    again = Recorder()
    assert build.ensure(request, reporter=again).directory == kernel.directory
    assert again.phases == []
    # the next full build of this tree knows how many files to expect
    assert build._expected_files(manifest["tree_key"]) == 2


def test_make_builds_vmlinux_with_a_pvh_entry_else_the_bzimage_and_records_its_phases(tmp_path, fake_source, cache):
    source = SourceRef("tarball", str(fake_source))
    pvh = build.ensure(BuildRequest(source))
    assert pvh.manifest["make_target"] == "vmlinux" and pvh.manifest["incremental"] is False
    assert set(pvh.manifest["phases_s"]) == {"patch", "configure", "compile", "link", "install"}
    assert "olddefconfig" in build.build_log(pvh)
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    again = build.ensure(BuildRequest(source, (Patch(fix),)))  # same tree: olddefconfig left to make
    assert again.manifest["incremental"] is True and "olddefconfig" not in build.build_log(again)
    plain = build.ensure(BuildRequest(source, (), (("kernel.config", "# CONFIG_PVH is not set\n"),)))
    assert plain.manifest["make_target"] == "bzImage"


def test_variants_that_differ_by_patches_share_the_object_tree(tmp_path, fake_source, cache):
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    source = SourceRef("tarball", str(fake_source))
    plain = build.ensure(BuildRequest(source))
    patched = build.ensure(BuildRequest(source, (Patch(fix),)))
    assert plain.directory != patched.directory
    assert plain.manifest["tree_key"] == patched.manifest["tree_key"]
    assert patched.manifest["incremental"] and not plain.manifest["incremental"]
    obj = cache / "builds" / plain.manifest["tree_key"] / "obj"
    assert "line five" in (obj / "built-from.txt").read_text()
    # what the next build in this tree will likely take: the last one in it (incremental)
    tree_key = plain.manifest["tree_key"]
    assert build.last_build_seconds(tree_key) == (patched.manifest["build_seconds"],
                                                  "the last build in this object tree took")
    shutil.rmtree(obj)  # the object tree gone: the next build is a full one
    assert build.last_build_seconds(tree_key) == (plain.manifest["build_seconds"], "a full build of this tree took")
    assert build.last_build_seconds("another") == (plain.manifest["build_seconds"],
                                                   "no build of this tree timed yet; the last full build took")


def test_a_step_makes_only_the_objects_that_read_its_changed_files(tmp_path, fake_source, cache):
    source = SourceRef("tarball", str(fake_source))
    base = build.ensure(BuildRequest(source))
    assert base.manifest["make_dirs"] == "all" and base.manifest["make_cpu_s"] >= 0
    assert set(base.manifest["make_marks_s"]) == {"CC", "LD vmlinux", "end"}
    obj = cache / "builds" / base.manifest["tree_key"] / "obj"
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    step = build.ensure(BuildRequest(source, (Patch(fix),)))  # src/.a.o.cmd names src/a.c: src/a.o's own make
    assert step.manifest["make_objects"] == ["src/a.o"] and step.manifest["make_dirs"] == ["src"]
    assert " -j2 src/a.o KBUILD" in build.build_log(step).replace(
        f" -j{os.cpu_count() or 1} ", " -j2 ") and " build-dir=src\n" in build.build_log(step)
    assert "line five" in (obj / "built-from.txt").read_text()
    back = build.ensure(BuildRequest(source, (Patch(fix),), (("kernel.config", "CONFIG_X=y\n"),)))
    assert back.manifest["make_dirs"] == "all"  # another object tree: its first build is whole
    kconfig_change = diff(tmp_path, "kconfig", "# stand-in\n", "# stand-in, changed\n", path="Kconfig")
    whole = build.ensure(BuildRequest(source, (Patch(fix), Patch(kconfig_change))))
    assert whole.manifest["make_dirs"] == "all"  # not a C file: the whole make
    unread = diff(tmp_path, "unread", "", "a text no build reads\n", path="Documentation/x.txt")
    nothing = build.ensure(BuildRequest(source, (Patch(fix), Patch(kconfig_change), Patch(unread))))
    assert nothing.manifest["make_objects"] == [] and nothing.manifest["compiled_files"] == 0
    assert "iolab: make " not in build.build_log(nothing)  # the last build's kernel stands
    broken = diff(tmp_path, "broken", LINES, LINES.replace("line 5\n", "BROKEN\n"), path="src/a.c")
    with pytest.raises(BuildError):
        build.ensure(BuildRequest(source, (Patch(broken),)))
    after = build.ensure(BuildRequest(source, (Patch(unread),)))  # no make finished since the record: whole
    assert after.manifest["make_dirs"] == "all" and "line five" not in (obj / "built-from.txt").read_text()
    # the other tree's last build had src/a.c patched; the source changed in between by other builds: its
    # record of src/a.c's content, not the source tree's history, says what changed for it
    again = build.ensure(BuildRequest(source, (), (("kernel.config", "CONFIG_X=y\n"),)))
    assert again.manifest["make_dirs"] == ["src"]
    # an object newer than the record: a make that keeps none (an older iolab's) ran in the tree since
    other = cache / "builds" / again.manifest["tree_key"] / "obj"
    record = other / make.SOURCES_RECORD
    (other / "src" / "a.o").write_text("")
    os.utime(other / "src" / "a.o", ns=(record.stat().st_mtime_ns + 10**9,) * 2)
    whole = build.ensure(BuildRequest(source, (Patch(fix),), (("kernel.config", "CONFIG_X=y\n"),)))
    assert whole.manifest["make_dirs"] == "all"


def test_a_compile_error_shows_the_error_the_tail_and_the_log(tmp_path, fake_source, cache):
    broken = diff(tmp_path, "broken", LINES, LINES.replace("line 5\n", "BROKEN\n"), path="src/a.c")
    request = BuildRequest(SourceRef("tarball", str(fake_source)), (Patch(broken),))
    with pytest.raises(BuildError) as error:
        build.ensure(request)
    message = str(error.value)
    first, second = message.splitlines()[:2]
    assert first == "make vmlinux failed (exit 2): src/a.c:2:1: error: expected ';' before '}' token"
    assert "make noise 30" in message and "make noise 5\n" not in message
    log = second.removeprefix("full log: ")
    assert Path(log).exists() and "error: expected" in Path(log).read_text()
    assert not list((cache / "kernels").glob("build-*"))


def test_an_option_olddefconfig_drops_is_an_error(fake_source):
    request = BuildRequest(SourceRef("tarball", str(fake_source)), (),
                           (("kernel.config", "CONFIG_FINE=y\nCONFIG_IMPOSSIBLE=y\n"),))
    with pytest.raises(ConfigError, match=r"CONFIG_IMPOSSIBLE=y \(kernel.config:2\): the .config has "
                                          r"CONFIG_IMPOSSIBLE not set"):
        build.ensure(request)


def test_a_patch_that_does_not_apply_stops_the_build(tmp_path, fake_source):
    stale = diff(tmp_path, "stale", LINES.replace("line 5\n", "other\n"), LINES.replace("line 5\n", "x\n"),
                 path="src/a.c")
    with pytest.raises(PatchError, match=r"stale.patch does not apply:\n  src/a.c: hunk #1 @@ -2,7 \+2,7 @@"):
        build.ensure(BuildRequest(SourceRef("tarball", str(fake_source)), (Patch(stale),)))


# -- cache keys ------------------------------------------------------------------------------


@pytest.fixture
def resolved_here(monkeypatch):
    """plan() without apt or a compiler: a fixed source identity and toolchain."""
    def resolve(ref, log=None):
        return sources.Source(ref, f"debian:{ref.name}=1", ref.name)

    monkeypatch.setattr(sources, "resolve", resolve)
    monkeypatch.setattr(sources, "toolchain", lambda: "gcc 12 / ld 2.40")
    return monkeypatch


def test_keys_cover_source_patches_config_and_compiler(tmp_path, resolved_here):
    one = diff(tmp_path, "one", LINES, LINES.replace("line 5\n", "five\n"))
    two = diff(tmp_path, "two", LINES, LINES.replace("line 6\n", "six\n"))
    source = SourceRef("debian", "linux-source-7.2")
    base = build.plan(BuildRequest(source))
    assert build.plan(BuildRequest(source)).key == base.key
    patched = build.plan(BuildRequest(source, (Patch(one),)))
    reversed_ = build.plan(BuildRequest(source, (Patch(one, reverse=True),)))
    both = build.plan(BuildRequest(source, (Patch(one), Patch(two))))
    swapped = build.plan(BuildRequest(source, (Patch(two), Patch(one))))
    assert len({base.key, patched.key, reversed_.key, both.key, swapped.key}) == 5
    assert {p.tree_key for p in (patched, reversed_, both, swapped)} == {base.tree_key}  # one object tree
    configured = build.plan(BuildRequest(source, (), (("c", "CONFIG_X=y\n"),)))
    same_config = build.plan(BuildRequest(source, (), (("d", "# a comment\nCONFIG_X=y\n"),)))
    assert configured.tree_key != base.tree_key and configured.key == same_config.key
    other = build.plan(BuildRequest(SourceRef("debian", "linux-source-7.1")))
    assert other.tree_key != base.tree_key
    resolved_here.setattr(sources, "toolchain", lambda: "gcc 14 / ld 2.44")
    assert build.plan(BuildRequest(source)).tree_key != base.tree_key
    one.write_text(one.read_text().replace("five", "FIVE"))  # a patch's content, not its name
    assert build.plan(BuildRequest(source, (Patch(one),))).key != patched.key


# -- the experiment file -----------------------------------------------------------------------

WORKLOAD = [{"name": "w", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}]


def test_kernel_table_is_every_variants_kernel(tmp_path):
    for name in ("a.patch", "b.patch", "all.patch"):
        (tmp_path / name).write_text("x")
    raw = {"name": "x", "kernel": {"source": "debian:linux-source-7.2", "config": "CONFIG_X=y",
                                   "patches": ["all.patch"]},
           "variant": [{"name": "nofix", "kernel": {"reverse": ["a.patch"]}},
                       {"name": "fix"},
                       {"name": "more", "kernel": {"patches": ["b.patch"]}}],
           "workload": WORKLOAD}
    experiment = load.parse(raw, base_dir=str(tmp_path))
    nofix, fix, more = (v.kernel for v in experiment.variant)
    assert nofix.reverse == ["a.patch"] and nofix.patches == ["all.patch"] and nofix.config == "CONFIG_X=y"
    assert fix == experiment.kernel
    assert more.patches == ["all.patch", "b.patch"]
    again = spec.Experiment.model_validate_json(experiment.model_dump_json())  # a stored run reads back
    assert again.variant == experiment.variant
    request = build.request_for(nofix, experiment)
    assert request.patches == (Patch(tmp_path / "a.patch", True), Patch(tmp_path / "all.patch"))
    assert request.config == (("kernel.config", "CONFIG_X=y"),)


@pytest.mark.parametrize("kernel,words", [
    ({"source": "debian:linux-image-7.2"}, 'variant\\["a"\\].kernel: source .*Debian kernel source package'),
    ({"source": "debian:linux-source-7.2", "config": "THP=y"}, "not a .config line: 'THP=y'"),
    ({"source": "debian:linux-source-7.2", "reverse": ["missing.patch"]},
     'variant\\["a"\\].kernel.reverse: no such file: .*missing.patch'),
    ({"source": "debian:linux-source-7.2", "patchs": []}, "unknown field"),
])
def test_bad_kernel_tables_name_the_field(tmp_path, kernel, words):
    raw = {"name": "x", "variant": [{"name": "a", "kernel": kernel}, {"name": "b", "kernel": kernel}],
           "workload": WORKLOAD}
    with pytest.raises(spec.SpecError, match=words):
        load.parse(raw, base_dir=str(tmp_path))


def test_a_patch_listed_twice_or_one_diff_under_two_names_is_refused(tmp_path):
    """The second copy would not apply on the first: refused before anything is built."""
    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"))
    (tmp_path / "copy.patch").write_text("Subject: [PATCH v2] the same fix\n\n" + fix.read_text().split("\n", 2)[2])
    for table, words in (
            ({"kernel": {"source": "debian:linux-source-7.2", "reverse": ["fix.patch", "./fix.patch"]}},
             "kernel.reverse: './fix.patch' is listed twice: list each patch once"),
            ({"kernel": {"source": "debian:linux-source-7.2"},
              "variant": [{"name": "a", "kernel": {"patches": ["fix.patch", "copy.patch"]}}, {"name": "b"}]},
             "variant[\"a\"].kernel.patches: 'copy.patch' and 'fix.patch' are the same diff under two names")):
        raw = {"name": "x", "variant": [{"name": "a"}, {"name": "b"}], "workload": WORKLOAD, **table}
        with pytest.raises(spec.SpecError) as error:
            load.parse(raw, base_dir=str(tmp_path))
        assert str(error.value).startswith(words)
    # the same patch reversed and applied is the usual base and step: fine
    load.parse({"name": "x", "kernel": {"source": "debian:linux-source-7.2", "reverse": ["fix.patch"]},
                "variant": [{"name": "a"}, {"name": "b", "kernel": {"patches": ["copy.patch"]}}],
                "workload": WORKLOAD}, base_dir=str(tmp_path))


def test_a_config_file_that_is_not_config_text_is_refused_naming_the_field(tmp_path):
    (tmp_path / "not.config").write_text("vm\n")
    raw = {"name": "x", "kernel": {"source": "debian:linux-source-7.2", "config_file": "not.config"},
           "variant": [{"name": "a"}, {"name": "b"}], "workload": WORKLOAD}
    with pytest.raises(spec.SpecError, match=r"^kernel\.config_file: not\.config:1: not a \.config line: 'vm'"):
        load.parse(raw, base_dir=str(tmp_path))


def test_modules_go_with_an_image_of_your_own():
    raw = {"name": "x", "kernel": {"source": "debian:linux-source-7.2"},
           "variant": [{"name": "a", "modules": "/lib/modules/x"}, {"name": "b"}], "workload": WORKLOAD}
    with pytest.raises(spec.SpecError, match="modules = '...' goes with kernel = '/path/to/bzImage'"):
        load.parse(raw)


def test_doctor_names_missing_build_packages(monkeypatch):
    from iolab.cli import doctor

    real = build.shutil.which
    monkeypatch.setattr(build.shutil, "which", lambda tool: None if tool in ("flex", "bison") else real(tool))
    check = doctor._kernel_build()
    assert not check.ok and not check.required
    assert check.detail.startswith("missing flex, bison")
    assert check.fix.startswith("apt-get install flex bison")


def test_the_terminal_display_shows_phase_files_and_eta():
    import io

    from rich.console import Console

    from iolab.cli.progress import BuildProgress

    out = io.StringIO()
    shown = BuildProgress(Console(file=out, force_terminal=True, width=100))
    shown.phase("compile", "make -j2 bzImage")
    shown.files(500, 1000, 125.0)
    shown.bar.refresh()
    shown.finish()
    text = out.getvalue()
    assert "kernel build: compile" in text
    assert "500/1000 files" in text and "ETA 2:05" in text


# -- the dry run: the patches apply, where the source is unpacked ---------------------------


def test_the_dry_run_checks_the_patches_on_the_unpacked_source(tmp_path, fake_source, cache):
    """load.check_here (the command line after loading, the runner's preflight)
    tries every variant's patches on the unpacked source; before it is
    unpacked the estimate says the build checks them."""
    from iolab.run import estimate

    fix = diff(tmp_path, "fix", LINES, LINES.replace("line 5\n", "line five\n"), path="src/a.c")
    stale = diff(tmp_path, "stale", LINES.replace("line 4\n", "line four\n"), LINES.replace("line 5\n", "x\n"),
                 path="src/a.c")

    def experiment(**nofix):
        raw = {"name": "x", "kernel": {"source": str(fake_source)}, "workload": WORKLOAD,
               "variant": [{"name": "nofix", "kernel": nofix}, {"name": "fix"}]}
        return load.parse(raw, base_dir=str(tmp_path))

    bad = experiment(patches=["stale.patch"])
    load.check_here(bad)  # not unpacked: nothing unpacked or checked here
    assert not (cache / "sources").exists() or not list((cache / "sources").glob("*/source.json"))
    lines = estimate.estimate(bad, None).lines()
    assert any(line.startswith("  kernel nofix: to build from linux-7.2.99.tar.gz (no build timed yet; the source "
                               "is not unpacked here yet, so the build checks that its patches apply)")
               for line in lines), lines
    root = sources.unpack(sources.resolve(SourceRef("tarball", str(fake_source))))
    with pytest.raises(spec.SpecError) as error:
        load.check_here(bad)
    assert str(error.value) == (f'variant["nofix"].kernel: patch {stale} does not apply:\n'
                                "  src/a.c: hunk #1 @@ -1,8 +1,8 @@ does not apply (tried at line 1)")
    with pytest.raises(spec.SpecError, match=r'variant\["nofix"\].kernel: patch .*fix.patch \(reversed\) does not '
                                             r"apply:\n  src/a.c: not in this source, so it cannot be reversed"):
        load.check_here(experiment(reverse=["fix.patch"]))
    load.check_here(experiment(patches=["fix.patch"]))
    assert (root / "src" / "a.c").read_text() == LINES  # only read
    assert not any("not unpacked" in line for line in estimate.estimate(bad, None).lines())


def test_iolab_run_dry_run_refuses_a_patch_that_does_not_apply(tmp_path, fake_source, cache):
    """The command as the user runs it: exit 2 and the patch, file and hunk, no plan."""
    from tests.helpers import iolab

    sources.unpack(sources.resolve(SourceRef("tarball", str(fake_source))))
    diff(tmp_path, "stale", LINES.replace("line 4\n", "line four\n"), LINES.replace("line 5\n", "x\n"), path="src/a.c")
    (tmp_path / "exp.toml").write_text(
        f'name = "x"\n[kernel]\nsource = "{fake_source}"\n[[variant]]\nname = "nofix"\n'
        'kernel = { patches = ["stale.patch"] }\n[[variant]]\nname = "fix"\n'
        '[[workload]]\nname = "w"\nengine = "probe"\nprobe = { mode = "batch", case = "write_u1k" }\n')
    done = iolab("run", "--dry-run", str(tmp_path / "exp.toml"), store=tmp_path / "none.db")
    assert (done.returncode, done.stdout) == (2, "")
    assert 'variant["nofix"].kernel: patch ' in done.stderr and "stale.patch does not apply" in done.stderr
    assert "src/a.c: hunk #1 @@ -1,8 +1,8 @@ does not apply (tried at line 1)" in done.stderr
