"""The experiment ``iolab patch`` writes for a patch mail: the pipeline, from a typed request.

    mail files -> the mail, read once (iolab.mail), and its benchmark and claims
               -> the kernel source (fetched and unpacked on first use)
               -> the series whole (a patch missing, a truncated mbox: refused)
               -> the series' patch files: repaired against the source where a
                  web archive mangled them, a series' mails split, written beside
                  the experiment (iolab-mail/; a dry run's in iolab's cache), with
                  the [mail] table
               -> each patch judged on the source as the patches before it left
                  it: applies, is in it already, or placed as a port
                  (iolab.mail.series; GNU patch, its fuzz, wiggle)
               -> the library's workloads for the files and functions they change
               -> the experiment's text (iolab.workloads.compose), checked as
                  ``iolab run`` takes it; its paths relative to the file --write
                  names, absolute in the text a dry run prints (it runs wherever
                  it is saved); with the reading and which patches the source
                  has, for the dry run's plan (iolab.run.patch_plan)

Names of "already in the source", one each: a patch the source carries
whole is ``in_source`` (it applies reversed: the base takes it out); the
part of a patch the source has in other words is its ``other_form`` (the
base takes that out instead). The command line only parses arguments into
a PatchRequest and prints; ``say`` carries what this says as it goes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from iolab import load, spec
from iolab.mail import Mail
from iolab.mail.reading import Reading, reading
from iolab.workloads import compose, library

DEFAULT_SOURCE = "debian:linux-source-7.2"

Say = Callable[[str], None]


@dataclass(frozen=True)
class PatchRequest:
    """What ``iolab patch`` is asked."""

    mails: tuple[str, ...]  # the mail files, as the user named them
    source: str = DEFAULT_SOURCE  # the kernel source: debian:..., a tarball or a git tree
    commit: str | None = None  # with a git tree: the commit
    timing: Literal["instructions", "wall"] = "instructions"
    allow: tuple[str, ...] = ()  # refused fio options or engines, or "script", the user allows by name
    write: Path | None = None  # where the experiment goes (its paths relative to it)
    dry_run: bool = False
    read: tuple[str, ...] = ()  # --read: the blocks whose figures the user says are the sides (iolab.mail.hinted)

    def command(self) -> str:
        """The command line that makes this experiment, as its first comment says."""
        return shlex.join(["iolab", "patch", *self.mails,
                           *(["--source", self.source] if self.source != DEFAULT_SOURCE else []),
                           *(["--commit", self.commit] if self.commit else []),
                           *(["--timing", self.timing] if self.timing != "instructions" else []),
                           *(f"--allow={name}" for name in self.allow), *(f"--read={spec}" for spec in self.read)])


@dataclass(frozen=True)
class PatchExperiment:
    """The experiment written for a mail."""

    text: str  # its TOML, with the [mail] table
    base_dir: Path  # where its patch copies are; its relative paths resolve from here (a dry run's are absolute)
    command: str
    reading: Reading | None = None  # the mail as read once (its benchmark, claims): what the dry run shows
    source: str = ""  # the kernel source's label ("linux-source-7.2 7.2.13-1")
    in_source: tuple[bool, ...] = ()  # per patch: the source has it already (the base takes it out)
    other_form: tuple[bool, ...] = ()  # per patch: what the source has is its other form (the base takes that out)


@dataclass(frozen=True)
class Series:
    """The patch files a mail's series applies, and what the source already has of them."""

    paths: list[Path]
    table: str  # the experiment's [mail] table
    other_forms: dict[Path, Path]  # patch -> the file of the part the source has in another form
    in_source: list[bool]  # per patch: the source carries it (or its other form) already


def read_mail(paths: list[Path]) -> Mail:
    """The mail these files hold: read before the source is fetched."""
    from iolab import mail as mails

    try:
        return mails.read(paths)
    except mails.MailError as error:
        raise spec.SpecError(str(error)) from None


