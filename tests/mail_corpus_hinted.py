"""What one --read hint per block gives on the labelled corpus: an oracle of the user's call.

For each block ``iolab mail`` lists as not read (iolab.mail.unread) that holds a labelled row the
reader missed, the hint a user who read the mail would type, derived from the labels: on each of the
block's lines that holds a missed row, the places of the figures (iolab.mail.hinted.figures_of) that
are its before and after (as mail_corpus_score.matches matches them); the pair of places most of
those lines share gives ``FIRST-LAST:B,A`` over the block's lines. A row whose before is on another
line (each side its own block) gives ``BEFORE/AFTER``: the lines of the block up to its last before
line, and the rest (or the other way round, the afters above), or the listed block that holds its
befores and this one, paired by label (``:N`` when its lines hold more than one figure); one on the
next line of figures, ``B,A+1``. The hint is then
read as ``iolab mail --read`` reads it, and its rows are matched to the labels: the missed rows it
recovers, and its extra rows (a row no label holds: a context row, a total, a header read as a row).
It measures the mechanism, given the user's call, not the reader: the labels make the call here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from iolab.mail import hinted
from iolab.mail.claimed import Claim
from iolab.mail.unread import Block, unread
from tests import mail_corpus_score as corpus
from tests.corpus import loader


@dataclass
class Hinted:
    labelled: int = 0
    read: int = 0  # labelled rows the reader read
    recovered: int = 0  # missed rows a hint read
    hints: int = 0  # hints given (one per block holding a missed row, where the labels give one)
    unhinted: int = 0  # blocks holding a missed row whose labels give no hint (its figures not on its lines)
    refused: int = 0  # hints the spec refused (no line holds its figures)
    rows: int = 0  # rows the hints read
    extra: int = 0  # of them, rows no label holds
    mails: int = 0

    def add(self, other: Hinted) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _same(a: str, b: str) -> bool:
    a, b = " ".join(a.split()), " ".join(b.split())
    return bool(a and b) and (a == b or (len(a) >= 12 and a in b) or (len(b) >= 12 and b in a))


def _places(row: loader.Claim, before: str, after: str) -> list[tuple[int, int]]:
    """The places (0-based) of the figures of the two lines that are the row's before and after."""
    ones, twos = hinted.figures_of(before), hinted.figures_of(after)
    out = []
    for i, one in enumerate(ones):
        for j, two in enumerate(twos):
            if before == after and i == j:
                continue
            unit = one.unit or two.unit
            claim = Claim("x", one.value, two.value, unit[0] if unit else "", unit[1] if unit else "count", None)
            if corpus.matches(row, claim):
                out.append((i, j))
    return out


def _line_of(lines: list[str], span: range, wanted: str) -> int | None:
    return next((k for k in span if _same(lines[k], wanted)), None)


def oracle(lines: list[str], block: Block, missed: list[loader.Claim], narrow: bool = False,
           blocks: tuple[Block, ...] = ()) -> tuple[str, Block | None] | None:
    """The hint a user would type for the block (see the module's text), and the other listed block it
    names (a row's before side in another of ``blocks``), None when the labels give none; ``narrow``: over
    the lines of its labelled rows only, not the whole block's (a user who leaves out the rows the mail
    does not claim)."""
    span = range(block.first_line - 1, block.last_line)
    texts = hinted.side_lines(lines, (span.start, span.stop))
    place = {k: n for n, k in enumerate(texts)}  # a line's place among the block's lines of figures
    votes: Counter[tuple[str, int, int, int]] = Counter()  # (form, before's figure, after's, lines between)
    seen: dict[tuple[str, int, int, int], list[tuple[int, int]]] = {}
    for row in missed:
        k = _line_of(lines, span, row.line)
        b = _line_of(lines, span, row.before_line) if row.before_line and k is not None else k
        other = next((n for n, o in enumerate(blocks) if o != block and b is None and k is not None and row.before_line
                      and _line_of(lines, range(o.first_line - 1, o.last_line), row.before_line) is not None), None)
        if other is not None:
            b = _line_of(lines, range(blocks[other].first_line - 1, blocks[other].last_line), row.before_line or "")
        if k is None or b is None:
            continue
        for i, j in _places(row, lines[b], lines[k]):
            keys = [("line", i, j, 0)] if b == k else [("blocks", i, j, other)] * (i == j) if other is not None \
                else [("sides", i, j, 0)] * (i == j) + (
                    [("stacked", i, j, place[k] - place[b])] if b in place and k in place else [])
            for key in keys:
                votes[key] += 1
                seen.setdefault(key, []).append((b, k))
    order = {"line": 0, "sides": 1, "blocks": 2, "stacked": 3}
    for key, _ in sorted(votes.items(), key=lambda item: (-item[1], order[item[0][0]])):
        other_block = blocks[key[3]] if key[0] == "blocks" else None
        spec = _spec(lines, block, key, seen[key], narrow, other_block)
        if spec is not None:
            return spec, other_block
    return None


