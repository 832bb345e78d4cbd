"""The workload library: which workloads show a change to which part of the kernel.

One file per area in ``iolab/workloads/areas/`` (reviewed like code, shipped
with iolab): the paths it covers (``fs/ext4/``, ``mm/filemap.c``), the
filesystem its workloads run on, and its workloads, each an experiment
workload table plus ``kind`` (``buffered-overwrite``, ``direct``, ...),
``hints`` (words that, found in the name of a function a hunk changes,
pick it) and ``why`` (one line for the reader).

A patch's files (the diff model, iolab.kernels.diff: -p1 paths, each hunk's
function from its ``@@`` line) are matched to areas, the longest matching
path winning; in each area, the workloads whose hints name a changed
function are chosen, or every workload of the area when no hint matches.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iolab.kernels.diff import Diff, parse
from iolab.spec import EXACT_TOLERANCE, FILESYSTEMS, ErofsFiles, SpecError, Timing
from iolab.workloads import functions

AREAS = Path(__file__).parent / "areas"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AreaWorkload(_Strict):
    name: str = Field(min_length=1, max_length=40)
    kind: str = Field(min_length=1)
    hints: list[str] = []
    why: str = Field(min_length=1)
    engine: str = "probe"
    probe: dict[str, str | int | float | bool] | None = None
    job: str | None = None
    metrics: list[str] = []
    # words of the mail's subject and body that choose it ("sqpoll", "readahead"), whole words, any case
    words: list[str] = []
    # chosen when nothing in its area is named (False: only by its hints or words: a deeper path)
    default: bool = True
    # what it sets for its cells: a mount option, sysfs and sysctl values ({dev}: the target's device)
    mount_options: str | None = None
    sysfs: dict[str, int | str] = {}
    sysctl: dict[str, int | str] = {}
    # whether its counts repeat, per timing mode: the largest spread, (max - min) / |median|, of its
    # rows over the rounds of an A/A (two variants of one kernel), as measured by
    # bench/library_repeats.py (figures: bench/data/library-repeats-*.txt); a mode not named: not measured
    repeats: dict[Timing, float] = {}

    def repeats_in(self, timing: Timing) -> bool | None:
        """Whether its counts repeat in this timing mode (within its default tolerance; None: not measured)."""
        spread = self.repeats.get(timing)
        return None if spread is None else spread <= EXACT_TOLERANCE[timing]

    def table(self, fs: str, io: str = "changed") -> dict[str, Any]:
        """The experiment's [[workload]] table of this workload, on `fs`; ``io = "primary"``: its
        count of I/Os heads its rows."""
        out: dict[str, Any] = {"name": self.name, "engine": self.engine, "fs": fs}
        for key in ("probe", "job", "mount_options"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("sysfs", "sysctl"):
            if getattr(self, key):
                out[key] = dict(getattr(self, key))
        if self.metrics:
            out["metrics"] = list(self.metrics)
        if io != "changed":
            out["io"] = io
        return out


class Area(_Strict):
    area: str = Field(min_length=1)
    paths: list[str] = Field(min_length=1)
    fs: str
    files: list[ErofsFiles] = []
    # "primary" where the I/O pattern is the point (readahead, block, writeback, erofs): each workload's
    # count of I/Os heads its rows (spec.Workload.io)
    io: Literal["changed", "primary"] = "changed"
    workload: list[AreaWorkload] = Field(min_length=1)
    file: str = ""  # where it was read from (set by iolab)

    def covers(self, path: str) -> int:
        """The length of the longest of its paths that `path` is in (0: none)."""
        best = 0
        for pattern in self.paths:
            if (path == pattern or (pattern.endswith("/") and path.startswith(pattern))) and len(pattern) > best:
                best = len(pattern)
        return best


def load_areas(directory: Path = AREAS) -> list[Area]:
    """Every area file of the library, checked (SpecError names the file and field)."""
    areas = []
    for path in sorted(directory.glob("*.toml")):
        try:
            raw = tomllib.loads(path.read_text())
            area = Area.model_validate({**raw, "file": path.name})
        except (tomllib.TOMLDecodeError, ValidationError) as error:
            raise SpecError(f"{path}: {str(error).splitlines()[0]}: {_first_error(error)}") from None
        if area.fs not in FILESYSTEMS:
            raise SpecError(f"{path}: fs: {area.fs!r} is not one of {', '.join(FILESYSTEMS)}")
        areas.append(area)
    return areas


REPEATS_DATA = "bench/data/library-repeats-*.txt"  # where the figures of `repeats` come from
REPEAT_ROUNDS = 6  # rounds a workload that does not repeat gets: the fewest a paired test decides at p < 0.05
# A spread beyond this leaves a workload out of `iolab patch`'s experiment: with REPEAT_ROUNDS rounds the
# paired test decides a change only where every round moves one way, which a change smaller than the
# values' own spread seldom does; a workload whose rounds spread by more than 10% would show only changes
# beyond that, at the price of twice the rounds for every other workload of the run
LEAVE_OUT = 0.10


def wild(workload: AreaWorkload, timing: Timing) -> bool:
    """Its counts spread beyond LEAVE_OUT in this timing mode (as measured)."""
    return workload.repeats.get(timing, 0.0) > LEAVE_OUT


def repeat_note(workload: AreaWorkload, timing: Timing) -> str:
    """Why a library workload's rows stay undecided in this timing mode: its counts do not repeat
    ("" where they do, or where it was not measured)."""
    if workload.repeats_in(timing) is not False:
        return ""
    return (f"{workload.name!r} does not repeat in {timing} mode: its values spread "
            f"{workload.repeats[timing]:.1%} over the rounds of an A/A ({REPEATS_DATA}), so a few rounds "
            f"leave its rows undecided; it needs {REPEAT_ROUNDS} rounds or more for a paired test"
            + (f" (beyond a spread of {LEAVE_OUT:.0%} iolab patch leaves it out)" if wild(workload, timing) else ""))


def known(engine: str, probe: dict[str, Any] | None, job: str | None, fs: str,
          areas: list[Area] | None = None) -> AreaWorkload | None:
    """The library's workload that runs this (its engine, probe table or job) on this filesystem, if one does."""
    def same(a: dict[str, Any] | None) -> dict[str, Any]:  # the experiment's probe keys are spelt with dashes
        return {key.replace("_", "-"): value for key, value in (a or {}).items()}

    for area in load_areas() if areas is None else areas:
        for workload in area.workload if area.fs == fs else ():
            if workload.engine == engine and (same(workload.probe) == same(probe) if engine == "probe"
                                              else workload.job == job):
                return workload
    return None


