"""A line of a table read as a row: its label, its figures (each with the unit
written after it), the mail's stated delta, and cells of named figures.

``BW (MB/s)  4333 ± 27  4374 ± 34  +0.9%``: label ``BW (MB/s)``, figures
4333 and 4374 (a spread after ``±`` skipped), delta ``+0.9%``; a unit
written onto its figure (``8.2ms``, ``1203MiB/s``) is apart;
``r=27.5GiB/s,w=3125MiB/s`` is a cell of named figures; time(1)'s
``1m2.934s`` is seconds. Words after the figures make a sentence, not a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iolab.mail.claimed.model import NOT_MEASURED, NOT_TABLE, PERCENT, SUFFIX, number, unit_of
from iolab.mail.claimed.naming import row_sides, side_of

# a box drawn in Unicode is the same table as one drawn in ASCII: its lines and corners as | - = +
_BOX = str.maketrans({**dict.fromkeys("│┃║╎╏┆┇┊┋", "|"), **dict.fromkeys("─━╌╍┄┅┈┉", "-"), "═": "=",
                     **dict.fromkeys("┌┐└┘├┤┬┴┼┏┓┗┛┣┫┳┻╋╔╗╚╝╠╣╦╩╬╒╕╘╛╞╡╤╧╪╓╖╙╜╟╢╥╨╫", "+")})

_FACTOR = re.compile(r"^\(?[+-]?~?\d+(?:\.\d+)?x\)?$")
_MARK = re.compile(r"^[*†#]+$|^\((?:[+-]?~?\d+(?:\.\d+)?%|[~\w\s.+-]*(?:faster|slower|better|worse))\)?$")
KEYED = re.compile(r"\b[a-z]{2,}=\s*\d[^,\s]*,\s")  # fio's "min=4, max=241, avg=99.81"


@dataclass(frozen=True)
class Row:
    label: str
    values: tuple[tuple[float, str], ...]  # each figure and the unit written after it
    stated: str
    text: str
    tags: tuple[str, ...] = ()  # each figure's name in a cell of named figures ("r=12.3GiB/s,w=3125MiB/s")
    deltas: tuple[tuple[int, str], ...] = ()  # each delta as written, after how many figures


_SIGN_APART = re.compile(r"(?<=\S)\s+([+-])\s+(?=\d+(?:\.\d+)?%(?:\s|$))")
_SPREAD = re.compile(r"^\((\d+(?:\.\d+)?)\)$")  # "1152920 (7453)": a figure's spread, bare, in parentheses
_CELL_DELTA = re.compile(r"(?<=[\d\s])\(\s*([+-]?\d+(?:\.\d+)?%)\s*\)")
_GLUED = re.compile(r"([+-]?\d[\d,]*(?:\.\d+)?)([kKMG]?)([A-Za-zµ/]+)")


def _tokens(line: str) -> list[str]:
    """A row's words; a unit written onto its figure ("8.2ms", "1203MiB/s") and a cell of
    named figures ("r=27.5GiB/s,w=3125MiB/s": "r=", "27.5", "GiB/s", ...) apart."""
    tokens = []
    line = _SIGN_APART.sub(r" \1", line)  # "162K  + 4.5%": the delta's sign written apart from it
    for word in line.replace("±", " ± ").split():
        inner = re.fullmatch(r"\((\d[\d,]*(?:\.\d+)?)([kKMG]?[A-Za-zµ/]+)\)", word)
        word = inner.group(1) + inner.group(2) if inner and unit_of(inner.group(2)) else word  # "(48.1MiB/s)"
        named = re.fullmatch(r"(?:[A-Za-z]\w*=[^,=\s]+,?)+", word)
        parts = re.findall(r"([A-Za-z]\w*=)([^,=\s]+)", word) if named else [("", word)]
        for tag, token in parts:
            tokens += [tag] if tag else []
            glued = _GLUED.fullmatch(token)
            figure, prefix, unit = glued.groups() if glued else ("", "", "")
            timed = re.fullmatch(r"(\d+)m(\d+(?:\.\d+)?)s", token)  # time(1)'s "1m2.934s"
            if timed:
                tokens += [f"{int(timed.group(1)) * 60 + float(timed.group(2)):.6g}", "s"]
            elif glued and prefix and unit_of(unit) and unit_of(unit) == unit_of(prefix + unit):  # "562KIOPS"
                tokens += [figure + prefix, unit]
            elif glued and unit_of(prefix + unit):  # "2874MiB/s": the M is the unit's
                tokens += [figure, prefix + unit]
            else:
                tokens.append(token)
    return tokens


def _skip_spread(tokens: list[str], i: int) -> int:
    """The token after a spread ("± 27", "± 59 k", "± 0.8 us")."""
    i += 2
    if i < len(tokens) and tokens[i].lower() in SUFFIX:
        i += 1
    if i < len(tokens) and unit_of(tokens[i]) and number(tokens[i]) is None and not PERCENT.match(tokens[i]):
        i += 1
    return i


def _rate_after(tokens: list[str], i: int) -> bool:
    """A rate's or a bandwidth's unit after token i ("774 MB/s"): a figure even where a label would be."""
    unit = unit_of(tokens[i + 1]) if i + 1 < len(tokens) and number(tokens[i + 1]) is None else None
    return unit is not None and unit[1] in ("rate", "bandwidth")


def _shares(tokens: list[str]) -> list[str]:
    """A row of words then two shares alone (``compression ratio  20.49%  16.9%``): each share a figure
    in %, not the mail's delta (a signed one, ``+5%``, stays a delta)."""
    count = 0
    while count < len(tokens) and re.fullmatch(r"\d+(?:\.\d+)?%", tokens[len(tokens) - 1 - count]):
        count += 1
    head = tokens[:len(tokens) - count]
    if count != 2 or not head or any(number(t) is not None or PERCENT.match(t) for t in head):
        return tokens
    return head + [part for t in tokens[len(head):] for part in (t[:-1], "%")]


