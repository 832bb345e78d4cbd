"""Which side of a measurement a name says: before the change or after it.

``Baseline``, ``w/o patch``, ``native kernel``, ``6.15.1``, ``Bad:`` are
before; ``With this patch``, ``modified``, ``6.15.1+revert``, ``Fixed:``
are after; ``for-next`` or ``C6 enabled`` name neither. Rows and tables
use it to find their two sides (``Read (Vanilla)`` / ``Read (Patched)``),
and of two variants the one the text says the change brings is after.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

Side = Literal["before", "after"]

BEFORE = re.compile(r"(?<![\w/+-])(before|baseline|base|vanilla|unpatch(?:ed)?|original|orig|stock|old|w/o|without|"
                     r"nofix|native|mainline|upstream|unmodified|reference|default|bad|current|existing|previously|formerly)(?![\w/-])|"
                     r"^\s*disabled\b", re.I)
AFTER = re.compile(r"(?<![\w/-])(after|patched|patch(?:es|set)?|series|w/|modified|new|fix(?:ed)?|"
                    r"revert(?:ed)?|applied|proposed|optimi[sz]ed)(?![\w/-])|^\s*(?:with|enabled|enabling)\b", re.I)
# a kernel or a baseline plus something, or anything plus a change: "t/io_uring + nullblk" is neither
_PLUS = re.compile(r"(?:\d|-git|\b(?:base(?:line)?|vanilla|mainline|stock|upstream|next|kernel))\s*\+\s*[A-Za-z]|"
                   r"\+\s*(?:this|the|patch|series|fix|revert|change|commit)", re.I)
_NEGATED = re.compile(r"(?<![\w/-])(w/o|without|before|unpatched|no|not)(?![\w/-])", re.I)


def side_of(name: str) -> Side | None:
    """Which side a label names: ``Baseline``, ``w/o patch``, ``native kernel`` (before);
    ``With this patch``, ``modified``, ``6.15.1+revert`` (after); None for neither."""
    text = re.sub(r"^(with(?:out)?|w/o|w/)(?=patch|fix|change|series)", r"\1 ", name.strip().strip("[]():"), flags=re.I)
    if re.fullmatch(r"(?:with\s+)?(?:this|the)?\s*commit", text, re.I):
        return "after"  # "mainline: 513MiB/s" / "commit: 633MiB/s": the commit the mail is
    before, after = BEFORE.search(text), AFTER.search(text)
    if re.fullmatch(r"(?:no|non|not|pre)[\s-]*(?:the\s+)?(?:patch(?:es|ed|set)?|series|fix(?:ed)?)", text, re.I):
        return "before"  # "no patch", "non-patched", "pre-patch"
    if re.fullmatch(r"post[\s-]*(?:patch(?:es|ed|set)?|series|fix)", text, re.I):
        return "after"
    if re.fullmatch(r"with\s+[\w/+. -]{1,40}?\s+(?:disabled|off|turned\s+off)", text, re.I):
        return "before"  # "With async dirops disabled" against "With async dirops enabled": the feature off
    if _PLUS.search(text) and not _NEGATED.search(text):  # "6.15.1+revert", "base + patch", "v6.12 + this series"
        return "after"
    if before and after:
        return "before" if _NEGATED.search(text) else "after"
    return "before" if before else "after" if after else None


def row_sides(first: str, second: str) -> tuple[int, int] | None:
    """Which of two row labels is before and which after (0 or 1 each), when they are the
    two sides: ``native kernel`` / ``modified``, ``6.15.1`` / ``6.15.1+revert``; else None."""
    a, b = first.strip().rstrip(":").strip(), second.strip().rstrip(":").strip()
    for k, (short, long) in enumerate(((a, b), (b, a))):
        rest = long[len(short):]
        side = side_of(rest) or side_of(rest.lstrip("-_. ")) or \
            ("after" if rest == "+" and re.fullmatch(r"v?\d+\.\d+[\w.-]*", short) else None)  # "5.15-patched", "6.10+"
        if long.startswith(short) and long != short and side is not None:
            longer = 1 - k
            return (1 - longer, longer) if side == "after" else (longer, 1 - longer)
    sides = [side_of(a), side_of(b)]
    if set(sides) == {"before", "after"}:
        return (0, 1) if sides[0] == "before" else (1, 0)
    return None


def pair_columns(columns: list[tuple[int, Side, str]]) -> list[tuple[int, int, str]]:
    """Before and after columns (index, side, key) paired: by their key, else each before with the
    next after to its right (``base  patched  base  patched``), else with the one after to its left."""
    pairs = []
    for c, side, key in columns:
        if side != "before":
            continue
        same = [a for a, s, k in columns if s == "after" and k == key and a != c]
        later = [a for a, s, _ in columns if s == "after" and a > c]
        earlier = [a for a, s, _ in columns if s == "after" and a < c]  # "patched  base": the after first
        partner = same[0] if key and same else later[0] if later else earlier[-1] if len(earlier) == 1 else None
        if partner is not None:
            pairs.append((c, partner, key))
    return pairs


def column_pairs(names: list[str]) -> list[tuple[int, int, str]]:
    """A header's before and after columns, paired (``4k base  4k patched  64k base  64k patched``:
    by what is left of each name without its side's words, ``4k`` and ``64k``); two names that
    are a kernel and the kernel with the change (``6.12``, ``6.12+patch``) are a pair too."""
    columns = [(k, side, unsided(name)) for k, name in enumerate(names) for side in [side_of(name)] if side]
    pairs = pair_columns(columns)
    if not pairs and len(names) == 2:
        order = row_sides(*names)
        pairs = [(order[0], order[1], "")] if order else []
    return pairs


def unsided(label: str) -> str:
    """A label without its sides' words (``Read (Vanilla)``: ``Read``)."""
    return " ".join(AFTER.sub(" ", BEFORE.sub(" ", label)).replace("(", " ").replace(")", " ").split())


