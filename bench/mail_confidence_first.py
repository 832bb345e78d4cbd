"""The learned confidence (bench/mail_confidence.py) on the rows each sample gave at first sight.

    PYTHONPATH=. python bench/mail_confidence_first.py

bench/mail_confidence.py judges the confidence on the rows the reader returns now, on samples it was
tuned on: their wrong rows are what the rules could not fix, one in eleven. A fresh mail's wrong rows
are more and of other kinds (each sample's one measurement: 44% to 68% wrong). This bench reads each of
samples 5 to 11 with the reader as it was at that measurement (the commit split.toml names; samples 3
and 4 are left out, their readers predate ``Claim.form``), marks those rows by today's labels, and
leaves one sample out: a model trained on the other samples' first-sight rows and every other tune
sample's rows of today, its threshold chosen by leaving one of the other first-sight samples out in
turn (scored on that sample's first-sight rows; a real row dropped costs two wrong ones), applied to
the left-out sample's first-sight rows and, with the same model, to its rows of today. Figures only.

    PYTHONPATH=. python bench/mail_confidence_first.py --save MODEL.json
    PYTHONPATH=. python bench/mail_confidence_first.py --apply held_out --model MODEL.json

--save trains the model so on every first-sight sample and every tune row of today (its threshold chosen
by leaving each first-sight sample out) and writes its weights, fixed before any fresh sample is seen;
--apply reads a split with today's reader and prints its rows found and wrong without the filter and
with that model's (figures only: the held-out split is the lead's to measure, once).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import claim_features as features  # noqa: E402
from bench import mail_confidence as loso  # noqa: E402
from iolab.mail import read  # noqa: E402
from iolab.mail.claimed import Claim  # noqa: E402
from tests import mail_corpus_score as corpus  # noqa: E402
from tests.corpus import loader  # noqa: E402

# the commit each sample was measured at once, held out (split.toml's notes): the reader it met
FIRST_SIGHT = {"sample_5": "b2eae99", "sample_6": "b2eae99", "sample_7": "258f163", "sample_8": "34cb62a",
               "sample_9": "64ff5b1", "sample_10": "215e570", "sample_11": "3e7c7f0"}
FIELDS = ("label", "before", "after", "unit", "kind", "better", "stated", "source", "form", "sides")
DUMP = f"""
import json, sys
from pathlib import Path
from iolab.mail import read
from iolab.mail.reading import claims_of
for path in sys.argv[1:]:
    rows = [{{k: getattr(c, k) for k in {FIELDS!r}}} for c in claims_of(read([Path(path)], cover_alone=True))]
    print(json.dumps(rows))
"""


def first_rows(name: str, mails: list[loader.CorpusMail]) -> list[loso.MailRows]:
    """The sample's mails read by the reader of its measurement (its iolab/ from git, in a process of its
    own), each row described by today's features and marked by today's labels."""
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", FIRST_SIGHT[name], "iolab"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": tree}
        out = subprocess.run([sys.executable, "-c", DUMP, *(str(m.path) for m in mails)], check=True, cwd=tree,
                             env=env, capture_output=True, text=True).stdout.splitlines()
    found = []
    for mail, line in zip(mails, out, strict=True):
        rows = tuple(Claim(**row) for row in json.loads(line))
        taken = {k for k in corpus.matched(mail.claims, list(rows)) if k is not None}
        ctx = features.context(read([mail.path], cover_alone=True), rows)
        found.append(loso.MailRows(mail.slug, name, mail.claims, rows,
                                   tuple(tuple(features.features(r, ctx)) for r in rows),
                                   tuple(k in taken for k in range(len(rows)))))
    return found


def train(today: list[loso.MailRows], first: list[loso.MailRows]) -> features.Model:
    """A model on both kinds of rows, its threshold chosen on the first-sight rows of each first-sight
    sample left out in turn."""
    scored = []
    for left in sorted({m.sample for m in first}):
        inner = loso.fit([m for m in today + first if m.sample != left])
        scored += [(inner.confidence(list(n)), r) for m in first if m.sample == left for n, r in zip(m.names, m.real)]
    model = loso.fit(today + first)
    return features.Model(model.weights, model.intercept, round(loso.choose(scored), loso.DIGITS))


def left_out(today: list[loso.MailRows], first: list[loso.MailRows]) -> None:
    """Each first-sight sample left out in turn (the module's text)."""
    totals = {"first sight": loso.Figures(), "today": loso.Figures()}
    scored: list[tuple[float, bool]] = []
    for left in FIRST_SIGHT:
        model = train([m for m in today if m.sample != left], [m for m in first if m.sample != left])
        mine = [m for m in first if m.sample == left]
        scored += [(model.confidence(list(n)), r) for m in mine for n, r in zip(m.names, m.real)]
        for kind, rows in (("first sight", mine), ("today", [m for m in today if m.sample == left])):
            got = loso.measured(rows, model)
            totals[kind].add(got)
            print(loso.line(f"{left} {kind}", got, model.threshold), flush=True)
    for kind, got in totals.items():
        print(loso.line(f"total {kind}", got, None))
    print("\n".join(loso.trade(scored)))


def save(path: Path, today: list[loso.MailRows], first: list[loso.MailRows]) -> None:
    """The model trained on every row of both kinds, written as JSON (weights, intercept, threshold)."""
    model = train(today, first)
    path.write_text(json.dumps({
        "trained_on": f"tune: {len(today)} mails' rows of today, {len(first)} first-sight mails (samples 5-11)",
        "settings": {"C": loso.C, "min_mails": loso.MIN_MAILS, "cap": loso.CAP, "cost": loso.COST},
        "intercept": model.intercept, "threshold": model.threshold, "weights": dict(sorted(model.weights.items()))},
        indent=1) + "\n")
    print(f"wrote {path}: threshold {model.threshold}, {len(model.weights)} weights")


def load(path: Path) -> features.Model:
    """A model ``save`` wrote."""
    data = json.loads(path.read_text())
    return features.Model(data["weights"], data["intercept"], data["threshold"])


def applied(split: loader.Split, path: Path) -> None:
    """A saved model's filter on a split's rows of today's reader."""
    model = load(path)
    print(f"{path.name}: threshold {model.threshold}")
    print(loso.line(f"split {split}", loso.measured(loso.gather(split), model), model.threshold))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--save", type=Path, help="train on everything and write the model here")
    parser.add_argument("--apply", choices=("tune", "held_out"), help="a saved model's filter on this split")
    parser.add_argument("--model", type=Path, help="the model --apply uses (written by --save)")
    args = parser.parse_args()
    if args.apply:
        if not args.model:
            parser.error("--apply needs --model")
        applied(args.apply, args.model)
        return 0
    today = loso.gather()
    tune = loader.load("tune")
    by_sample = {name: [m for m in tune if loso.sample_of(m.slug) == name] for name in FIRST_SIGHT}
    first = [row for name, mails in by_sample.items() for row in first_rows(name, mails)]
    print(f"settings: C {loso.C}, words in >= {loso.MIN_MAILS} mails, at most {loso.CAP} a kind, "
          f"a real row dropped costs {loso.COST:g} wrong ones")
    if args.save:
        save(args.save, today, first)
    else:
        left_out(today, first)
    return 0


if __name__ == "__main__":
    sys.exit(main())
