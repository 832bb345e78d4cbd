"""``iolab watch INBOX...``: the list robot. Arguments and printing, and the
files it leaves (reply mails in a maildir, the page); the robot itself is
iolab.run.watch, the mails and the page iolab.report.robot."""

from __future__ import annotations

import argparse
import hashlib
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from iolab.spec import SpecError
from iolab.store import Store, StoreError, default_path

DESCRIPTION = """\
Read public-inbox git mirrors of a list (each commit one message, in its
file m; an inbox split in epochs INBOX/git/0.git, 1.git, ... is read
whole), group the new messages into series as b4 does (versions, cover
letters, replies), and queue each series iolab can test to the fleet's
queue in the PostgreSQL store, once: agents (iolab agent) run it as iolab
patch would, base against patched. Each message it leaves out is named
with the reason: a reply, no diff, a series not whole yet, superseded by a
newer version, does not apply to any kernel source iolab has unpacked (it
never fetches one for a mail: iolab patch or iolab kernel does), nothing to
run for its files, or a file name outside the source tree.

With --maildir, each finished run's reply (the report's reply block, as
iolab patch ends) is left there as a mail: In-Reply-To the series' cover
letter or first patch, To its author, Cc whom it was sent to. iolab never
sends mail. With --page, a static HTML page lists every series checked,
the mail's claims and iolab's answers and words, a link to each run's
report (written beside it, in runs/), and the versions of a series side by
side when more than one ran.

Where it stopped (the last commit of each epoch) is kept in the store, per
inbox: the next pass reads only what came since. The first pass over an
inbox reads its newest --backlog messages.

  iolab watch ~/lists/linux-block --once --dry-run
                                  what it would queue; queues and remembers nothing
  iolab watch ~/lists/linux-block --store postgresql:///iolab \\
      --maildir ~/Maildir/iolab --page ~/public_html/iolab/index.html
                                  poll every 5 minutes until SIGINT or SIGTERM"""


