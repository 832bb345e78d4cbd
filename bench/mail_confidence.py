"""The claim reader's learned confidence judged by leaving one sample out: tried, not taken.

    PYTHONPATH=. python bench/mail_confidence.py [--no-words]

Each tune mail is read once as `iolab mail` reads it, and each row the reader returns is marked real
or wrong by the corpus scorer's greedy matching (tests/mail_corpus_score.py) and described by
bench/claim_features.py (``gather``). A logistic regression (scikit-learn, L2, lbfgs, one thread:
deterministic) is fitted on the rows (``fit``); the words of labels and headers enter only when they
occur in at least MIN_MAILS mails, at most CAP of each kind. Its threshold is chosen by leaving one
sample out within the data trained on (``threshold``): the one that drops most wrong rows less COST
times the real rows it drops, none when nothing gains.

Then, for each of tune's samples (split.toml's sample_3 .. sample_11, and samples 1-2: the tune
mails in none of those lists), a model is trained on the other samples, threshold and all (the
left-out sample chooses nothing), and applied to the left-out sample's rows. Per sample and in
total: the labelled rows found and the wrong rows returned, recall and precision, without the
filter and with it (the kept rows matched to the labels again), the rows the filter dropped, and of
all the left-out confidences the area under the ROC curve and the trade at fixed thresholds. Only
figures are printed: no row, no mail (s6-check .. s11-check are figures-only halves).
"""

from __future__ import annotations

import argparse
import bisect
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import claim_features as features  # noqa: E402
from bench.mail_corpus import SAMPLES, sample  # noqa: E402
from iolab.mail.claimed import Claim  # noqa: E402
from tests import mail_corpus_score as corpus  # noqa: E402
from tests.corpus import loader  # noqa: E402

C = 0.5  # the inverse of the L2 penalty's strength
MIN_MAILS = 5  # a word is a feature only where it occurs in this many mails or more
CAP = 150  # at most this many words of each kind (label, head), the commonest by mails
COST = 2.0  # a real row dropped costs as much as this many wrong rows dropped gain
DIGITS = 6  # the weights as kept
FIRST_SAMPLES = "samples_1_2"  # the tune mails in none of split.toml's sample lists


@dataclass(frozen=True)
class MailRows:
    """One mail's labels and the rows the reader returns, each described and marked real or wrong."""

    slug: str
    sample: str
    labels: tuple[loader.Claim, ...]
    rows: tuple[Claim, ...]
    names: tuple[tuple[str, ...], ...]
    real: tuple[bool, ...]


def sample_of(slug: str) -> str:
    """The sample a tune mail came in (split.toml's lists; samples 1 and 2 are in none)."""
    return next((name for name, _, _ in SAMPLES if slug in sample(name)), FIRST_SAMPLES)


def gather(split: loader.Split = "tune") -> list[MailRows]:
    """Every mail of the split read, its rows marked real or wrong (the scorer's matching)."""
    out = []
    for mail in loader.load(split):
        given, found = corpus.returned(mail)
        taken = {k for k in corpus.matched(mail.claims, found) if k is not None}
        ctx = features.context(given, found)
        out.append(MailRows(mail.slug, sample_of(mail.slug), mail.claims, tuple(found),
                            tuple(tuple(features.features(row, ctx)) for row in found),
                            tuple(k in taken for k in range(len(found)))))
    return out


def vocabulary(mails: list[MailRows], cap: int = CAP) -> list[str]:
    """The feature names a model is fitted on: every name that is no word, and the words (label, head)
    that occur in MIN_MAILS mails or more, CAP of each kind at most, the commonest first."""
    fixed: set[str] = set()
    mails_of: Counter[str] = Counter()
    for mail in mails:
        names = {name for row in mail.names for name in row}
        fixed |= {n for n in names if n.partition(":")[0] not in features.TOKEN_PREFIXES}
        mails_of.update(n for n in names if n.partition(":")[0] in features.TOKEN_PREFIXES)
    words = []
    for prefix in features.TOKEN_PREFIXES:
        mine = sorted((n for n, k in mails_of.items() if k >= MIN_MAILS and n.startswith(prefix + ":")),
                      key=lambda n: (-mails_of[n], n))
        words += mine[:cap]
    return sorted(fixed) + sorted(words)


