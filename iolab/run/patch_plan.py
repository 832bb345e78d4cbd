"""What `iolab patch MAIL --dry-run` prints: the plan, before anything is built.

A few lines, as a kernel developer reads a terminal (at most WIDTH columns):

    the mail        its title and Message-Id
    patches         each with whether the source has it already (the base takes it out)
    benchmark       each command or job of the mail and what iolab runs for it, the
                    library's exploratory rows, what was scaled, refused or left out
    claims          each row the mail claims, with the workload and metric that check
                    it, or "not checkable here" and why: the experiment's [[claims.row]],
                    which the run reads (not the mail again), so a corrected row shows
    device          what the cells run on
    rounds          the rounds and the test that decides
    estimate        the cells, their time where measured, the kernels to build

``verbose`` adds each claim's line of the mail, each workload's primary rows
and the estimate's figures per workload. The experiment's text itself is
the command line's to print (--verbose) or write (--write).
"""

from __future__ import annotations

from collections.abc import Iterator

from iolab.load import device
from iolab.mail.reading import Reading, maps_to
from iolab.run import dryrun, estimate
from iolab.run.claimed import WIDTH, claim_lines, cut, one, unread_lines, wrapped
from iolab.spec import Experiment, MailPatch
from iolab.store import Store
from iolab.units import counted, format_duration, format_size
from iolab.workloads.patch_pipeline import PatchExperiment


def _ported(record: MailPatch) -> str:
    """Where a patch placed as a port moved: each hunk by file, lines and how ("" when none moved)."""
    files: dict[str, list[str]] = {}
    for hunk in record.port:
        notes: list[str] = [hunk.how] if hunk.how != "offset" else []
        if hunk.context:
            differ = "differs" if len(hunk.context) == 1 else "differ"
            notes.append(f"{counted(len(hunk.context), 'context line')} {differ}")
        files.setdefault(hunk.file, []).append(f"#{hunk.hunk} {hunk.offset:+d}" + (f" ({'; '.join(notes)})"
                                                                                   if notes else ""))
    return "; ".join(f"{name} {', '.join(hunks)}" for name, hunks in files.items())


def _patch_lines(written: PatchExperiment, reading: Reading, experiment: Experiment) -> Iterator[str]:
    mail = reading.mail
    total = reading.patches[0].total if reading.patches else 0
    records = experiment.mail.patches if experiment.mail is not None else []
    source = written.source or "the source"
    yield f"patches: {counted(len(reading.patches), 'patch', 'patches')}" + (f" of {total}" if mail.missing else "")
    for n, patch in enumerate(mail.patches):
        yield cut(f"  {patch.counter}/{patch.total} {one(patch.title)}")
        record = records[n] if n < len(records) else None
        if record is not None and record.repaired:
            yield cut(f"      its diff repaired against {source} (the mail's copy was mangled)")
        if record is not None and record.port:
            yield from wrapped(f"placed on {source} as a port (written on another base): {_ported(record)}", 6)
        inside = n < len(written.in_source) and written.in_source[n]
        if inside and n < len(written.other_form) and written.other_form[n]:
            yield cut(f"      in {source} already in another form: the base is the source with that taken out")
        elif inside:
            yield cut(f"      in {source} already: the base is the source with it taken out")
    if mail.missing:
        yield f"  {'patch' if len(mail.missing) == 1 else 'patches'} {', '.join(map(str, mail.missing))} of " \
              f"{total}: not given, not applied"


def _benchmark_lines(reading: Reading, experiment: Experiment) -> Iterator[str]:
    bench = reading.benchmark
    mapped = {w.name: w for w in bench.workloads}
    yield (f"benchmark: the mail's ({len(bench.workloads)})" if bench.workloads else
           "benchmark: none iolab maps in the mail: the library's workloads alone")
    for workload in experiment.workload:
        if workload.name in mapped:
            found = mapped[workload.name]
            said = f": {one(found.source)}" if one(found.source) != workload.name else ""
            yield cut(f"  {workload.name} ({found.origin}){said}")
            yield cut(f"    runs {one(maps_to(found))}")
    library = [w.name for w in experiment.workload if w.name not in mapped]
    if library:
        kind = "exploratory rows" if bench.workloads else "for the files the patches change"
        yield from wrapped(f"the library's ({kind}): {', '.join(library)}", 2)
    for title, items in (("scaled", bench.scaled), ("refused", bench.refused),
                         ("not reproduced", bench.not_reproduced)):
        yield from (cut(f"  {title}: {one(item)}") for item in items)


