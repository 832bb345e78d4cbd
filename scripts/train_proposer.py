"""Train the claim reader's proposer (iolab/mail/claimed/proposed.py) on the corpus's tune split and
write its weights to iolab/mail/claimed/proposed.json.

    PYTHONPATH=. python scripts/train_proposer.py [--check]

Each tune mail is read as `iolab mail` reads it, without the proposer; every pair of figures on
one line that the reader's rows did not use (iolab.mail.claimed.proposed.selectable) is an
example, positive when it is a labelled row of the mail the reader missed (same figures, same
order: tests/mail_corpus_score.matches), else negative. A logistic regression (scikit-learn,
used here only) is fitted on the examples' named features, the words of a role kept when at
least MIN_MAILS mails show them; its regularisation (of GRID) and threshold are chosen by
cross-validation over the corpus's samples (split.toml's sample_3 .. sample_11, samples 1-2 one
group): fitted on all groups but one, each group's pairs scored and chosen as the reader would
choose them, the threshold is the score above which the rows chosen give the most real rows
less COST times the wrong ones.
Deterministic: the same corpus gives the same file (--check compares, exit 1 when it differs).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from iolab.mail import read  # noqa: E402
from iolab.mail.claimed import Claim  # noqa: E402
from iolab.mail.claimed.proposed import WEIGHTS, Model, model_of, returned, selectable  # noqa: E402
from iolab.mail.claimed.reader import every_row  # noqa: E402
from tests import mail_corpus_score as corpus  # noqa: E402
from tests.corpus import loader  # noqa: E402

GRID = (0.05, 0.2, 1.0)  # the regression's inverse regularisation, chosen among these by cross-validation
MIN_MAILS = 8  # a word feature is kept when this many training mails show it
COST = 2.0  # a wrong row costs this many real ones when the threshold is chosen
ROLES = ("bh:", "ah:", "lab:", "btw:", "pre:", "post:", "blk:")
SAMPLES = tuple(f"sample_{n}" for n in range(3, 12))


@dataclass(frozen=True)
class Example:
    features: frozenset[str]
    claim: Claim
    line: int
    figures: tuple[int, int]
    matches: frozenset[int]  # the missed labelled rows (their index) it is


@dataclass(frozen=True)
class Mail:
    slug: str
    group: str
    corpus: loader.CorpusMail
    lines: tuple[str, ...]
    found: tuple[Claim, ...]  # the reader's rows, without the proposer
    seen: tuple[Claim, ...]  # every form's rows before the gate
    examples: tuple[Example, ...]


def groups() -> dict[str, str]:
    """Each tune slug's sample: split.toml's list it is in, "sample_1-2" for the rest."""
    with open(loader.SPLIT, "rb") as f:
        split = tomllib.load(f)
    return {slug: name for name in SAMPLES for slug in split.get(name, ())}


def rules(mail: loader.CorpusMail) -> tuple[list[str], list[Claim], list[Claim]]:
    """The lines the reader reads, its forms' rows before the gate and the rows its rules return (as
    iolab.mail.reading.claims_of reads them, without the proposer)."""
    given = read([mail.path], cover_alone=True)
    subjects = dict.fromkeys([given.title, *(p.title for p in given.patches)])
    return every_row(given.text(), "\n".join(s for s in subjects if s))


def missed(mail: loader.CorpusMail, found: list[Claim]) -> list[int]:
    """The labelled rows (their index) the scorer finds no row for."""
    return [n for n, k in enumerate(corpus.matched(mail.claims, found)) if k is None]


def gather(mails: list[loader.CorpusMail]) -> list[Mail]:
    """Each mail's reading and examples."""
    sample = groups()
    out = []
    for mail in mails:
        lines, seen, found = rules(mail)
        left = missed(mail, found)
        examples = tuple(Example(cand.features, claim, cand.line, (cand.first, cand.second),
                                 frozenset(n for n in left if corpus.matches(mail.claims[n], claim)))
                         for cand, claim in selectable(lines, [*found, *seen]))
        out.append(Mail(mail.slug, sample.get(mail.slug, "sample_1-2"), mail, tuple(lines), tuple(found), tuple(seen),
                        examples))
    return out


def vocabulary(mails: list[Mail]) -> set[str]:
    """The features kept: every one not of words, and the words MIN_MAILS mails show."""
    seen: dict[str, int] = {}
    for mail in mails:
        for name in set().union(*(e.features for e in mail.examples)):
            seen[name] = seen.get(name, 0) + 1
    return {name for name, count in seen.items() if not name.startswith(ROLES) or count >= MIN_MAILS}


