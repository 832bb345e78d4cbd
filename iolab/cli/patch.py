"""``iolab patch MAIL ...``: read the patch mail (iolab.mail: a patch or a
series, its web archive copy's diff repaired against the source), choose
workloads from the files the patches touch, write the experiment, and run
the base against the patched kernel."""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iolab import load, spec
from iolab.store import Store

DESCRIPTION = """\
Read the patch mail: a plain diff, a git format-patch file, an mbox of one mail
or a series (put in [PATCH n/m] order; a 0/m cover letter is read, never
applied), b4 am output, or a web archive's copy of a mail (its diff repaired
against the source: each hunk placed by its words, the source's exact lines
taken; repaired patches are written to iolab-mail/ beside the experiment).
The mail's title names the experiment; its Message-Id, author and date go
into the run and every report. Then read the files and functions the
patches change, choose workloads for them from iolab's library
(iolab/workloads/areas/: a file per area, e.g. fs/ext4, mm/filemap.c,
io_uring/), and write the experiment that measures them: the source
(--source) as the base, with any patch it already carries taken out, and the
patches in order as a series (one step each). Without --dry-run the
experiment runs and its report ends in a reply block for the mailing list.

A mail's own benchmark (a fio command line or job, t/io_uring, dd, libMicro
cases, a create/sync/delete recipe, parameters in prose) becomes the primary
workloads, scaled to the VM; the library's stay as exploratory rows. Its table
or before -> after pairs are set beside iolab's deltas, each row with one word:
agrees, no change found, undecided (with the rounds run and needed), opposite
or not reproduced (and why). A shell recipe
iolab cannot map runs only with --allow script. A patch whose change the
source has in other words (the hunk's context there, its added lines said
otherwise) is run against the source with that form taken out.

  iolab patch fix.patch --dry-run                  what it would run
  iolab patch series.mbox --dry-run                a series with its cover letter
  iolab patch archived-mail.txt --dry-run          a web archive's copy, repaired
  iolab patch 000*.patch --write series.toml --dry-run   write it, to edit
  iolab patch fix.patch                            run it"""

DEFAULT_SOURCE = "debian:linux-source-7.2"