def side_groups(labels: list[str]) -> list[tuple[str, int, int]]:
    """Rows that are the two sides of one measure, paired by what is left of their labels
    without the side's words (``Read (Vanilla)`` / ``Read (Patched)``: ``("Read", 0, 1)``)."""
    keyed: dict[str, dict[Side, int]] = {}
    for k, label in enumerate(labels):
        side = side_of(label)
        if side is None:
            continue
        key = unsided(label)
        if side in keyed.setdefault(key, {}):
            return []  # two rows of one side: not a pair of sides
        keyed[key][side] = k
    return [(key, d["before"], d["after"]) for key, d in keyed.items() if len(d) == 2]


_INTRODUCED = r"(?:this (?:patch|series)|introduc\w*|adds?|implement\w*|support\w*|use of|offload\w*|enabl\w*)"


@lru_cache(maxsize=4)
def _spans(text: str) -> str:
    """The parts of a text that say what a change brings: each introducing word and what follows it,
    found once per text (a reader asks of many names)."""
    return "\n".join(m.group(0) for m in re.finditer(rf"{_INTRODUCED}[^.]{{0,80}}", text, re.I))


def introduced(names: list[str], lines: list[str], text: str = "") -> int | None:
    """Which of a few variants the text says the change brings (``This patch introduces the use of
    the Intel QAT``, ``This patchset implements io_uring passthrough`` for ``passthru``): its
    index, when exactly one is said. A name of more than five letters is said by a word it
    begins like (``passthru``, ``passthrough``). ``text``: the lines joined, when the caller has them."""
    said = introduced_all(names, lines, text)
    return said[0] if len(said) == 1 else None