def fit(mails: list[Mail], c: float) -> Model:
    """The regression fitted on the mails' examples, its threshold 0.5 (see choose)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    kept = vocabulary(mails)
    rows = [{name: 1 for name in sorted(e.features & kept)} for m in mails for e in m.examples]
    labels = [int(bool(e.matches)) for m in mails for e in m.examples]
    vectorizer = DictVectorizer(sort=True)
    x = vectorizer.fit_transform(rows)
    model = LogisticRegression(C=c, max_iter=5000, solver="lbfgs").fit(x, labels)
    weights = {name: round(float(w), 6) for name, w in zip(vectorizer.get_feature_names_out(), model.coef_[0])
               if round(float(w), 6) != 0.0}
    return Model(round(float(model.intercept_[0]), 6), weights, 0.5)


def chosen(mail: Mail, model: Model) -> list[tuple[float, bool]]:
    """The rows the proposer would return on the mail at any threshold, best first: each one's score
    and whether it is a missed labelled row not already taken by a row before it."""
    scored = sorted(((model.probability(e.features), n, e) for n, e in enumerate(mail.examples)),
                    key=lambda item: (-item[0], item[1]))
    taken: set[tuple[int, int]] = set()
    rows: list[Claim] = []
    real: set[int] = set()
    out = []
    for probability, _, e in scored:
        figures = {(e.line, e.figures[0]), (e.line, e.figures[1])}
        if figures & taken or any(returned(e.claim, c) for c in rows):
            continue
        taken |= figures
        rows.append(e.claim)
        hit = next(iter(sorted(e.matches - real)), None)
        real |= {hit} if hit is not None else set()
        out.append((probability, hit is not None))
    return out


def threshold(mails: list[Mail], c: float) -> tuple[float, float]:
    """The best gain (real rows less COST times wrong ones) and its threshold, by cross-validation over
    the mails' samples: fitted on all but one, the rows chosen on that one."""
    picks: list[tuple[float, bool]] = []
    for group in sorted({m.group for m in mails}):
        model = fit([m for m in mails if m.group != group], c)
        picks += [p for m in mails if m.group == group for p in chosen(m, model)]
    best, at, gain = 0.0, 1.0, 0.0
    for probability, real in sorted(picks, key=lambda p: -p[0]):
        gain += 1.0 if real else -COST
        if gain > best:
            best, at = gain, probability
    return best, at


def train(mails: list[Mail], c: float | None = None) -> tuple[Model, float]:
    """The model fitted on every mail, with its regularisation (the best of GRID unless given) and
    threshold chosen by cross-validation (threshold)."""
    found = {grid: threshold(mails, grid) for grid in ((c,) if c is not None else GRID)}
    best = max(found, key=lambda grid: (found[grid][0], -grid))
    model = fit(mails, best)
    return Model(model.bias, model.weights, round(found[best][1], 6)), best


def written(mails: list[Mail], model: Model, c: float) -> dict[str, object]:
    """The weights file's data."""
    return {"about": "iolab/mail/claimed/proposed.py's weights, written by scripts/train_proposer.py",
            "settings": {"C": c, "min_mails": MIN_MAILS, "cost": COST},
            "trained_on": {"mails": len(mails), "examples": sum(len(m.examples) for m in mails),
                           "positive": sum(bool(e.matches) for m in mails for e in m.examples)},
            "threshold": model.threshold, "bias": model.bias, "weights": dict(sorted(model.weights.items()))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the stored weights, write nothing")
    args = parser.parse_args()
    mails = gather(loader.load("tune"))
    model, c = train(mails)
    data = written(mails, model, c)
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        agrees = same(model, model_of(json.loads(WEIGHTS.read_text())))
        print("the stored weights are the corpus's" if agrees else "the stored weights differ from the corpus's")
        return 0 if agrees else 1
    WEIGHTS.write_text(text)
    print(f"{WEIGHTS}: {len(data['weights'])} weights, threshold {data['threshold']}")  # type: ignore[arg-type]
    return 0


def same(a: Model, b: Model, tolerance: float = 1e-3) -> bool:
    return abs(a.bias - b.bias) <= tolerance and abs(a.threshold - b.threshold) <= tolerance and \
        a.weights.keys() == b.weights.keys() and all(abs(a.weights[k] - b.weights[k]) <= tolerance for k in a.weights)


if __name__ == "__main__":
    sys.exit(main())
