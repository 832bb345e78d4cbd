"""Patches applied to a kernel source tree, and taken off again.

A source tree (iolab.kernels.sources) is shared by every build of that
source. A build's patches are laid over the patches the tree carries now:
those they share as a prefix (same content, same direction, same order)
stay; the tree's later patches are taken off, last first (each patch's
own copy, kept beside the tree, applied the other way), and the build's
remaining ones applied. So step k of a series after step k-1 applies one
patch, and make recompiles only the files that patch touches; a jump back
from step 5 to step 2 takes off patches 5, 4 and 3. Where taking a patch
off fails (someone edited the tree), the tree is put back to its pristine
state first (each file a patch touched is restored from the copy saved
before the first patch touched it; files a patch created are removed).
The changed files get new times, so make rebuilds what depends on them
and nothing else: variants that differ only by patches share an object
tree and the second kernel costs seconds.

A tree that carries patches says so at its top (NOTE, with the patches in
order and where the files as they came are): a user who copies a file from
it for a diff's a/ side must not take a patched file for the source.

Patches are applied with GNU patch (-p1, no fuzz: a hunk applies at its
lines or at an offset, as with git apply), each first as a dry run, so a
patch that does not apply leaves the tree as it was. ``reverse`` patches are
applied reversed (patch -R), before the others, in the order given. A patch
that does not apply is a PatchError naming the patch, the file and the
hunk (with its @@ line); the tree is then pristine.
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from iolab import process
from iolab.kernels import diff
from iolab.kernels.kernel_ref import KernelError

JOURNAL = ".iolab-patches.json"
SAVED = ".iolab-pristine"
KEPT = ".iolab-applied"  # a copy of each applied patch, by content: what takes it off again
NOTE = "IOLAB-PATCHED"  # at the tree's top while it carries patches

_FILE_LINE = re.compile(r"^(?:checking|patching) file (.+?)\s*$")
_HUNK_FAILED = re.compile(r"^Hunk #(\d+) FAILED at (\d+)")
_MALFORMED = re.compile(r"malformed patch at line (\d+): ?(.*)")
_APPLIED = "already applied in this source (reversed it would apply: list it under reverse to take it out)"
_NOT_IN = "not in this source, so it cannot be reversed (list it under patches to apply it)"


class PatchError(KernelError):
    """A patch that cannot be read or does not apply; the message names the
    patch, the file and the hunk."""


class MalformedPatch(PatchError):
    """A patch GNU patch cannot read (at line N): no source makes it apply."""


@dataclass(frozen=True)
class Patch:
    path: Path
    reverse: bool = False

    def __str__(self) -> str:
        return f"{self.path} (reversed)" if self.reverse else str(self.path)


def read(patch: Patch) -> str:
    return read_diff(patch)[0]


def read_diff(patch: Patch) -> tuple[str, diff.Diff]:
    """A patch file's text and its diff, read once (PatchError when it has none)."""
    try:
        text = patch.path.read_text(errors="replace")
    except OSError as error:
        raise PatchError(f"patch {patch.path}: {error.strerror}") from None
    found = diff.parse(text)
    if not found.files:
        raise PatchError(f"patch {patch.path}: no unified diff in it (expected '--- a/...', '+++ b/...', '@@')")
    return text, found


def _malformed(patch: Patch, text: str, output: str) -> MalformedPatch | None:
    """patch's own 'malformed patch at line N' (or 'only garbage'), with the
    likely cause when that line starts with neither ' ', '+' nor '-'."""
    match = _MALFORMED.search(output)
    if match is None:
        return MalformedPatch(f"patch {patch.path}: only garbage in it, says GNU patch") \
            if "Only garbage was found" in output else None
    number = int(match.group(1))
    lines = text.splitlines()
    shown = lines[number - 1] if 0 < number <= len(lines) else match.group(2)
    why = ""
    if shown[:1] not in (" ", "+", "-", "\\", "@"):
        why = (": a diff line without its leading ' ', '+' or '-' (context lines stripped, as in a web "
               "archive's copy); take the patch as sent (the raw mail, git format-patch), or let "
               "'iolab patch FILE' repair it against the source")
    return MalformedPatch(f"patch {patch.path}: malformed at line {number} ({shown.strip()[:40]!r}){why}")


