"""Blocks of labelled figures pasted once a side, paired by their labels.

A mail lists what it measured under a line naming each side, the same
labels under both, one figure a line::

    without patch:                      Before:
        Average Files/sec:  96898.0     x86  File Write 1024 bufsize  524708.0 KBps
    with patch:                         After:
        Average Files/sec:  97727.0     x86  File Write 1024 bufsize  569218.0 KBps

A side's line is a heading (a short line ending in a colon, a ``[before]``
bracket, a ``== name ==`` banner or a numbered heading, ``1.Fixed
hsq_depth``) that names a side, or one of two headings that differ in one
word, the word the patches' subjects name being the after side (``Fixed
hsq_depth`` / ``Dynamic hsq_depth`` under "dynamically adjust
hsq_depth"). Within a block, a heading of its own (``1) Sequential
write:``) names the lines under it. A line's figure is its last, at its
end (a unit or a stated delta may follow): the words before it, figures
among them (``1024 bufsize``), are its label; a line of several figures
(``Speed: 168 164 165``, a side's samples) or of a setting (``sync_mod =
1``) is none. Two neighbouring blocks, a side each, pair each label they
both give once.

Two paragraphs of such lines with no heading, the same rows but for one
word each (``... 4k tailpacking)  391696384`` over ``... 4k vanilla)
416079872``), are the sides that word names (``config_rows``). And in any
table, rows of a measure's spread beside its mean are no claim
(``spread_rows``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from iolab.mail.claimed.model import MEAN, NOT_MEASURED, Claim, Unit, aligned, figures, make, number, unit_of
from iolab.mail.claimed.model import SPREAD as _SPREAD
from iolab.mail.claimed.naming import Side, side_of
from iolab.mail.claimed.sides import side_pairs

# a heading's mark: "1.", "2)", "-", "*", a banner's "===", a bracket
_LEAD = re.compile(r"^\s*(?:\d{1,2}[.)]\s*|[-*•]\s+|[=#*~-]{3,}\s*|\[)")
_TAIL = re.compile(r"\s*(?:\]|[=#*~-]{3,})?\s*:?\s*$")
_DELTA = re.compile(r"\s*\(\s*[+-]?~?\d+(?:\.\d+)?\s*%\s*\)\s*$")
_BYTES = re.compile(r"[kKMGT]?i?B(?:ps)?")  # UnixBench's "KBps", a size's "M", "GiB"
_STEM = 5  # a word the subject names when a subject's word begins like it ("Dynamic", "dynamically")


@dataclass
class _Block:
    side: Side | None
    name: str
    at: int
    entries: dict[str, tuple[float, str, str]] = field(default_factory=dict)  # label -> value, unit, line
    twice: set[str] = field(default_factory=set)  # labels given more than once: no pair


def _heading(line: str) -> str | None:
    """A short line of words naming something (``without patch:``, ``[after]``, ``1.Fixed hsq_depth``)."""
    text = line.strip()
    if not text or "|" in text or len(text) > 100 or text[-1] in ".;,?!" or re.search(r":\s*\S", text):
        return None
    led = _LEAD.match(line)
    if not text.endswith(":") and (not led or re.match(r"\s*[-*•]\s", line)) and not text.endswith("]"):
        return None  # a list's item ("- use a new cache") is a heading only with its colon
    name = _TAIL.sub("", _LEAD.sub("", line)).strip()
    if not re.search(r"[A-Za-z]", name) or len(name.split()) > 8 or _entry(name) is not None:
        return None
    return name


def _entry(line: str, bare: bool = False) -> tuple[str, float, str] | None:
    """A line's label, its figure (its last, at its end) and the unit after it (a figure with no
    unit only when bare allows it)."""
    if "|" in line or NOT_MEASURED.match(line):
        return None  # a pipe table's row is the pipes' reader's; a test suite's totals measure nothing
    tokens = _DELTA.sub("", line).replace(":", " : ").split()
    unit = ""
    if len(tokens) >= 2 and number(tokens[-1]) is None and (unit_of(tokens[-1]) or _BYTES.fullmatch(tokens[-1])):
        unit = tokens.pop()
    glued = re.fullmatch(r"(~?\d[\d,]*(?:\.\d+)?)([A-Za-zµ]+/[A-Za-z]+|[A-Za-z]{2,})", tokens[-1]) if tokens else None
    if glued and not unit and unit_of(glued.group(2)):  # "165.67MB/S"
        tokens[-1:], unit = [glued.group(1)], glued.group(2)
    value = number(tokens[-1]) if tokens else None
    head = [t for t in tokens[:-1] if t != ":"]
    words = " ".join(head)
    if value is None or not head or words.count("(") > words.count(")") or number(tokens[-2]) is not None \
            or tokens[-2] in ("=", "==", "±") or not re.search(r"[A-Za-z]{2}", words):
        return None  # several figures, a setting, a figure in parentheses, a series' sample ("1s: 100 MB/s")
    said = figures(f"{tokens[-1]} {unit}") if unit else []
    if len(said) == 1 and said[0][1][1] != "ratio":
        value = said[0][0]  # "596 KIOPS": 596000 IOPS, as every other form reads it
    elif not unit and not bare and not re.search(r"\d[kKMG]$", tokens[-1]) and not _label_unit(" ".join(head)):
        return None  # a figure with no unit ("uncached 0"): a setting as often as a measure
    return " ".join(head).rstrip("=").strip(), value, unit


def _label_unit(label: str) -> Unit | None:
    """The unit a label names by a word of its own (``Average Files/sec``, ``create (files/s)``), not
    within a name (``LOGS_PER_SEC 16`` is a setting a second, ``worst_wait_ms`` the sides' reader's)."""
    return next((found for word in re.findall(r"[\w/µ]+", label) if "_" not in word
                 for found in [unit_of(word)] if found is not None), None)


def _sides(names: list[str], about: list[str]) -> dict[str, Side]:
    """Of headings that name no side, two that differ in one word: the one whose word the subjects
    name is after, the other before."""
    words = [n.split() for n in dict.fromkeys(names)]
    if len(words) != 2 or len(words[0]) != len(words[1]):
        return {}
    apart = [k for k, (a, b) in enumerate(zip(*words)) if a.lower() != b.lower()]
    if len(apart) != 1:
        return {}
    subject = " ".join(about).lower()
    said = [re.search(rf"(?<![a-z]){re.escape(w[apart[0]][:_STEM].lower())}", subject) is not None for w in words]
    if said.count(True) != 1 or len(words[0][apart[0]]) < _STEM or len(words[1][apart[0]]) < _STEM:
        return {}
    after = said.index(True)
    return {" ".join(words[after]): "after", " ".join(words[1 - after]): "before"}


def _blocks(lines: list[str], about: list[str]) -> list[_Block]:
    """The blocks under each heading that names a side, with the entries under them."""
    heads = {k: name for k, line in enumerate(lines) if (name := _heading(line)) is not None}
    numbered = {k: re.sub(r"\(.*", "", name).strip() for k, name in heads.items()
                if _LEAD.match(lines[k]) and not lines[k].rstrip().endswith(":")}
    said = _sides(list(numbered.values()), about)  # "Fixed" / "Dynamic" where the subject adjusts dynamically
    named = {k: said.get(numbered.get(k, "")) or side_of(name) for k, name in heads.items()}
    out: list[_Block] = []
    current: _Block | None = None
    sub = ""
    for k, line in enumerate(lines):
        if named.get(k) is not None:
            current, sub = _Block(named[k], heads[k], k), ""
            out.append(current)
        elif current is None:
            continue
        elif k in heads:
            sub = heads[k]
        elif len(line.split()) >= 8 and not re.search(r"\d\s*\S*\s*$", line) or k - current.at > 60:
            current = None  # a sentence: the block's end
        elif (found := _entry(line)) is not None:
            label = f"{sub}: {found[0]}" if sub else found[0]
            if label in current.entries:
                current.twice.add(label)
            current.entries[label] = (found[1], found[2], line.strip())
    return [b for b in out if b.entries]


def block_pairs(lines: list[str], about: list[str] | None = None) -> list[Claim]:
    """Each label's figure in a before block against the same label's in the after block next to it."""
    blocks = _blocks(lines, about or [])
    if len(blocks) < 2:
        return []
    read = {(c.before, c.after) for c in side_pairs(lines)}  # blocks the sides' reader reads are its own
    out: list[Claim] = []
    k = 0
    while k + 1 < len(blocks):
        first, second = blocks[k], blocks[k + 1]
        k += 1
        if {first.side, second.side} != {"before", "after"}:
            continue
        k += 1  # a block pairs once: "without", "with", then "without" again opens the next pair
        before, after = (first, second) if first.side == "before" else (second, first)
        out += [c for c in _pairs(before, after) if (c.before, c.after) not in read]  # the sides' rows are theirs
    return out


def _pairs(before: _Block, after: _Block) -> list[Claim]:
    """Each label both blocks give once: its figure before and after."""
    out = []
    averaged = any(MEAN.search(label) for label in before.entries)
    for label, (a, unit, line) in before.entries.items():
        if label not in after.entries or label in before.twice | after.twice or averaged and _SPREAD.search(label):
            continue  # the samples' spread where the block gives their mean: the mean is the claim
        b, other, source = after.entries[label]
        found = unit_of(unit or other) or _label_unit(label.split(":")[-1]) or _label_unit(label)
        b = aligned(b, unit_of(other), unit_of(unit)) if unit and other else b  # "980 MiB/s" / "1.2 GiB/s"
        claim = make(label, a, b, found, None, "", f"{before.name}: {line} / {after.name}: {source}")
        out.append(replace(claim, sides="names"))
    return out


def spread_rows(claims: list[Claim]) -> list[Claim]:
    """Of one table's rows, those that describe a measure's samples (``write_lat_ns_max``,
    ``frag_pct_p99``, ``max_commit_ms``) where the table gives the same measure's mean
    (``write_lat_ns_mean``, ``avg_commit_ms``): the mean is the claim, they are not, unless the tool
    marks the row's change significant (fsperf's ``-10.29% *``)."""
    words = {k: re.split(r"[_\s]+", c.label.lower()) for k, c in enumerate(claims)}
    means = {" ".join("~" if MEAN.fullmatch(w) else w for w in ws) for ws in words.values()}
    return [c for k, c in enumerate(claims)
            if any(_SPREAD.fullmatch(w) for w in words[k]) and not re.search(r"%\s*\*\s*$", c.source)
            and " ".join("~" if _SPREAD.fullmatch(w) else w for w in words[k]) in means]


def _paragraphs(lines: list[str]) -> list[list[tuple[str, float, str, str]]]:
    """Runs of two lines or more, each one labelled figure (label, figure, unit, line)."""
    out: list[list[tuple[str, float, str, str]]] = []
    run: list[tuple[str, float, str, str]] = []
    for line in [*lines, ""]:
        found = _entry(line, bare=True) if line.strip() else None
        if found is not None:
            run.append((*found, line.strip()))
            continue
        if len(run) >= 2:
            out.append(run)
        run = []
    return out


def _word_apart(mine: list[str], theirs: list[str]) -> tuple[str, str, str] | None:
    """Two paragraphs' labels, row by row, that differ in one word each, the same word in every row of
    a paragraph (``(erofs, lz4hc,9 4k tailpacking)`` / ``(erofs, lz4hc,9 4k vanilla)``): the two words
    and the rows' position of it."""
    words: set[tuple[str, str, int]] = set()
    for a, b in zip(mine, theirs):
        x, y = a.split(), b.split()
        apart = [k for k, (p, q) in enumerate(zip(x, y)) if p != q]
        if len(x) != len(y) or len(apart) != 1:
            return None
        words.add((x[apart[0]].strip("(),:"), y[apart[0]].strip("(),:"), apart[0]))
    return (*list(words)[0][:2], "") if len({w[:2] for w in words}) == 1 else None


