"""A web archive's copy of a diff repaired against the source: the seeds as
given, placed in excerpts of Linux 7.2 (which has two of their changes) and
in the same files without them; mails written here for the hard cases (a
context line that starts with '+', a blank line gone, a copy on one line,
a series whose second patch stands on the first, an ambiguous hunk). Every
repaired diff is checked by GNU patch itself (--fuzz=0, as a build applies it)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from iolab.mail import MailError, read
from iolab.mail.copies import well_formed
from iolab.mail.message import Patch
from iolab.mail.repair import RepairError, repair

FIXTURES = Path(__file__).parent / "fixtures" / "mail"
LINUX = FIXTURES / "linux-7.2"
SKIP = Path(__file__).parent.parent / "scenarios" / "patches" / "f2fs-dio-iostat-skip.patch"


def tree_of(root: Path):
    def read_file(name: str) -> list[str] | None:
        path = root / name
        return path.read_text().split("\n")[:-1] if path.is_file() else None
    return read_file


def gnu_patch(root: Path, diff: str, *options: str) -> subprocess.CompletedProcess:
    patch = root.parent / "repaired.patch"
    patch.write_text(diff)
    return subprocess.run(["patch", "-p1", "--batch", "--fuzz=0", "--no-backup-if-mismatch", *options,
                           "-d", str(root), "-i", str(patch)], capture_output=True, text=True)


def copy_of_linux(tmp_path: Path) -> Path:
    root = tmp_path / "linux"
    shutil.copytree(LINUX, root)
    return root


def words(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().split("\n")]


@pytest.mark.parametrize("seed, changed", [
    ("ext4-write-begin-large-folio.txt", "fs/ext4/inode.c"),
    ("f2fs-nat-readahead.txt", "fs/f2fs/node.c"),  # one line: headers, body and diff
])
def test_a_seed_in_the_source_already_is_repaired_as_the_source_has_it(tmp_path, seed, changed):
    root = copy_of_linux(tmp_path)
    mail = read([FIXTURES / seed])
    [fixed] = repair(mail.patches, tree_of(root))
    assert fixed is not None and fixed.side == "new" and fixed.changed and well_formed(fixed.diff)
    assert gnu_patch(root, fixed.diff, "--dry-run", "--forward").returncode == 1  # it is in the source
    after = root / changed
    assert gnu_patch(root, fixed.diff, "-R").returncode == 0  # taken out: the base the scenario builds
    before = after.read_text()
    # the same copy on the source without the change: placed by its old lines, and applying it gives
    # 7.2's file back, word for word (the added lines' own whitespace inferred)
    [forward] = repair(read([FIXTURES / seed]).patches, tree_of(root))
    assert forward is not None and forward.side == "old" and forward.inferred > 0
    done = gnu_patch(root, forward.diff)
    assert done.returncode == 0, done.stdout
    assert words(after) == words(LINUX / changed) and after.read_text() != before


def test_the_ext4_seed_gets_the_sources_exact_lines_and_its_lost_blank_line_back(tmp_path):
    [fixed] = repair(read([FIXTURES / "ext4-write-begin-large-folio.txt"]).patches, tree_of(LINUX))
    assert fixed is not None
    hunk = fixed.diff.split("\n@@ ", 2)[1]  # the first hunk (line numbers: the excerpt's)
    assert hunk.split("\n")[1:] == [
        " \tint nr_wait = 0;",
        " \tint i;",
        " \tbool should_journal_data = ext4_should_journal_data(inode);",
        "+\tbool folio_uptodate = folio_test_uptodate(folio);",
        " ",  # the blank context line the archive dropped
        " \tBUG_ON(!folio_test_locked(folio));",
        " \tBUG_ON(to > folio_size(folio));",
    ]
    # a removed line the source no longer has: indented as the line that replaced it
    assert "\n-\t\t\t\tif (folio_test_uptodate(folio)) {\n+\t\t\t\tif (folio_uptodate) {\n" in fixed.diff


def test_seed_000_is_in_72_in_another_form_so_the_base_takes_that_form_out(tmp_path):
    """7.2 returns early from f2fs_dio_iostat_start() in its own words: the
    hunk is found with its added line said otherwise, that form (the source's
    exact lines) is what the base takes out, and the mail's patch as written
    then applies to the base."""
    [fixed] = repair(read([FIXTURES / "f2fs-dio-iostat.txt"]).patches, tree_of(LINUX))
    assert fixed is not None and fixed.side == "old" and fixed.other_form is not None
    assert fixed.notes == ("fs/f2fs/file.c: hunk #1 (@@ -4799,6 +4799,9 @@), first line '{': in the source in "
                           "another form: '+if (!f2fs_iostat_enabled(sbi))' is 'if (!sbi->iostat_enable)' there",)
    assert "+\tif (!sbi->iostat_enable)\n+\t\treturn;\n+\n \tiostat_alloc_and_bind_ctx" in fixed.other_form
    root = copy_of_linux(tmp_path)
    done = gnu_patch(root, fixed.other_form, "-R")
    assert done.returncode == 0, done.stdout
    base = (root / "fs" / "f2fs" / "file.c").read_text()
    assert gnu_patch(copy_of_linux(tmp_path / "skip"), SKIP.read_text(), "-R").returncode == 0
    assert base == (tmp_path / "skip" / "linux" / "fs" / "f2fs" / "file.c").read_text()  # as the scenario's revert
    done = gnu_patch(root, fixed.diff)
    assert done.returncode == 0, done.stdout
    assert "\tif (!f2fs_iostat_enabled(sbi))\n\t\treturn;\n\n\tiostat_alloc_and_bind_ctx" in \
        (root / "fs" / "f2fs" / "file.c").read_text()


def test_an_added_line_the_source_says_in_other_words_or_unlike_the_mail():
    source = ["int f(void)", "{", "\tint x = 0;", "", "\tif (!ready(x))", "\t\treturn -EAGAIN;", "",
              "\treturn x;", "}"]

    def mail(first: str) -> Patch:
        return web("--- a/fs/x.c\n+++ b/fs/x.c\n@@ -2,5 +2,8 @@ int f(void)\n{\nint x = 0;\n"
                   f"+ {first}\n+ return -EAGAIN;\n+\nreturn x;\n}}\n")

    [fixed] = repair([mail("if (!ready_now(x))")], lambda name: source if name == "fs/x.c" else None)
    assert fixed is not None and fixed.other_form is not None and "'+if (!ready_now(x))' is 'if (!ready(x))'" \
        in fixed.notes[0]
    assert "\n+\tif (!ready_now(x))\n+\t\treturn -EAGAIN;\n+\n" in fixed.diff
    with pytest.raises(RepairError, match="hunk #1 .* fits no spot"):  # another statement: not the same change
        repair([mail("x = compute_the_value(x);")], lambda name: source if name == "fs/x.c" else None)


def test_seed_000_applies_to_72_without_its_early_return(tmp_path):
    """7.2 with scenarios/patches/f2fs-dio-iostat-skip.patch taken out is the
    tree the seed was written for, as far as these functions go."""
    root = copy_of_linux(tmp_path)
    assert gnu_patch(root, SKIP.read_text(), "-R").returncode == 0
    [fixed] = repair(read([FIXTURES / "f2fs-dio-iostat.txt"]).patches, tree_of(root))
    assert fixed is not None and fixed.side == "old"
    done = gnu_patch(root, fixed.diff)
    assert done.returncode == 0, done.stdout
    text = (root / "fs" / "f2fs" / "file.c").read_text()
    assert "\tif (!f2fs_iostat_enabled(sbi))\n\t\treturn;\n\n\tiostat_alloc_and_bind_ctx" in text
    assert "\tif (f2fs_iostat_enabled(sbi))\n\t\tf2fs_update_iostat(sbi, NULL, APP_DIRECT_READ_IO, size);" in text
    header = (root / "fs" / "f2fs" / "iostat.h").read_text()
    assert "+static inline bool f2fs_iostat_enabled(struct f2fs_sb_info *sbi)\n+{\n+\treturn sbi->iostat_enable;\n" \
        in fixed.diff
    assert "static inline bool f2fs_iostat_enabled(struct f2fs_sb_info *sbi) { return false; }" in header


def web(text: str, name: str = "mail.txt", form: str = "web", counter: int = 1, total: int = 1) -> Patch:
    return Patch(subject=f"[PATCH] {name}", title=name, revision=1, counter=counter, total=total, message_id=None,
                 author=None, date=None, body="", diff=text, form=form, file=name)  # type: ignore[arg-type]


SOURCE = """\
static int f(int a)
{
\tint b = a
\t\t+ PAGE_SIZE;

\tif (a)
\t\treturn b;
\treturn 0;
}