def from_mail(mail: Mail, read: Reading, given: list[Path]) -> compose.FromMail:
    """The mail's benchmark and claim, from its reading (the cover letter and each patch's description),
    and the blocks of figures no claim row came from, numbered by the lines of the ``given`` files."""
    from iolab.mail.unread import placed_in

    return compose.FromMail(read.benchmark, list(read.claims), read.source,
                            "\n".join([*(patch.title for patch in mail.patches), mail.text()]),
                            placed_in(read.unread, mail.text(), given))


def source_tree(request: PatchRequest, say: Say) -> tuple[Path, str]:
    """The unpacked source (fetched and unpacked on first use) and its label."""
    from iolab.kernels import KernelError, sources

    try:
        resolved = sources.resolve(sources.parse(request.source, request.commit, "."), say)
    except KernelError as error:
        raise spec.SpecError(f"--source: {error}") from None
    return sources.unpack(resolved, say), resolved.label


def _shown(path: Path) -> str:
    """A file as the user reads it: relative to the working directory, else under ~ (iolab's cache), else whole."""
    relative = os.path.relpath(path)
    if not relative.startswith(".."):
        return relative
    home = os.path.relpath(path, Path.home())
    return str(path) if home.startswith("..") else os.path.join("~", home)


def series(mail: Mail, root: Path, label: str, base_dir: Path, paths_from: Path | None, say: Say) -> Series:
    """The patch files the mail's series applies (repaired ones, ports and a
    series' mails written into ``base_dir``), its [mail] table (paths
    relative to ``paths_from``, absolute for None), the other forms, and
    which patches the source has already: each patch judged on the source
    as the patches before it left it (iolab.mail.series)."""
    from iolab.kernels import patches
    from iolab.mail import MailError, copies, files, repair
    from iolab.mail import series as steps

    try:
        texts = patches.pristine_files(root, copies.files_named(mail.patches))
        lines = {name: (text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
                 for name, text in texts.items() if text is not None}
        written = files.write(mail, repair.repair(mail.patches, lambda name: lines.get(name)), base_dir, label)
        placed = steps.place(mail, written, root, label, base_dir)
    except MailError as error:
        source = f"\n  (the source: {label}; give the one it was written for with --source)"
        raise spec.SpecError(str(error) + (source if isinstance(error, repair.RepairError) else "")) from None
    for item in written:
        if item.written:
            what = "repaired" if item.record.repaired else "split from the mail"
            say(f"wrote {_shown(item.path)} ({what}; sha256 {item.record.sha256[:12]})")
        for note in item.notes:
            say(note)
        if item.other_form is not None:
            say(f"wrote {_shown(item.other_form)}: the source's form of that, which the base takes out")
    for step in placed:
        for line in step.said:
            say(line)
    written = [step.written for step in placed]
    other_forms = {item.path: item.other_form for item in written if item.other_form is not None}
    return Series([item.path for item in written], files.toml(files.record(mail, written, paths_from)), other_forms,
                  [step.in_source for step in placed])


def once_each(paths: list[Path]) -> None:
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


def written_dir(request: PatchRequest) -> Path:
    """Where `iolab patch` keeps the experiments it writes and runs (without
    --write): iolab's cache, beside the kernels and sources, in a directory
    named by the mails' bytes and the options, so the iolab-mail/ patches of
    one mail never overwrite another's (a v2 and a v3 share their file names)."""
    from iolab.kernels import cache

    digest = hashlib.sha256()
    for name in request.mails:
        try:
            digest.update(Path(name).read_bytes() + b"\0")
        except OSError as error:
            raise spec.SpecError(f"{name}: {error.strerror}") from None
    digest.update(repr((request.source, request.commit, sorted(request.allow))).encode())
    directory = cache.cache_root().parent / "experiments" / f"mail-{digest.hexdigest()[:16]}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _base_dir(request: PatchRequest) -> Path:
    """Beside the experiment the user writes (its folder made), else iolab's
    cache: a dry run writes nothing where it runs."""
    if request.write is None:
        return written_dir(request)
    folder = request.write.resolve().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise spec.SpecError(f"--write {request.write}: cannot make its folder: {error.strerror}") from None
    return folder


def _paths_from(request: PatchRequest, base_dir: Path) -> Path | None:
    """The folder the experiment's paths are relative to: its own (--write,
    or the cache's copy a run keeps); None for a dry run's printed text,
    whose paths are absolute, so that it runs wherever it is saved."""
    return None if request.dry_run and request.write is None else base_dir


def _source_named(request: PatchRequest, base_dir: Path) -> str:
    """The source as the experiment names it: a path relative to the file
    the user writes (--write), else absolute (the experiment is in iolab's cache)."""
    if request.source.startswith("debian:"):
        return request.source
    path = Path(request.source).resolve()
    return os.path.relpath(path, base_dir) if request.write is not None else str(path)


def experiment(request: PatchRequest, say: Say) -> PatchExperiment:
    """The experiment's text for the mail, the directory its paths are relative to, and its command."""
    given = [Path(name) for name in request.mails]
    once_each(given)
    base_dir = _base_dir(request)
    received = read_mail(given)
    from iolab.mail import MailError
    from iolab.mail import series as steps

    try:  # a series cut short is refused, unless allowed by name (--allow partial-series)
        for line in steps.whole(received, request.allow):
            say(line)
    except MailError as error:
        raise spec.SpecError(str(error)) from None
    from iolab.mail import hinted

    try:  # the rows of the blocks the user named, with the reader's (iolab mail --read shows the same)
        hints = hinted.read_all(request.read, received.text(), request.mails)
    except hinted.HintError as error:
        raise spec.SpecError(str(error)) from None
    read = reading(received, request.allow, hints)  # the one reading, as `iolab mail` prints it
    mail = from_mail(received, read, given)
    if request.commit is None:  # a git tree as --source: the commit the mail says it was written on
        try:
            request = replace(request, commit=steps.base_in_tree(request.source, received, say))
        except MailError as error:
            raise spec.SpecError(str(error)) from None
    root, label = source_tree(request, say)
    found = series(received, root, label, base_dir, _paths_from(request, base_dir), say)
    infos = [library.with_source(library.read_patch(path, patch.title), root)  # diff -u names no function: the
             for path, patch in zip(found.paths, received.patches)]  # source does
    selection = library.select(infos, library.load_areas(), mail.text)
    if not selection.chosen and not mail.benchmark.workloads:
        raise spec.SpecError(library.unknown_message(selection))
    more = len(received.patches) - 1
    title = received.title if received.cover is not None or not more else \
        f"{received.title} (and {more} more patch{'es' if more > 1 else ''})"
    command = request.command()
    choice = compose.compose(infos, selection, source=_source_named(request, base_dir), in_source=found.in_source,
                             other_forms=found.other_forms, base_dir=_paths_from(request, base_dir),
                             timing=request.timing, command=command, mail=mail, title=title, commit=request.commit)
    for item in choice.skipped:
        say(f"left out {item}")
    for item in mail.benchmark.refused:
        say(f"refused from the mail: {item}")
    for item in mail.benchmark.not_reproduced:
        say(f"not reproduced here: {item}")
    return PatchExperiment(choice.text + "\n" + found.table, base_dir, command, read, label,
                           tuple(found.in_source), tuple(path in found.other_forms for path in found.paths))


def checked(written: PatchExperiment) -> spec.Experiment:
    """The experiment as `iolab run` takes it: parsed, and checked against
    this machine (its series' patches applied step by step to the source)."""
    with load.in_file("the experiment iolab patch wrote"):
        parsed = load.parse(tomllib.loads(written.text), base_dir=str(written.base_dir))
        load.check_here(parsed)
    return parsed


def kept(written: PatchExperiment) -> Path:
    """The experiment in iolab's cache, named by its content (a rerun reuses it), never in the working directory."""
    path = written.base_dir / f"iolab-patch-{hashlib.sha256(written.text.encode()).hexdigest()[:16]}.toml"
    path.write_text(written.text)
    return path