def _spec(lines: list[str], block: Block, key: tuple[str, int, int, int], rows: list[tuple[int, int]],
          narrow: bool, other: Block | None = None) -> str | None:
    """The spec of one way to read the block: its form, figures and lines (1-based in the spec)."""
    form, i, j, d = key
    if form == "blocks" and other is not None:  # the befores in another listed block
        keep = f":{i + 1}" if any(len(hinted.figures_of(lines[b])) > 1 for b, _ in rows) else ""
        if narrow:
            befores, afters = [b for b, _ in rows], [k for _, k in rows]
            return f"{min(befores) + 1}-{max(befores) + 1}/{min(afters) + 1}-{max(afters) + 1}{keep}"
        return f"{other.first_line}-{other.last_line}/{block.first_line}-{block.last_line}{keep}"
    first, last = block.first_line, block.last_line
    if narrow:
        first, last = min(min(r) for r in rows) + 1, max(max(r) for r in rows) + 1
    if form == "line":
        return f"{first}-{last}:{i + 1},{j + 1}"
    if form == "stacked":
        if d == 0 or abs(d) > 9:
            return None
        return f"{first}-{last}:" + (f"{i + 1},{j + 1}+{d}" if d > 0 else f"{i + 1}+{-d},{j + 1}")
    befores, afters = [b for b, _ in rows], [k for _, k in rows]
    if max(befores) >= min(afters) and min(befores) <= max(afters):
        return None  # each side its own block only when all the befores come first, or all the afters
    keep = f":{i + 1}" if any(len(hinted.figures_of(lines[k])) > 1 for k in befores) else ""
    if narrow:
        return f"{min(befores) + 1}-{max(befores) + 1}/{min(afters) + 1}-{max(afters) + 1}{keep}"
    if max(befores) < min(afters):
        cut = max(befores) + 1  # 0-based: the after's block starts on the line after the last before line
        return f"{first}-{cut}/{cut + 1}-{last}{keep}"
    cut = min(befores)  # the afters above: the before's block starts at its first line
    return f"{cut + 1}-{last}/{first}-{cut}{keep}"


def score(mail: loader.CorpusMail) -> dict[str, Hinted]:
    """One mail: the reader's rows, then one oracle hint per block holding a missed row, read and matched;
    by "block" the hint spans the block's lines as listed, by "lines" its labelled rows' lines only."""
    given, found = corpus.returned(mail)
    text = given.text()
    lines = text.splitlines()
    pairs = corpus.matched(mail.claims, found)
    missed = [row for row, k in zip(mail.claims, pairs) if k is None]
    out = {}
    for name in ("block", "lines"):
        got = out[name] = Hinted(labelled=len(mail.claims), read=len(mail.claims) - len(missed), mails=1)
        rows: list[Claim] = []
        blocks = unread(text, found)
        named: list[Block] = []  # blocks a hint named already, with the block it was given for
        for block in blocks:
            inside = [row for row in missed if corpus._inside(row, lines[block.first_line - 1:block.last_line])]
            if block in named:
                continue
            hint = oracle(lines, block, inside, name == "lines", blocks) if inside else None
            named += [hint[1]] if hint and hint[1] else []
            spec = hint[0] if hint else None
            got.unhinted += bool(inside) and spec is None
            got.hints += spec is not None
            try:
                rows += hinted.read(hinted.parse(spec), text, {}).rows if spec else ()
            except hinted.HintError:
                got.refused += 1
        got.rows = len(rows)
        got.extra = sum(not any(corpus.matches(row, c) for row in mail.claims) for c in rows)
        got.recovered = sum(k is not None for k in corpus.matched(tuple(missed), rows))
    return out
