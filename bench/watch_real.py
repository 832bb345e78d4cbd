#!/usr/bin/env python3
"""`iolab watch --once --dry-run` over a real public-inbox mirror: what the
robot would queue and why it skips the rest, tallied by reason.

    .venv/bin/python bench/watch_real.py MIRROR [--backlog 1000] [--out bench/data/watch-....txt]

MIRROR is a list's public-inbox git mirror (one epoch: a bare repository
whose every commit holds one message in `m`), fetched as a public
repository. The kernel sources tried are those unpacked in this user's
iolab cache (the robot never fetches one). A dry run writes nothing: the
store named is a path that does not exist. Prints the mirror's newest
commit, the wall time, the tally, then the robot's own lines.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLASSES = [(r"^v\d+: patch .* not read yet.*", "a series not whole yet (kept for the next pass)"),
           (r"^superseded by .*", "superseded by a newer version"),
           (r"^(does not apply to any source iolab has|already in the source iolab has|patch \d+: names a file "
            r"outside the source tree|iolab patch refused it|nothing to run for its files|unreadable|b4 could "
            r"not put its thread together|too large).*", r"\1")]


def reason(line: str) -> str:
    said = line.split('": ', 1)[1] if '": ' in line else line.split(">: ", 1)[-1]
    said = said.strip()
    for pattern, name in CLASSES:
        if re.match(pattern, said):
            return re.sub(pattern, name, said)
    return said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mirror")
    parser.add_argument("--backlog", type=int, default=1000)
    parser.add_argument("--out", help="also write the result here")
    args = parser.parse_args()
    head = subprocess.run(["git", "--git-dir", args.mirror, "log", "-1", "--format=%H %cI"], capture_output=True,
                          text=True, check=True).stdout.strip()
    count = subprocess.run(["git", "--git-dir", args.mirror, "rev-list", "--count", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "iolab.cli", "watch", args.mirror, "--once", "--dry-run",
                               "--backlog", str(args.backlog), "--store", str(Path(scratch) / "none.db")],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        took = time.monotonic() - began
    tally: collections.Counter[str] = collections.Counter()
    for line in done.stdout.splitlines():
        if line.startswith("  skip"):
            tally[reason(line)] += 1
        elif line.startswith("  would"):
            tally["would queue"] += 1
    lines = [f"iolab watch --once --dry-run --backlog {args.backlog} over {args.mirror}",
             f"mirror: {count} commits, newest {head}",
             f"exit {done.returncode}, {took:.1f} s wall (1-minute load average {os.getloadavg()[0]:.2f})",
             f"stderr: {done.stderr.strip()[-500:] or '(empty)'}", "", "tally:",
             *(f"{n:6d}  {what}" for what, n in tally.most_common()), "", "the robot's lines:", done.stdout]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