static int g(void)
{
\treturn 1;
}
"""


def write_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "src"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_context_line_that_starts_with_plus_and_a_vanished_blank_line(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    mangled = ("--- a/fs/x.c\n+++ b/fs/x.c\n@@ -3,5 +3,6 @@ static int f(int a)\nint b = a\n+ PAGE_SIZE;\n"
               "+ b *= 2;\nif (a)\nreturn b;\n")
    [fixed] = repair([web(mangled)], tree_of(root))
    assert fixed is not None and fixed.side == "old"
    # as many context lines below the change as above it: GNU patch anchors an uneven hunk at an end
    assert fixed.diff.endswith("@@ -3,4 +3,5 @@ static int f(int a)\n \tint b = a\n \t\t+ PAGE_SIZE;\n"
                               "+\tb *= 2;\n \n \tif (a)\n")
    assert gnu_patch(root, fixed.diff).returncode == 0


def test_a_hunk_that_fits_two_places_is_refused(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE + SOURCE.replace("f(", "h(")})
    mangled = "--- a/fs/x.c\n+++ b/fs/x.c\n@@ -6,2 +6,3 @@\nif (a)\n+ a++;\nreturn b;\n"
    with pytest.raises(RepairError, match=r"mail.txt: fs/x.c: hunk #1 \(@@ -6,2 \+6,3 @@\), first line "
                                          r"'if \(a\)': fits 2 spots \(lines 6, 20\) in the source\n"):
        repair([web(mangled)], tree_of(root))


def test_a_file_not_in_the_source_is_refused(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    with pytest.raises(RepairError, match="fs/y.c: not in this source\n"):  # said once (was "... in the source" twice)
        repair([web("--- a/fs/y.c\n+++ b/fs/y.c\n@@ -1,1 +1,2 @@\nx\n+y\n")], tree_of(root))


def test_a_copy_on_one_line_with_a_marker_glued_to_its_word(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    flat = ("diff --git a/fs/x.c b/fs/x.c index 1..2 100644 --- a/fs/x.c +++ b/fs/x.c "
            "@@ -9,4 +9,8 @@ static int f(int a) } +static int k(void) +{ + return 2; +} "
            "static int g(void) {")
    [fixed] = repair([web(flat, form="one-line")], tree_of(root))
    assert fixed is not None
    assert fixed.diff.endswith("@@ -9,4 +9,8 @@ static int f(int a)\n }\n \n+static int k(void)\n+{\n+\treturn 2;\n"
                               "+}\n static int g(void)\n {\n")
    assert gnu_patch(root, fixed.diff).returncode == 0


def test_a_series_whose_second_patch_stands_on_the_first(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    first = "--- a/fs/x.c\n+++ b/fs/x.c\n@@ -12,3 +12,4 @@\n{\n+ int one = 1;\nreturn 1;\n}\n"
    second = "--- a/fs/x.c\n+++ b/fs/x.c\n@@ -12,4 +12,4 @@\n{\nint one = 1;\n- return 1;\n+ return one;\n}\n"
    fixed = repair([web(first, "one", counter=1, total=2), web(second, "two", counter=2, total=2)], tree_of(root))
    assert [f.side for f in fixed if f is not None] == ["old", "old"]
    for one in fixed:
        assert one is not None and gnu_patch(root, one.diff).returncode == 0
    assert "{\n\tint one = 1;\n\treturn one;\n}\n" in (root / "fs" / "x.c").read_text()


def test_a_new_file_in_a_web_copy(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    mangled = "--- /dev/null\n+++ b/fs/new.c\n@@ -0,0 +1,4 @@\n+int n(void)\n+{\n+ return 0;\n+}\n"
    [fixed] = repair([web(mangled)], tree_of(root))
    assert fixed is not None and gnu_patch(root, fixed.diff).returncode == 0
    assert (root / "fs" / "new.c").read_text() == "int n(void)\n{\n\treturn 0;\n}\n"


def test_a_well_formed_diff_is_left_to_gnu_patch(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    diff = "--- a/fs/x.c\n+++ b/fs/x.c\n@@ -13,1 +13,1 @@\n-\treturn 1;\n+\treturn 2;\n"
    assert well_formed(diff)
    assert repair([web(diff, form="diff")], tree_of(root)) == [None]
    assert not well_formed(diff.replace("-\treturn 1;", "return 1;"))


def test_a_diff_without_hunks_is_refused():
    with pytest.raises(MailError, match="no hunk"):
        repair([web("diff --git a/x b/x\nindex 1..2\n", form="web")], lambda name: [])


def test_a_well_formed_diff_whose_tabs_a_mail_client_turned_into_spaces(tmp_path):
    root = write_tree(tmp_path, {"fs/x.c": SOURCE})
    damaged = "--- a/fs/x.c\n+++ b/fs/x.c\n@@ -12,3 +12,3 @@\n {\n-        return 1;\n+        return 2;\n }\n"
    assert well_formed(damaged)
    assert gnu_patch(root, damaged, "--dry-run").returncode == 1  # as given, it does not apply
    [fixed] = repair([web(damaged, form="mail")], tree_of(root))
    assert fixed is not None and "mail client" in fixed.cause
    assert fixed.diff.endswith("@@ -12,3 +12,3 @@\n {\n-\treturn 1;\n+\treturn 2;\n }\n")
    assert gnu_patch(root, fixed.diff).returncode == 0


def test_git_format_patch_output_flattened_to_one_line_is_read_and_repaired(tmp_path):
    """Real git format-patch output with every line break turned into a space
    (as an archive that lost them shows it): its headers, body and diff are
    read, and the diff applies to the tree it was made from, giving the
    commit's file word for word."""
    repo = tmp_path / "repo"
    (repo / "fs").mkdir(parents=True)
    before = "".join(f"static int f{n}(int x)\n{{\n\tif (x > {n})\n\t\treturn x;\n\treturn {n};\n}}\n\n"
                     for n in range(6))
    (repo / "fs" / "a.c").write_text(before)
    run = ["git", "-C", str(repo), "-c", "user.name=Ann Dev", "-c", "user.email=ann@example.org"]
    subprocess.run([*run, "init", "-q"], check=True)
    subprocess.run([*run, "add", "."], check=True)
    subprocess.run([*run, "commit", "-qm", "base"], check=True)
    after = before.replace("\tif (x > 3)\n\t\treturn x;\n", "\tif (x > 3 && x < 100)\n\t\treturn x + 1;\n"
                           "\tif (x < 0)\n\t\treturn 0;\n")
    (repo / "fs" / "a.c").write_text(after)
    subprocess.run([*run, "commit", "-qam", "fs: clamp f3's result\n\nLatency 120 us -> 80 us."], check=True)
    mailed = subprocess.run([*run, "format-patch", "-1", "--stdout"], check=True, capture_output=True,
                            text=True).stdout
    flat = tmp_path / "flat.txt"
    flat.write_text(" ".join(mailed.split()))
    mail = read([flat])
    patch = mail.patches[0]
    assert (patch.form, mail.title, mail.author) == ("one-line", "fs: clamp f3's result", "Ann Dev <ann@example.org>")
    assert patch.body == "Latency 120 us -> 80 us."
    subprocess.run([*run, "checkout", "-q", "HEAD~1"], check=True)
    [fixed] = repair(mail.patches, tree_of(repo))
    assert fixed is not None and fixed.side == "old"
    assert gnu_patch(repo, fixed.diff).returncode == 0
    assert words(repo / "fs" / "a.c") == [line.split() for line in after.split("\n")]


