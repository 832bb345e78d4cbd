"""How well iolab reads the claims of the labelled corpus (tests/corpus/):
each mail read as `iolab mail` reads it (iolab.mail.read, a cover letter
alone too, then iolab.mail.reading's claims), each returned row matched to
a labelled row by its values and their order (direction).

A returned row matches a labelled one when its before and after are the
label's, both by one factor: 1 (the same unit), a unit's conversion (fio's
usec against the label's nsec), or a multiplier the label keeps in its unit
and the reader applied (562 "K IOPS" is 562000 IOPS); a mean the label
computes (``aggregate``) as it is written, rounded. Each row matches
once. Recall: labelled rows matched / labelled rows; precision: returned
rows matched / returned rows (a negative mail's rows count against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from iolab.mail import read
from iolab.mail.claimed import Claim
from iolab.mail.claimed.model import convert, unit_of
from iolab.mail.message import Mail
from iolab.mail.reading import claims_of
from iolab.mail.unread import Block, unread
from iolab.workloads.compose import UNREAD_SHOWN
from tests.corpus import loader

# a factor between the label's figures and the reader's that is the same figure
_FACTORS = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)
TOLERANCE = 0.005  # relative: the label and the mail round alike; this is only float noise


@dataclass
class Tally:
    labelled: int = 0
    found: int = 0  # labelled rows matched
    returned: int = 0
    real: int = 0  # returned rows matched
    better: int = 0  # matched rows whose 'better' is the label's
    mails: int = 0

    def add(self, other: Tally) -> None:
        for name in ("labelled", "found", "returned", "real", "better", "mails"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0

    @property
    def precision(self) -> float:
        return self.real / self.returned if self.returned else 1.0


@dataclass
class Unread:
    """What `iolab mail` lists as not read (iolab.mail.unread), against the labels: the labelled rows the
    reader missed, those inside a listed block ("pointed at"); the blocks, those holding a labelled row."""

    missed: int = 0
    pointed: int = 0
    blocks: int = 0
    labelled: int = 0  # blocks with a labelled row in them (the rest are noise)
    shown: int = 0  # missed rows inside one of the first blocks, those the experiment shows (UNREAD_SHOWN)
    filling: int = 0  # blocks with a missed row in them: a row to fill (a block of read rows alone is no noise, nor this)

    def add(self, other: Unread) -> None:
        for name in ("missed", "pointed", "blocks", "labelled", "shown", "filling"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class MailScore:
    slug: str
    split: str
    forms: tuple[str, ...]
    tally: Tally
    missed: list[loader.Claim] = field(default_factory=list)
    wrong: list[Claim] = field(default_factory=list)
    unread: Unread = field(default_factory=Unread)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b)) or a == b


def _label_values(row: loader.Claim, unit: str) -> tuple[float, float] | None:
    """The labelled before and after in the reader's unit (None: not convertible)."""
    after, after_unit = loader.normalized(row.after, row.unit)
    before, before_unit = loader.normalized(row.before, row.before_unit or row.unit)
    shown = {u: (unit_of(u) or (u,))[0] for u in (after_unit, before_unit)}
    a = convert(after, shown[after_unit], unit) if unit else after
    b = convert(before, shown[before_unit], unit) if unit else before
    if a is None or b is None:
        return (before, after) if not unit_of(after_unit) else None
    return b, a


def _written(label: float, value: float, aggregate: bool) -> bool:
    """A mean the labeller computed is written rounded: the reader's value rounds to it
    (0.3636 is a label's 0.36), half a unit of its last digit either side."""
    if not aggregate or "e" in repr(label):
        return False
    digits = len(repr(label).partition(".")[2].rstrip("0")) if "." in repr(label) else 0
    return abs(value - label) <= 0.5 * 10.0 ** -digits + 1e-12


def matches(row: loader.Claim, claim: Claim) -> bool:
    """The claim has the labelled row's figures, in its order (a factor allowed, see above)."""
    values = _label_values(row, claim.unit) or (row.before, row.after)
    before, after = values
    for factor in _FACTORS:
        if all(_close(got, want * factor) or _written(want * factor, got, bool(row.aggregate))
               for got, want in ((claim.before, before), (claim.after, after))):
            return True
    return False


def returned(mail: loader.CorpusMail) -> tuple[Mail, list[Claim]]:
    """The mail as `iolab mail` reads it (a cover letter alone too), and the rows it returns."""
    given = read([mail.path], cover_alone=True)
    return given, list(claims_of(given))


def matched(rows: tuple[loader.Claim, ...], found: list[Claim]) -> list[int | None]:
    """For each labelled row, the returned row it matches (None: missed); greedy, in the labels' order,
    each labelled row to the first returned row not taken."""
    taken: set[int] = set()
    out: list[int | None] = []
    for row in rows:
        k = next((k for k, c in enumerate(found) if k not in taken and matches(row, c)), None)
        if k is not None:
            taken.add(k)
        out.append(k)
    return out


def score(mail: loader.CorpusMail) -> MailScore:
    """One mail read and its rows matched (``matched``)."""
    given, found = returned(mail)
    text, pairs = given.text(), matched(mail.claims, found)
    tally = Tally(labelled=len(mail.claims), returned=len(found), mails=1)
    missed = [row for row, k in zip(mail.claims, pairs) if k is None]
    taken = {k for k in pairs if k is not None}
    tally.found = tally.real = len(taken)
    tally.better = sum(found[k].better == row.better for row, k in zip(mail.claims, pairs) if k is not None)
    wrong = [c for k, c in enumerate(found) if k not in taken]
    return MailScore(mail.slug, mail.split, tuple(mail.label.get("forms", ())), tally, missed, wrong,
                     pointed_at(mail.claims, missed, text.splitlines(), unread(text, found, given.parts())))


def _inside(row: loader.Claim, lines: list[str]) -> bool:
    """The labelled row's line (or its before side's) is one of the lines, or a part of one."""
    wanted = [" ".join(w.split()) for w in (row.line, row.before_line or "") if w.strip()]
    have = [" ".join(line.split()) for line in lines]
    return any(w == h or (len(h) >= 12 and h in w) or (len(w) >= 12 and w in h) for w in wanted for h in have if h)


def pointed_at(rows: tuple[loader.Claim, ...], missed: list[loader.Claim], lines: list[str],
               blocks: tuple[Block, ...]) -> Unread:
    """The missed rows inside an unread block, and the blocks that hold a labelled row, a missed one."""
    spans = [lines[b.first_line - 1:b.last_line] for b in blocks]
    return Unread(missed=len(missed), pointed=sum(any(_inside(row, span) for span in spans) for row in missed),
                  blocks=len(blocks), labelled=sum(any(_inside(row, span) for row in rows) for span in spans),
                  shown=sum(any(_inside(row, span) for span in spans[:UNREAD_SHOWN]) for row in missed),
                  filling=sum(any(_inside(row, span) for row in missed) for span in spans))


def scores(split: loader.Split) -> list[MailScore]:
    return [score(mail) for mail in loader.load(split)]


def total(found: list[MailScore]) -> Tally:
    out = Tally()
    for item in found:
        out.add(item.tally)
    return out


def by_form(found: list[MailScore]) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for item in found:
        for form in item.forms:
            out.setdefault(form, Tally()).add(item.tally)
    return dict(sorted(out.items()))
