#!/usr/bin/env python3
"""A 10-patch series on Linux 7.2 dissected in instructions mode, end to end:
how long each step's build and cells take, the total, and that the counts of a
run whose builds overlapped its cells equal those of a run without overlap.

The series (``SERIES``): the three 7.2 changes of scenarios/patches/ (the base
is 7.2 with them taken out, as in scenarios/seeds-series-7.2.toml) and seven
small changes in bench/series-patches/, written for this bench on the paths
the workloads take or beside them (each says what it does; none is an upstream
commit):

     1  f2fs-dio-iostat-skip          seed 000's change (f2fs DIO without iostat)
     2  vfs-write-zero-count          vfs_write returns at once for 0 bytes (every write: a compare more)
     3  ext4-file-write-iter-comment  a comment only (the object code does not change)
     4  ext4-write-begin-uptodate     seed 004's change (ext4 write_begin walk)
     5  pread-pos-unlikely            unlikely() on pread64/pwrite64's position check
     6  erofs-dax-message             a message's text on an erofs mount path no workload takes
     7  vfs-read-zero-count           vfs_read returns at once for 0 bytes (every read: a compare more)
     8  f2fs-nat-readahead            seed 001's change (the checkpoint's NAT flush; not on these paths)
     9  f2fs-write-iter-empty         f2fs_file_write_iter returns at once for an empty write
    10  ext4-atomic-write-sbi         a cleanup on ext4's RWF_ATOMIC path only

Workloads: those of scenarios/seeds-series-7.2.toml (f2fs 4 KiB O_DIRECT read
and write, ext4 write_u1k and pwrite_u1k), instructions timing.

"Warm base, cold steps": a bench marker patch (a comment in the top README, no
object changes) goes on the base, so every step's kernel key is the bench's
own and the object tree stays the shared 7.2 one; the base kernel is built
first (not timed) and each step's cached kernel is removed, so every step is
built during the run, each on the tree the step before left (one patch more:
iolab.kernels.patches), ahead of the cells (iolab.run.series.build_ahead),
while the cells run in one boot per CPU.

What the run leaves out, as iolab run does by default (iolab.run.series):
a step runs only the workloads its patch can reach (a patch whose files all
lie in another filesystem's fs/<name>/ cannot change them: the table says
which), and after 2 rounds a third only for the steps whose comparison is not
exact. "cpu s" is make's CPU time (user + system of make and all it ran),
which the host's load stretches little; "made" the directories make built
(kbuild's build-dir); "wait s" how long the step's first boot waited for
the step's kernel to be built (the build ahead had not finished; a build
also waits for the source tree's lock while another checkout builds from
the same source); "run s" the wall seconds of the step's boots, summed
(each from asking for the kernel to QEMU's exit: its wait included; two
boots run at once on 2 CPUs, so the steps' run s add up to more than the
total); "boot s" the part of them from QEMU's start to the guest's executor
ready; "done at" when the step's last sample reached this host, from the
run's start.

The attribution: each change of a primary row placed on its step, checked
against what each patch is for (INTENT).

With ``--reference``, the same experiment again, its kernels now cached
(no build overlaps a cell), every workload at every step and the op counts
as the scenario writes them ([vm] op_counts = "as-written"), 2 rounds: each
(step, workload) median must equal the first run's within the tolerance
([report] tolerance in instructions mode); where the first run left a
workload out at a step, the value compared is the last step before it that
ran the workload (what the attribution assumes).

    sudo .venv/bin/python bench/series_speed.py [--rounds N] [--reference] [--store S] [--out F]

Wall-clock figures on a shared machine: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import analysis, kernels, load  # noqa: E402
from iolab.kernels import build  # noqa: E402
from iolab.run import runner  # noqa: E402
from iolab.spec import Build, Experiment  # noqa: E402
from iolab.spec.vm import INSTRUCTIONS_ITERATIONS  # noqa: E402
from iolab.store import Store  # noqa: E402

SEEDS = REPO / "scenarios" / "patches"
OWN = REPO / "bench" / "series-patches"
SERIES = [
    SEEDS / "f2fs-dio-iostat-skip.patch",
    OWN / "vfs-write-zero-count.patch",
    OWN / "ext4-file-write-iter-comment.patch",
    SEEDS / "ext4-write-begin-uptodate.patch",
    OWN / "pread-pos-unlikely.patch",
    OWN / "erofs-dax-message.patch",
    OWN / "vfs-read-zero-count.patch",
    SEEDS / "f2fs-nat-readahead.patch",
    OWN / "f2fs-write-iter-empty.patch",
    OWN / "ext4-atomic-write-sbi.patch",
]
MARKER = OWN / "bench-marker.patch"  # a comment in README: the steps' kernels are the bench's own


def say(text: str) -> None:
    print(f"series_speed: {text}", file=sys.stderr, flush=True)


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def experiment(rounds: int | None, work: Path, *, reference: bool = False) -> Experiment:
    """scenarios/seeds-series-7.2.toml with the 10-patch series and the bench
    marker on the base. ``rounds`` None: instructions mode's rule (2 rounds, a
    third only for the steps whose comparison is not exact: [run]
    exact_stop); else that many rounds. ``reference``: every workload at
    every step ([series] reach = "all") with the op counts as the scenario
    writes them ([vm] op_counts = "as-written")."""
    raw: dict[str, Any] = tomllib.loads((REPO / "scenarios" / "seeds-series-7.2.toml").read_text())
    raw["name"] = "series_speed: 10 patches on 7.2" + (" (reference)" if reference else "")
    raw["kernel"]["reverse"] = [str(SEEDS / name) for name in ("f2fs-nat-readahead.patch",
                                                              "ext4-write-begin-uptodate.patch",
                                                              "f2fs-dio-iostat-skip.patch")]
    raw["kernel"]["patches"] = [str(MARKER)]
    raw["series"] = {"patches": [str(path) for path in SERIES], "strategy": "every",
                     "reach": "all" if reference else "paths"}
    raw["run"] = {"order": raw["run"]["order"], "iterations": rounds or INSTRUCTIONS_ITERATIONS,
                  "exact_stop": rounds is None}
    if reference:
        raw["vm"]["op_counts"] = "as-written"
    return load.parse(raw, base_dir=str(work))


def base_request(exp: Experiment) -> build.BuildRequest:
    base = exp.variant[0]
    assert isinstance(base.kernel, Build)
    return build.request_for(base.kernel, exp)


def cold_steps(exp: Experiment) -> list[str]:
    """Remove the cached kernels of steps 1..10 (the bench's own keys); the names of those removed."""
    removed = []
    for variant in exp.variant[1:]:
        assert isinstance(variant.kernel, Build)
        directory = build.kernel_dir(build.plan(build.request_for(variant.kernel, exp)).key)
        if directory.exists():
            shutil.rmtree(directory)
            removed.append(variant.name)
    return removed


class Arrivals(runner.NoProgress):
    """When each sample reached this host (wall clock): a sample's own
    ``started`` is the guest's clock, which counts instructions in this mode."""

    def __init__(self) -> None:
        self.at: dict[int, float] = {}

    def cell_done(self, sample: Any) -> None:
        self.at[sample.seq] = time.time()


class TimedStore(Store):
    """The store, with the wall seconds its sample writes took (iolab's own work between cells)."""

    writes_s = 0.0

    def add_sample(self, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return super().add_sample(*args, **kwargs)
        finally:
            self.writes_s += time.perf_counter() - began


def medians(samples: list[Any]) -> dict[tuple[str, str, str], float]:
    """The median of every metric of every (step, workload)."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for sample in samples:
        if sample.status == "ok" and not sample.warmup:
            for metric, value in sample.metrics.items():
                values.setdefault((sample.variant, sample.workload, metric), []).append(value)
    return {key: statistics.median(found) for key, found in values.items()}


@dataclass
class Timed:
    run_id: int
    began: float
    ended: float
    arrivals: dict[int, float]
    self_cpu_s: float  # this process: iolab's own Python (planning, store, polling the guests)
    children_cpu_s: float  # QEMU, make and the tools they ran
    writes_s: float
    load_before: str
    load_after: str
    walls: list[tuple[str, float, float]]  # each boot: (step, start, end), host wall clock
    waits: dict[str, float]  # each step: the longest wait for its kernel's build


@contextmanager
def batch_walls(walls: list[tuple[str, float, float]], waits: dict[str, float]) -> Iterator[None]:
    """Record each boot's wall (a batch: from asking for its step's kernel to
    QEMU's exit) as (step, start, end), and how long each step's first batch
    waited for its kernel to be built (kernels.Steps.get): the runner's host
    and the series' kernels, wrapped for this bench's run only."""
    made, plain_get = runner.host_for, kernels.Steps.get

    def host_for(*args: Any, **kwargs: Any) -> Any:
        host = made(*args, **kwargs)
        inner = host.run_batch

        def run_batch(cells: Any) -> Iterator[Any]:
            began = time.time()
            yield from inner(cells)
            walls.append((cells[0].variant.name, began, time.time()))

        host.run_batch = run_batch  # type: ignore[method-assign]
        return host

    def get(self: Any, name: str, *args: Any) -> Any:
        began = time.time()
        try:
            return plain_get(self, name, *args)
        finally:
            waits[name] = max(waits.get(name, 0.0), time.time() - began)

    runner.host_for, kernels.Steps.get = host_for, get  # type: ignore[method-assign]
    try:
        yield
    finally:
        runner.host_for, kernels.Steps.get = made, plain_get  # type: ignore[method-assign]


def run_once(exp: Experiment, store: TimedStore) -> Timed:
    arrivals = Arrivals()
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    before, written = load_average(), store.writes_s
    walls: list[tuple[str, float, float]] = []
    waits: dict[str, float] = {}
    began = time.time()
    with batch_walls(walls, waits):
        run_id = runner.run(exp, store, progress=arrivals)
    ended = time.time()
    mine2, theirs2 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timed(run_id, began, ended, arrivals.at,
                 mine2.ru_utime + mine2.ru_stime - mine.ru_utime - mine.ru_stime,
                 theirs2.ru_utime + theirs2.ru_stime - theirs.ru_utime - theirs.ru_stime,
                 store.writes_s - written, before, load_average(), walls, waits)


def boots(samples: list[Any]) -> dict[str, list[float]]:
    """Each step's boots (a boot runs one step's cells of one round in this
    mode): the wall seconds from QEMU's start to the guest's executor ready."""
    found: dict[tuple[str, int], float] = {}
    for sample in samples:
        found.setdefault((sample.variant, sample.round), sample.metrics.get("vm.boot_s", float("nan")))
    per: dict[str, list[float]] = {}
    for (variant, _), seconds in sorted(found.items()):
        per.setdefault(variant, []).append(seconds)
    return per


# What each patch is for, as the attribution must find it: the workloads whose
# primary rows change at that step, or none. The three scenarios/patches/
# changes are the seeds' (scenarios/seeds-series-7.2.toml); of the seven small
# ones, those that change no code on these workloads' paths must show nothing.
INTENT: dict[int, tuple[str, ...] | None] = {
    1: ("direct_read", "direct_write"),  # seed 000: f2fs DIO without iostat
    2: ("write_u1k", "pwrite_u1k"),  # a compare more in every write (the DIO p50's histogram bucket hides it)
    3: (),  # a comment only
    4: ("write_u1k", "pwrite_u1k"),  # seed 004: ext4 write_begin
    6: (),  # an erofs message
    8: (),  # seed 001: the checkpoint's NAT flush, on none of these paths
    10: (),  # ext4's RWF_ATOMIC path only
}  # 5, 7, 9 (an unlikely(), a compare in every read, in f2fs's write_iter): printed as found


def attribution(store: Store, run_id: int, out: Callable[[str], None]) -> bool:
    """Print which step each change is placed on and the workloads each step
    left out; whether every change is placed on one patch and INTENT holds."""
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    series = result.series
    assert series is not None and result.experiment.series is not None
    unreached = result.experiment.unreached
    primary = {(row.workload, row.metric.name) for row in result.rows if row.primary}
    out("attribution (each primary row's changes between a step and the step before that ran it; "
        "'not run' = the step's patch cannot reach that workload: all its files in another filesystem's fs/<name>/):")
    good = True
    for step in series.steps:
        if step.step == 0:
            continue
        found = [c for c in series.changes if c.step == step.step and (c.workload, c.metric) in primary]
        said = ", ".join(f"{c.workload} {c.label} {c.delta:+.2%}{'' if c.placed else f' (patches {c.first}-{c.step})'}"
                         for c in found) or "no change"
        skipped = unreached.get(step.name, [])
        note = f"; not run: {', '.join(skipped)}" if skipped else ""
        wanted = INTENT.get(step.step)
        check = ""
        if wanted is not None:
            ok = sorted({c.workload for c in found}) == sorted(wanted) and all(c.placed for c in found)
            good = good and ok
            check = "  [as intended]" if ok else f"  [NOT as intended: expected {', '.join(wanted) or 'no change'}]"
        out(f"  {step.name:<26} {said}{note}{check}")
    unplaced = [c for c in series.changes if not c.placed and (c.workload, c.metric) in primary]
    if unplaced:
        out(f"  {len(unplaced)} changes not placed on one patch")
    return good and not unplaced


def reference_check(exp: Experiment, fast: list[Any], slow: list[Any], tolerance: float,
                    out: Callable[[str], None]) -> bool:
    """Each (step, workload) primary median of the fast run against the
    reference's; where the fast run left a workload out at a step, its value
    there is the last step before that ran it (what the attribution takes)."""
    assert exp.series is not None
    first, second = medians(fast), medians(slow)
    primary = {(w.name, m) for w in exp.workload for m in (w.metrics or [])}
    order = [v.name for v in exp.variant]
    compared, identical, differ, stood_in, largest = 0, 0, [], 0, (0.0, "")
    for index, variant in enumerate(order):
        for workload, metric in sorted(primary):
            theirs = second.get((variant, workload, metric))
            ran = next((order[k] for k in range(index, -1, -1) if (order[k], workload, metric) in first), None)
            mine = first.get((ran, workload, metric)) if ran is not None else None
            if theirs is None or mine is None:
                differ.append((variant, workload, metric, mine, theirs))
                continue
            compared += 1
            stood_in += ran != variant
            identical += mine == theirs
            if theirs and abs(mine - theirs) / abs(theirs) > largest[0]:
                largest = (abs(mine - theirs) / abs(theirs),
                           f"{variant} / {workload} / {metric}: {mine} fast, {theirs} reference")
            if abs(mine - theirs) > tolerance * abs(theirs):
                differ.append((variant, workload, metric, mine, theirs))
    out(f"reference check: {compared} (step, workload) primary medians compared ({stood_in} of them steps the "
        f"fast run left out, by the last step before that ran the workload): {identical} identical, "
        f"{len(differ)} beyond the tolerance ({tolerance:.1%}) or missing"
        + (f"; the largest difference {largest[0]:.3%} ({largest[1]})" if largest[1] else ""))
    for variant, workload, metric, mine, theirs in differ[:12]:
        out(f"  differs: {variant} / {workload} / {metric}: {mine} fast, {theirs} reference")
    return not differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None,
                        help="fixed rounds (default: 2, and a third only for the steps not exact after 2)")
    parser.add_argument("--reference", action="store_true",
                        help="run again without overlap (kernels cached), every workload at every step, full op "
                             "counts, and compare every step's counts (several times longer)")
    parser.add_argument("--store", type=Path, help="keep the runs in this store (default: a temporary one)")
    parser.add_argument("--out", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    lines: list[str] = []

    def out(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory(prefix="iolab-series-speed-") as scratch:
        work = Path(scratch)
        exp = experiment(args.rounds, work)
        say(f"warming the base (not timed), load {load_average()}")
        build.ensure(base_request(exp), say)
        say(f"cold steps: removed {len(cold_steps(exp))} cached step kernels")
        store = TimedStore(args.store or work / "store.db")
        rounds = f"{args.rounds} rounds" if args.rounds else "2 rounds and a third only where a step is not exact"
        out(f"series_speed: 10-patch series on 7.2, instructions mode, {rounds}, {len(exp.workload)} workloads; "
            f"nproc {os.cpu_count()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {' '.join(sys.argv)}")
        timed = run_once(exp, store)
        samples = store.samples(timed.run_id)
        stored = Experiment.model_validate_json(store.run(timed.run_id).experiment_json)
        per_boot = boots(samples)
        out(f"{'step':<26} {'build s':>8} {'cpu s':>6} {'files':>6}  {'patch+conf':>10} {'compile':>8} {'link':>6} "
            f"{'install':>8} {'boots':>5} {'cells':>5} {'wait s':>6} {'run s':>6} {'boot s':>7} {'done at':>8}  made")
        for variant in exp.variant:
            assert isinstance(variant.kernel, Build)
            kernel = build.cached(build.plan(build.request_for(variant.kernel, exp)))
            manifest = kernel.manifest if kernel is not None else {}
            phases = manifest.get("phases_s", {})
            mine = [s for s in samples if s.variant == variant.name]
            built = "(warm)" if variant.step == 0 else "-" if kernel is None else \
                f"{manifest.get('build_seconds', float('nan')):.1f}"
            cpu = "" if variant.step == 0 else manifest.get("make_cpu_s", "-")
            dirs = manifest.get("make_dirs", "-")
            made = "" if variant.step == 0 else dirs if isinstance(dirs, str) else " ".join(dirs) or "nothing"
            done = max((timed.arrivals.get(s.seq, timed.began) - timed.began for s in mine), default=None)
            out(f"{variant.name:<26} {built:>8} {cpu:>6} {manifest.get('compiled_files', '-'):>6}  "
                f"{phases.get('patch', 0) + phases.get('configure', 0):>10.1f} {phases.get('compile', 0):>8.1f} "
                f"{phases.get('link', 0):>6.1f} {phases.get('install', 0):>8.1f} "
                f"{len(per_boot.get(variant.name, [])):>5} "
                f"{len(mine):>5} {timed.waits.get(variant.name, 0.0):>6.1f} "
                f"{sum(end - start for name, start, end in timed.walls if name == variant.name):>6.1f} "
                f"{sum(per_boot.get(variant.name, [])):>7.1f} "
                f"{'' if done is None else f'{done:.0f} s':>8}  {made}")
        failed = [s for s in samples if s.status != "ok"]
        all_boots = [t for found in per_boot.values() for t in found]
        wall = timed.ended - timed.began
        out(f"total {wall:.0f} s from the run's start to its end (the steps built ahead, one at a time, while "
            f"{os.cpu_count()} boots at a time ran the cells); {len(all_boots)} boots, {len(samples)} cells, "
            f"{len(failed)} failed; stop: {store.run(timed.run_id).stop_reason or 'every planned round ran'}")
        out(f"  CPU: {timed.children_cpu_s:.0f} s QEMU, make and their tools, {timed.self_cpu_s:.1f} s iolab's own "
            f"Python (planning, the store, following the guests; of it {timed.writes_s:.2f} s wall in sample "
            f"writes); boots: {sum(all_boots):.0f} s from QEMU's start to the guest ready, "
            f"{statistics.median(all_boots) if all_boots else float('nan'):.1f} s median")
        out(f"  load average (1, 5, 15 min) before {timed.load_before}, after {timed.load_after}")
        skipped = stored.unreached
        full = len(exp.variant) * len(exp.workload)
        out(f"  cells a round: {full - sum(len(v) for v in skipped.values())} of {full}: a step runs the workloads "
            "its patch can reach (iolab.run.series; --reference runs them all and checks the values left out)")
        for sample in failed[:5]:
            out(f"  failed: {sample.variant} / {sample.workload}: {(sample.error or '')[:160]}")
        status = 1 if failed else 0
        if not attribution(store, timed.run_id, out):
            status = 1
        if args.reference:
            reference = experiment(2, work, reference=True)
            out("reference run: the same kernels, now cached (no build overlaps a cell), every workload at every "
                "step, the op counts as the scenario writes them, 2 rounds")
            slow = run_once(reference, store)
            out(f"reference: {slow.ended - slow.began:.0f} s, CPU {slow.children_cpu_s:.0f} s + "
                f"{slow.self_cpu_s:.1f} s; load before {slow.load_before}, after {slow.load_after}")
            if not reference_check(stored, samples, store.samples(slow.run_id), exp.tolerance, out):
                status = 1
        else:
            out("reference check: not run (--reference runs it: several times longer)")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
