#!/usr/bin/env python3
"""Pace (issue 39): seed 004 and a patch mail end to end, wall and CPU, with the load beside each figure.

    python3 bench/pace.py seed004 [--runs 3] [--iolab CMD]
    python3 bench/pace.py mail MAIL [--runs 1] [--fresh-step] [--iolab CMD]

(as root, the kernels cached: `iolab kernel build scenarios/ext4-write-begin-7.2.toml`;
a mail's base source unpacked and built once, as `iolab patch` leaves it.)

seed004: `iolab run scenarios/ext4-write-begin-7.2.toml --timing instructions`
into a scratch store, in a scratch directory (`python -m` puts its working
directory first on the path: run from a checkout, it would import that
checkout's iolab, whatever `--iolab` says), `--runs` times in a row. Each run: the load average
before, the wall seconds, the CPU seconds of iolab and every process it
waited for (QEMU's user + sys among them: this script's RUSAGE_CHILDREN
across the run), the rounds it took, whether every primary row is exact
(`=`), and each row's per-variant values (the same in every run, or the run
is not exact as before); and how its guests started (the report's note:
restored from saved states, saved in that run, or cold; the first run after
iolab's guest-side code or the kernel changed saves its states, later runs
restore them).

mail: `iolab patch MAIL` in a scratch directory and store, as a user types
it, after its base build (the base kernel cached). The step's build is the
one line iolab prints ("built NAME ... in N s"); `--fresh-step` removes that
step's kernel from the cache after each run (only the kernel this run built),
so the next run builds it again, as a new mail would (make then compiles
only what the shared object tree does not hold already: right after a run of
the same mail, nothing, and the step's "build" is its link and copy). Printed per run: wall,
CPU (as above), the build's seconds, the rounds, and what the reply said.

Wall time on a shared machine moves with the load; the CPU seconds do not
as much, and divided by the host's CPUs they bound the wall time of the same
run on an idle host of this size from below.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEED004 = "scenarios/ext4-write-begin-7.2.toml"
BUILT = re.compile(r"iolab: built (build-[0-9a-f]+) .* in (\d+) s")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run; (the process, wall s, CPU s of it and all it waited for)."""
    cpu0, wall0 = cpu(), time.monotonic()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return done, time.monotonic() - wall0, cpu() - cpu0


def seed004(iolab: list[str], runs: int) -> None:
    print(f"# seed 004: {' '.join(iolab)} run {SEED004} --timing instructions --format json --quiet; nproc "
          f"{os.cpu_count()}")
    for index in range(runs):
        with tempfile.TemporaryDirectory(prefix="iolab-pace-") as scratch:
            before = load()
            done, wall, used = timed([*iolab, "--store", f"{scratch}/s.db", "run", str(REPO / SEED004),
                                      "--timing", "instructions", "--format", "json", "--quiet"], Path(scratch))
            if done.returncode not in (0, 1) or not done.stdout.strip():
                raise SystemExit(f"iolab run failed ({done.returncode}): {done.stderr.strip()[-1500:]}")
            document = json.loads(done.stdout)
        primary = [c for c in document["comparisons"] if c["family"] == "primary"]
        exact = all(c.get("exact") for c in primary)
        values = "; ".join(
            f"{r['workload']} " + " ".join(f"{name} {f['min']:g}..{f['max']:g}" for name, f in r["figures"].items())
            for r in document["rows"] if r.get("primary"))
        print(f"run {index + 1}: load before {before}; wall {wall:.2f} s; CPU {used:.2f} s; "
              f"rounds {document['run']['rounds_done']}; every primary row exact: {exact}; load after {load()}")
        if document.get("guests"):  # saved states ([vm] start = "saved"): how this run's guests started
            print(f"  {document['guests']}")
        print(f"  values: {values}")


def mail(iolab: list[str], path: Path, runs: int, fresh: bool) -> None:
    print(f"# mail: {' '.join(iolab)} patch {path} --quiet (a scratch directory and store); nproc {os.cpu_count()}")
    for index in range(runs):
        with tempfile.TemporaryDirectory(prefix="iolab-pace-mail-") as scratch:
            before = load()
            done, wall, used = timed([*iolab, "--store", f"{scratch}/s.db", "patch", str(path.resolve()),
                                      "--quiet"], Path(scratch))
        built = BUILT.search(done.stderr)
        rounds = re.search(r"run \d+: (\d+) of \d+ rounds", done.stdout + done.stderr)
        said = [line for line in (done.stdout + done.stderr).splitlines() if "claimed rows" in line]
        print(f"run {index + 1}: load before {before}; exit {done.returncode}; wall {wall:.2f} s; CPU {used:.2f} s; "
              f"step build {built.group(2) + ' s (' + built.group(1) + ')' if built else 'none (cached)'}; "
              f"rounds {rounds.group(1) if rounds else '?'}; load after {load()}")
        for line in said:
            print(f"  {line.strip()}")
        if done.returncode not in (0, 1, 3):
            print("  " + done.stderr.strip()[-1500:].replace("\n", "\n  "))
        if fresh and built:
            shutil.rmtree(Path.home() / ".cache/iolab/kernels" / built.group(1), ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["seed004", "mail"])
    parser.add_argument("mail", nargs="?", help="the mail (mail)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fresh-step", action="store_true")
    parser.add_argument("--iolab", default=f"{sys.executable} -m iolab.cli",
                        help="how to start iolab (default: this Python, the checkout's iolab first on its path)")
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    iolab = args.iolab.split()
    if args.what == "seed004":
        seed004(iolab, args.runs)
    elif args.mail is None:
        parser.error("mail: give the mail's file")
    else:
        mail(iolab, Path(args.mail), args.runs, args.fresh_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