def _first_error(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(error)[:200]


# -- a patch's files and functions ---------------------------------------------------

_SUBJECT = re.compile(r"^Subject:\s*(?:\[[^\]]*\]\s*)?(.*)$")


@dataclass(frozen=True)
class PatchInfo:
    path: Path
    title: str  # the subject, or the first line above the diff
    files: tuple[str, ...]  # -p1 paths it changes
    functions: dict[str, tuple[str, ...]]  # per file: the function of each hunk (from its @@ line)
    diff: Diff = Diff(())  # its diff, read once


def read_patch(path: Path, title: str | None = None) -> PatchInfo:
    """The files and hunk functions of a patch file (SpecError when it has no
    diff); ``title``: the mail's, when the mail was read."""
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        raise SpecError(f"{path}: cannot read the patch: {error.strerror}") from None
    parsed = parse(text)
    if not parsed.files:
        raise SpecError(f"{path}: no unified diff in it (expected '--- a/...', '+++ b/...', '@@' lines)")
    functions: dict[str, tuple[str, ...]] = {}
    for file in parsed.files:
        functions[file.path] = functions.get(file.path, ()) + tuple(h.function for h in file.hunks if h.function)
    return PatchInfo(path, _title(text) if title is None else title, tuple(parsed.paths()), functions, parsed)


def with_source(info: PatchInfo, root: Path) -> PatchInfo:
    """The patch with each hunk whose ``@@`` line names no function (``diff -u``)
    or a label (``diff -up``) given the function around it in the source at `root`."""
    found = functions.hunk_functions(info.diff, root)
    if not found:
        return info
    return replace(info, functions={name: tuple(f for f in found.get(name, ()) if f) or info.functions.get(name, ())
                                    for name in info.files})


def _title(text: str) -> str:
    for line in text.splitlines():
        subject = _SUBJECT.match(line)
        if subject:
            return subject.group(1).strip()
    for line in text.splitlines():
        if line.strip() and not line.startswith(("From ", "Date:", "diff ", "--- ", "+++ ", "index ")):
            return line.strip()
    return ""


# -- choosing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chosen:
    area: Area
    workload: AreaWorkload
    reason: str  # why: the hints a changed function matched, or "the area's workloads"


@dataclass
class Selection:
    chosen: list[Chosen] = field(default_factory=list)
    areas: dict[str, list[str]] = field(default_factory=dict)  # area -> the files of the patches in it
    unknown: list[str] = field(default_factory=list)  # files in no area


def _said(word: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text, re.I) is not None


def select(infos: list[PatchInfo], areas: list[Area], text: str = "") -> Selection:
    """The workloads the patches' files and functions choose, area by area;
    ``text`` (the mails' subjects and bodies): its words choose too."""
    selection = Selection()
    functions: dict[str, list[str]] = {}
    by_area: dict[str, Area] = {}
    for info in infos:
        for name in info.files:
            best = max(areas, key=lambda area: area.covers(name))
            if best.covers(name) == 0:
                if name not in selection.unknown:
                    selection.unknown.append(name)
                continue
            by_area[best.area] = best
            files = selection.areas.setdefault(best.area, [])
            if name not in files:
                files.append(name)
            functions.setdefault(best.area, []).extend(info.functions.get(name, ()))
    for area in areas:  # in the library's order
        if area.area not in by_area:
            continue
        changed = functions.get(area.area, [])
        hits = []
        for workload in area.workload:
            matched = sorted({f"{fn} ~ {hint}" for fn in changed for hint in workload.hints if hint in fn.lower()})
            said = [word for word in workload.words if _said(word, text)]
            if matched or said:
                reasons = (["changed " + ", ".join(matched[:3])] if matched else []) + \
                    ([f"the mail says {', '.join(repr(w) for w in said[:3])}"] if said else [])
                hits.append(Chosen(area, workload, "; ".join(reasons)))
        if not hits:
            hits = [Chosen(area, w, f"{area.area}: no hint named a changed function, so all its workloads")
                    for w in area.workload if w.default]
        selection.chosen += hits
    return selection


def unknown_message(selection: Selection) -> str:
    """What to say when no area covers a patch's files: the paths seen, and how to go on."""
    seen = ", ".join(selection.unknown[:8]) + (f" and {len(selection.unknown) - 8} more"
                                                if len(selection.unknown) > 8 else "")
    return (f"no area of iolab's workload library covers the files these patches touch: {seen}\n"
            "write the experiment for them yourself: [kernel] source = \"...\", [series] patches =\n"
            "[\"your.patch\"] and [[workload]] tables that exercise those files (README.md, \"Patch\n"
            "series\"); or add an area file for them to iolab/workloads/areas/ (paths, fs,\n"
            "[[workload]] tables with kind, hints and why)")