def device_line(experiment: Experiment) -> str:
    """What the cells run on, in a line: the device (iolab.load.device), the
    target's filesystem and size, and the VM."""
    line = device.describe(experiment)
    target = experiment.target
    fs = f"{target.fs}, {format_size(target.size)}" if target.fs != "none" else format_size(target.size)
    if not any(v.kernel is not None for v in experiment.variant):
        return f"{line}; {fs}"
    marked = any("/queue/rotational" in key for w in experiment.workload for key in w.sysfs)
    raw = [w.name for w in experiment.workload if w.fs == "none"]
    raw_for = "" if not raw else f"; the raw device for {raw[0]}" if len(raw) == 1 else \
        f"; the raw device for {counted(len(raw), 'workload')}"
    return f"{line}; {fs}" + (", marked rotational" if marked else "") + raw_for + \
        f"; a VM of {counted(experiment.vm.cpus, 'CPU')}"


def _rounds_lines(experiment: Experiment, store: Store | None, verbose: bool) -> Iterator[str]:
    run = experiment.run
    rounds = (f"{run.min_iterations} to {run.max_iterations}, added while a comparison is open" if run.auto
              else f"{run.iterations}, then one at a time while a claimed row is undecided, up to {run.claims_rounds}"
              if run.claims_rounds else str(run.max_rounds))
    order = {"alternate": "base and patched alternating", "interleaved": "cells shuffled in each round",
             "sequential": "each variant's cells together"}[run.order]
    yield from wrapped(f"rounds: {rounds} ({order}; {experiment.timing} timing)", 0)
    test = list(dryrun.test_lines(experiment, store if verbose else None))
    yield from wrapped(test[0], 0)
    if verbose:  # each workload's primary rows, and what a calibration says it can detect
        yield from test[1:]


def _estimate_lines(experiment: Experiment, store: Store | None, verbose: bool) -> Iterator[str]:
    found = estimate.estimate(experiment, store)
    if verbose:
        yield "estimate:"
        yield from found.lines()
        return
    if found.total_s is not None:
        time = f"{'at least' if found.at_least else 'about'} {format_duration(found.total_s)}"
    else:
        time = "time unknown until a workload without a time of its own ran once"
    most = "at most " if experiment.run.claims_rounds or experiment.run.auto else ""
    yield f"estimate: {most}{found.cells} cells, {time}"
    kernels: dict[str, list[str]] = {}
    for line in found.kernels:  # "base: to build from ... (no build timed yet)": one line per what
        name, _, what = line.partition(": ")
        kernels.setdefault(what, []).append(name)
    for what, names in kernels.items():
        yield from wrapped(f"kernel{'s' if len(names) > 1 else ''} {', '.join(names)}: {what}", 2)


def lines(experiment: Experiment, written: PatchExperiment | None, store: Store | None,
          verbose: bool = False) -> list[str]:
    """The plan of an experiment (``written``: what `iolab patch` wrote it from:
    the mail as read once, the source, which patches it has already)."""
    out: list[str] = []
    if written is not None and written.reading is not None:
        mail = written.reading.mail
        title, at = one(mail.title), f"<{mail.message_id}>" if mail.message_id else ""
        out += [f"{title}  {at}".rstrip()] if len(title) + 2 + len(at) <= WIDTH else [cut(title), cut(f"  {at}")]
        out += [*_patch_lines(written, written.reading, experiment), *_benchmark_lines(written.reading, experiment)]
    out += [*claim_lines(experiment, verbose), *(unread_lines(written.reading) if written and written.reading else ()),
            *wrapped(device_line(experiment), 0),
            *_rounds_lines(experiment, store, verbose), *_estimate_lines(experiment, store, verbose)]
    return out
