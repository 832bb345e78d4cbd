"""Measure whether each workload of iolab's library repeats its counts in instructions mode (issue 30).

    .venv/bin/python bench/library_repeats.py [--rounds N] [--store FILE] [--out FILE] [--only AREA-FILE ...]
    .venv/bin/python bench/library_repeats.py --apply bench/data/library-repeats-DATE.txt

Writes an A/A experiment of every library workload (iolab/workloads/areas/*.toml; two variants "a"
and "b" of the same Linux 7.2 kernel, instructions timing, as `iolab patch` runs them), runs it with
`iolab run`, and writes, per workload and row metric, every value (variant+round) and their spread
((max - min) / |median| over both variants and every round) to bench/data/library-repeats-DATE.txt,
with the command, the host's load average before and after, and the wall time. --apply writes the
figures of such a file into the area files, as ``repeats = { instructions = SPREAD }`` after each
workload's ``why`` (its largest spread over its own rows, not the I/O counters', which are rows of
their own; iolab.workloads.library.AreaWorkload.repeats); a workload none of whose cells ran keeps
what it had.

erofs needs a target of its own (its image is packed from [[target.files]]), so its workloads run as
a second experiment; the other areas' run in one (each workload on its area's filesystem).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from iolab.store import Store
from iolab.workloads.compose import SIZE, _toml
from iolab.workloads.library import AREAS, Area, load_areas
from iolab.spec import MIN_SIZE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IO_ROWS = ("disk.ios", "disk.reads", "disk.writes")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def experiment(areas: list[Area], rounds: int, names: dict[tuple[str, str], str]) -> str:
    fs = areas[0].fs if len(areas) == 1 else "ext4"
    size = max([SIZE, MIN_SIZE[fs]] + [MIN_SIZE[a.fs] for a in areas])
    lines = [f"# Written by bench/library_repeats.py: an A/A of the library's workloads ({', '.join(a.file for a in areas)})",
             f"name = {_toml('A/A of the library workloads, instructions mode: ' + ', '.join(a.area for a in areas))}",
             "", "[kernel]", 'source = "debian:linux-source-7.2"',
             "", "[target]", 'kind = "loop"', f"fs = {_toml(fs)}", f'size = "{size >> 20}MiB"']
    for erofs_file in areas[0].files if fs == "erofs" else []:
        lines += ["", "[[target.files]]", *(f"{k} = {_toml(v)}" for k, v in erofs_file.model_dump().items())]
    lines += ["", "[[variant]]", 'name = "a"', "", "[[variant]]", 'name = "b"']
    for area in areas:
        for workload in area.workload:
            table = workload.table(area.fs)
            table["name"] = names[(area.file, workload.name)]
            lines += ["", "[[workload]]", *(f"{k} = {_toml(v)}" for k, v in table.items())]
    lines += ["", "[run]", f"iterations = {rounds}", 'order = "alternate"',
              "", "[vm]", 'timing = "instructions"', "cpus = 1", 'memory = "2GiB"', 'disk = "ram"',
              "cells_per_boot = 64", 'timeout = "10m"', ""]
    return "\n".join(lines)


def spread(values: list[float]) -> float:
    center = abs(statistics.median(values))
    width = max(values) - min(values)
    return 0.0 if width == 0 else (width / center if center else float("inf"))


WIDEST = re.compile(r"^(\S+\.toml)\s+(.+?)\s+\(rows\)\s+widest\s+(\S+)%\s+over (\d+) cells$")


def apply(data: Path) -> None:
    """The measured spreads of ``data`` into the area files (one line a workload, replaced if there)."""
    found: dict[str, dict[str, float]] = {}
    for line in data.read_text().splitlines():
        match = WIDEST.match(line)
        if match is None or int(match.group(4)) == 0:
            continue
        area, name = match.group(1), match.group(2)
        name = re.sub(rf" \({re.escape(area[:-5])}\)$", "", name)
        found.setdefault(area, {})[name] = float(match.group(3)) / 100
    for area, spreads in found.items():
        path = AREAS / area
        lines = [line for line in path.read_text().splitlines() if not line.startswith("repeats = ")]
        out, current = [], None
        for line in lines:
            out.append(line)
            if line.startswith("name = "):
                current = json.loads(line.split("=", 1)[1].strip())
            if line.startswith("why = ") and current in spreads:
                out.append(f"repeats = {{ instructions = {float(f'{spreads[current]:.4g}')!r} }}  # A/A spread: {data.name}")
        path.write_text("\n".join(out) + "\n")
        print(f"{path}: {len(spreads)} workloads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apply", metavar="DATA", help="write the figures of this data file into the area files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", default="/tmp/iolab-library-repeats.db")
    parser.add_argument("--out", default=str(HERE / "data" / f"library-repeats-{time.strftime('%Y-%m-%d')}.txt"))
    parser.add_argument("--only", nargs="*", help="area files (mm-readahead.toml, ...)")
    args = parser.parse_args()
    if args.apply:
        apply(Path(args.apply))
        return
    areas = [a for a in load_areas() if not args.only or a.file in args.only]
    seen: dict[str, int] = {}
    for area in areas:
        for w in area.workload:
            seen[w.name] = seen.get(w.name, 0) + 1
    names = {(a.file, w.name): (w.name if seen[w.name] == 1 else f"{w.name} ({a.file[:-5]})")
             for a in areas for w in a.workload}
    groups = [g for g in ([a for a in areas if a.fs != "erofs"], [a for a in areas if a.fs == "erofs"]) if g]
    out = [f"# Issue 30: do the library's workloads repeat their counts in instructions mode? "
           f"{time.strftime('%Y-%m-%d')}",
           f"# {' '.join(sys.argv)}: an A/A of Linux 7.2 (debian linux-source-7.2, iolab's base config), two",
           f"# variants a, b of the same kernel, {args.rounds} rounds each, order alternate, QEMU TCG "
           "-icount shift=0,sleep=off, 1 vCPU, disk = ram; a (variant, round) is one boot.",
           "# spread = (max - min) / |median| over every value (both variants, every round); "
           "values as variant+round:value", ""]
    for group in groups:
        text = experiment(group, args.rounds, names)
        path = Path(f"/tmp/iolab-library-repeats-{group[0].fs if len(group) == 1 else 'all'}.toml")
        path.write_text(text)
        before, started = loadavg(), time.time()
        command = [str(ROOT / ".venv/bin/iolab"), "run", str(path), "--store", args.store, "--quiet"]
        result = subprocess.run(command, capture_output=True, text=True)
        after, took = loadavg(), time.time() - started
        out += [f"## {path.name} ({', '.join(a.file for a in group)}): `{' '.join(command[1:])}` exit "
                f"{result.returncode}, {took:.0f} s, load average {before} -> {after}"]
        store = Store(args.store)
        run_id = max(r.id for r in store.runs())
        samples = [s for s in store.samples(run_id, with_histograms=False) if not s.warmup]
        store.close()
        failed = sorted({f"{s.workload}: {s.error.splitlines()[0][:100] if s.error else s.status}"
                         for s in samples if s.status != "ok"})
        out += [f"run {run_id}: {len(samples)} samples, {len(failed)} failing workloads", *failed]
        for area in group:
            for workload in area.workload:
                name = names[(area.file, workload.name)]
                mine = sorted((s for s in samples if s.workload == name and s.status == "ok"),
                              key=lambda s: (s.variant, s.round))
                rows = list(dict.fromkeys([*workload.metrics, *IO_ROWS]))
                widest = 0.0
                for metric in rows:
                    values = [(f"{s.variant}{s.round}", s.metrics[metric]) for s in mine if metric in s.metrics]
                    if not values:
                        continue
                    width = spread([v for _, v in values])
                    if metric not in IO_ROWS:
                        widest = max(widest, width)
                    out.append(f"{area.file:22} {name:28} {metric:12} spread {width:8.4%} |"
                               + " ".join(f"{k}:{v:g}" for k, v in values))
                out.append(f"{area.file:22} {name:28} {'(rows)':12} widest {widest:8.4%} over {len(mine)} cells")
        out.append("")
        Path(args.out).write_text("\n".join(out) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