def _problems(text: str, output: str) -> list[str]:
    """What patch said, as the files and hunks that failed."""
    by_file = diff.parse(text).headers()
    current = "?"
    problems = []
    for line in output.splitlines():
        match = _FILE_LINE.match(line)
        if match:
            current = match.group(1)
            continue
        failed = _HUNK_FAILED.match(line)
        if failed:
            number = int(failed.group(1))
            headers = by_file.get(current, [])
            header = f" {headers[number - 1]}" if 0 < number <= len(headers) else ""
            problems.append(f"{current}: hunk #{number}{header} does not apply (tried at line {failed.group(2)})")
        elif "Reversed (or previously applied) patch detected" in line:
            problems.append(f"{current}: {_APPLIED}")
        elif "Unreversed patch detected" in line:
            problems.append(f"{current}: {_NOT_IN}")
        elif "can't find file to patch at input line" in line:
            problems.append(f"{_file_at(text, line)}: not in this source tree")
        elif line.startswith("patch: ****"):
            problems.append(line.removeprefix("patch: **** ").strip())
    if not problems:
        tail = [line for line in output.splitlines() if line.strip()][-3:]
        problems.append(" / ".join(tail) or "patch failed without saying why")
    return problems


def _failure(patch: Patch, text: str, output: str) -> PatchError:
    """What patch said, turned into the file and the hunk that failed."""
    malformed = _malformed(patch, text, output)
    if malformed is not None:
        return malformed
    return PatchError(f"patch {patch} does not apply:\n" + "\n".join(f"  {p}" for p in _problems(text, output)))


def _neither(patch: Patch, text: str, forward: str, backward: str) -> PatchError:
    """A patch that applies neither forward nor reversed: patch's own words
    for the direction that matters (a first hunk that applies reversed: the
    patch looks applied, so its reverse; one that is not reversed: its
    forward; else the direction in which fewer hunks fail, the other one
    counted), else for both."""
    ahead, back = _problems(text, forward), _problems(text, backward)
    looks_in = any(p.endswith(_APPLIED) for p in ahead)
    looks_out = any(p.endswith(_NOT_IN) for p in back)
    if looks_in != looks_out:
        lines = [f"reversed: {p}" for p in back] if looks_in else [f"forward: {p}" for p in ahead]
    elif all(" hunk #" in p for p in ahead + back) and len(ahead) != len(back):
        total = diff.parse(text).hunk_count()
        (best, best_name), (other, other_name) = sorted([(ahead, "forward"), (back, "reversed")],
                                                        key=lambda pair: len(pair[0]))
        lines = [f"{best_name}: {p}" for p in best] + [f"{other_name}: {len(other)} of {total} hunks do not apply"]
    else:
        lines = [*_first(ahead, "forward"), *_first(back, "reversed")]
    return PatchError(f"patch {patch.path} neither applies nor is in this source (it applies neither forward "
                      "nor reversed):\n" + "\n".join(f"  {line}" for line in lines))


def _first(problems: list[str], direction: str) -> list[str]:
    """A direction's problems, the first of them when there are many."""
    if len(problems) <= 2:
        return [f"{direction}: {p}" for p in problems]
    return [f"{direction}: {problems[0]}", f"{direction}: and {len(problems) - 1} more hunks or files"]


def _file_at(text: str, message: str) -> str:
    """The file named by the last +++ line before the input line patch cites."""
    match = re.search(r"input line (\d+)", message)
    lines = text.splitlines()[: int(match.group(1)) if match else 0]
    names = [diff.strip(line[4:]) for line in lines if line.startswith("+++ ")]
    return next((name for name in reversed(names) if name), "a file")