def _setting(tokens: list[str], i: int) -> bool:
    """Whether token i's name and the token after it are a setting (a word, or a bare figure that more
    figures follow), not a named figure (``r=27.5 GiB/s``)."""
    return i + 1 < len(tokens) and (number(tokens[i + 1]) is None or
                                    i + 2 < len(tokens) and number(tokens[i + 2]) is not None)


def read_row(line: str) -> Row | None:
    """A line read as label, figures (each with the unit after it), and a stated delta."""
    cut = _CELL_DELTA.sub(r" (\1)", line)  # "120(+20%)": the cell's delta apart from its figure
    cut = re.sub(r"(?<=\d\s)\(\s+(\d+(?:\.\d+)?)\s*\)", r"(\1)", cut)  # "4056.7 (  5.5)": a spread padded
    remark = re.search(r"\s\(([^()]*\d(?:%|x\b)[^()]*)\)\s*$", cut)  # "101357203 (~2% slower)"
    tokens = _shares(_tokens(cut[:remark.start()] if remark else cut))
    label: list[str] = []
    values: list[tuple[float, str]] = []
    tags: list[str] = []
    deltas: list[tuple[int, str]] = []
    stated = re.sub(r"^~", "", re.findall(r"[+-]?~?\d+(?:\.\d+)?(?:%|x\b)", remark.group(1))[0]) if remark else ""
    tag = ""
    i = 0
    while i < len(tokens):
        token, value = tokens[i], number(tokens[i])
        if token == "±":  # a spread: its figure and unit are skipped
            i = _skip_spread(tokens, i)
            continue
        if token.endswith("=") and label and not values and _setting(tokens, i):
            label.append(token + tokens[i + 1])  # "[resume] image_size=0  5.32s  5.26s": a setting names the row
            i += 1
        elif token.endswith("=") and (values or label):
            tag = token[:-1]
        elif (PERCENT.match(token) or _FACTOR.match(token)) and values:
            stated = stated or token  # the mail's delta: "-14.79%", "3.2x"
            deltas.append((len(values), token))
        elif _MARK.match(token) and values:
            pass  # fsperf's mark of a significant row
        elif token == "--" and label and not label[-1].endswith("="):
            pass  # "base  --  4056.7": a blank cell (the base's own change)
        elif (spread := _SPREAD.match(token)) and values and float(spread.group(1)) < values[-1][0]:
            pass  # "avg (stdev)": a bare figure in parentheses, smaller than the one before it, is its spread
        elif value is not None and not values and label and label[-1].endswith("="):
            label[-1] += token  # "poll=0  410k  78us": the setting's value names the row
        elif value is not None and (values or label or _rate_after(tokens, i)):
            if i + 1 < len(tokens) and tokens[i + 1].lower() in SUFFIX:
                value *= SUFFIX[tokens[i + 1].lower()]
                i += 1
            unit = ""
            if i + 1 < len(tokens) and number(tokens[i + 1]) is None and unit_of(tokens[i + 1]) \
                    and not PERCENT.match(tokens[i + 1]):
                unit = unit_of(tokens[i + 1])[0]  # type: ignore[index]
                i += 1
            values.append((value, unit))
            tags.append(tag)
            tag = ""
        elif not values:
            label.append(token)
        elif label and token == label[0]:
            pass  # "real  0m58.030s  real  1m0.983s": the row's name again, a table side by side
        else:
            return None  # words after the figures: a sentence, not a row
        i += 1
    while any(tags) and not tags[0]:  # "Instance 1  r=12.3GiB/s  r=39.4GiB/s": the 1 names the row
        label.append(f"{values.pop(0)[0]:g}")
        tags.pop(0)
    if not label and not (len(values) >= 2 and all(unit for _, unit in values)):
        return None  # a row without a label only of figures with units: "774 MB/s  858 MB/s (+11%)"
    return Row(" ".join(label), tuple(values), stated, line.strip(), tuple(tags) if any(tags) else (),
                tuple(deltas))


