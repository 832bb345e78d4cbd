"""Time to verdict: iterations = "auto" against a fixed protocol, on real loop devices.

    .venv/bin/python bench/time_to_verdict.py [--only blocksize|cache] [--skip-long]

(as root; each experiment takes about 12 minutes, most of it the fixed
protocol). For each experiment in bench/ttv-*.toml -- both with a large,
known effect -- three runs:

  fixed 5 x 60 s   5 iterations per variant of a 60 s job: the protocol of
                   the block-task-context-completion seed (5 x 60 s)
  auto (2 s)       iterations = "auto" (5..30 rounds, target +-1%) with a 2 s
                   job, as many rounds as the verdicts need
  fixed 5 x 2 s    for reference: the fixed count with the short job

and prints the wall time of each (set-up and teardown of every cell
included) and the verdict of each headline row. The claim checked: auto
reaches the same verdicts as the fixed protocol in at most a fifth of its
time, with no verdict against the known direction of the effect.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from iolab import analysis, load, spec
from iolab.run import runner
from iolab.store import Store

HERE = Path(__file__).resolve().parent
EXPERIMENTS = {"blocksize": HERE / "ttv-blocksize.toml", "cache": HERE / "ttv-cache.toml"}
# the direction each row must take (candidate against baseline) if the verdict is not wrong
EXPECTED = {
    "blocksize": {"read_bw": "better", "read_p50": "worse", "read_p99": "worse"},
    "cache": {"read_bw": "worse", "read_p50": "worse", "read_p99": "worse"},
}


def variant(experiment: spec.Experiment, runtime: int, run: dict) -> spec.Experiment:
    data = experiment.model_dump()
    base_dir = data.pop("base_dir")
    for workload in data["workload"]:
        workload["job"] = workload["job"].replace("runtime=2\n", f"runtime={runtime}\n")
    data["run"] = {"seed": 7, **run}
    return load.parse(data, base_dir=base_dir)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def measure(store: Store, experiment: spec.Experiment) -> tuple[float, analysis.Analysis, float]:
    before = loadavg()
    started = time.monotonic()
    run_id = runner.run(experiment, store)
    wall = time.monotonic() - started
    return wall, analysis.analyse(store.run(run_id), store.samples(run_id)), (before + loadavg()) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(EXPERIMENTS))
    parser.add_argument("--skip-long", action="store_true", help="leave out the 5 x 60 s protocol")
    parser.add_argument("--store", default="/tmp/iolab-ttv.db")
    args = parser.parse_args()
    store = Store(args.store)
    names = [args.only] if args.only else list(EXPERIMENTS)
    print(f"{'experiment':10s} {'protocol':14s} {'rounds':>6s} {'wall s':>7s} {'load':>5s}  verdicts")
    for name in names:
        base = load.load(EXPERIMENTS[name])
        protocols = [
            ("fixed 5 x 60 s", variant(base, 60, {"iterations": 5})),
            ("auto (2 s)", variant(base, 2, {"iterations": "auto"})),
            ("fixed 5 x 2 s", variant(base, 2, {"iterations": 5})),
        ]
        if args.skip_long:
            protocols = protocols[1:]
        walls = {}
        verdicts = {}
        for label, experiment in protocols:
            wall, result, busy = measure(store, experiment)
            candidate = result.variants[1]
            found = {row.metric.name: row.comparisons[candidate] for row in result.rows}
            walls[label], verdicts[label] = wall, {m: c.verdict for m, c in found.items()}
            shown = ", ".join(f"{m} {c.verdict} {c.delta * 100:+.0f}%" for m, c in found.items())
            stop = f" [{result.run.stop_reason}]" if result.run.stop_reason else ""
            print(f"{name:10s} {label:14s} {result.rounds_done:6d} {wall:7.0f} {busy:5.2f}  {shown}{stop}",
                  flush=True)
        wrong = [(label, m, v) for label, found in verdicts.items() for m, v in found.items()
                 if v in ("better", "worse") and v != EXPECTED[name][m]]
        line = f"{name}: wrong verdicts: {wrong or 'none'}"
        if "fixed 5 x 60 s" in walls:
            same = verdicts["auto (2 s)"] == verdicts["fixed 5 x 60 s"]
            ratio = walls["auto (2 s)"] / walls["fixed 5 x 60 s"]
            line += f"; auto/fixed time {ratio:.3f} ({'same' if same else 'DIFFERENT'} verdicts)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
