"""Record the A/A samples that bench/aa_rate.py resamples (run once, as root).

    .venv/bin/python bench/record_aa.py [--rounds N] [--store FILE] [--out FILE] [--max-wait S]

Runs bench/aa-record.toml (two identical variants, interleaved) with real
fio on a loop device, then writes every measured sample's metrics, in round
order, to bench/data/aa-samples-N.json together with the host, the load
average before and after, and the wall time. The data file is committed so
the benchmark needs no root and no fio.

Quiet rounds: this machine has 2 CPUs and is shared, and other work (a VM
under emulation takes both CPUs) makes the figures of a round swing by
tens of percent. So before each round the recorder waits, up to
--max-wait seconds, until for one second the CPUs were at least 80% idle
and no QEMU process or test run of someone else's ran; a round that
started without that, or at the end of whose cells such a process ran, is
marked ``disturbed`` in the data (bench/aa_rate.py leaves those out unless
told otherwise). The mark depends only on the machine, never on the
measured values. --max-wait 0 never waits (every round is still marked).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from iolab import load, spec
from iolab.cell import environment
from iolab.process import interrupts
from iolab.run import runner
from iolab.hosts.local import LocalHost
from iolab.store import Store

HERE = Path(__file__).resolve().parent


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def others_busy() -> bool:
    """A VM under emulation or a test run of someone else's is running."""
    for pattern in ("qemu-system", "pytest"):
        if subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0:
            return True
    return False


def idle_fraction(seconds: float = 1.0) -> float:
    def read() -> list[int]:
        return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    before = read()
    time.sleep(seconds)
    after = read()
    delta = [b - a for a, b in zip(before, after)]
    return (delta[3] + delta[4]) / max(1, sum(delta))  # idle + iowait


class QuietHost(LocalHost):
    """LocalHost that waits for a quiet machine before each round and marks disturbed rounds."""

    def __init__(self, cells_per_round: int, max_wait: float):
        super().__init__()
        self.cells_per_round = cells_per_round
        self.max_wait = max_wait
        self.disturbed: set[int] = set()
        self.waited = 0.0

    def run_cell(self, cell):
        if cell.seq % self.cells_per_round == 0:
            started = time.time()
            while True:
                quiet = not others_busy() and idle_fraction() >= 0.8
                if quiet or time.time() - started >= self.max_wait:
                    break
                time.sleep(2)
            self.waited += time.time() - started
            if not quiet:
                self.disturbed.add(cell.round)
        sample = super().run_cell(cell)
        if others_busy():
            self.disturbed.add(cell.round)
        return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, help="override [run].iterations")
    parser.add_argument("--store", default="/tmp/iolab-aa-record.db")
    parser.add_argument("--out", help="default: the next free bench/data/aa-samples-N.json")
    parser.add_argument("--max-wait", type=float, default=30.0,
                        help="seconds to wait for a quiet machine before each round (default 30)")
    args = parser.parse_args()
    if args.out is None:
        number = 1
        while (HERE / "data" / f"aa-samples-{number}.json").exists():
            number += 1
        args.out = str(HERE / "data" / f"aa-samples-{number}.json")
    experiment = load.load(HERE / "aa-record.toml")
    if args.rounds:
        data = experiment.model_dump()
        data["run"]["iterations"] = args.rounds
        experiment = spec.Experiment.model_validate(data)
    store = Store(args.store)
    load_before, started = loadavg(), time.time()
    interrupts.sigterm_interrupts()  # a kill tears the cell down like Ctrl-C
    host = QuietHost(len(experiment.variant) * len(experiment.workload), args.max_wait)
    runner.preflight(experiment)
    run_id = runner.run(experiment, store, experiment_path=str(HERE / "aa-record.toml"), host=host)
    load_after, finished = loadavg(), time.time()
    samples = [s for s in store.samples(run_id, with_histograms=False) if not s.warmup]
    failed = [s.seq for s in samples if s.status != "ok"]
    document = {
        "what": "A/A samples: two identical variants (A, A') of a 2 s fio 4 KiB O_DIRECT randread "
                "on a fresh ext4 loop filesystem per cell, interleaved; see bench/aa-record.toml",
        "experiment": json.loads(experiment.model_dump_json()),
        "host": environment.host(),
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "wall_seconds": round(finished - started, 1),
        "loadavg_before": load_before,
        "loadavg_after": load_after,
        "failed_cells": failed,
        "max_wait_seconds": args.max_wait,
        "waited_seconds": round(host.waited, 1),
        "disturbed_rounds": sorted(host.disturbed),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "samples": [
            {"round": s.round, "seq": s.seq, "variant": s.variant, "metrics": s.metrics}
            for s in samples if s.status == "ok"
        ],
    }
    Path(args.out).write_text(json.dumps(document, indent=1) + "\n")
    print(f"run {run_id}: {len(document['samples'])} samples, {len(failed)} failed, "
          f"{len(document['disturbed_rounds'])} disturbed rounds, waited {document['waited_seconds']} s, "
          f"{finished - started:.0f} s, load {load_before} -> {load_after}; wrote {args.out}")
    store.close()


if __name__ == "__main__":
    main()
