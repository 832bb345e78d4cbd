"""The diff model (iolab.kernels.diff): one reading of a patch for every stage above it."""

from iolab.kernels import diff

GIT = """Subject: [PATCH] x

--- a/fs/x.c\t2026-01-01
+++ b/fs/x.c
@@ -10,3 +10,4 @@ static int f(struct x *y,
 a
-b
+c
+d
 e
@@ -40 +41,2 @@ write_retry:
 z
+w
--- /dev/null
+++ b/fs/new.c
@@ -0,0 +1 @@
+new
-- 
2.43.0
"""


def test_a_well_formed_diff_reads_into_files_hunks_and_functions():
    read = diff.parse(GIT)
    assert read.paths() == ["fs/x.c", "fs/new.c"]
    first, second = read.files[0].hunks
    assert (first.old_start, first.old_count, first.new_start, first.new_count) == (10, 3, 10, 4)
    assert first.function == "f" and diff.named(first.section) == ("f", True)
    assert diff.named(second.section) == ("write_retry", False)  # a label: the source says the function
    assert first.first_changed() == 11 and second.first_changed() == 40
    assert read.headers()["fs/x.c"] == ["@@ -10,3 +10,4 @@ static int f(struct x *y,", "@@ -40 +41,2 @@ write_retry:"]
    assert read.files[1].old is None and read.hunk_count() == 3


def test_a_hunk_unidiff_refuses_is_read_by_its_lines_as_gnu_patch_reads_it():
    short = "--- a/b.c\n+++ b/b.c\n@@ -10,6 +10,7 @@ int g(void)\n x\n+y\n x\n"  # 3 lines where 6 are counted
    read = diff.parse(short)
    assert read.paths() == ["b.c"] and read.files[0].hunks[0].lines == (" x", "+y", " x")
    web = "--- a/b.c\n+++ b/b.c\n@@ -1,2 +1,3 @@\nint x;\n+int y;\n\nint z;\n"  # markers lost
    assert diff.parse(web).files[0].hunks[0].lines == ("int x;", "+int y;", "", "int z;")
    assert diff.strip("/dev/null") is None and diff.strip("a/fs/x.c\t2026") == "fs/x.c"


def test_a_mails_last_hunk_keeps_its_blank_context_line_and_stops_at_its_counts():
    """git writes a blank context line as ' '; the mail reader kept the diff up
    to git's signature but dropped that line, one short of the hunk's count, so
    GNU patch found the diff malformed and iolab 'repaired' it. And unidiff reads
    the blank line above git's base-commit: trailer as one more line of the hunk."""
    from iolab.mail.message import split_body

    body = ("desc\n---\n a | 1 +\n\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,3 +1,4 @@\n x\n+y\n z\n \n\n"
            "base-commit: 0123456789abcdef0123456789abcdef01234567\n-- \n2.39.5\n")
    _, found = split_body(body)
    assert found.endswith("@@ -1,3 +1,4 @@\n x\n+y\n z\n \n\nbase-commit: 0123456789abcdef0123456789abcdef01234567\n")
    [file] = diff.parse(found).files
    assert file.hunks[0].lines == (" x", "+y", " z", " ")
    assert diff.unfinished(found.split("\n")[:7]) == 1  # cut one line short: a truncated mail
    assert diff.unfinished(found.split("\n")) == 0
    _, plain = split_body(body.replace("z\n \n\nbase-commit: 0123456789abcdef0123456789abcdef01234567\n", "z\n \n\n"))
    assert plain.endswith("+y\n z\n \n")  # the blank lines past the hunk's count go