def table_row(text: str) -> Row | None:
    """A line of a table: a label and two or more figures."""
    row = read_row(text) if text and "|" not in text and not NOT_TABLE.match(text) and not KEYED.search(text) \
        and not NOT_MEASURED.match(text) else None
    return row if row and len(row.values) >= 2 else None


# a border whose crossings are another mark than + ("x------x------x", "*=====*=====*")
_CROSSED = re.compile(r"^\s*(?P<x>[xXo*#.])(?:[-=]{2,}(?P=x))+\s*$")


def ascii_box(line: str) -> str:
    """A line of a box drawn in Unicode, or with crossings other than ``+``, as the same line in ASCII."""
    line = line.translate(_BOX)
    crossed = _CROSSED.match(line)
    return line.replace(crossed.group("x"), "+") if crossed else line


def word_sides(first: str, second: str) -> tuple[int, int] | None:
    """Which of two labels is before and which after when the words they differ in name the sides
    (``fio without queue_rqs()`` / ``fio with queue_rqs()``): the words both share at their start and
    end set aside."""
    a, b = first.split(), second.split()
    while a and b and a[0] == b[0]:
        a, b = a[1:], b[1:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if (a, b) == (first.split(), second.split()) or not a or not b:
        return None
    return row_sides(" ".join(a), " ".join(b))


def caption(header: str, text: str, first: str) -> bool:
    """A table's first words line is a caption naming one side (``Results with the patch``) when the
    line under it names the columns (``test  read  write`` over ``job1  100  200``)."""
    return side_of(header) is not None and len(re.split(r"\s{2,}|\t", header.strip())) == 1 and \
        not names_columns(header, first) and names_columns(text, first)


def names_columns(text: str, first: str) -> bool:
    """A line of one word a column over the first row (``test  read  write`` over ``job1  100  200``)."""
    row = table_row(first)
    return row is not None and len(text.split()) == len(row.values) + len(row.label.split()) and \
        not re.search(r"\d", text)


def units_line(text: str) -> bool:
    """A line of units alone, a column each, under a table's header (``(MB/s)    (MB/s)``)."""
    words = text.split()
    return bool(words) and all(unit_of(w.strip("()[]")) is not None for w in words)


def with_units(header: str, units: str) -> str:
    """The header with each of its last columns' names followed by the unit under it."""
    names = [n for n in re.split(r"\s{2,}|\t", header.strip()) if n]
    marks = units.split()
    if len(marks) > len(names):
        return header
    head = names[:len(names) - len(marks)]
    return "  ".join([*head, *(f"{n} {u}" for n, u in zip(names[len(head):], marks))])