def config_rows(lines: list[str], about: list[str] | None = None) -> list[Claim]:
    """Two paragraphs of labelled figures, the same rows in each but for one word that names each
    paragraph's side (``... 4k tailpacking)  391696384`` over ``... 4k vanilla)  416079872``): a
    vanilla, base or stock word is before, the other after (or the one the subjects name)."""
    out: list[Claim] = []
    found = _paragraphs(lines)
    for mine, theirs in zip(found, found[1:]):
        apart = _word_apart([r[0] for r in mine], [r[0] for r in theirs]) if len(mine) == len(theirs) else None
        if apart is None:
            continue
        sides = [side_of(apart[0]), side_of(apart[1])]
        said = _sides([apart[0], apart[1]], about or []) if sides == [None, None] else {}
        sides = [s or said.get(w) for s, w in zip(sides, apart[:2])]
        if None in sides and set(sides) - {None}:
            sides = [s or ("after" if "before" in sides else "before") for s in sides]
        if set(sides) != {"before", "after"}:
            continue
        before, after = (mine, theirs) if sides[0] == "before" else (theirs, mine)
        word = apart[0] if sides[0] == "before" else apart[1]
        for (label, a, unit, line), (_, b, other, source) in zip(before, after):
            named = re.sub(rf"\s*{re.escape(word)}", "", label)
            b = aligned(b, unit_of(other), unit_of(unit)) if unit and other else b
            claim = make(named, a, b, unit_of(unit or other), None, "", f"{line} / {source}")
            out.append(replace(claim, sides="names"))
    return out