def fit(mails: list[MailRows], cap: int = CAP) -> features.Model:
    """A logistic regression on the mails' rows (no threshold: 0); ``cap``: the words of each kind."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    names = vocabulary(mails, cap)
    index = {n: k for k, n in enumerate(names)}
    rows = [row for mail in mails for row in mail.names]
    x = np.zeros((len(rows), len(names)))
    for k, row in enumerate(rows):
        x[k, [index[n] for n in row if n in index]] = 1.0
    y = np.array([real for mail in mails for real in mail.real], dtype=int)
    with threadpool_limits(1):  # one thread: as fast here (2776 rows), and the same sums in the same order
        model = LogisticRegression(C=C, solver="lbfgs", max_iter=10_000, tol=1e-8).fit(x, y)
    weights = {n: round(float(w), DIGITS) for n, w in zip(names, model.coef_[0])}
    return features.Model(weights, round(float(model.intercept_[0]), DIGITS), 0.0)


def choose(scored: list[tuple[float, bool]]) -> float:
    """The threshold that drops most wrong rows less COST times the real ones (rows under it are
    dropped), 0 when no threshold gains."""
    best, gain, at = 0.0, 0.0, 0.0
    ordered = sorted(scored)
    for k, (p, real) in enumerate(ordered):
        at += -COST if real else 1.0  # dropping every row up to this one
        if at > gain + 1e-12 and (k + 1 == len(ordered) or ordered[k + 1][0] > p):  # a tie's rows go together
            gain, best = at, p
    if best == 0.0:
        return 0.0
    above = [p for p, _ in scored if p > best]
    return (best + min(above)) / 2 if above else best + 1e-6


def threshold(mails: list[MailRows], cap: int = CAP) -> float:
    """The threshold chosen by leaving one sample out within ``mails`` (``choose`` on their scores)."""
    scored = []
    for left in sorted({m.sample for m in mails}):
        model = fit([m for m in mails if m.sample != left], cap)
        scored += [(model.confidence(list(names)), real) for m in mails if m.sample == left
                   for names, real in zip(m.names, m.real)]
    return choose(scored)


def train(mails: list[MailRows], cap: int = CAP) -> features.Model:
    """The model fitted on every row of the mails, with the threshold their samples choose."""
    model = fit(mails, cap)
    return features.Model(model.weights, model.intercept, round(threshold(mails, cap), DIGITS))


@dataclass
class Figures:
    """One sample's rows without the filter and with it."""

    mails: int = 0
    labelled: int = 0
    found: int = 0  # without the filter: labelled rows matched (= real rows returned)
    returned: int = 0
    kept_found: int = 0  # with it
    kept: int = 0
    dropped_real: int = 0  # rows the filter dropped, by their mark without it
    dropped_wrong: int = 0

    def add(self, other: Figures) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def measured(mails: list[MailRows], model: features.Model) -> Figures:
    """The model's filter applied to the mails' rows."""
    out = Figures()
    for mail in mails:
        keep = [model.confidence(list(names)) >= model.threshold for names in mail.names]
        kept = [row for row, k in zip(mail.rows, keep) if k]
        out.mails += 1
        out.labelled += len(mail.labels)
        out.found += sum(mail.real)
        out.returned += len(mail.rows)
        out.kept_found += sum(k is not None for k in corpus.matched(mail.labels, kept))
        out.kept += len(kept)
        out.dropped_real += sum(real and not k for real, k in zip(mail.real, keep))
        out.dropped_wrong += sum(not real and not k for real, k in zip(mail.real, keep))
    return out


def _pct(a: int, b: int) -> str:
    return f"{a / b:6.1%}" if b else "     -"


def line(name: str, got: Figures, threshold: float | None) -> str:
    return (f"{name:12s} {got.mails:3d} mails {got.labelled:4d} rows | without: found {got.found:4d} "
            f"wrong {got.returned - got.found:3d} recall {_pct(got.found, got.labelled)} precision "
            f"{_pct(got.found, got.returned)} | with: found {got.kept_found:4d} wrong {got.kept - got.kept_found:3d} "
            f"recall {_pct(got.kept_found, got.labelled)} precision {_pct(got.kept_found, got.kept)} | dropped "
            f"real {got.dropped_real:3d} wrong {got.dropped_wrong:3d}"
            + (f" | threshold {threshold:.3f}" if threshold is not None else ""))


TRADE = (0.3, 0.5, 0.7, 0.8, 0.9)  # fixed confidences at which the trade is printed, for the record


def trade(scored: list[tuple[float, bool]]) -> list[str]:
    """Of the rows' left-out confidences: the area under the ROC curve (the odds a wrong row scores below a
    real one) and, at fixed thresholds, the real and wrong rows a filter there would drop."""
    real = sorted(p for p, r in scored if r)
    wrong = [p for p, r in scored if not r]
    pairs = sum(bisect.bisect_left(real, p) + 0.5 * (bisect.bisect_right(real, p) - bisect.bisect_left(real, p))
                for p in wrong)
    out = [f"left-out confidences: AUC {1 - pairs / max(len(real) * len(wrong), 1):.3f} "
           f"({len(real)} real, {len(wrong)} wrong rows)"]
    for t in TRADE:
        out.append(f"  under {t:.1f}: real {sum(p < t for p in real):4d}, wrong {sum(p < t for p in wrong):3d}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-words", action="store_true", help="no words of labels and headers as features")
    args = parser.parse_args()
    cap = 0 if args.no_words else CAP
    mails = gather()
    print(f"settings: C {C}, words in >= {MIN_MAILS} mails, at most {cap} a kind, "
          f"a real row dropped costs {COST:g} wrong ones")
    total = Figures()
    better = 0
    scored: list[tuple[float, bool]] = []
    for left in sorted({m.sample for m in mails}, key=lambda s: (len(s), s)):
        model = train([m for m in mails if m.sample != left], cap)
        mine = [m for m in mails if m.sample == left]
        got = measured(mine, model)
        scored += [(model.confidence(list(n)), r) for m in mine for n, r in zip(m.names, m.real)]
        print(line(left, got, model.threshold), flush=True)
        total.add(got)
        better += got.kept_found * got.returned > got.found * got.kept if got.kept else False
    print(line("total", total, None))
    print(f"precision higher with the filter in {better} of {len({m.sample for m in mails})} samples")
    print("\n".join(trade(scored)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
