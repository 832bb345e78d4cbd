"""make in a kernel's object tree: one make with its progress, and a series step's make of its objects alone.

``make`` runs make (-C the source, O= the object tree) with its output in
the build's log, counting the files it compiles and when kbuild's
landmarks come (MARKS) for the reporter, and its CPU seconds. A step of a
series that changed C files only makes the objects that read them
(own_objects, from kbuild's .*.cmd dependency files; ``step``), then links
without the walk of the tree; the object tree's record of the patched
files' contents at its last finished make (SOURCES_RECORD) says what changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from iolab.kernels.kernel_ref import KernelError
from iolab.process import started

TAIL_LINES = 20  # lines of a failed build's log shown in the error
_OUTER_MAKE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
_STEP = re.compile(r"^\s{2}([A-Z][A-Z0-9_]*(?: \[M\])?)\s+(\S+)")
_LINK = ("vmlinux.o", ".tmp_vmlinux1", "vmlinux")
SOURCES_RECORD = ".iolab-sources.json"  # in an object tree: the patched files' contents at its last finished make
_UNBUILT = ("README", "MAINTAINERS", "CREDITS")  # top-level files no build reads (and Documentation/'s texts)
_WHOLE_MAKE = ("scripts", "tools", "usr", "init", "lib", "arch", "certs")  # see _own_objects


class BuildError(KernelError):
    """A build that failed: the message shows the end of its log and where the log is."""


class Reporter(Protocol):
    """Where a build says how far it is (iolab.cli.progress draws it)."""

    def phase(self, name: str, detail: str = "") -> None: ...

    def files(self, done: int, expected: int | None, eta_s: float | None) -> None: ...

    def finish(self) -> None: ...


@dataclass
class Made:
    """What one make did: files compiled, when the link began (monotonic;
    None: no link), its CPU seconds (user + system, make and everything it
    ran: what the host's load does not stretch) and when kbuild's landmarks
    came (seconds from make's start: MARKS, and "end")."""

    files: int
    linked: float | None
    cpu_s: float
    marks: dict[str, float]


MARKS = ("CC", "LD vmlinux.o", "LD .tmp_vmlinux1", "LD vmlinux.unstripped", "LD vmlinux")


def make(root: Path, obj: Path, targets: list[str], out: Any, log_path: Path | None,
          reporter: Reporter | None, expected: int | None, settings: tuple[str, ...] = ()) -> Made:
    """Run make in the object tree (``settings``: make variables, NAME=value),
    its output into the log. A failure is a BuildError with the log's last lines."""
    if shutil.which("make") is None:
        raise KernelError("make not found: install it with 'apt-get install make' (or run scripts/setup)")
    argv = ["make", "-C", str(root), f"O={obj}", f"-j{os.cpu_count() or 1}", *targets,
            "KBUILD_BUILD_USER=iolab", "KBUILD_BUILD_HOST=iolab", *settings]
    out.write("iolab: " + " ".join(argv) + "\n")
    out.flush()
    files, began, linked = 0, time.monotonic(), None
    marks: dict[str, float] = {}
    # iolab run from a Makefile (make test) must not hand make its jobserver and MAKELEVEL: a sub-make prints
    # "Entering directory" lines and shares the outer make's job slots
    env = {key: value for key, value in os.environ.items() if key not in _OUTER_MAKE}
    with started(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                 env=env) as process:
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            landmark = _STEP.match(line)
            if landmark is None:
                continue
            kind = "CC" if landmark.group(1).startswith(("CC", "AS")) else f"{landmark.group(1)} {landmark.group(2)}"
            if kind in MARKS:
                marks.setdefault(kind, round(time.monotonic() - began, 2))
            if reporter is None:
                continue
            if kind == "CC":
                files += 1
                reporter.files(files, expected, _eta(files, expected, time.monotonic() - began))
            elif landmark.group(1) == "LD" and landmark.group(2) in _LINK:
                linked = linked or time.monotonic()
                reporter.phase("link", landmark.group(2))
        _, status, usage = os.wait4(process.pid, 0)  # wait() with the rusage of make and all it ran
        process.returncode = os.waitstatus_to_exitcode(status)
    marks["end"] = round(time.monotonic() - began, 2)
    out.flush()
    if process.returncode != 0:
        raise _failure(" ".join(targets), process.returncode, log_path or Path(out.name))
    return Made(files, linked, round(usage.ru_utime + usage.ru_stime, 2), marks)


def _eta(done: int, expected: int | None, elapsed: float) -> float | None:
    if not expected or done < 10 or done >= expected:
        return None
    return (expected - done) * elapsed / done


def _failure(what: str, status: int, log_path: Path) -> BuildError:
    """A failed build: its first error line and the log's path first (a
    terminal may show only the top of a long message), then the log's end."""
    lines = log_path.read_text(errors="replace").splitlines()
    errors = [line.strip() for line in lines if re.search(r"\berror\b|Error \d", line)]
    first = f": {errors[0]}" if errors else ""
    return BuildError(f"make {what} failed (exit {status}){first}\nfull log: {log_path}\nthe log's last lines:\n"
                      + "\n".join("  | " + line for line in lines[-TAIL_LINES:]))


def step(root: Path, obj: Path, target: str, objects: list[str], out: Any, log_path: Path,
          reporter: Reporter) -> Made:
    """make of these objects only (kbuild's single-object build, "make
    fs/ext4/file.o": prepare, then those objects; "make fs/" would descend
    into every directory under fs/, 2 s with nothing to compile), then the
    link without the walk of the tree (kbuild's build-dir, which only the
    walk depends on, set to their directories: the link's make descends
    into none). The built-in.a are thin archives of the objects' paths, so
    the walk would leave them as they are; the top one's time moves, so
    that vmlinux.a and vmlinux.o are made again from the new objects."""
    compiled = make(root, obj, objects, out, log_path, reporter, None)
    os.utime(obj / "built-in.a")
    linked = make(root, obj, [target], out, log_path, reporter, None,
                   (f"build-dir={' '.join(dirs_of(objects))}",))
    offset = compiled.marks["end"]
    marks = {name: round(offset + t, 2) for name, t in linked.marks.items()}
    marks.update({("objects made" if name == "end" else name): t for name, t in compiled.marks.items()})
    return Made(compiled.files + linked.files, linked.linked, round(compiled.cpu_s + linked.cpu_s, 2), marks)


def take_record(obj: Path) -> dict[str, str | None] | None:
    """What the patched files of the source held when a make in this object
    tree last finished (patches.Tree.contents), removed from the tree; None
    when none did since (the first build, or a failed one), or when an
    object is newer than the record (another make ran here)."""
    path = obj / SOURCES_RECORD
    if not path.exists():
        return None
    record: dict[str, str | None] = json.loads(path.read_text())
    # an object newer than the record: a make that does not keep one (an older iolab's) ran here since
    newer = subprocess.run(["find", str(obj), "-name", "*.o", "-newer", str(path), "-print", "-quit"],
                           capture_output=True, text=True)
    path.unlink()
    return record if newer.returncode == 0 and not newer.stdout.strip() else None


def write_record(obj: Path, contents: dict[str, str | None]) -> None:
    (obj / SOURCES_RECORD).write_text(json.dumps(contents, indent=1, sort_keys=True) + "\n")


def own_objects(root: Path, obj: Path, changed: list[str]) -> list[str] | None:
    """The objects (paths in the object tree) whose make (step, in place of
    the walk of the whole tree) rebuilds everything the changed files reach;
    [] when nothing built reads them; None where only the whole make will
    do: a change to anything but a C file (a header, a Makefile, Kconfig,
    assembler, a script), or to a C file read by a host program, by an
    object outside a directory's built-in.a (lib.a has a symbol index, the
    boot code and init's version are made by the top Makefile) or by none
    kbuild records. Which objects read a file, kbuild's own dependency files
    (.*.cmd) in the object tree say."""
    if any(not name.endswith(".c") for name in changed if not _unbuilt(name)):
        return None
    sources_changed = [name for name in changed if name.endswith(".c")]
    if not sources_changed:
        return []
    top = root.resolve()  # kbuild writes the source's real path
    patterns = [arg for name in sources_changed for arg in ("-e", str(top / name))]
    found = subprocess.run(["grep", "-rlF", "--include=.*.cmd", *patterns, str(obj)],
                           capture_output=True, text=True)
    if found.returncode not in (0, 1):
        return None
    objects: set[str] = set()
    for line in found.stdout.splitlines():
        path = Path(line)
        within = path.relative_to(obj)
        if not (path.name.startswith(".") and path.name.endswith(".o.cmd")) or len(within.parts) < 2 \
                or within.parts[0] in _WHOLE_MAKE or (path.parent / "lib.a").exists() \
                or "-D__KERNEL__" not in path.read_text(errors="replace").split("\n", 1)[0]:
            return None  # not a kernel object of a built-in.a (a host program's, lib.a's, the top's)
        objects.add(str(within.parent / path.name[1:-len(".cmd")]))
    return sorted(objects)


def dirs_of(objects: list[str]) -> list[str]:
    """The directories of these objects, none under another of them."""
    dirs = {str(Path(name).parent) for name in objects}
    return sorted(d for d in dirs if not any(d.startswith(other + "/") for other in dirs))


def _unbuilt(name: str) -> bool:
    """A file of the source that no kernel build reads (Documentation/'s Kconfig is read)."""
    return name in _UNBUILT or name.startswith("Documentation/") and "Kconfig" not in name
