"""Whether iolab can test a series, without fetching or building anything.

- Its diffs name only files inside a source tree (no ``..``, no absolute
  path: a mail's ``../../etc/passwd`` is refused here, before any tool sees it).
- It applies, patch after patch, to a kernel source iolab has unpacked in its
  cache already (iolab.kernels.sources), tried as a build applies it: GNU
  patch (fuzz 0) on a scratch copy of the files it touches
  (iolab.kernels.patches.check). No source is fetched for a mail: with none
  cached, each series says so.
- Something runs for it: the workload library has an area for its files
  (iolab.workloads.library), or the mail names a benchmark iolab can map
  (iolab.mail.benchmark).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from iolab.run.watch.series import Series


@dataclass(frozen=True)
class Source:
    """A kernel source unpacked in iolab's cache."""

    spec: str  # as an experiment's [kernel] source names it
    commit: str | None  # a git tree's commit
    label: str
    root: Path


@dataclass(frozen=True)
class Verdict:
    source: Source | None  # the first cached source it applies to
    reason: str | None  # why it is skipped (None: testable)
    workloads: tuple[str, ...] = ()  # what the library or the mail gives it


def cached_sources() -> list[Source]:
    """Every kernel source unpacked in the cache, newest unpacking first;
    one whose origin is gone (a tarball moved, a git tree deleted) is left out."""
    from iolab.kernels import sources

    found = []
    for info in sorted(sources.cache_root().glob("*/source.json"), key=lambda p: p.stat().st_mtime, reverse=True):
        root = info.parent / "linux"
        try:
            record = json.loads(info.read_text())
        except (OSError, ValueError):
            continue
        identity, ref = str(record.get("identity", "")), str(record.get("ref", ""))
        kind, _, rest = identity.partition(":")
        if not sources.is_unpacked(root):
            continue
        if kind == "debian" and "=" in rest:
            found.append(Source(f"debian:{rest}", None, str(record.get("label", rest)), root))
        elif kind == "tarball" and Path(ref).is_file():
            found.append(Source(ref, None, str(record.get("label", ref)), root))
        elif kind == "git" and Path(ref).exists():
            found.append(Source(ref, rest, str(record.get("label", ref)), root))
    return found


def outside(name: str) -> bool:
    """Whether a diff's file name (-p1) reaches outside a source tree."""
    path = PurePosixPath(name)
    return (not name or path.is_absolute() or ".." in path.parts or any(ord(c) < 32 for c in name)
            or name.startswith("~"))


def names(series: Series) -> tuple[list[str], str | None]:
    """The files the series changes, or why they cannot be trusted."""
    from iolab.kernels import diff

    found: list[str] = []
    for member in series.patches:
        for name in diff.paths(member.diff):
            if outside(name):
                shown = name if len(name) <= 60 else name[:57] + "..."
                return [], f"patch {member.counter}: names a file outside the source tree ({shown!r})"
            found.append(name)
    return list(dict.fromkeys(found)), None


def _write(series: Series, directory: Path) -> list[Path]:
    paths = []
    for member in series.patches:
        path = directory / f"{member.counter}-of-{series.patches[-1].counter}.patch"
        path.write_text(f"Subject: {member.subject}\n\n{member.diff}", errors="surrogateescape")
        paths.append(path)
    return paths


def _applies(paths: list[Path], sources: list[Source]) -> tuple[Source | None, list[str]]:
    from iolab.kernels import KernelError, patches

    failures = []
    for source in sources:
        try:
            patches.check(source.root, [patches.Patch(path) for path in paths])
            return source, []
        except KernelError as error:
            lines = [" ".join(line.split()) for line in str(error).strip().splitlines()[:3]] or ["GNU patch failed"]
            said = " ".join(lines).replace(str(paths[0].parent) + "/", "").replace(" (it applies neither forward "
                                                                                   "nor reversed):", ":")
            failures.append(f"{source.label}: {said[:300]}")
    return None, failures


def _workloads(series: Series, paths: list[Path], source: Source) -> tuple[str, ...]:
    from iolab.mail import benchmark
    from iolab.mail.claimed import claims
    from iolab.workloads import library

    infos = [library.with_source(library.read_patch(path), source.root) for path in paths]
    selection = library.select(infos, library.load_areas(), series.text)
    chosen = [f"{c.area.area}: {c.workload.name}" for c in selection.chosen]
    mailed = benchmark.benchmark(series.text, series.title, claims(series.text, series.title)).workloads
    return tuple(chosen + [f"the mail's {w.name}" for w in mailed])


def check(series: Series, sources: list[Source]) -> Verdict:
    """Whether iolab can test the series here, and on which source."""
    files, why = names(series)
    if why is not None:
        return Verdict(None, why)
    if not files:
        return Verdict(None, "no diff")
    if not sources:
        return Verdict(None, "no kernel source is unpacked in iolab's cache to try it on (iolab patch or "
                       "iolab kernel fetches one; the robot never fetches for a mail)")
    with tempfile.TemporaryDirectory(prefix="iolab-watch-") as scratch:
        paths = _write(series, Path(scratch))
        source, failures = _applies(paths, sources)
        if source is None and failures and all("already applied" in failure for failure in failures):
            return Verdict(None, "already in the source iolab has (GNU patch finds it applied): " + "; ".join(failures))
        if source is None:
            return Verdict(None, "does not apply to any source iolab has: " + "; ".join(failures))
        workloads = _workloads(series, paths, source)
    if not workloads:
        shown = ", ".join(files[:3]) + (" ..." if len(files) > 3 else "")
        return Verdict(source, f"nothing to run for its files ({shown}): no area of the workload library covers "
                       "them and the mail names no benchmark iolab can map")
    return Verdict(source, None, workloads)