def _patch(tree: Path, patch: Patch, *, dry_run: bool) -> subprocess.CompletedProcess[str]:
    argv = ["patch", "-p1", "--forward", "--batch", "--fuzz=0", "--no-backup-if-mismatch",
            "-d", str(tree), "-i", str(patch.path.resolve())]
    if patch.reverse:
        argv.insert(1, "--reverse")
    if dry_run:
        argv.append("--dry-run")
    if shutil.which("patch") is None:
        raise PatchError("patch not found: install it with 'apt-get install patch'")
    return process.run(argv, timeout=300)


def _entry(patch: Patch, text: str) -> str:
    """A patch as the journal records it: what it is and its content."""
    return f"{patch} sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _identity(patch: Patch, text: str) -> str:
    """What a patch does to a tree: its direction and its content (not its path)."""
    return f"{'R' if patch.reverse else 'F'} {hashlib.sha256(text.encode()).hexdigest()}"


def _file_digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _common(one: list[str], two: list[str]) -> int:
    """The length of the longest common prefix of two lists."""
    count = 0
    for a, b in zip(one, two):
        if a != b:
            break
        count += 1
    return count


class Tree:
    """A source tree whose patched files can be put back (a journal in the
    tree's parent directory; the saved originals and the applied patches'
    copies beside it; NOTE at its top while it carries patches)."""

    def __init__(self, root: Path):
        self.root = root
        self.journal = root.parent / JOURNAL
        self.saved = root.parent / SAVED
        self.kept = root.parent / KEPT

    def _state(self) -> dict[str, list[str]]:
        if not self.journal.exists():
            return {"saved": [], "created": [], "applied": [], "ids": []}
        state = json.loads(self.journal.read_text())
        state.setdefault("ids", [])  # a journal of an older iolab: its patches are taken off by a reset
        return state

    def _write(self, state: dict[str, list[str]]) -> None:
        partial = self.journal.with_name(self.journal.name + ".partial")
        partial.write_text(json.dumps(state, indent=1) + "\n")
        partial.rename(self.journal)
        self._note(state["applied"])

    def _note(self, applied: list[str]) -> None:
        """Say at the tree's top which patches it carries (none: no note)."""
        note = self.root / NOTE
        if not applied:
            note.unlink(missing_ok=True)
            return
        lines = ["This kernel source tree, unpacked by iolab, is not the source as it came: it carries the",
                 "patches of iolab's last kernel build in it, in this order ('(reversed)': applied with -R):", ""]
        lines += [f"  {n}. {entry}" for n, entry in enumerate(applied, 1)]
        lines += ["", f"The files as they came (only those a patch changed) are in {self.saved}/.",
                  "Take the a/ side of a diff from there, or from the source package itself.",
                  "iolab rewrites this file with every build and removes it when the tree is pristine again."]
        partial = note.with_name(NOTE + ".partial")
        partial.write_text("\n".join(lines) + "\n")
        partial.rename(note)

    def applied(self) -> list[str]:
        """The patches on the tree now (each with its content's hash), in order."""
        return list(self._state()["applied"])

    def contents(self, also: Iterable[str] = ()) -> dict[str, str | None]:
        """The sha256 of every file a patch on the tree touched since it was
        last pristine, and of ``also`` (None: no such file). Every file not
        named is as it came."""
        state = self._state()
        names = sorted({*state["saved"], *state["created"], *also})
        return {name: _file_digest(self.root / name) for name in names}

    def changed_since(self, before: dict[str, str | None]) -> list[str]:
        """The files whose content differs from ``before`` (what contents()
        gave then): a file it does not name was as it came then."""
        state = self._state()
        now = self.contents(before)
        changed = []
        for name, digest in now.items():
            if name in before:
                then = before[name]
            elif name in state["created"]:
                then = None
            elif name in state["saved"]:
                then = _file_digest(self.saved / name)
            else:
                then = digest
            if digest != then:
                changed.append(name)
        return changed

    def reset(self) -> None:
        """Put every patched file back as it came from the source."""
        state = self._state()
        for name in state["created"]:
            (self.root / name).unlink(missing_ok=True)
        for name in state["saved"]:
            shutil.copyfile(self.saved / name, self.root / name)  # a new mtime: make rebuilds it
        shutil.rmtree(self.saved, ignore_errors=True)
        shutil.rmtree(self.kept, ignore_errors=True)
        self.journal.unlink(missing_ok=True)
        self._note([])

    def _save(self, state: dict[str, list[str]], names: list[str]) -> None:
        """Keep the pristine copy of each file before its first change."""
        for name in names:
            if name in state["saved"] or name in state["created"]:
                continue
            source = self.root / name
            if source.is_file():
                (self.saved / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, self.saved / name)
                state["saved"].append(name)
            else:
                state["created"].append(name)
        self._write(state)

    def _refusal(self, patch: Patch, text: str, output: str) -> PatchError:
        """Why a patch does not apply here. Where patch guessed from its first
        hunk that it is in the tree already (or, reversed, not in it), the
        other direction is tried: when that fails too, both say why."""
        guessed = ("Reversed (or previously applied)" if not patch.reverse else "Unreversed patch detected")
        if guessed in output and _malformed(patch, text, output) is None:
            other = _patch(self.root, Patch(patch.path, not patch.reverse), dry_run=True)
            if other.returncode != 0:
                forward, backward = (output, other.stdout + other.stderr)[::-1 if patch.reverse else 1]
                return _neither(Patch(patch.path), text, forward, backward)
        return _failure(patch, text, output)

    def _take_off(self, keep: int) -> bool:
        """Take the tree's patches after the first ``keep`` off, last first
        (each kept copy applied the other way); False where one does not
        come off cleanly (the tree is then reset by the caller)."""
        state = self._state()
        if len(state["ids"]) != len(state["applied"]):
            return False
        while len(state["applied"]) > keep:
            identity = state["ids"][-1]
            copy = self.kept / identity.split()[1]
            if not copy.is_file():
                return False
            undo = Patch(copy, reverse=identity.startswith("F"))
            if _patch(self.root, undo, dry_run=True).returncode != 0 \
                    or _patch(self.root, undo, dry_run=False).returncode != 0:
                return False
            state["applied"].pop()
            state["ids"].pop()
            if identity not in state["ids"]:
                copy.unlink(missing_ok=True)
            self._write(state)
        return True

    def apply(self, patches: list[Patch]) -> None:
        """These patches on the tree, in order, over the pristine source:
        the patches the tree carries that they start with stay, the rest
        come off and the remaining ones go on (see the module's doc). On a
        failure the tree is pristine again and PatchError says why. When
        the tree already carries exactly these patches, nothing changes."""
        read_in = [read_diff(patch) for patch in patches]
        texts = [text for text, _ in read_in]
        wanted = [_entry(patch, text) for patch, text in zip(patches, texts)]
        ids = [_identity(patch, text) for patch, text in zip(patches, texts)]
        state = self._state()
        if self.journal.exists() and state["applied"] == wanted and state["ids"] == ids:
            return
        keep = _common(state["ids"], ids) if len(state["ids"]) == len(state["applied"]) else 0
        if not self._take_off(keep):
            self.reset()
            keep = 0
        try:
            state = self._state()
            state["applied"][:keep] = wanted[:keep]  # the same change under this build's names
            self._write(state)
            for patch, (text, found), entry, identity in list(zip(patches, read_in, wanted, ids))[keep:]:
                done = _patch(self.root, patch, dry_run=True)
                if done.returncode != 0:
                    raise self._refusal(patch, text, done.stdout + done.stderr)
                state = self._state()
                self._save(state, found.paths())
                self.kept.mkdir(exist_ok=True)
                shutil.copyfile(patch.path, self.kept / identity.split()[1])
                done = _patch(self.root, patch, dry_run=False)
                if done.returncode != 0:
                    raise _failure(patch, text, done.stdout + done.stderr)
                state["applied"].append(entry)
                state["ids"].append(identity)
                self._write(state)
        except BaseException:
            self.reset()
            raise


