"""`iolab patch MAIL` as a user runs it (a subprocess, --dry-run) on a
stand-in source tarball: the seeds as given, a git format-patch series in
an mbox with its cover letter, and input that is no patch (exit 2, short)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab import load
from tests.helpers import REPO, source_tarball as source

FIXTURES = Path(__file__).parent / "fixtures" / "mail"


def patch_command(tmp_path: Path, *argv: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "iolab.cli", "patch", *map(str, argv), "--dry-run"], cwd=work,
                          capture_output=True, text=True, env=env | {"PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("seed, written", [
    ("ext4-write-begin-large-folio.txt", "0002-ext4-avoid-tail-write_begin-walk-for-uptodate-folios.patch"),
    ("f2fs-nat-readahead.txt", "0001-f2fs-optimize-NAT-block-loading-during-checkpoint-wr.patch"),
])
def test_a_seed_as_given_is_repaired_and_taken_out_for_the_base(tmp_path, seed, written):
    tarball = source(tmp_path)
    out = tmp_path / "work" / "exp.toml"
    done = patch_command(tmp_path, FIXTURES / seed, "--source", tarball, "--write", out,
                         *(["--allow", "partial-series"] if "2/2" in (FIXTURES / seed).read_text()[:300] else []))
    assert done.returncode == 0, done.stderr
    assert f"iolab: wrote iolab-mail/{written} (repaired; sha256 " in done.stderr
    experiment = load.load(out)
    assert experiment.kernel.reverse == [f"iolab-mail/{written}"]  # 7.2 has it: the base takes it out
    assert experiment.series.patches == [f"iolab-mail/{written}"]
    assert experiment.name == experiment.mail.title and experiment.mail.patches[0].repaired


def test_seed_000_in_the_source_in_another_form_the_base_takes_that_form_out(tmp_path):
    tarball = source(tmp_path)
    out = tmp_path / "work" / "exp.toml"
    done = patch_command(tmp_path, FIXTURES / "f2fs-dio-iostat.txt", "--source", tarball, "--write", out)
    assert done.returncode == 0, done.stderr
    name = "0001-f2fs-skip-direct-I-O-iostat-work-when-disabled"
    assert ("iolab: fs/f2fs/file.c: hunk #1 (@@ -4799,6 +4799,9 @@), first line '{': in the source in another "
            "form: '+if (!f2fs_iostat_enabled(sbi))' is 'if (!sbi->iostat_enable)' there\n") in done.stderr
    experiment = load.load(out)  # the dry run checked it: the part reversed, then the mail's patch, apply
    assert experiment.kernel.reverse == [f"iolab-mail/{name}.in-source.patch"]
    assert experiment.series.patches == [f"iolab-mail/{name}.patch"]
    part = (tmp_path / "work" / "iolab-mail" / f"{name}.in-source.patch").read_text()
    assert "+\tif (!sbi->iostat_enable)\n+\t\treturn;\n" in part and "f2fs_iostat_enabled" not in part.split("---")[-1]


def test_a_hunk_that_fits_nowhere_is_refused_naming_it(tmp_path):
    mail = (FIXTURES / "f2fs-dio-iostat.txt").read_text().replace("void *bi_private = bio->bi_private;",
                                                                   "void *private = bio->bi_private;")
    path = tmp_path / "changed.txt"
    path.write_text(mail)
    done = patch_command(tmp_path, path, "--source", source(tmp_path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("iolab: unpacking linux.tar.gz\n")  # the source, read for the repair
    assert done.stderr.split("\n", 1)[1].startswith(f"iolab: {path}: fs/f2fs/file.c: hunk #1 "
                                                    "(@@ -4799,6 +4799,9 @@), first line '{': fits no spot in the source\n")
    assert "(the source: linux.tar.gz; give the one it was written for with --source)" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 4


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=A Developer", "-c", "user.email=a@example.org", *args],
                   check=True, capture_output=True)


def test_an_mbox_series_with_its_cover_letter_is_one_series_in_order(tmp_path):
    before = "".join(f"int f{n}(void)\n{{\n\treturn {n};\n}}\n\n" for n in range(12))
    tarball = source(tmp_path, {"fs/ext4/inode.c": before})
    repo = tmp_path / "repo"
    (repo / "fs" / "ext4").mkdir(parents=True)
    (repo / "fs" / "ext4" / "inode.c").write_text(before)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    for n, subject in ((2, "ext4: return more from f2"), (7, "ext4: return more from f7")):
        path = repo / "fs" / "ext4" / "inode.c"
        path.write_text(path.read_text().replace(f"\treturn {n};", f"\treturn {n} + 1;"))
        git(repo, "commit", "-qam", f"{subject}\n\nIOPS 562K -> 574K.")
    git(repo, "format-patch", "-q", "--cover-letter", "--thread", "-o", str(tmp_path / "out"), "HEAD~2")
    cover, first, second = sorted((tmp_path / "out").iterdir())
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "ext4: two returns")
                     .replace("*** BLURB HERE ***", "Both together: 4994 MiB/s -> 5762 MiB/s."))
    box = tmp_path / "series.mbox"
    box.write_text(second.read_text() + "\n" + cover.read_text() + "\n" + first.read_text())
    out = tmp_path / "work" / "exp.toml"
    done = patch_command(tmp_path, box, "--source", tarball, "--write", out)
    assert done.returncode == 0, done.stderr
    experiment = load.load(out)
    assert experiment.name == "ext4: two returns"
    assert experiment.series.patches == ["iolab-mail/0001-ext4-return-more-from-f2.patch",
                                         "iolab-mail/0002-ext4-return-more-from-f7.patch"]
    assert [v.name for v in experiment.variant] == ["base", "1 ext4-return-more-from-", "2 ext4-return-more-from-"]
    assert experiment.kernel.reverse == []
    mail = experiment.mail
    assert mail.message_id is not None and mail.message_id.endswith("@example.org")  # git's --thread ids
    assert [p.subject for p in mail.patches] == ["[PATCH 1/2] ext4: return more from f2",
                                                 "[PATCH 2/2] ext4: return more from f7"]
    assert not any(p.repaired for p in mail.patches)
    written = (tmp_path / "work" / "iolab-mail" / "0001-ext4-return-more-from-f2.patch").read_text()
    assert written.startswith("From: A Developer <a@example.org>\n") and "\treturn 2 + 1;" in written


@pytest.mark.parametrize("text, words", [
    ("Hello,\n\nthanks for the review.\n", "no diff in it"),
    ("From: a@example.org\nSubject: Re: [PATCH] x\n\n> quoted\n", "no patch in it"),
])
def test_what_is_not_a_patch_exits_2_with_a_short_message(tmp_path, text, words):
    path = tmp_path / "input.txt"
    path.write_text(text)
    done = patch_command(tmp_path, path, "--source", source(tmp_path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"iolab: {path}: {words}") and len(done.stderr.splitlines()) == 1


def test_a_series_mbox_from_git_format_patch_and_its_b4_am_output_are_one_series(tmp_path):
    """Mails written here against 7.2: a readahead series, its cover letter with
    a fio job file and a table of two rows. The mbox as git format-patch
    --cover-letter --thread wrote it, and what b4 am -m made of that mbox (its
    .mbx, and the .cover beside it, found without being named)."""
    tarball = source(tmp_path)
    for n, given in enumerate([[FIXTURES / "readahead-series.mbox"], [FIXTURES / "readahead-b4.mbx"]]):
        out = tmp_path / "work" / f"exp{n}.toml"
        # wall timing: in instructions mode an HDD mail gets the modeled rotational disk, whose null_blk
        # change needs drivers/block/null_blk/, which this stand-in source has not (tests/test_patch_mail.py)
        done = patch_command(tmp_path, *given, "--source", tarball, "--write", out, "--timing", "wall")
        assert done.returncode == 0, done.stderr
        experiment = load.load(out)
        assert experiment.name == "readahead: larger windows for sequential readers on HDDs"  # the cover's
        assert experiment.series.patches == [
            "iolab-mail/0001-mm-readahead-start-sequential-reads-with-a-larger-fi.patch",
            "iolab-mail/0002-block-double-the-minimum-readahead-of-a-queue.patch"]
        assert experiment.kernel.reverse == [] and experiment.mail.message_id == "cover.1795702304.git.bo@example.org"
        (job,) = [w for w in experiment.workload if not w.exploratory]  # the cover's fio job, scaled
        assert "numjobs=4" in job.job and "directory" not in job.job
        assert job.sysfs == {"/sys/block/{dev}/queue/rotational": 1}  # "a 7200 rpm SATA disk"
        rows = {row.label: row for row in experiment.claims.row}
        assert (rows["8 readers"].workload, rows["8 readers"].metric) == (job.name, "read_bw")
        assert rows["1 reader"].workload == "" and rows["1 reader"].reason == \
            "the row is 1 reader; the mail's job runs 4 (numjobs, as scaled to the VM)"


def test_a_fio_command_mail_against_72_runs_its_job_on_null_blk(tmp_path):
    out = tmp_path / "work" / "exp.toml"
    done = patch_command(tmp_path, FIXTURES / "sqpoll-tw-batch.mbox", "--source", source(tmp_path), "--write", out)
    assert done.returncode == 0, done.stderr
    experiment = load.load(out)
    job = experiment.workload[0]
    assert job.name == "io_uring-sqpoll-raise-the-SQPOLL-task_wo" and not job.exploratory
    assert "sqthread_poll" in job.job and "iodepth=128" in job.job and job.primary == ["read_bw"]
    assert experiment.vm.disk == "null_blk"
    assert "device: the guest's null_blk (memory-backed, 1 poll queue)" in done.stdout  # the dry run names it
    (patch,) = experiment.series.patches
    assert patch.endswith("/sqpoll-tw-batch.mbox")  # a mail alone in its file, well formed: applied as given
    (row,) = experiment.claims.row
    assert (row.label, row.before, row.after, row.unit, row.stated, row.metric) == \
        ("BW", 2874.0, 3305.0, "MiB/s", "+15.0%", "read_bw")
    assert "[sqpoll] runtime=30 -> size-bound (the VM's clock)" in experiment.claims.scaled
    assert experiment.claims.not_reproduced == ["will-it-scale: not a benchmark iolab runs"]


def test_the_cache_keeps_each_mails_patches_apart(tmp_path, monkeypatch):
    """Without --write the experiment and its iolab-mail/ patches go into
    iolab's cache, in a directory per mail: a v3 never overwrites the v2's
    patch file of the same name, which the v2's experiment names."""
    from iolab.workloads.patch_pipeline import PatchRequest, written_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    v2, v3 = tmp_path / "v2.mbox", tmp_path / "v3.mbox"
    v2.write_text((FIXTURES / "sqpoll-tw-batch.mbox").read_text())
    v3.write_text(v2.read_text().replace("[PATCH]", "[PATCH v3]").replace("to 64", "to 128"))
    assert written_dir(PatchRequest((str(v2),))) == written_dir(PatchRequest((str(v2),))) \
        != written_dir(PatchRequest((str(v3),)))
    assert written_dir(PatchRequest((str(v2),))) != written_dir(PatchRequest((str(v2),), allow=("script",)))
    assert written_dir(PatchRequest((str(v2),))).parent == tmp_path / "xdg" / "iolab" / "experiments"
