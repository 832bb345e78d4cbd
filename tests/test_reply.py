"""The reply block a maintainer pastes into a list reply (issue 37): 72 columns and about 40 lines,
its outcome first (the failure once, or "nothing decided"), one line each for the mail, the kernels,
the mode and the device, the claimed rows, and a way to reproduce with no path of this machine."""

import re

from iolab.analysis import reports
from iolab.report import reply, reproduce
from iolab.run import runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment

MAIL = {"title": "ext4: avoid tail write_begin walk for uptodate folios", "author": "Jia Zhu <jia@example.org>",
        "date": "Mon, 08 Jun 2026 23:52:41 -0400", "message_id": "20260609035241.1-2-jia@example.org"}


def claim(label, before, after, metric="read_bw", **more):
    return {"label": label, "before": before, "after": after, "workload": "randread", "metric": metric, **more}


# patched reads 20% faster: two rows agree (one as a time per op), one claims the other way, ctx did
# not move, and a count iolab does not measure
ROWS = [claim("randread BW (MiB/s)", 100.0, 120.0, unit="MiB/s", better="higher", stated="+20%"),
        claim("randread lat (us)", 10.0, 8.0, unit="us", better="lower"),
        claim("randread slower", 120.0, 100.0, unit="MiB/s", better="higher"),
        claim("context switches", 3.67e6, 3.59e6, metric="ctx"),
        {"label": "NAT blocks read", "before": 1191.0, "after": 1242.0, "reason": "a count iolab does not measure"}]

CACHED = "/root/.cache/iolab/experiments/mail-0123456789abcdef/iolab-patch-fedcba9876543210.toml"
COMMAND = "iolab patch /home/jia/mail/v3_20260609_jia_ext4_avoid_tail.mbx --source /home/jia/linux --timing wall"
CLAIMS = {"source": "[PATCH] ext4", "row": ROWS, "scaled": ["numjobs 16 -> 4"],
          "not_reproduced": ["will-it-scale: not a benchmark iolab runs"]}


def block(tmp_path, iterations=8, fail=None, claims=CLAIMS, workloads=None):
    store = Store(tmp_path / "runs.db")
    tables = {"workload": workloads} if workloads else {}
    run = runner.run(experiment(["base", "patched"], iterations=iterations, claims=claims, mail=MAIL,
                                name=MAIL["title"], **tables), store, experiment_path=CACHED,
                     host=ScriptedHost({"base": 100.0, "patched": 120.0}, fail=fail))
    return reply.render(reports.run_report(store, run), COMMAND)


def fits(text):
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 72 and len(lines) <= 42
    assert all(line == line.rstrip() for line in lines) and "\t" not in text
    assert not re.search(r"/home/|/root|\.cache|/tmp/|iolab-patch-", text), text


def test_a_decided_run_fits_a_mail_and_names_no_local_path(tmp_path):
    text = block(tmp_path)
    fits(text)
    lines = text.splitlines()
    assert lines[0] == "iolab: the mail's claimed rows after 8 rounds: 2 agree, 1 opposite, 1 no change " \
                       "found," or lines[0].startswith("iolab: the mail's claimed rows after 8 rounds: 2 agree")
    for label in ("mail:", "kernel:", "mode:", "device:"):  # one line each
        assert sum(line.startswith(label) for line in lines) == 1, label
    assert re.search(r"^randread BW \(MiB/s\) +\+20\.0% +\+2\d\.\d% \* +agrees$", text, re.M)
    assert f"  b4 am -o - '{MAIL['message_id']}' > mail.mbx\n" in text
    assert "  iolab patch mail.mbx --source linux --timing wall\n" in text
    assert re.search(r"experiment sha256 [0-9a-f]{16}", text)
    assert "will-it-scale" in " ".join(text.split())  # what of the mail's benchmark did not run: a caveat


def test_nothing_decided_says_so_first_and_names_the_rounds(tmp_path):
    text = block(tmp_path, iterations=3)
    fits(text)
    first = " ".join(text.split("\n\n")[0].split())
    assert first.startswith("iolab: nothing decided: no claimed row has a verdict after 3 rounds, ~")
    assert "no change found" not in text and "undecided, 3 of ~" in text


def test_a_failed_run_starts_with_its_failure_once_and_whole(tmp_path):
    error = ("fio: pvsync2: Operation not supported: the job asks polled I/O (hipri=1) of a loop device, which "
             "has no poll queues; a device with poll_queues runs it")
    text = block(tmp_path, iterations=3, fail={"patched": error, "base": error},
                 workloads=[{"name": "randread", "job": "[j]\nrw=randread\n"},
                            {"name": "seqread", "job": "[j]\nrw=read\n"}])
    fits(text)
    assert re.match(r"iolab: FAILED in \d+ cells \(every variant, 2 workloads\): fio: pvsync2:", text)
    assert text.count("FAILED") == 1 and "poll_queues runs it" in " ".join(text.split())  # once, not cut
    assert "rd BW MiB/s" not in text  # no table of failed rows, no table header without a row


def test_the_command_keeps_what_a_reader_can_use():
    assert reproduce.public("iolab patch /a/b.patch /a/c.patch --write /tmp/x.toml --allow=exec") == \
        "iolab patch mail.mbx --allow=exec"
    assert reproduce.public("iolab patch /a/b.patch", mailbox=False) == "iolab patch b.patch"
    assert reproduce.public("iolab patch x.patch --source https://example.org/linux-7.2.tar.xz") == \
        "iolab patch mail.mbx --source https://example.org/linux-7.2.tar.xz"


def test_the_digest_does_not_depend_on_where_the_files_are(tmp_path):
    made = []
    for where in ("home/a/exp", "srv/b", "x"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "linux.tar.gz").write_bytes(b"")
        config = "CONFIG_X=y\n" if where == "x" else ""
        made.append(experiment(kernel={"source": "linux.tar.gz", "config": config}, base_dir=str(tmp_path / where)))
    assert str(tmp_path / "srv/b") in made[1].model_dump_json()  # the stored experiment has the whole path
    assert reproduce.digest(made[0]) == reproduce.digest(made[1]) != reproduce.digest(made[2])


def test_many_claimed_rows_keep_the_block_about_40_lines(tmp_path):
    many = [claim(f"randread BW, run {i}", 100.0, 120.0, unit="MiB/s", better="higher") for i in range(30)]
    text = block(tmp_path, claims={"row": many})
    fits(text)
    assert "... and 16 more claimed rows (the full report)" in text and "reproduce:" in text
