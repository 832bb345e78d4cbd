"""The claim rows of an experiment as a dry run shows them (`iolab patch
--dry-run`, `iolab run --dry-run`): each row's figures and the workload and
metric that check it, then the rows no workload checks, under each reason
once. These are the experiment's [[claims.row]], which the run reads (never
the mail again): a row the user corrected in the file shows corrected.
`iolab patch --dry-run` adds the mail's blocks of figures no row was read
from (iolab.mail.unread), where a row may be added by hand.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from iolab.mail.reading import Reading
from iolab.mail.unread import placed_in
from iolab.spec import ClaimRow, Experiment

WIDTH = 100  # columns of a line of the plan
LABEL = 28  # columns of a claim's label


def cut(text: str, width: int = WIDTH) -> str:
    """A line of at most ``width`` columns, its words' spacing kept, saying where it was cut."""
    text = text.rstrip().replace("\n", " ")
    return text if len(text) <= width else text[:width - 3] + "..."


def one(text: str) -> str:
    """The mail's words in one line."""
    return " ".join(text.split())


def wrapped(text: str, indent: int) -> list[str]:
    """A long line wrapped at WIDTH, its continuation under its first word."""
    return textwrap.wrap(" ".join(text.split()), WIDTH, initial_indent=" " * indent,
                         subsequent_indent=" " * (indent + 2), break_on_hyphens=False) or [""]


def _figure(value: float) -> str:
    """A figure as the mail wrote it, less trailing zeros (65264.50: 65264.5)."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.10g}"


def claim_lines(experiment: Experiment, verbose: bool = False) -> Iterator[str]:
    """The experiment's [[claims.row]] as the plan shows them: each row's
    figures and the workload and metric that check it; the rows no workload
    checks after them, under each reason once."""
    claims = experiment.claims
    if claims is None or not claims.row:
        yield "claims: none read (the report shows iolab's deltas alone)"
        return
    checked = [row for row in claims.row if row.workload]
    yield f"claims: {len(claims.row)} read, {len(checked)} checkable here"
    labels = {id(row): cut(one(row.label), LABEL) for row in claims.row}
    figures = {id(row): f"{_figure(row.before)} -> {_figure(row.after)}{' ' + row.unit if row.unit else ''}"
               + (f" ({row.after / row.before - 1:+.1%})" if row.before else "") for row in claims.row}
    wide = (max(map(len, labels.values())), max(map(len, figures.values())))

    def shown(row: ClaimRow, indent: int, check: str = "") -> Iterator[str]:
        line = f"{' ' * indent}{labels[id(row)]:<{wide[0]}}  {figures[id(row)]:<{wide[1]}}"
        if len(line) + 2 + len(check) <= WIDTH:
            yield f"{line}  {check}".rstrip()
        else:
            yield line.rstrip()
            yield from wrapped(check, indent + 4)
        if verbose and row.source:
            yield cut(f"{' ' * (indent + 2)}| {one(row.source)}")

    for row in checked:
        yield from shown(row, 2, f"checked by {row.workload} {row.metric}")
    reasons: dict[str, list[ClaimRow]] = {}
    for row in claims.row:
        if not row.workload:
            reasons.setdefault(one(row.reason) or "no workload measures it", []).append(row)
    for reason, rows in reasons.items():
        yield from wrapped(f"not checkable here: {reason}", 2)
        for row in rows:
            yield from shown(row, 4)


def unread_lines(read: Reading) -> Iterator[str]:
    """The mail's blocks of figures no claim row came from (iolab.mail.unread), in a line: their lines
    in the mail's file (else in the text read); `iolab mail` lists each with its first line."""
    blocks = placed_in(read.unread, read.mail.text(), (patch.file for patch in read.mail.patches))
    if not blocks:
        return
    named = [b.where for b in blocks]
    spans = ", ".join(f"{b.first_line}-{b.last_line}" + (f" of {name}" if len(set(named)) > 1 else "")
                      for b, name in zip(blocks, named))
    where = f" of {named[0]}" if len(set(named)) == 1 else ""
    yield from wrapped(f"not read: {len(blocks)} block{'s' if len(blocks) > 1 else ''} of figures, lines {spans}"
                       f"{where} (iolab mail lists them; the experiment has [[claims.row]] tables to fill for them)", 2)