def test_a_hunk_in_the_source_as_written_beside_one_in_other_words_both_come_out_for_the_base():
    source = ["int f(void)", "{", "\tint x = 0;", "", "\tif (!ready(x))", "\t\treturn -EAGAIN;", "",
              "\treturn x;", "}", "", "int g(void)", "{", "\tint y = 1;", "", "\ty += 2;", "\treturn y;", "}"]
    mail = web("--- a/fs/x.c\n+++ b/fs/x.c\n@@ -2,5 +2,8 @@ int f(void)\n{\nint x = 0;\n"
               "+ if (!ready_now(x))\n+ return -EAGAIN;\n+\nreturn x;\n}\n"
               "@@ -12,5 +15,6 @@ int g(void)\n{\nint y = 1;\n+ y += 2;\nreturn y;\n}\n")
    [fixed] = repair([mail], lambda name: source if name == "fs/x.c" else None)
    assert fixed is not None and fixed.other_form is not None and len(fixed.notes) == 1  # f's hunk, in other words
    assert "+\ty += 2;" in fixed.other_form and "+\tif (!ready(x))" in fixed.other_form
    assert "+\ty += 2;" in fixed.diff and "+\tif (!ready_now(x))" in fixed.diff


def test_a_well_formed_diff_is_never_rewritten_beyond_its_whitespace():
    """A well-formed diff whose added lines the source says in other words is
    left as the mail wrote it (GNU patch, its fuzz and wiggle judge it: iolab.mail.series);
    the same words in a web archive's copy are placed with the source's form taken out."""
    source = ["int f(void)", "{", "\tint x = 0;", "", "\tif (!ready(x))", "\t\treturn -EAGAIN;", "",
              "\treturn x;", "}"]
    diff = ("--- a/fs/x.c\n+++ b/fs/x.c\n@@ -2,5 +2,8 @@ int f(void)\n {\n \tint x = 0;\n \n"
            "+\tif (!ready_now(x))\n+\t\treturn -EAGAIN;\n+\n \treturn x;\n }\n")
    assert well_formed(diff)
    assert repair([web(diff, form="mail")], lambda name: source if name == "fs/x.c" else None) == [None]
    [copy] = repair([web(diff, form="web")], lambda name: source if name == "fs/x.c" else None)
    assert copy is not None and copy.other_form is not None
