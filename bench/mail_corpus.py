"""Recall and precision of iolab's claim reader on the labelled corpus of real list mails.

    PYTHONPATH=. python bench/mail_corpus.py [--split tune|held_out|all] [--half look|check] [--mails] [--rows]
                                            [--unread] [--hinted]

Prints, per split, the labelled rows read (recall), the returned rows that
are real (precision) and how many matched rows name the label's better
direction; per form (tests/corpus/labels' `forms`), the same over the
mails that use it; with --mails each mail's figures, with --rows each
missed and each wrong row. Tune on "tune" only (tests/corpus/README.md).

--half splits the tune part in two by a rule fixed before any change was
measured with it (sha256(slug)[:8 hex] even: look, odd: check): read the
rows of "look" while changing the reader, and only the figures of "check",
before and after each step; a change that raises look and not check fits
forms, not structure. When the look half's rows were read out, "check"
was cut again (check-a read, check-b only measured).

Sample 3 (split.toml's sample_3), tuned on after its one held-out
measurement, is cut by its own rule (sha256(slug)[16:24 hex] even:
s3-look, odd: s3-check): read the rows of s3-look; of s3-check only its
figures, so that a change's reach to mails nobody read is seen before
sample 4 measures it. Sample 4 (split.toml's sample_4), tuned on from the
fourth session, is cut the same way by sha256(slug)[24:32 hex]: s4-look,
s4-check; samples 5 and 6 (tuned on after their one measurement) by
[32:40] and [40:48], samples 7 and 8 by [48:56] and [56:64], and sample 9
by [0:8] again (a window of the digest's on other mails), sample 10 by [8:16], sample 11 by [16:24].
--sample N keeps the mails of one sample.

--unread adds one line per half: of the labelled rows the reader missed,
how many lie inside a block `iolab mail` lists as not read (iolab.mail.unread:
"pointed at"; "first 3": inside one of the blocks the experiment shows), and of
those blocks, how many hold no labelled row (noise) and how many a missed one
(a row to fill; a block whose labelled rows were all read is neither).

--hinted adds one line per half: what one `iolab mail --read` hint per block
gives, as a user who read the mail would give it (tests/mail_corpus_hinted.py:
an oracle of the user's call, derived from the labels; it measures the
mechanism, not the reader): rows read by the reader, + rows the hints
recovered, hints given (and blocks with a missed row the labels give no hint
for), and extra rows (a row a hint read that no label holds).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import signal
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import mail_corpus_hinted as hints  # noqa: E402
from tests import mail_corpus_score as corpus  # noqa: E402
from tests.corpus import loader  # noqa: E402


def _line(name: str, tally: corpus.Tally) -> str:
    return (f"{name:34s} {tally.mails:3d} mails  recall {tally.found:3d}/{tally.labelled:<3d} {tally.recall:6.1%}  "
            f"precision {tally.real:3d}/{tally.returned:<3d} {tally.precision:6.1%}  better {tally.better}/{tally.found}")


def _unread(name: str, found: list[corpus.MailScore]) -> str:
    """What `iolab mail` lists as not read, against the labels: the missed rows it points at, its noise."""
    got = corpus.Unread()
    for item in found:
        got.add(item.unread)
    noise = got.blocks - got.labelled
    return (f"{name:18s} unread: pointed at {got.pointed:3d}/{got.missed:<3d} missed rows "
            f"{got.pointed / max(got.missed, 1):6.1%} (first {corpus.UNREAD_SHOWN}: {got.shown:3d})  blocks {got.blocks:3d}, "
            f"noise {noise:3d} {noise / max(got.blocks, 1):6.1%}, with a missed row {got.filling:3d}")


def _hinted(name: str, found: list[tuple[str, dict[str, hints.Hinted]]]) -> list[str]:
    """What one oracle hint per block not read gives (tests/mail_corpus_hinted.py), over these mails: a hint
    over the block's lines as listed, and one over its labelled rows' lines only."""
    out = []
    for span in ("block", "lines"):
        got = hints.Hinted()
        for _, item in found:
            got.add(item[span])
        both = got.read + got.recovered
        out.append(f"{name if span == 'block' else '':12s} {span:5s} read by the reader {got.read:4d}/{got.labelled:<4d} "
                   f"+ by hints {got.recovered:4d} = {both / max(got.labelled, 1):6.1%}  hints {got.hints:3d} "
                   f"(none derivable {got.unhinted:3d}, refused {got.refused:2d})  rows {got.rows:4d}, extra "
                   f"{got.extra:4d} {got.extra / max(got.rows, 1):6.1%}")
    return out


def half(slug: str) -> str:
    """The half of the tune part a mail is in: "look" (its rows are read) or "check" (only its figures)."""
    return "look" if int(hashlib.sha256(slug.encode()).hexdigest()[:8], 16) % 2 == 0 else "check"


def part(slug: str) -> str:
    """The halves, the check half cut in two again when its rows had to be read too: "look", then
    "check-a" (read second), "check-b" (unseen longest) by sha256(slug)[8:16 hex]'s parity."""
    digest = hashlib.sha256(slug.encode()).hexdigest()
    if half(slug) == "look":
        return "look"
    return "check-a" if int(digest[8:16], 16) % 2 == 0 else "check-b"


