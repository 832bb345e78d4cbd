"""The claim reader's learned proposer (iolab/mail/claimed/proposed.py) judged by leave-one-sample-out.

    PYTHONPATH=. python bench/proposer_loso.py

For each tune sample of split.toml's sample_3 .. sample_11: the proposer is trained
(scripts/train_proposer.py's train: regularisation and threshold chosen by cross-validation
inside the training fold) on every other tune mail (samples 1-2, the tune mails in none of those
lists, always among them), then applied to the sample left out; its mails are scored as
tests/mail_corpus_score.py scores them, the reader's rows without the proposer, then with the
proposer's rows after them. Prints per sample and in total: labelled rows read, wrong rows
returned, recall and precision, without and with, and the fold's chosen settings. Figures only:
no mail's rows are printed (the corpus rules, tests/corpus/README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import train_proposer as trainer  # noqa: E402

from iolab.mail.claimed import Claim  # noqa: E402
from iolab.mail.claimed.proposed import proposed  # noqa: E402
from tests import mail_corpus_score as corpus  # noqa: E402
from tests.corpus import loader  # noqa: E402


def tally(mail: trainer.Mail, returned: list[Claim]) -> corpus.Tally:
    """The mail's figures with these rows returned, matched as the scorer matches them."""
    pairs = corpus.matched(mail.corpus.claims, returned)
    found = [(row, returned[k]) for row, k in zip(mail.corpus.claims, pairs) if k is not None]
    return corpus.Tally(labelled=len(mail.corpus.claims), found=len(found), returned=len(returned), real=len(found),
                        better=sum(claim.better == row.better for row, claim in found), mails=1)


def _line(name: str, without: corpus.Tally, with_: corpus.Tally, settings: str) -> str:
    wrong = (without.returned - without.real, with_.returned - with_.real)
    return (f"{name:11s} {without.mails:3d} mails {without.labelled:4d} rows  found {without.found:4d} -> "
            f"{with_.found:4d} ({with_.found - without.found:+3d})  wrong {wrong[0]:3d} -> {wrong[1]:3d} "
            f"({wrong[1] - wrong[0]:+3d})  recall {without.recall:6.1%} -> {with_.recall:6.1%}  "
            f"precision {without.precision:6.1%} -> {with_.precision:6.1%}  {settings}")


def main() -> int:
    mails = trainer.gather(loader.load("tune"))
    total = (corpus.Tally(), corpus.Tally())
    print("sample       mails rows  found without -> with   wrong without -> with   recall   precision   fold's C, threshold")
    for group in trainer.SAMPLES:
        model, c = trainer.train([m for m in mails if m.group != group])
        without, with_ = corpus.Tally(), corpus.Tally()
        for mail in (m for m in mails if m.group == group):
            without.add(tally(mail, list(mail.found)))
            with_.add(tally(mail, [*mail.found, *proposed(list(mail.lines), list(mail.found), model, list(mail.seen))]))
        total[0].add(without)
        total[1].add(with_)
        print(_line(group.replace("sample_", "sample "), without, with_, f"C {c}, threshold {model.threshold:.3f}"),
              flush=True)
    print(_line("total", total[0], total[1], ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