def add_parser(commands: Any) -> None:
    watch = commands.add_parser("watch", help="the list robot: queue the patch series of public-inbox mirrors",
                                description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    watch.add_argument("inboxes", nargs="+", metavar="INBOX", help="public-inbox git mirrors (directories)")
    watch.add_argument("--once", action="store_true", help="one pass, then exit")
    watch.add_argument("--dry-run", action="store_true",
                       help="list what it would queue; queue nothing, remember nothing")
    watch.add_argument("--interval", type=float, default=300.0, metavar="S",
                       help="seconds between passes without --once (default 300)")
    watch.add_argument("--backlog", type=int, default=200, metavar="N",
                       help="the first pass over an inbox reads its newest N messages (default 200)")
    watch.add_argument("--maildir", metavar="DIR", help="leave each finished run's reply here, as a mail file")
    watch.add_argument("--page", metavar="FILE.html", help="write the page of every series checked here")
    watch.add_argument("--from", dest="sender", default="iolab <iolab@localhost>", metavar="ADDRESS",
                       help="the From of the reply mails (default: iolab <iolab@localhost>)")
    watch.add_argument("--labels", metavar="A,B", default="",
                       help="queue the rounds for agents with these labels (as iolab submit --labels)")


def _say(text: str) -> None:
    print(text, flush=True)


def _store(args: argparse.Namespace) -> Store | None:
    """The store; a dry run makes none (an SQLite file not there yet is read as empty)."""
    from iolab.store.db import is_url

    where = args.store or default_path()
    if args.dry_run and not is_url(str(where)) and not Path(where).exists():
        return None
    store = Store(where)
    if not args.dry_run:
        from iolab.run import queue

        queue.postgres(store)  # the fleet's queue lives in PostgreSQL: say so before reading anything
    return store


def _mbox(series: Any, directory: Path) -> Path:
    """The series as an mbox, cover letter first, for iolab patch's reader."""
    path = directory / "series.mbox"
    with open(path, "wb") as out:
        for member in series.members:
            data = member.source.data.replace(b"\r\n", b"\n")
            lines = [b">" + line if line.lstrip(b">").startswith(b"From ") else line for line in data.split(b"\n")]
            out.write(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + b"\n".join(lines).rstrip(b"\n") + b"\n\n")
    return path


def queuer(args: argparse.Namespace, store: Store) -> Any:
    """The robot's way to queue a series: the experiment iolab patch writes
    for it (on the cached source it applies to), submitted as iolab submit does."""
    from iolab import load
    from iolab.kernels import cache
    from iolab.run import queue, submit
    from iolab.workloads import patch_pipeline

    labels = queue.labels(args.labels)

    def queue_series(series: Any, source: Any) -> int:
        digest = hashlib.sha256(series.key.encode()).hexdigest()[:16]
        directory = cache.cache_root().parent / "watch" / digest
        directory.mkdir(parents=True, exist_ok=True)
        given = patch_pipeline.PatchRequest(mails=(str(_mbox(series, directory)),), source=source.spec,
                                            commit=source.commit)
        written = patch_pipeline.experiment(given, lambda text: print(f"iolab: {text}", file=sys.stderr))
        patch_pipeline.checked(written)
        path = patch_pipeline.kept(written)
        return submit.submit(load.load(path), store, labels=labels, experiment_path=str(path)).run_id

    return queue_series


def _check(args: argparse.Namespace) -> list[Path]:
    from iolab.run.watch import inbox

    if args.interval <= 0 or args.interval > 86400:
        raise SpecError(f"--interval: seconds between 0 and 86400, got {args.interval:g}")
    if args.backlog < 0:
        raise SpecError(f"--backlog: a count of messages, got {args.backlog}")
    paths = [inbox.resolved(p) for p in args.inboxes]
    for path in paths:
        try:
            inbox.epochs(path)
        except (inbox.InboxError, OSError) as error:
            raise SpecError(f"INBOX: {str(error)[:300]}") from None
    return paths


def cmd_watch(args: argparse.Namespace) -> int:
    from iolab.run.watch import InboxError, one_pass

    paths = _check(args)
    store = _store(args)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    queue = None if args.dry_run or store is None else queuer(args, store)
    try:
        while True:
            try:
                tally = one_pass(paths, store, queue=queue, backlog=args.backlog, say=_say, stop=stop)
            except InboxError as error:
                raise SpecError(str(error)) from None
            except KeyboardInterrupt:  # a signal held while a program was started (iolab.process.interrupts)
                stop.set()
                break
            verb = "would queue" if queue is None else "queued"
            _say(f"iolab watch: {tally.messages} message{'' if tally.messages == 1 else 's'} read, {verb} "
                 f"{len(tally.queued)} series, "
                 f"skipped {len(tally.skipped)}")
            if store is not None and not args.dry_run:
                _answers(args, store)
            if args.once or stop.wait(args.interval):
                break
    finally:
        if store is not None:
            store.close()
    if stop.is_set():
        print("iolab watch: stopped by a signal", file=sys.stderr)
    return 0



def _answer(args: argparse.Namespace, store: Store, checked: Any) -> Any:
    """A series' answer (its run's claim rows and report), and its reply
    mail left in the maildir once the run is complete."""
    import mailbox
    import json

    from iolab.analysis import reports
    from iolab.report import claims, renderer, reply, robot
    from iolab.store import watch as memory

    run = store.run(checked.run_id)
    if run.status != "complete":
        return robot.Answer(run.id, run.status, (), None, None)
    kept = Path(args.page).parent / "runs" / f"run-{run.id}.json" if args.page else None
    report = None
    if kept is not None and kept.exists():
        rows = tuple(tuple(row) for row in json.loads(kept.read_text()))
    else:
        report = reports.run_report(store, run.id)
        rows = tuple(tuple(row) for row in claims.rows(report.analysis))
    link = None
    if kept is not None:
        link = f"runs/run-{run.id}.html"
        if not kept.exists():
            assert report is not None
            kept.parent.mkdir(parents=True, exist_ok=True)
            (kept.parent / f"run-{run.id}.html").write_text(renderer("html")(report))
            kept.write_text(json.dumps(rows) + "\n")
    reply_id = checked.reply_id
    if args.maildir and checked.status == "queued":
        report = report or reports.run_report(store, run.id)
        message = robot.reply(checked.headers, reply.render(report), args.sender, run.id)
        mailbox.Maildir(args.maildir, create=True).add(message)
        reply_id = str(message["Message-Id"]).strip("<>")
        memory.answered(store, checked.id, reply_id)
        _say(f"  answer <{checked.message_id}>: run {run.id}'s reply <{reply_id}> left in {args.maildir}")
    return robot.Answer(run.id, run.status, rows, link, reply_id)


def _answers(args: argparse.Namespace, store: Store) -> None:
    """The replies of the runs that finished, and the page."""
    if not args.maildir and not args.page:
        return
    from iolab.report import robot
    from iolab.store import watch as memory

    try:
        lines = []
        for checked in memory.checked(store):
            answer = _answer(args, store, checked) if checked.run_id is not None else None
            lines.append(robot.Line(checked.subject, checked.revision, checked.family, checked.message_id,
                                    "answered" if answer is not None and answer.reply_id else checked.status,
                                    checked.reason, tuple(checked.claims), answer))
        if args.page:
            page = Path(args.page)
            page.parent.mkdir(parents=True, exist_ok=True)
            partial = page.with_name(page.name + ".new")
            partial.write_text(robot.page(lines))
            partial.replace(page)
    except (OSError, StoreError) as error:
        print(f"iolab watch: the answers: {str(error)[:300]}", file=sys.stderr)