@functools.cache
def sample(name: str) -> frozenset[str]:
    """The slugs of split.toml's list `name` ("sample_3", "sample_4")."""
    with open(Path(__file__).resolve().parents[1] / "tests" / "corpus" / "split.toml", "rb") as f:
        return frozenset(tomllib.load(f).get(name, ()))


# each later sample's halves: its list in split.toml, the prefix of its halves, the digest's hex digits cut
SAMPLES = (("sample_3", "s3", slice(16, 24)), ("sample_4", "s4", slice(24, 32)), ("sample_5", "s5", slice(32, 40)),
           ("sample_6", "s6", slice(40, 48)), ("sample_7", "s7", slice(48, 56)),
           ("sample_8", "s8", slice(56, 64)),
           ("sample_9", "s9", slice(0, 8)), ("sample_10", "s10", slice(8, 16)), ("sample_11", "s11", slice(16, 24)))
HALVES = ("look", "check-a", "check-b", *(f"{prefix}-{name}" for _, prefix, _ in SAMPLES for name in ("look", "check")))


def halves(slug: str) -> tuple[str | None, ...]:
    """The halves a mail is in, None (no half asked) first: a later sample's own ("s4-look"), else
    the tune part's ("look", "check", "check-a" or "check-b")."""
    for name, prefix, digits in SAMPLES:
        if slug in sample(name):
            even = int(hashlib.sha256(slug.encode()).hexdigest()[digits], 16) % 2 == 0
            return None, f"{prefix}-look" if even else f"{prefix}-check"
    return None, half(slug), part(slug)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("tune", "held_out", "all"), default="tune")
    parser.add_argument("--half", choices=("look", "check", "check-a", "check-b") + tuple(
        f"{prefix}-{name}" for _, prefix, _ in SAMPLES for name in ("look", "check")), help="one half of the split (above)")
    parser.add_argument("--sample", type=int, choices=(3, 4, 5, 6, 7, 8, 9, 10, 11), help="only the mails of split.toml's sample_N")
    parser.add_argument("--mails", action="store_true", help="each mail's figures")
    parser.add_argument("--rows", action="store_true", help="each missed and each wrong row")
    parser.add_argument("--unread", action="store_true", help="per half: the missed rows that iolab mail's "
                        "'not read' blocks point at, and its blocks that hold no labelled row (noise)")
    parser.add_argument("--hinted", action="store_true", help="per half: the missed rows one oracle --read hint "
                        "per block not read recovers, and the extra rows it reads (an oracle of the user's call)")
    args = parser.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head: stop quietly
    for split in (("tune", "held_out") if args.split == "all" else (args.split,)):
        found = [item for item in corpus.scores(split)  # type: ignore[arg-type]
                 if args.half in halves(item.slug) and (not args.sample or item.slug in sample(f"sample_{args.sample}"))]
        print(_line(f"split {split}" + (f" half {args.half}" if args.half else "")
                    + (f" sample {args.sample}" if args.sample else ""), corpus.total(found)))
        for name in ([None, *HALVES] if args.unread else []):
            print("  " + _unread(name or split, [item for item in found if name is None or name in halves(item.slug)]))
        kept = {item.slug for item in found} if args.hinted else set()
        oracle = [(mail.slug, hints.score(mail)) for mail in loader.load(split) if mail.slug in kept]  # type: ignore[arg-type]
        figures_only = {f"s{n}-check" for n in range(6, 12)}  # halves whose rows nobody reads
        groups = {"readable": set(HALVES) - figures_only, "figures-only": figures_only}
        for name in ([None, *HALVES, *groups] if args.hinted else []):
            chosen = [item for item in oracle if name is None or name in halves(item[0])
                      or set(halves(item[0])) & groups.get(name or "", set())]
            for line in _hinted(name or split, chosen):
                print("  " + line)
        for form, tally in corpus.by_form(found).items():
            print("  " + _line(form, tally))
        for item in found if args.mails or args.rows else []:
            print("    " + _line(item.slug, item.tally))
            for row in item.missed if args.rows else []:
                print(f"      missed {row.label}: {row.before} -> {row.after} {row.unit}  | {row.line.strip()[:70]}")
            for claim in item.wrong if args.rows else []:
                print(f"      wrong  {claim.label}: {claim.before:g} -> {claim.after:g} {claim.unit}  | "
                      f"{claim.source[:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
