"""``iolab patch MAIL ...``: its arguments, and what it prints. The pipeline
(read the mail, repair its diff against the source, choose workloads, write
the experiment) is iolab.workloads.patch_pipeline; the run and its report
are the command line's, as for ``iolab run``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iolab import load
from iolab.store import Store
from iolab.workloads.patch_pipeline import DEFAULT_SOURCE, PatchRequest

DESCRIPTION = """\
Read the patch mail: a plain diff, a git format-patch file, an mbox of one mail
or a series (put in [PATCH n/m] order; a 0/m cover letter is read, never
applied), b4 am output, or a web archive's copy of a mail (its diff repaired
against the source: each hunk placed by its words, the source's exact lines
taken; repaired patches are written to iolab-mail/ beside the experiment
--write names, else in iolab's cache, never in the working directory).
The mail's title names the experiment; its Message-Id, author and date go
into the run and every report. Then read the files and functions the
patches change, choose workloads for them from iolab's library
(iolab/workloads/areas/: a file per area, e.g. fs/ext4, mm/filemap.c,
io_uring/), and write the experiment that measures them: the source
(--source) as the base, with any patch it already carries taken out, and the
patches in order as a series (one step each). With --dry-run it prints the
plan: the claims read, each with the workload and metric that check it (or
why none can), the benchmark and what iolab runs for it, the device, the
rounds and the estimate. The claims go into the experiment as
[[claims.row]], where a misread row can be corrected: the run reads them
there. Without --dry-run the experiment runs and its report ends in a reply
block for the mailing list.

A mail's own benchmark (a fio command line or job, t/io_uring, dd, libMicro
cases, a create/sync/delete recipe, parameters in prose) becomes the primary
workloads, scaled to the VM; the library's stay as exploratory rows. Its table
or before -> after pairs are set beside iolab's deltas, each row with one word:
agrees, no change found, undecided (with the rounds run and needed), opposite
or not reproduced (and why). A shell recipe
iolab cannot map runs only with --allow script. A patch whose change the
source has in other words (the hunk's context there, its added lines said
otherwise) is run against the source with that form taken out.

Each patch is checked on the source as the patches before it left it. One
written on another base (it does not apply as given) is placed hunk by hunk
with GNU patch's fuzz, then word by word with wiggle, and runs as a port
(iolab-mail/*.port.patch; the report says which hunks moved, by how many
lines, and which context differed); a hunk none of them places is refused,
with the commit the mail was written on. A git tree as --source, without
--commit, is built at the mail's base-commit. A series missing a patch, or a
truncated mbox, is refused unless --allow partial-series. A dry run writes
nothing in the working directory.

  iolab patch fix.patch --dry-run                  the plan: claims, rows, device, rounds
  iolab patch fix.patch --dry-run --verbose        and the experiment's text
  iolab patch series.mbox --dry-run                a series with its cover letter
  iolab patch archived-mail.txt --dry-run          a web archive's copy, repaired
  iolab patch 000*.patch --write series.toml --dry-run   write it, to edit
  iolab patch fix.patch --read 40-52:2,3 --dry-run the rows of a block iolab did not read
  iolab patch fix.patch                            run it"""

def add_parser(commands: Any) -> None:
    patch = commands.add_parser("patch", help="choose workloads for patches and run base against patched",
                                description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    patch.add_argument("patches", nargs="+", metavar="MAIL",
                       help="patch mails or diffs (-p1): files in series order, or mboxes ([PATCH n/m] order)")
    patch.add_argument("--source", default=DEFAULT_SOURCE,
                       help=f"the kernel source (default: {DEFAULT_SOURCE}; a tarball or a git tree too)")
    patch.add_argument("--commit", help="with a git tree as --source: the commit (default: the mail's base-commit)")
    patch.add_argument("--write", metavar="EXP.toml",
                       help="write the experiment here (its folder made; its paths relative to that folder)")
    patch.add_argument("--timing", choices=("instructions", "wall"), default="instructions",
                       help="instructions (default): each step's values exact instruction counts, every step "
                       "runs; wall: real time, bisected with rounds added while undecided")
    patch.add_argument("--allow", action="append", default=[], metavar="NAME",
                       help="let the mail's benchmark use this refused fio option or engine (exec_prerun, "
                       "ioengine=exec, ...), 'script': run a shell recipe iolab cannot map as written, or "
                       "'partial-series': run a series with patches missing; by "
                       "default what a mail names is checked as an experiment file's options are, and refused "
                       "ones are listed, not run")
    patch.add_argument("--dry-run", action="store_true",
                       help="print the plan (the claims read and the rows that check them, the benchmark, the "
                       "device, the rounds, the estimate); run nothing, write nothing but --write's file")
    patch.add_argument("--verbose", action="store_true",
                       help="with --dry-run: each claim's line of the mail, the estimate per workload, and the "
                       "experiment's text (its paths absolute without --write)")
    patch.add_argument("--read", action="append", default=[], metavar="SPEC",
                       help="as iolab mail --read: the figures of a block iolab did not read that are a row's "
                       "before and after (40-52:2,3: lines 40-52, the 2nd figure the before, the 3rd the after; "
                       "10-15/20-25: each side a block); the rows go into the experiment as [[claims.row]]")
    patch.add_argument("--quiet", action="store_true", help="no progress display")


def _say(text: str) -> None:
    print(f"iolab: {text}", file=sys.stderr)


def request(args: argparse.Namespace) -> PatchRequest:
    """The pipeline's request from the parsed arguments."""
    return PatchRequest(mails=tuple(args.patches), source=args.source, commit=args.commit, timing=args.timing,
                        allow=tuple(args.allow), write=Path(args.write) if args.write else None,
                        dry_run=args.dry_run, read=tuple(args.read))


def cmd_patch(args: argparse.Namespace, execute: Any, store: Callable[[], Store | None]) -> int:
    """Write or print the experiment; without --dry-run run it (``execute``:
    the CLI's run-and-report of an experiment and its path). A dry run says
    what the run would cost, as `iolab run --dry-run` does: each kernel
    cached or to build (and how long), the cells (``store``: the existing
    store, for the earlier runs and boots the estimate takes, or None)."""
    from iolab.workloads import patch_pipeline

    written = patch_pipeline.experiment(request(args), _say)
    experiment = patch_pipeline.checked(written)
    if args.write:
        Path(args.write).write_text(written.text)
        _say(f"wrote {args.write}; edit it, then: iolab run {args.write}")
    if args.dry_run:
        from iolab.run import patch_plan

        print("\n".join(patch_plan.lines(experiment, written, store(), args.verbose)))
        if args.verbose:
            sys.stdout.write(f"\n# the experiment{' written to ' + args.write if args.write else ''}:\n"
                             + written.text)
        elif not args.write:
            print("experiment: not written (--write FILE keeps it to edit and run; --verbose prints it)")
        return 0
    path = args.write or str(patch_pipeline.kept(written))
    return execute(load.load(path), path, written.command)
