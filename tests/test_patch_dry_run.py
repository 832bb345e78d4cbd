"""`iolab patch MAIL --dry-run` shows the plan (issue 37 item 1), run as a
user runs it (a subprocess) on seed mails and a stand-in source tarball:
the claims it read, each with the row that checks it; the benchmark, the
device, the rounds and the estimate; nothing written in the working
directory unless --write names a file there; and a written experiment
whose paths resolve from its own folder, run from another one. The plans
of two seeds are golden files (UPDATE_GOLDEN=1 regenerates them)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab import load
from iolab.spec import SpecError
from tests.helpers import FIXTURES, REPO, check_golden, experiment, source_tarball

SEED = FIXTURES / "seeds" / "ext4-write-begin-large-folio.txt"
SEED_ALONE = (SEED, "--allow", "partial-series")  # the seed is 2/2 of a series, given alone
ROWS = ["  write_u1k    1.418 -> 0.3405 us (-76.0%)  checked by write_u1k per_call",
        "  write_u10k   1.887 -> 0.4175 us (-77.9%)  checked by write_u10k per_call",
        "  pwrite_u1k   1.6775 -> 0.339 us (-79.8%)  checked by pwrite_u1k per_call",
        "  pwrite_u10k  1.9035 -> 0.413 us (-78.3%)  checked by pwrite_u10k per_call"]


def iolab(tmp_path: Path, cwd: Path, *argv: object) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "IOLAB_STORE"}, "XDG_CACHE_HOME": str(tmp_path / "xdg"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}  # no store: no estimate from it
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "iolab.cli", *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, env=env)


def tree(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_the_dry_run_prints_the_claims_each_with_its_row_and_writes_nothing_here(tmp_path):
    tarball = source_tarball(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the user's own file\n")
    before = tree(work)
    done = iolab(tmp_path, work, "patch", *SEED_ALONE, "--source", tarball, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert tree(work) == before  # the repaired patch went to iolab's cache, the experiment nowhere
    out = done.stdout.splitlines()
    assert out[0] == "ext4: avoid tail write_begin walk for uptodate folios"
    assert out[out.index("claims: 4 read, 4 checkable here") + 1:][:4] == ROWS
    assert "  write_u1k (libMicro)" in out and "    runs iolab-probe mode=batch case=write_u1k batches=50" in out
    assert "  patch 1 of 2: not given, not applied" in out
    assert "device: a loop device on an image in the VM's memory (no poll queues); ext4, 512MiB; a VM of 1 CPU" in out
    assert "rounds: 3, then one at a time while a claimed row is undecided, up to 12 (base and patched" in out
    assert "  alternating; instructions timing)" in out
    assert "estimate: at most 96 cells, time unknown until a workload without a time of its own ran once" in out
    assert out[-1] == "experiment: not written (--write FILE keeps it to edit and run; --verbose prints it)"
    assert max(map(len, out)) <= 100 and "[[claims.row]]" not in done.stdout  # the text only with --verbose


def test_the_experiment_carries_the_claims_with_their_lines_and_a_correction_is_what_the_run_uses(tmp_path):
    tarball = source_tarball(tmp_path)
    work = tmp_path / "work"
    done = iolab(tmp_path, work, "patch", *SEED_ALONE, "--source", tarball, "--dry-run", "--write", "exp.toml")
    assert done.returncode == 0, done.stderr
    rows = load.load(work / "exp.toml").claims.row
    assert [(r.label, r.before, r.after, r.unit, r.better, r.workload, r.metric) for r in rows][0] == \
        ("write_u1k", 1.418, 0.3405, "us", "lower", "write_u1k", "per_call")
    assert [r.source for r in rows] == ["write_u1k 1.418 0.3405 76.0%", "write_u10k 1.887 0.4175 77.9%",
                                        "pwrite_u1k 1.6775 0.3390 79.8%", "pwrite_u10k 1.9035 0.4130 78.3%"]
    # the user corrects a misread row in the file: the run reads the file's rows, not the mail again
    text = (work / "exp.toml").read_text()
    (work / "exp.toml").write_text(text.replace("after = 0.3405\n", "after = 1.5\n", 1)
                                   .replace('label = "write_u10k"', 'label = "write_u10k (corrected)"'))
    done = iolab(tmp_path, work, "run", "--dry-run", "exp.toml")
    assert done.returncode == 0, done.stderr
    assert "  write_u1k               1.418 -> 1.5 us (+5.8%)      checked by write_u1k per_call" in done.stdout
    assert "  write_u10k (corrected)  1.887 -> 0.4175 us (-77.9%)  checked by write_u10k per_call" in done.stdout


def test_a_written_experiment_runs_from_another_folder(tmp_path):
    """--write a/b/exp.toml (its folders made) from the working directory,
    with the source named relative to it; then `iolab run --dry-run` from
    elsewhere. The printed text (--verbose, no --write) names absolute paths:
    saved anywhere, it runs too."""
    source_tarball(tmp_path)
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    done = iolab(tmp_path, work, "patch", *SEED_ALONE, "--source", "../linux.tar.gz", "--dry-run", "--write",
                 "a/b/exp.toml")
    assert done.returncode == 0, done.stderr
    assert 'source = "../../../linux.tar.gz"\n' in (work / "a" / "b" / "exp.toml").read_text()
    done = iolab(tmp_path, elsewhere, "run", "--dry-run", work / "a" / "b" / "exp.toml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ext4: avoid tail write_begin walk for uptodate folios: 96 cells at most (3 "
                                  "rounds, then one at a time while a claimed row is undecided, up to 12)")

    done = iolab(tmp_path, work, "patch", *SEED_ALONE, "--source", "../linux.tar.gz", "--dry-run", "--verbose")
    assert done.returncode == 0, done.stderr
    plan, text = done.stdout.split("\n# the experiment:\n")
    assert "    | write_u1k 1.418 0.3405 76.0%" in plan.splitlines()  # each claim's line of the mail
    (elsewhere / "c").mkdir()
    (elsewhere / "c" / "saved.toml").write_text(text)
    done = iolab(tmp_path, elsewhere, "run", "--dry-run", "c/saved.toml")
    assert done.returncode == 0, done.stderr


def test_a_claim_rows_source_line_is_bounded():
    row = {"label": "x", "before": 1.0, "after": 2.0, "source": "y" * 201}
    with pytest.raises(SpecError, match=r"claims\.row\[0\]\.source"):
        experiment(claims={"row": [row]})
    assert experiment(claims={"row": [{**row, "source": "y" * 200}]}).claims.row[0].source == "y" * 200


@pytest.mark.parametrize("seed, allow", [("ext4-write-begin-large-folio.txt", ["--allow", "partial-series"]),
                                         ("f2fs-nat-readahead.txt", []), ("f2fs-dio-iostat.txt", [])])
def test_the_plan_of_a_seed_as_printed(tmp_path, seed, allow):
    """Every line as a developer reads it: the libMicro seed's four rows each
    checked by its case; the NAT seed's flush time checked by the churn's
    phase and its two counts under the one reason none checks them. The DIO seed's
    latencies keep the mail's digits (65264.5 -> 55470.95 ns)."""
    done = iolab(tmp_path, tmp_path / "work", "patch", FIXTURES / "seeds" / seed, *allow, "--source",
                 source_tarball(tmp_path), "--dry-run")
    assert done.returncode == 0, done.stderr
    check_golden(f"patch-dry-run-{seed.removesuffix('.txt')}.txt", done.stdout)


