"""The features of a claim row the reader returns, for a learned confidence (bench/mail_confidence.py).

The reader's rules (iolab.mail.claimed) return each row with what they saw of it: the form that
read it and what the form saw of its sides, the unit and its kind, which way is better and where
that came from, the mail's own delta. ``features`` turns a row and its mail into named features
that hold across mails (no slug, no Message-Id, no one mail's figures: buckets of sizes, counts and
shares, the form's name, cues of the mail's text, the lowercased words of the row's label and of the
lines above it); ``Model`` applies a logistic regression's weights over them in plain Python. Tried
as a filter at the reader's end and not taken (docs/claims.md, "Learned confidence tried and not
taken"): it stays here, outside the package, for the bench that judged it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from iolab.mail.claimed import Claim, unit_of
from iolab.mail.claimed.evidence import delta_agrees
from iolab.mail.claimed.misread import _block
from iolab.mail.claimed.model import SPREAD
from iolab.mail.message import Mail

_WORD = re.compile(r"[a-z][a-z]+")
_NUMBER = re.compile(r"(?<![\w.])[+-]?\d[\d,]*(?:\.\d+)?")
TOKEN_PREFIXES = ("label", "head")  # the features that are words: vocabulary chosen in training
HEAD_UP = 12  # how far above a row's line its header may be


@dataclass(frozen=True)
class Context:
    """What a row's features need of its mail: its text's lines, where the cover letter ends (0: no
    cover) and every row the reader returned of it."""

    lines: tuple[str, ...]
    cover_end: int
    rows: tuple[Claim, ...]
    starts: tuple[int | None, ...]  # each row's first line found (None: not found)
    cues: tuple[str, ...]  # the mail's own features, the same for each of its rows


def context(mail: Mail, rows: tuple[Claim, ...] | list[Claim]) -> Context:
    """The context of a mail's rows (``Mail.text`` puts the cover letter first)."""
    lines, rows = tuple(mail.text().splitlines()), tuple(rows)
    starts = tuple(next(iter(found_lines(row, lines)), None) for row in rows)
    return Context(lines, len(mail.cover.splitlines()) if mail.cover else 0, rows, starts, _cues(lines, rows))


_IMPROVES = re.compile(r"\b(?:improv\w*|faster|speed\s?ups?|boost\w*|gains?|reduc\w*|better|saves?|higher|lower)\b",
                       re.I)
_WORSENS = re.compile(r"\b(?:regress\w*|slower|worse|degrad\w*|drops?)\b", re.I)
_SIDE = re.compile(r"\b(?:before|after|baseline|base|patched|unpatched|vanilla|w/o|with(?:out)? (?:the|this) "
                   r"(?:patch|series|change)\w*)\b", re.I)


def _cues(lines: tuple[str, ...], rows: tuple[Claim, ...]) -> tuple[str, ...]:
    """What the mail's text and all its rows say: words of a gain or a loss, how often a side is named,
    and the share of its rows that move their better way and that state their change."""
    text = "\n".join(lines)
    out = ["text:improves" if _IMPROVES.search(text) else "text:no_gain_word",
           *(["text:worsens"] if _WORSENS.search(text) else []),
           f"text_sides:{_bucket(len(_SIDE.findall(text)), (1, 3, 10, 30))}",
           f"mail_better:{_share([_move(r) == 'better' for r in rows if _move(r) is not None])}",
           f"mail_stated:{_share([bool(r.stated) for r in rows])}"]
    return tuple(out)


def _share(flags: list[bool]) -> str:
    """A share as a bucket: "empty" (no flags), "all", "nil" (none of them), else its quarter ("<0.5")."""
    if not flags:
        return "empty"
    part = sum(flags) / len(flags)
    return "all" if part == 1 else "nil" if part == 0 else _bucket(part, (0.25, 0.5, 0.75, 1.0))


def _move(claim: Claim) -> str | None:
    """Whether the row moves its better way ("better", "worse", "flat"; None: no way known)."""
    if claim.better is None:
        return None
    if claim.after == claim.before:
        return "flat"
    return "better" if (claim.after > claim.before) == (claim.better == "higher") else "worse"


def _bucket(value: float, edges: tuple[float, ...]) -> str:
    """The first edge ``value`` is under ("<10"), else the last one's ">=" (">=100")."""
    for edge in edges:
        if value < edge:
            return f"<{edge:g}"
    return f">={edges[-1]:g}"


def _norm(text: str) -> str:
    return " ".join(text.split())


def found_lines(claim: Claim, lines: tuple[str, ...]) -> list[int]:
    """The indexes of the text's lines the row was read from (its ``source``'s parts, `` / `` apart, a
    ``label: `` before a part aside); a part not found is left out."""
    normed = [_norm(line) for line in lines]
    out = []
    for part in claim.source.split(" / "):
        wanted = [w for w in (_norm(part), _norm(part.partition(": ")[2])) if len(w) >= 3]
        k = next((k for w in wanted for k, line in enumerate(normed) if line and (w == line or w in line)), None)
        if k is not None:
            out.append(k)
    return out


