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
iolab.kernels.patches), ahead of the cells (iolab.run.series.build_ahead).
"cpu s" is make's CPU time (user + system of make and all it ran), which
the host's load stretches little; "made" the directories make built
(kbuild's build-dir; "all": the walk of the whole tree).

Then, with ``--reference``, the same experiment again, its kernels now cached
(no build overlaps a cell) and with the probe's op counts as the scenario
gives them: each (step, workload) median must equal the first run's within the
tolerance ([report] tolerance in instructions mode).

    sudo .venv/bin/python bench/series_speed.py [--rounds 2] [--reference] [--out bench/data/x.txt]

Wall-clock figures on a shared machine: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import load  # noqa: E402
from iolab.kernels import build  # noqa: E402
from iolab.run import runner  # noqa: E402
from iolab.spec import Build, Experiment  # noqa: E402
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


def experiment(rounds: int, work: Path) -> Experiment:
    """scenarios/seeds-series-7.2.toml with the 10-patch series and the bench marker on the base."""
    raw: dict[str, Any] = tomllib.loads((REPO / "scenarios" / "seeds-series-7.2.toml").read_text())
    raw["name"] = "series_speed: 10 patches on 7.2"
    raw["kernel"]["reverse"] = [str(SEEDS / name) for name in ("f2fs-nat-readahead.patch",
                                                              "ext4-write-begin-uptodate.patch",
                                                              "f2fs-dio-iostat-skip.patch")]
    raw["kernel"]["patches"] = [str(MARKER)]
    raw["series"] = {"patches": [str(path) for path in SERIES], "strategy": "every"}
    raw["run"]["iterations"] = rounds
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


def step_seconds(samples: list[Any], ended: float) -> dict[str, float]:
    """Wall seconds the run spent on each step's cells: from a cell's start to
    the next cell's start (VM boots and waits for a build included)."""
    ordered = sorted(samples, key=lambda s: s.started)
    spent: dict[str, float] = {}
    for one, after in zip(ordered, [*ordered[1:], None]):
        stop = after.started if after is not None else ended
        spent[one.variant] = spent.get(one.variant, 0.0) + max(0.0, stop - one.started)
    return spent


def medians(samples: list[Any]) -> dict[tuple[str, str, str], float]:
    """The median of every metric of every (step, workload)."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for sample in samples:
        if sample.status == "ok" and not sample.warmup:
            for metric, value in sample.metrics.items():
                values.setdefault((sample.variant, sample.workload, metric), []).append(value)
    return {key: statistics.median(found) for key, found in values.items()}


def run_once(exp: Experiment, store: Store) -> tuple[int, float, float]:
    began = time.time()
    run_id = runner.run(exp, store)
    return run_id, began, time.time()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reference", action="store_true",
                        help="run again without overlap (kernels cached) and compare every step's counts")
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
        store = Store(work / "store.db")
        out(f"series_speed: 10-patch series on 7.2, instructions mode, {args.rounds} rounds, "
            f"{len(exp.workload)} workloads; nproc {os.cpu_count()}; load average before {load_average()}; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {' '.join(sys.argv)}")
        run_id, began, ended = run_once(exp, store)
        after = load_average()
        samples = store.samples(run_id)
        spent = step_seconds(samples, ended)
        out(f"{'step':<26} {'build s':>8} {'cpu s':>6} {'files':>6}  {'patch+conf':>10} {'compile':>8} {'link':>6} "
            f"{'install':>8} {'run s':>7}  made")
        for variant in exp.variant:
            assert isinstance(variant.kernel, Build)
            kernel = build.cached(build.plan(build.request_for(variant.kernel, exp)))
            manifest = kernel.manifest if kernel is not None else {}
            phases = manifest.get("phases_s", {})
            built = "(warm)" if variant.step == 0 else f"{manifest.get('build_seconds', float('nan')):.1f}"
            cpu = "" if variant.step == 0 else manifest.get("make_cpu_s", "-")
            dirs = manifest.get("make_dirs", "-")
            made = "" if variant.step == 0 else dirs if isinstance(dirs, str) else " ".join(dirs) or "nothing"
            out(f"{variant.name:<26} {built:>8} {cpu:>6} {manifest.get('compiled_files', '-'):>6}  "
                f"{phases.get('patch', 0) + phases.get('configure', 0):>10.1f} {phases.get('compile', 0):>8.1f} "
                f"{phases.get('link', 0):>6.1f} {phases.get('install', 0):>8.1f} {spent.get(variant.name, 0):>7.1f}  "
                f"{made}")
        failed = [s for s in samples if s.status != "ok"]
        out(f"total {ended - began:.0f} s from the run's start to its end (builds of steps 1-10 overlapped "
            f"the cells); {len(samples)} cells, {len(failed)} failed; load average after {after}")
        for sample in failed[:5]:
            out(f"  failed: {sample.variant} / {sample.workload}: {(sample.error or '')[:160]}")
        status = 1 if failed else 0
        if args.reference:
            reference = experiment(args.rounds, work)
            out(f"reference run (kernels cached: no build overlaps a cell), load before {load_average()}")
            ref_id, ref_began, ref_ended = run_once(reference, store)
            first, second = medians(samples), medians(store.samples(ref_id))
            tolerance = exp.tolerance
            differ = [(key, first[key], second.get(key)) for key in sorted(first)
                      if key[2] in exp.report.metrics and (second.get(key) is None or
                                                           abs(second[key] - first[key]) > tolerance * abs(first[key]))]
            equal = sum(1 for key in first if key in second and first[key] == second[key])
            out(f"reference: {ref_ended - ref_began:.0f} s, load after {load_average()}; "
                f"{len(first)} (step, workload, metric) medians: {equal} identical, "
                f"{len(differ)} of the report's metrics beyond the tolerance ({tolerance:.1%})")
            for key, one, two in differ[:10]:
                out(f"  differs: {' / '.join(key)}: {one} with overlap, {two} without")
            status = status or (1 if differ else 0)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