def introduced_all(names: list[str], lines: list[str], text: str = "") -> list[int]:
    """Each of the variants the text says the change brings (``this patch introduces three balancing
    methods: rotation, latency, and devid``), by index."""
    spans = _spans(text or " ".join(lines))
    said = []
    for k, name in enumerate(names):
        stem = re.escape(name) + r"\b" if len(name) <= 5 else re.escape(name[:5]) + r"[\w-]*"
        if name and re.search(rf"{_INTRODUCED}[^.]{{0,60}}(?<![\w-]){stem}", spans, re.I):
            said.append(k)
    return said


def defined_sides(labels: list[str], lines: list[str]) -> dict[str, Side]:
    """Labels the prose defines as a side (``A is stock nfsd-testing; B is the same plus this
    series``): each label's side, for those the text says."""
    text = " ".join(lines)
    out: dict[str, Side] = {}
    for label in labels:
        said = re.search(rf"(?<![\w-]){re.escape(label)}\s+(?:is|are|was|means)\s+([^.;:]{{1,60}})", text) \
            if label.strip() else None
        side = side_of(said.group(1)) if said else None
        if side is not None:
            out[label] = side
    return out


# what a patch does to a thing, in its subject or a sentence of its own ("xfs: drop async cache
# flushes", "This patch removes the lock"): what it drops is the before side, what it brings the after
_DROPS = r"(?:drop|remov|avoid|disabl|kill|eliminat|revert|get\s+rid\s+of|stop\s+using|no\s+longer\s+us)"
_BRINGS = r"(?:add|us(?=e|ing)|enabl|introduc|implement|switch\w*\s+to|convert\w*\s+to)"
_DOES = re.compile(rf"(?:^subject:.*?|\b(?:this|the)\s+(?:patch|series|patchset|change|commit)\s+)\b"
                   rf"(?:(?P<drops>{_DROPS})|(?P<brings>{_BRINGS}))(?:e|es|ed|s|ing)?\s+(?:the\s+|all\s+|an?\s+)?"
                   rf"(?P<name>[\w/+-]+)", re.I)


_REACH = 200


def patch_side(name: str, lines: list[str]) -> Side | None:
    """The side a column or row is by what the patch says it does to what the name names: drops,
    removes, avoids or disables it (before), or adds, uses, enables or introduces it (after)."""
    said: set[Side] = set()
    for line in lines[:_REACH]:  # the subjects, then the description's opening: a table's each name asks
        for found in _DOES.finditer(line) if name.strip() else ():
            if found.group("name").lower() == name.strip().lower():
                side: Side = "before" if found.group("drops") else "after"
                said.add(side)
    return said.pop() if len(said) == 1 else None


_OFF, _ON = ("off", "0", "false", "no", "disabled", "disable", "without", "w/o", "default", "noop", "never"), \
    ("on", "1", "true", "yes", "enabled", "enable", "with", "w/", "always")


def switched(first: str, second: str) -> tuple[Side, Side] | None:
    """Two names of one thing switched off and on (``nowait-off`` / ``nowait-on``, ``dax=0`` /
    ``dax=1``, ``dax=never`` / ``dax=always``, ``no-cache`` / ``cache``, ``nodiscard`` / ``discard``): the off one is before, the on one after (an option or a
    feature the change brings, against its default)."""
    words = [[w for w in re.split(r"[-_=.:\s]+", n.strip().lower()) if w] for n in (first, second)]
    if words[0] == words[1]:
        return None
    for k, (mine, theirs) in enumerate((words, words[::-1])):
        if len(mine) == len(theirs):
            apart = [(a, b) for a, b in zip(mine, theirs) if a != b]
            if len(apart) == 1 and (apart[0][0] in _OFF and apart[0][1] in _ON or apart[0][0] == "no" + apart[0][1]):
                return ("before", "after") if k == 0 else ("after", "before")
        elif len(mine) == len(theirs) + 1 and mine[0] in _OFF[3:] and mine[1:] == theirs:  # "no-cache" / "cache"
            return ("before", "after") if k == 0 else ("after", "before")
    return None