def _inside(name: str) -> bool:
    """Whether a diff's -p1 name stays inside a tree (no absolute path, no ..)."""
    return not Path(name).is_absolute() and ".." not in Path(name).parts


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file; a name no file can have (one too long, as a mail may
    write) is none, where pathlib raises."""
    try:
        return path.is_file()
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            return False
        raise


def _pristine(root: Path, names: list[str], scratch: Path) -> None:
    """Copies of these files as the source tree came into ``scratch``: a
    build's saved original where the tree's journal lists one, the tree's
    file where it lists none, nothing where a patch created it. The shared
    tree is only read, without its lock (a build may hold that for many
    minutes): the copies are taken again while the journal changed under them."""
    tree = Tree(root)
    for _ in range(5):
        before = tree._state()
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        try:
            for name in names:
                if name in before["created"] or not _inside(name):
                    continue  # a mail's name outside the tree: neither read there nor written outside scratch
                saved = tree.saved / name  # gone while a reset ends: the tree has it back by then
                original = saved if name in before["saved"] and _regular(saved) else root / name
                if _regular(original):
                    (scratch / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(original, scratch / name)
        except FileNotFoundError:
            continue
        if tree._state() == before:
            return
    raise PatchError(f"the source tree {root} kept changing while its files were read (a build is patching it): "
                     "try again")


def pristine_files(root: Path, names: list[str]) -> dict[str, str | None]:
    """These files as the source tree came (None: not in it), read as
    _pristine reads them: a build may be patching the shared tree meanwhile."""
    with tempfile.TemporaryDirectory(prefix="iolab-pristine-") as scratch:
        top = Path(scratch) / "linux"
        _pristine(root, names, top)
        return {name: (top / name).read_text(errors="surrogateescape") if _inside(name) and _regular(top / name)
                else None
                for name in names}


def check(root: Path, patches: list[Patch]) -> None:
    """These patches apply in order to the source tree as it came (reverse
    ones as given), tried as a build applies them (a dry run of each, then
    the patch) on a scratch copy of the files they touch: the shared tree is
    not changed. PatchError names the patch, the file and the hunk."""
    names = list(dict.fromkeys(name for patch in patches for name in read_diff(patch)[1].paths()))
    with tempfile.TemporaryDirectory(prefix="iolab-patch-check-") as scratch:
        top = Path(scratch) / "linux"
        _pristine(root, names, top)
        Tree(top).apply(patches)


def state_in(root: Path, patch: Patch) -> str:
    """Whether a patch is in a source tree as it came (the saved originals of
    files a build patched, else the tree's): "applies" (not in it, applies
    forward) or "applied" (in it: it applies reversed); PatchError with
    GNU patch's own diagnosis when neither (MalformedPatch when it cannot
    read the patch)."""
    text, found = read_diff(patch)
    with tempfile.TemporaryDirectory(prefix="iolab-patch-check-") as scratch:
        top = Path(scratch) / "linux"
        _pristine(root, found.paths(), top)
        forward = _patch(top, patch, dry_run=True)
        if forward.returncode == 0:
            return "applies"
        malformed = _malformed(patch, text, forward.stdout + forward.stderr)
        if malformed is not None:
            raise malformed
        backward = _patch(top, Patch(patch.path, True), dry_run=True)
        if backward.returncode == 0:
            return "applied"
    raise _neither(patch, text, forward.stdout + forward.stderr, backward.stdout + backward.stderr)