def test_what_the_pipeline_wrote_is_named_under_home_as_a_user_reads_it(tmp_path, monkeypatch):
    from iolab.workloads.patch_pipeline import _shown

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert _shown(tmp_path / "home" / ".cache" / "iolab" / "x.patch") == "~/.cache/iolab/x.patch"
    assert _shown(tmp_path / "work" / "iolab-mail" / "x.patch") == "iolab-mail/x.patch"
    assert _shown(tmp_path / "elsewhere" / "x.patch") == str(tmp_path / "elsewhere" / "x.patch")


def test_the_run_sets_its_delta_beside_the_row_as_corrected_in_the_file(tmp_path, monkeypatch):
    """The report's claim table reads the experiment's rows, not the mail again:
    the fio mail claims BW 2874 -> 3305 MiB/s; corrected in the file to 2500,
    the same scripted run (patched reads 20% faster) says opposite, not agrees."""
    from iolab.analysis import reports
    from iolab.run import runner
    from iolab.store import Store
    from iolab.workloads import patch_pipeline
    from tests.fakes import ScriptedHost

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    request = patch_pipeline.PatchRequest((str(FIXTURES / "mail" / "sqpoll-tw-batch.mbox"),), dry_run=True,
                                          source=str(source_tarball(tmp_path)), write=tmp_path / "exp.toml")
    text = patch_pipeline.experiment(request, lambda _: None).text
    words = []
    for after in ("3305.0", "2500.0"):
        (tmp_path / "exp.toml").write_text(text.replace("after = 3305.0\n", f"after = {after}\n"))
        written = load.load(tmp_path / "exp.toml")
        store = Store(tmp_path / f"runs-{after}.db")
        levels = {variant.name: 100.0 if n == 0 else 120.0 for n, variant in enumerate(written.variant)}
        run = runner.run(written, store, host=ScriptedHost(levels))
        (claim,) = reports.run_report(store, run).analysis.claims
        words.append((claim.label, round(claim.mail_delta, 3), claim.word))
    assert words == [("BW", 0.15, "agrees"), ("BW", -0.13, "opposite")]


def test_the_plan_says_which_hunks_of_a_port_moved(tmp_path):
    """A mail written on another base (its hunk 70 lines higher, one context line other):
    the plan names the port under its patch, as the report's header does."""
    from tests.test_mail_series import MQ_NEW, MQ_OLD, commit, format_patch, repo_with, tarball

    repo = repo_with(tmp_path, {"block/blk-mq.c": MQ_OLD})
    commit(repo, "block/blk-mq.c", "\t\tdepth++;\n", "\t\tdepth++;\n\t\tif (depth > 32)\n\t\t\tcond_resched();\n",
           "block: yield while issuing a long plug\n\nIOPS 562K -> 574K.")
    [mail] = format_patch(repo, 1, tmp_path / "out")
    done = iolab(tmp_path, tmp_path / "work", "patch", mail, "--source",
                 tarball(tmp_path, {"block/blk-mq.c": MQ_NEW}), "--dry-run")
    assert done.returncode == 0, done.stderr
    patches = done.stdout[done.stdout.index("patches:"):done.stdout.index("\nbenchmark:")]
    assert " ".join(patches.split()) == ("patches: 1 patch 1/1 block: yield while issuing a long plug placed on "
                                         "linux.tar.gz as a port (written on another base): block/blk-mq.c #1 +70 "
                                         "(fuzz; 1 context line differs)")