def block_of(k: int, lines: tuple[str, ...]) -> tuple[int, int]:
    """The run of lines without a blank one around line ``k``: (first, last + 1), as the reader finds it."""
    return _block(list(lines), k)


def _head(k: int, lines: tuple[str, ...]) -> str:
    """The lines above a row's that name it: its block's first line (a table's header) when the row is
    not that line, and the nearest line with words above the block (a caption)."""
    first, _ = block_of(k, lines)
    head = [lines[first]] if first < k else []
    above = next((lines[j] for j in range(first - 1, max(first - HEAD_UP, -1), -1) if _WORD.search(lines[j].lower())),
                 "")
    return " ".join([*head, above])


def words(text: str) -> list[str]:
    """The lowercased words of a text, once each, in their order (a bag: no figures, no one-letter word)."""
    return list(dict.fromkeys(_WORD.findall(text.lower())))


def _figures(claim: Claim) -> list[str]:
    """What the row's two figures are: their size, sign, whole or not, and the change between them."""
    before, after = claim.before, claim.after
    out = [f"size:{_bucket(math.log10(max(abs(before), abs(after)) or 1e-9), (0, 1, 2, 3, 4, 6))}"]
    out.append("figures:whole" if all(float(x).is_integer() for x in (before, after)) else "figures:fraction")
    if before < 0 or after < 0:
        out.append("figures:negative")
    if not before or not after:
        out.append("change:zero_side")
    elif before == after:
        out.append("change:none")
    else:
        out.append(f"change:{_bucket(abs(math.log(abs(after / before))), (0.02, 0.1, 0.3, 0.7, 1.4, 3))}")
    return out


def _way(claim: Claim) -> list[str]:
    """The unit and its kind, which way is better and whether the unit or the words said it, and whether
    the row moves that way."""
    unit = unit_of(claim.unit) if claim.unit else None
    out = [f"kind:{claim.kind or 'none'}", "unit:written" if claim.unit else "unit:none"]
    if claim.better is None:
        out.append("better:none")
    else:
        out += ["better:unit" if unit and unit[2] == claim.better else "better:words", f"moves:{_move(claim)}"]
    out.append("stated:agrees" if delta_agrees(claim) else "stated:other" if claim.stated else "stated:none")
    return out


def _shape(claim: Claim, ctx: Context, found: list[int]) -> list[str]:
    """Where the row stands in its mail: cover or patch, its line's shape, its block's and its mail's rows."""
    same = sum(r.label == claim.label for r in ctx.rows)
    out = [f"mail_rows:{_bucket(len(ctx.rows), (2, 4, 9, 21, 51))}",
           f"mail_forms:{_bucket(len({r.form for r in ctx.rows}), (2, 3, 4))}",
           "parts:two" if " / " in claim.source else "parts:one", *ctx.cues,
           f"label_repeats:{_bucket(same, (2, 3, 5))}"]
    if not found:
        return [*out, "line:not_found"]
    k = found[0]
    line = ctx.lines[k]
    out.append("place:cover" if k < ctx.cover_end else "place:patch")
    if len(found) > 1:
        out.append(f"apart:{_bucket(abs(found[-1] - k), (1, 2, 4, 10, 30))}")
    first, last = block_of(k, ctx.lines)
    mine = [r for r, start in zip(ctx.rows, ctx.starts) if start is not None and first <= start < last]
    out.append(f"block_better:{_share([_move(r) == 'better' for r in mine if _move(r) is not None])}")
    out += [f"block_rows:{_bucket(len(mine), (2, 4, 9, 21))}", f"block_lines:{_bucket(last - first, (2, 4, 9, 21))}",
            f"line_figures:{_bucket(len(_NUMBER.findall(line)), (2, 3, 4, 7, 12))}",
            f"line_words:{_bucket(len(_WORD.findall(line.lower())), (2, 5, 10, 20))}"]
    if "|" in line:
        out.append("line:pipe")
    if line[:1].isspace():
        out.append("line:indented")
    return out + [f"head:{w}" for w in words(_head(k, ctx.lines))]


def features(claim: Claim, ctx: Context) -> list[str]:
    """The row's named features (each present one counts 1; see the module's text)."""
    sides = claim.sides or "rule"
    out = [f"form:{claim.form or 'none'}", f"sides:{sides}", f"form_sides:{claim.form or 'none'}/{sides}"]
    out += _figures(claim) + _way(claim)
    label = words(claim.label)
    out += [f"label:{w}" for w in label] + (["label_words:none"] if not label else [])
    if SPREAD.search(claim.label):
        out.append("label:spread")
    if "(mean of" in claim.label:
        out.append("label:mean_of")
    return out + _shape(claim, ctx, found_lines(claim, ctx.lines))


@dataclass(frozen=True)
class Model:
    """A logistic regression's weights by feature name, its intercept, and the confidence below which a
    row is dropped (0: none is)."""

    weights: dict[str, float]
    intercept: float
    threshold: float

    def confidence(self, names: list[str]) -> float:
        """The odds the row is real, as a probability in 0..1."""
        z = self.intercept + sum(self.weights.get(name, 0.0) for name in set(names))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
