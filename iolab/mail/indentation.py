"""The indentation of a repaired hunk's own lines: the lines the source cannot give.

A web archive's copy collapses runs of tabs and spaces, so a line the
source does not have (an added line of a patch not yet in it, a removed
line of one that is) keeps only the mail's words. Its indentation is
inferred as the source's neighbours suggest: as the line it replaces, else
as the statement above it ends (one level in after '{', two after an
unfinished line, out again after the one statement of an if without
braces), one level out for a line starting '}'.
"""

from __future__ import annotations

import re

from iolab.mail.copies import Kind, Line, Side

CONTROL = re.compile(r"^(\}\s*)?(if|for|while|else|switch)\b")  # a line that opens a C control statement


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())]


def _statement_indent(out: list[Line], own: Kind) -> str | None:
    """The indentation of the line after the statement the last line of
    ``out`` (on this side) ends: the statement's first line's, one level out
    after the single statement of an if/for/while/else without braces, one
    level in after a line ending '{', two in after an unfinished line."""
    side = [x.text for x in out if x.kind in ("context", own) and x.text.strip()]
    if not side:
        return None
    last = side[-1].strip()
    balance = 0
    first = len(side) - 1
    for k in range(len(side) - 1, max(-1, len(side) - 12), -1):  # back to the statement's first line
        balance += side[k].count(")") - side[k].count("(")
        first = k
        above = side[k - 1].strip() if k > 0 else ";"
        if balance <= 0 and (above.endswith((";", "{", "}", ":", "*/")) or above.startswith("#")):
            break
    indent = _indent(side[first])
    if last.endswith("{"):
        return indent + "\t"
    if balance < 0 or last.endswith(("&&", "||", ",", "=", "?", "+", "-", "|", "&")):
        return indent + "\t\t"
    if CONTROL.match(side[first].strip()) and not last.endswith((";", "}")):
        return indent + "\t"  # the one statement of an if/for/while without braces follows
    if first > 0 and last.endswith(";"):
        opener = side[first - 1].strip()
        if CONTROL.match(opener) and not opener.endswith((";", "{", "}")):
            return _indent(side[first - 1])
    return indent


def indented(lines: list[Line], side: Side) -> list[Line]:
    """The mail's own lines indented as the source's lines would be: as the
    line they replace (the k-th removed line of a run against the k-th
    added line), else as the statement above suggests (_statement_indent),
    one level out for a line starting '}'."""
    own: Kind = "added" if side == "old" else "removed"
    other: Kind = "removed" if side == "old" else "added"
    out: list[Line] = []
    for n, line in enumerate(lines):
        if line.exact or line.kind != own or not line.text:
            out.append(line)
            continue
        text = line.text.strip()
        partner = _partner(lines, n, own, other)
        if partner is not None:
            indent = _indent(partner)
        else:
            found = _statement_indent(out, own)
            following = next((x.text for x in lines[n + 1:] if x.kind in ("context", own) and x.text.strip()), "")
            indent = found if found is not None else _indent(following)
            if text.startswith("}") and indent.endswith("\t"):
                indent = indent[:-1]
        out.append(Line(line.kind, indent + text, False))
    return out


def _partner(lines: list[Line], n: int, own: Kind, other: Kind) -> str | None:
    """The exact line of the other kind at the same place in a run of
    removed lines next to a run of added ones (a line and its replacement)."""
    start = n
    while start > 0 and lines[start - 1].kind == own:
        start -= 1
    end = n
    while end < len(lines) and lines[end].kind == own:
        end += 1
    if end < len(lines) and lines[end].kind == other:
        run_end = end
        while run_end < len(lines) and lines[run_end].kind == other:
            run_end += 1
        run = lines[end:run_end]
    elif start > 0 and lines[start - 1].kind == other:
        run_start = start
        while run_start > 0 and lines[run_start - 1].kind == other:
            run_start -= 1
        run = lines[run_start:start]
    else:
        return None
    k = n - start
    if k < len(run) and run[k].exact and run[k].text.strip():
        return run[k].text
    return None

