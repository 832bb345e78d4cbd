"""A learned choice per mail: abstain from all of a mail's rows when they look mostly wrong.

    PYTHONPATH=. python bench/mail_confidence_mails.py

Most wrong rows come in mails whose rows are mostly wrong (tune today: 197 of 254; samples 5-11 at
first sight: 525 of 584, with 74 real rows beside them), so a row's own evidence tells them apart
little (bench/mail_confidence.py). Here the unit is the mail: its features are the share of its rows
that carry each of bench/claim_features.py's features other than words (the mail's own cues among
them, a share of 1), a word-free feature where five training mails or more have it; a logistic
regression (C 0.5) gives the odds that half its rows or more are wrong, and a mail at or above the
threshold returns no row. The threshold is chosen inside each training fold by leaving one sample out
in turn: the one that drops most wrong rows less twice the real rows it drops (none where nothing
gains). Judged as bench/mail_confidence.py judges (each tune sample left out, today's rows) and as
bench/mail_confidence_first.py does (samples 5-11's first-sight rows, the threshold chosen on the
other first-sight samples). Figures only.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import claim_features as features  # noqa: E402
from bench import mail_confidence as loso  # noqa: E402
from bench import mail_confidence_first as first_sight  # noqa: E402
from tests.corpus import loader  # noqa: E402


def shares(mail: loso.MailRows) -> dict[str, float]:
    """The share of the mail's rows that carry each feature other than words."""
    counts: Counter[str] = Counter()
    for row in mail.names:
        counts.update({n for n in row if n.partition(":")[0] not in features.TOKEN_PREFIXES})
    return {n: k / len(mail.names) for n, k in counts.items()}


def mostly_wrong(mail: loso.MailRows) -> bool:
    return 2 * sum(not r for r in mail.real) >= len(mail.real)


def fit(mails: list[loso.MailRows]) -> features.Model:
    """A logistic regression of a mail's shares on whether it is mostly wrong (its odds: wrong)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    mails = [m for m in mails if m.rows]
    seen: Counter[str] = Counter(n for m in mails for n in shares(m))
    names = sorted(n for n, k in seen.items() if k >= loso.MIN_MAILS)
    index = {n: k for k, n in enumerate(names)}
    x = np.zeros((len(mails), len(names)))
    for k, mail in enumerate(mails):
        for n, v in shares(mail).items():
            if n in index:
                x[k, index[n]] = v
    y = np.array([mostly_wrong(m) for m in mails], dtype=int)
    with threadpool_limits(1):
        model = LogisticRegression(C=loso.C, solver="lbfgs", max_iter=10_000, tol=1e-8).fit(x, y)
    return features.Model({n: round(float(w), loso.DIGITS) for n, w in zip(names, model.coef_[0])},
                          round(float(model.intercept_[0]), loso.DIGITS), 1.0)


def odds(model: features.Model, mail: loso.MailRows) -> float:
    """The odds the mail's rows are mostly wrong (the weights apply to shares, not to 0/1 features)."""
    z = model.intercept + sum(model.weights.get(n, 0.0) * v for n, v in shares(mail).items())
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def choose(scored: list[tuple[float, loso.MailRows]]) -> float:
    """The odds at and above which a mail is dropped: most wrong rows less COST times the real ones
    dropped; above every mail's odds (1.0) when nothing gains."""
    best, gain, at = 1.0, 0.0, 0.0
    ordered = sorted(scored, key=lambda s: -s[0])
    for k, (p, mail) in enumerate(ordered):
        at += sum(not r for r in mail.real) - loso.COST * sum(mail.real)
        if at > gain + 1e-12 and (k + 1 == len(ordered) or ordered[k + 1][0] < p):
            gain, best = at, p
    return best if gain > 0 else 1.0 + 1e-9


def train(mails: list[loso.MailRows], scored_on: list[loso.MailRows] | None = None) -> features.Model:
    """The model on every mail, its threshold chosen by leaving each sample out in turn (scored on
    ``scored_on``'s mails of that sample when given: the first-sight rows)."""
    judged = scored_on if scored_on is not None else mails
    scored = []
    for left in sorted({m.sample for m in judged}):
        inner = fit([m for m in mails + (scored_on or []) if m.sample != left])
        scored += [(odds(inner, m), m) for m in judged if m.sample == left and m.rows]
    model = fit(mails + (scored_on or []))
    return features.Model(model.weights, model.intercept, choose(scored))


def kept(mails: list[loso.MailRows], model: features.Model) -> loso.Figures:
    """The mails left out, each dropped whole when its odds reach the threshold."""
    out = loso.Figures()
    for mail in mails:
        drop = bool(mail.rows) and odds(model, mail) >= model.threshold
        out.mails += 1
        out.labelled += len(mail.labels)
        out.found += sum(mail.real)
        out.returned += len(mail.rows)
        out.kept_found += 0 if drop else sum(mail.real)
        out.kept += 0 if drop else len(mail.rows)
        out.dropped_real += sum(mail.real) if drop else 0
        out.dropped_wrong += sum(not r for r in mail.real) if drop else 0
    return out


def main() -> int:
    today = loso.gather()
    print(f"settings: C {loso.C}, features in >= {loso.MIN_MAILS} mails, a real row dropped costs "
          f"{loso.COST:g} wrong ones")
    total = loso.Figures()
    for left in sorted({m.sample for m in today}, key=lambda s: (len(s), s)):
        model = train([m for m in today if m.sample != left])
        got = kept([m for m in today if m.sample == left], model)
        total.add(got)
        print(loso.line(f"{left} today", got, model.threshold), flush=True)
    print(loso.line("total today", total, None))
    tune = loader.load("tune")
    first = [row for name in first_sight.FIRST_SIGHT for row in
             first_sight.first_rows(name, [m for m in tune if loso.sample_of(m.slug) == name])]
    totals = {"first sight": loso.Figures(), "today": loso.Figures()}
    for left in first_sight.FIRST_SIGHT:
        model = train([m for m in today if m.sample != left], [m for m in first if m.sample != left])
        for kind, rows in (("first sight", first), ("today", today)):
            got = kept([m for m in rows if m.sample == left], model)
            totals[kind].add(got)
            print(loso.line(f"{left} {kind}", got, model.threshold), flush=True)
    for kind, got in totals.items():
        print(loso.line(f"total {kind}", got, None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
