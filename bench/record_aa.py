"""Record the A/A samples that bench/aa_rate.py resamples (run once, as root).

    .venv/bin/python bench/record_aa.py [--rounds N] [--store FILE]

Runs bench/aa-record.toml (two identical variants, interleaved) with real
fio on a loop device, then writes every measured sample's metrics, in round
order, to bench/data/aa-samples.json together with the host, the load
average before and after, and the wall time. The data file is committed so
the benchmark needs no root and no fio.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from iolab import environment, runner, spec
from iolab.store import Store

HERE = Path(__file__).resolve().parent


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, help="override [run].iterations")
    parser.add_argument("--store", default="/tmp/iolab-aa-record.db")
    parser.add_argument("--out", default=str(HERE / "data" / "aa-samples.json"))
    args = parser.parse_args()
    experiment = spec.load(HERE / "aa-record.toml")
    if args.rounds:
        data = experiment.model_dump()
        data["run"]["iterations"] = args.rounds
        experiment = spec.Experiment.model_validate(data)
    store = Store(args.store)
    load_before, started = loadavg(), time.time()
    run_id = runner.run(experiment, store, experiment_path=str(HERE / "aa-record.toml"))
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
        "samples": [
            {"round": s.round, "seq": s.seq, "variant": s.variant, "metrics": s.metrics}
            for s in samples if s.status == "ok"
        ],
    }
    Path(args.out).write_text(json.dumps(document, indent=1) + "\n")
    print(f"run {run_id}: {len(document['samples'])} samples, {len(failed)} failed, "
          f"{finished - started:.0f} s, load {load_before} -> {load_after}; wrote {args.out}")
    if os.environ.get("IOLAB_KEEP_STORE") is None:
        store.close()


if __name__ == "__main__":
    main()
