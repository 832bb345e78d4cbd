"""``iolab mail MAIL...``: what iolab reads from a patch mail, with no kernel source.

The patches (subject, files, base-commit), the benchmark (each command or
job and what iolab runs for it), the claims (each row: before, after,
unit, which way is better, the mail's own delta and its line) and the
blocks of figures no row was read from (iolab.mail.unread), as text for
a terminal or as JSON (``--format json``). It prints the reading that
``iolab patch`` builds its experiment from (iolab.mail.reading).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from iolab import spec

DESCRIPTION = """\
Read patch mails as iolab patch reads them, and print what was read: the
patches (subject, files changed, the base-commit trailer), the benchmark
(each fio command line or job, t/io_uring, dd, libMicro case or recipe, and
what iolab runs for it), and the claims (each row's figures before and after,
unit, which way is better, the mail's own delta and the line it came from).
Then what was not read: each block of figures (a table, a tool's output, a
line of prose with figures and units) that no claim row came from, its
lines in the mail and its first line; a row iolab missed can be written by
hand as a [[claims.row]] of the experiment iolab patch --write writes
(docs/mails.md). No kernel source is needed and nothing is written. A
wrong reading shows here first: the experiment carries these claim rows.

  iolab mail fix.patch                 the reading, for a terminal
  iolab mail series.mbox --format json patches, benchmark, claims, unread as JSON
  iolab mail fix.patch --read 40-52:2,3
                                       and rows of lines 40-52: the 2nd figure the
                                       before, the 3rd the after (see --read)"""

READ_HELP = """which figures of a block are a row's two sides, for a block iolab did not
read: LINES:B,A reads each line of LINES (40-52, or one line: 45) as a row whose
B-th figure is the before and A-th the after (40-52:2,3; 40-52:2,2+1: the after
is the 2nd figure of the next line of figures, lines taken two by two, a line of
changes alone passed over); BEFORE/AFTER pairs two
blocks that each print one side (10-15/20-25: lines 10-15 the before, 20-25 the
after), their lines paired by their text without figures (else in order, or
the before's one line with each of the after's), each figure with the
one at its place (10-15/20-25:2: the 2nd figure only). Lines are numbered as
the list of blocks not read numbers them; a figure is a number alone or with its unit (562K,
4994MiB/s, 12.5 ms, 3%%), counted from the left of the line (not one inside a word:
qd32, 99.00th); a row's label is the line's words before them. Repeatable"""


def add_parser(commands: Any) -> None:
    mail = commands.add_parser("mail", help="print what iolab reads from a patch mail (no source needed)",
                               description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    mail.add_argument("mails", nargs="+", metavar="MAIL",
                      help="patch mails or diffs: files of one series, or an mbox ([PATCH n/m] order)")
    mail.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    mail.add_argument("--allow", action="append", default=[], metavar="NAME",
                      help="as iolab patch --allow: a refused fio option or engine the benchmark may use")
    mail.add_argument("--read", action="append", default=[], metavar="SPEC", help=READ_HELP)


def cmd_mail(args: argparse.Namespace) -> int:
    from iolab import mail as mails
    from iolab.mail import hinted, reading
    from iolab.mail.unread import placed_in

    try:
        given = mails.read([Path(p) for p in args.mails], cover_alone=True)
        read = reading.reading(given, tuple(args.allow), hinted.read_all(args.read, given.text(), args.mails))
    except (mails.MailError, hinted.HintError) as error:
        raise spec.SpecError(str(error)) from None
    read = dataclasses.replace(read, unread=placed_in(read.unread, read.mail.text(), args.mails))
    if args.format == "json":
        json.dump(reading.as_dict(read), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(read))
    return 0


def _figure(value: float) -> str:
    return f"{value:.6g}"


def _claim_lines(read: Any) -> list[str]:
    if not read.claims:
        return ["claims: none read" + ("" if read.unread else " (no table, no before/after figures with a unit)")]
    rows = [("label", "before", "after", "unit", "better", "change", "stated")]
    for c in read.claims:
        change = f"{c.delta:+.1%}" if c.delta is not None else "-"
        rows.append((c.label[:40], _figure(c.before), _figure(c.after), c.unit or "-", c.better or "-", change,
                     c.stated or "-"))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    hinted = sum(c.form == "hinted" for c in read.claims)
    out = [f"claims ({len(read.claims)}" + (f", {hinted} read by your hints" if hinted else "") + ")"]
    for k, row in enumerate(rows):
        cells = [row[0].ljust(widths[0]), *(cell.rjust(w) for cell, w in zip(row[1:3], widths[1:3])),
                 *(cell.ljust(w) for cell, w in zip(row[3:], widths[3:]))]
        out.append("  " + "  ".join(cells).rstrip())
        if k:
            claim = read.claims[k - 1]
            out.append(("      | hinted: " if claim.form == "hinted" else "      | ") + _cut(claim.source, 66))
    return out + _hint_lines(read)


def _hint_lines(read: Any) -> list[str]:
    """What each --read hint read: its rows, and its lines with figures that gave none."""
    out = []
    for h in read.hints:
        skipped = f", {h.skipped} line{'s' if h.skipped != 1 else ''} with figures skipped (not the named ones)" \
            if h.skipped else ""
        where = " (lines of the text read)" if h.where == "the text read" else ""
        again = sum(not any(row is c for c in read.claims) for row in h.rows)
        out.append(f"  read by your hint {h.spec}{where}: {len(h.rows)} row{'s' if len(h.rows) != 1 else ''}"
                   + (f" ({again} read already)" if again else "") + skipped)
    return out


def _unread_lines(read: Any) -> list[str]:
    """The blocks of figures no claim row came from, each its lines and first line, and how to add a row."""
    if not read.unread:
        return []
    files = {b.lines_of for b in read.unread} - {"text"}
    many = "s" if len(read.unread) != 1 else ""
    out = [f"not read ({len(read.unread)} block{many} with figures"
           + ("; lines of the text read: the cover letter, then each description)" if not files else ")")]
    for b in read.unread:
        if b.lines_of == "text":
            where = " of the text read" if files else ""
        else:
            where = f" of {b.where}" if len(files) > 1 else ""
        figures = f"{b.figures} figure{'' if b.figures == 1 else 's'}"
        out.append(f"  lines {b.first_line}-{b.last_line}{where} ({figures}): {b.header}")
    first = read.unread[0]
    out += textwrap.wrap(f"to read one: --read {first.first_line}-{first.last_line}:B,A (B, A: which figure of "
                         "each line is the before, the after; iolab mail --help), or fill the [[claims.row]] tables "
                         "the experiment iolab patch --write writes (docs/mails.md)", 76, initial_indent="  ",
                         subsequent_indent="    ")
    return out


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _benchmark_lines(read: Any) -> list[str]:
    from iolab.mail.reading import maps_to

    bench = read.benchmark
    out = [f"benchmark ({len(bench.workloads)} workload{'s' if len(bench.workloads) != 1 else ''})"]
    for w in bench.workloads:
        out.append(f"  {w.origin}: {_cut(w.source, 60)}")
        out += textwrap.wrap(f"-> {w.name}: {maps_to(w)}", 76, initial_indent="    ", subsequent_indent="       ")
    env = bench.environment
    said = [f"fs {env.fs}" if env.fs else "", f"device {env.device} ({env.device_source})" if env.device else "",
            f"mount -o {env.mount_options}" if env.mount_options else "",
            f"mkfs {' '.join(env.mkfs_options)}" if env.mkfs_options else "",
            *(f"{k}={v}" for k, v in env.sysctl.items()),
            f"memory.max {env.memory_max}" if env.memory_max else ""]
    if any(said):
        out.append("  environment: " + "; ".join(s for s in said if s))
    for title, items in (("scaled", bench.scaled), ("not reproduced", bench.not_reproduced),
                         ("refused", bench.refused)):
        out += [f"  {title}: {_cut(item, 70)}" for item in items]
    return out


def render(read: Any) -> str:
    """The reading for a terminal: the mail, its patches, benchmark and claims."""
    mail = read.mail
    out = [mail.title + (f"  <{mail.message_id}>" if mail.message_id else "")]
    if mail.author or mail.date:
        out.append("  " + " | ".join(x for x in (mail.author, mail.date) if x))
    out += ["", f"patches ({len(read.patches)}{', cover letter read' if mail.cover else ''})"]
    for p in read.patches:
        out.append(f"  {p.counter}/{p.total}  {_cut(p.subject, 68)}")
        out.append(f"        files: {', '.join(p.files) or '-'}")
        out.append(f"        base-commit: {p.base_commit or 'not given'}")
    if not read.patches:
        out.append("  none: a cover letter alone (its text read for the benchmark and claims)")
    if mail.missing:
        out.append(f"  missing: {', '.join(map(str, mail.missing))} (not given)")
    out += ["", *_benchmark_lines(read), "", *_claim_lines(read)]
    out += ["", *_unread_lines(read)] if read.unread else []
    return "\n".join(out) + "\n"