def add_parser(commands: Any) -> None:
    patch = commands.add_parser("patch", help="choose workloads for patches and run base against patched",
                                description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    patch.add_argument("patches", nargs="+", metavar="MAIL",
                       help="patch mails or diffs (-p1): files in series order, or mboxes ([PATCH n/m] order)")
    patch.add_argument("--source", default=DEFAULT_SOURCE,
                       help=f"the kernel source (default: {DEFAULT_SOURCE}; a tarball or a git tree too)")
    patch.add_argument("--commit", help="with a git tree as --source: the commit")
    patch.add_argument("--write", metavar="EXP.toml", help="write the experiment here (paths relative to it)")
    patch.add_argument("--timing", choices=("instructions", "wall"), default="instructions",
                       help="instructions (default): each step's values exact instruction counts, every step "
                       "runs; wall: real time, bisected with rounds added while undecided")
    patch.add_argument("--allow", action="append", default=[], metavar="NAME",
                       help="let the mail's benchmark use this refused fio option or engine (exec_prerun, "
                       "ioengine=exec, ...), or 'script': run a shell recipe iolab cannot map as written; by "
                       "default what a mail names is checked as an experiment file's options are, and refused "
                       "ones are listed, not run")
    patch.add_argument("--dry-run", action="store_true", help="print the choice and the experiment; run nothing")
    patch.add_argument("--quiet", action="store_true", help="no progress display")


def _say(text: str) -> None:
    print(f"iolab: {text}", file=sys.stderr)


def _source(source: str, commit: str | None) -> tuple[Path, str]:
    """The unpacked source (fetched and unpacked on first use) and its label."""
    from iolab.kernels import KernelError, sources

    try:
        resolved = sources.resolve(sources.parse(source, commit, "."), _say)
    except KernelError as error:
        raise spec.SpecError(f"--source: {error}") from None
    return sources.unpack(resolved, _say), resolved.label


def in_source(paths: list[Path], root: Path, label: str) -> list[bool]:
    """Whether each patch (or the part of it the source has in another form,
    which the base takes out) is in the source already (it applies reversed);
    one that neither applies nor is in it is refused with GNU patch's own diagnosis."""
    from iolab.kernels import patches

    found = []
    for path in paths:
        try:
            state = patches.state_in(root, patches.Patch(path))
        except patches.MalformedPatch as error:
            raise spec.SpecError(str(error)) from None
        except patches.PatchError as error:
            first, _, rest = str(error).partition("\n")
            raise spec.SpecError(f"{first}\n  (the source: {label}; give the one it was written for with "
                                 f"--source)\n{rest}") from None
        found.append(state == "applied")
    return found


def read_mail(paths: list[Path]) -> Any:
    """The mail these files hold (iolab.mail.Mail): read before the source is fetched."""
    from iolab import mail as mails

    try:
        return mails.read(paths)
    except mails.MailError as error:
        raise spec.SpecError(str(error)) from None


def patch_files(mail: Any, root: Path, label: str, base_dir: Path) -> tuple[list[Path], str, dict[Path, Path]]:
    """The patch files the mail's series applies (repaired ones and a
    series' mails written beside the experiment), its [mail] table, and the
    parts of patches the source has in another form (patch -> the part)."""
    from iolab.kernels import patches
    from iolab.mail import MailError, copies, files, repair

    try:
        names = copies.files_named(mail.patches)
        texts = patches.pristine_files(root, names)
        lines = {name: (text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
                 for name, text in texts.items() if text is not None}
        fixed = repair.repair(mail.patches, lambda name: lines.get(name))
        written = files.write(mail, fixed, base_dir, label)
    except MailError as error:
        source = f"\n  (the source: {label}; give the one it was written for with --source)"
        raise spec.SpecError(str(error) + (source if isinstance(error, repair.RepairError) else "")) from None
    def shown(path: Path) -> str:
        relative = os.path.relpath(path)
        return str(path) if relative.startswith("..") else relative

    for item in written:
        if item.written:
            what = "repaired" if item.record.repaired else "split from the mail"
            _say(f"wrote {shown(item.path)} ({what}; sha256 {item.record.sha256[:12]})")
        for note in item.notes:
            _say(note)
        if item.in_source is not None:
            _say(f"wrote {shown(item.in_source)}: the source's form of that, which the base takes out")
    parts = {item.path: item.in_source for item in written if item.in_source is not None}
    return [item.path for item in written], files.toml(files.record(mail, written, base_dir)), parts


def _once_each(paths: list[Path]) -> None:
    """Each patch once: the same file, or the same diff under two names,
    would be a step that applies nothing (the run's dry run refuses it)."""
    from iolab.kernels.diff import digest

    seen: dict[object, str] = {}
    for path in paths:
        try:
            diff = digest(path.read_text(errors="replace"))
        except OSError as error:
            raise spec.SpecError(f"{path}: {error.strerror}") from None
        if path.resolve() in seen:
            raise spec.SpecError(f"{path} is given twice: give each patch once")
        if diff and diff in seen:
            raise spec.SpecError(f"{path} has the same diff as {seen[diff]}: give each patch once")
        seen[path.resolve()] = seen[diff] = str(path)


def written_dir(given: list[Path], args: argparse.Namespace) -> Path:
    """Where `iolab patch` keeps the experiments it writes and runs (without
    --write): iolab's cache, beside the kernels and sources, in a directory
    named by the mails' bytes and the options, so the iolab-mail/ patches of
    one mail never overwrite another's (a v2 and a v3 share their file names)."""
    from iolab.kernels import cache

    digest = hashlib.sha256()
    for path in given:
        try:
            digest.update(path.read_bytes() + b"\0")
        except OSError as error:
            raise spec.SpecError(f"{path}: {error.strerror}") from None
    digest.update(repr((args.source, args.commit, sorted(args.allow))).encode())
    directory = cache.cache_root().parent / "experiments" / f"mail-{digest.hexdigest()[:16]}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def choose(args: argparse.Namespace, timing: str) -> tuple[str, Path, str]:
    """The experiment's text, the directory its paths are relative to, and the command that makes it."""
    from iolab.workloads import compose, library

    given = [Path(p) for p in args.patches]
    _once_each(given)
    base_dir = Path(args.write).resolve().parent if args.write else Path.cwd() if args.dry_run else \
        written_dir(given, args)
    received = read_mail(given)
    if received.missing:
        total = received.patches[0].total
        _say(f"patch {', '.join(map(str, received.missing))} of the {total} of this series not given: "
             f"{'it is' if len(received.missing) == 1 else 'they are'} not applied")
    mail = from_mail(received, tuple(args.allow))
    root, label = _source(args.source, args.commit)
    paths, table, parts = patch_files(received, root, label, base_dir)
    placed = in_source([parts.get(path, path) for path in paths], root, label)  # GNU patch judges them first
    infos = [library.with_source(library.read_patch(path), root)  # diff -u names no function: the source does
             for path in paths]
    selection = library.select(infos, library.load_areas(), mail.text)
    if not selection.chosen and not mail.benchmark.workloads:
        raise spec.SpecError(library.unknown_message(selection))
    command = shlex.join(["iolab", "patch", *args.patches,
                          *(["--source", args.source] if args.source != DEFAULT_SOURCE else []),
                          *(["--commit", args.commit] if args.commit else []),
                          *(["--timing", args.timing] if args.timing != "instructions" else []),
                          *(f"--allow={name}" for name in args.allow)])
    more = len(received.patches) - 1
    title = received.title if received.cover is not None or not more else \
        f"{received.title} (and {more} more patch{'es' if more > 1 else ''})"
    choice = compose.compose(infos, selection, source=args.source, in_source=placed, parts=parts, base_dir=base_dir,
                             timing=timing, command=command, mail=mail, title=title)
    for item in choice.skipped:
        _say(f"left out {item}")
    for item in mail.benchmark.refused:
        _say(f"refused from the mail: {item}")
    for item in mail.benchmark.not_reproduced:
        _say(f"not reproduced here: {item}")
    return choice.text + "\n" + table, base_dir, command


def from_mail(mail: Any, allow: tuple[str, ...]) -> Any:
    """The mail's benchmark and claim, from its text (the cover letter and each patch's description)."""
    from iolab.mail import reading
    from iolab.workloads import compose

    read = reading.reading(mail, allow)  # the one reading, as `iolab mail` prints it
    return compose.FromMail(read.benchmark, list(read.claims), read.source,
                            "\n".join([*(patch.title for patch in mail.patches), mail.text()]))


def checked(text: str, base_dir: Path) -> spec.Experiment:
    """The experiment as `iolab run` takes it: parsed, and checked against
    this machine (its series' patches applied step by step to the source)."""
    with load.in_file("the experiment iolab patch wrote"):
        experiment = load.parse(tomllib.loads(text), base_dir=str(base_dir))
        load.check_here(experiment)
    return experiment


def cmd_patch(args: argparse.Namespace, execute: Any, store: Callable[[], Store | None]) -> int:
    """Write or print the experiment; without --dry-run run it (``execute``:
    the CLI's run-and-report of an experiment and its path). A dry run says
    what the run would cost, as `iolab run --dry-run` does: each kernel
    cached or to build (and how long), the cells (``store``: the existing
    store, for the earlier runs and boots the estimate takes, or None)."""
    text, base_dir, command = choose(args, args.timing)
    experiment = checked(text, base_dir)
    if args.write:
        Path(args.write).write_text(text)
        _say(f"wrote {args.write}; edit it, then: iolab run {args.write}")
    if args.dry_run:
        if not args.write:
            sys.stdout.write(text)
        from iolab.run import estimate

        _say("what the run costs (as iolab run --dry-run estimates it):")
        for line in estimate.estimate(experiment, store()).lines():
            print(line, file=sys.stderr)
        return 0
    path = args.write
    if path is None:  # in iolab's cache, named by its content (a rerun reuses it), never in the working directory
        written = base_dir / f"iolab-patch-{hashlib.sha256(text.encode()).hexdigest()[:16]}.toml"
        written.write_text(text)
        path = str(written)
    experiment = load.load(path)
    return execute(experiment, path, command)
