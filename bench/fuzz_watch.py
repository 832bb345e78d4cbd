#!/usr/bin/env python3
"""Hostile input at scale: 10 000 real list mails, mutated (tests/fuzz_mails.py:
byte flips, truncation, duplicated headers, huge lines, MIME oddities, diff
names that leave the tree, benchmark lines naming programs, odd subjects),
through the mail reader (iolab.mail.read, then the one reading of patches,
benchmark and claims) in this process, and through `iolab watch --once
--dry-run` over one inbox holding them all, with HOME, the XDG dirs and
TMPDIR in a scratch root listed before and after.

    .venv/bin/python bench/fuzz_watch.py [--count 10000] [--seed 39] [--out bench/data/fuzz-watch-....txt]

Prints the counts: mails read or refused by the reader, tracebacks (each
shown), the watch's exit, time and tally, whether the canary a mail names
was made, and every file changed outside iolab's cache (none allowed).
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import fuzz_mails  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--only", choices=("reader", "watch"), help="run one half (the reader's is the longer)")
    parser.add_argument("--out", help="also write the result here")
    args = parser.parse_args()
    lines = [f"bench/fuzz_watch.py --count {args.count} --seed {args.seed}",
             f"seed mails: {len(fuzz_mails.seeds())} (tests/corpus/mails, tests/fixtures/mail, the seeds), and "
             f"{len(fuzz_mails.applicable())} that apply ({fuzz_mails.APPLICABLE_SHARE:.0%} of the mutants)"]
    with tempfile.TemporaryDirectory(prefix="iolab-fuzz-") as scratch:
        root = Path(scratch)
        canary = root / "canary" / "pwned"
        mails = list(fuzz_mails.mutants(args.seed, args.count, str(canary)))
        kinds = collections.Counter(kind for name, _ in mails for kind in name.split("+"))
        lines.append("mutations applied: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        counts: dict[str, int] = {"traceback": 0}
        found: dict[str, object] = {"traceback": False, "exit": 0, "canary": False, "changed": []}
        if args.only != "watch":
            began = time.monotonic()
            (root / "reader").mkdir()
            counts, failures = fuzz_mails.read_all(mails, root / "reader")
            lines.append(f"mail reader: {counts['read']} read, {counts['refused']} refused (exit 2 in iolab mail), "
                         f"{counts['traceback']} tracebacks; {time.monotonic() - began:.0f} s")
            lines += [f"  {failure}" for failure in failures[:20]]
            lines.append(f"canary after the reader: {'MADE' if canary.exists() else 'not made'}")
        if args.only == "reader":
            return _end(lines, args.out, bool(counts["traceback"] or canary.exists()))
        found = fuzz_mails.check_watch(mails, root / "watch")
        lines.append(f"iolab watch --once --dry-run: exit {found['exit']}, {found['seconds']:.0f} s, "
                     f"traceback: {'YES' if found['traceback'] else 'none'}")
        lines.append(f"  {found['tally']}")
        lines.append(f"  series it would queue: {found['would']}; skip lines: {found['skipped']}")
        lines.append(f"  canary: {'MADE' if found['canary'] else 'not made'}; files changed outside iolab's cache: "
                     f"{found['changed'] or 'none'}")
        if found["traceback"] or found["exit"]:
            lines.append(str(found["stderr"]))
    bad = counts["traceback"] or found["traceback"] or found["exit"] or found["canary"] or found["changed"]
    return _end(lines, args.out, bool(bad))


def _end(lines: list[str], out: str | None, bad: bool) -> int:
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if out:
        Path(out).write_text(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
