"""The two sides of a mail's measurement, and the figures pasted under each.

Authors paste a benchmark's output once per kernel: under a label
(``Baseline:`` / ``With this patch:``, ``base: 6.4 Million IOPS`` /
``patch: 6.49 Million IOPS``), a bracket (``[w/o]`` / ``[w]``) or a banner
(``==========for-next==========``). This finds those sides, reads the
figures under each (fio's own lines, dd's summary line, a profile's share
of a function, any figure with its unit) keyed by what they measure, and
pairs the same key's figures before and after, in order. A banner that
names no side (a branch's name) is a side by its order: the first name is
the baseline, unless the text says the change brings the other (``(block)``
/ ``(passthru)`` where "this patchset implements io_uring passthrough").
One line with two clauses (``base IOPS is 562K, patch IOPS is 574K``) and
two lines each ending in its side are read in iolab.mail.claimed.clauses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from iolab.mail.claimed.captions import named_twins, setting_headings, settings_caption, unnamed_befores
from iolab.mail.claimed.model import Claim, Unit, convert, make, unit_of
from iolab.mail.claimed.naming import Side, introduced, side_of, switched, unsided
from iolab.mail.claimed.outputs import FIO_JOB_HEAD, NOISE, Figure, counted, line_figures
from iolab.mail.claimed.told import stated, told

_BANNER = re.compile(r"^\s*[=*#~-]{3,}\s*(?P<name>[^=*#~\s][^=*#~]*?)\s*[=*#~-]{3,}\s*$")
_BRACKET = re.compile(r"^\s*\[\s*(?P<name>[^\]]{1,30}?)\s*\]\s*:?\s*$")
_LABEL = re.compile(r"^\s*(?P<name>(?:\d+\s?[A-Za-z]\w*,?\s+)?[A-Za-z(\[][^:]{0,80}?)\s*:\s*(?P<rest>.*)$")  # "8 jobs, before:"
_OPENING = re.compile(r"^\s*(?P<name>(?:before|after|with|without|baseline|patched|unpatched|vanilla)\b[^:]{0,150}?)"
                      r"\s*(?::|\s-)\s*$", re.I)
# "with this patch (offloading checksum to workqueues)" alone on its line, figures under it
_BARE = re.compile(r"^\s*(?P<name>(?:before|after|with|without|baseline|patched|unpatched|vanilla)\b[^.:;!?=]{0,80})$",
                   re.I)
_COMMA = re.compile(r"^\s*(?P<name>(?:with|without|w/o|before|after)\b[^,，:]{0,40}?)\s*[,，]\s*"
                    r"(?P<rest>(?:[A-Za-z]+\s*[=:]|\d)\S*.*)$", re.I)
# a variant's name in parentheses opening the line of its output or command: "(passthru) read: IOPS=17.2k, ..."
_VARIANT = re.compile(r"^\s*\((?P<name>[A-Za-z][\w/+ -]{0,20})\)\s+(?P<rest>\S.*)$")
# a list item naming a side: "* Without directory shrinking", "- Bounce then zero-copy (patched)"
_ITEM = re.compile(r"^\s*[-*•]\s+(?P<name>[^:=]{1,80}?)\s*$")
_ROUND = re.compile(r"\b(?:round|run|iteration|iter|try|pass|loop)\s*#?\d+\b", re.I)  # a banner naming a run
_LEAD = re.compile(r"^\s*(?:[*#=~]{3,}|[-*•#]|o(?=\s)|\(?\d{1,2}[.)])\s*(?=[A-Za-z(\[])")  # a list's or a comment's mark
_GOOD = re.compile(r"^\s*good\s*:", re.I)  # a bisection's good tree: context, neither side



@dataclass
class Segment:
    side: Side | None
    name: str  # the label, bracket or banner as written
    figures: list[Figure]
    lines: int = 0
    runs: int = 0
    unit: Unit | None = None  # the unit the side's name says its figures are in ("latencies (in usecs)")
    job: str = ""  # the fio job whose output the lines are ("job1: (groupid=0, jobs=1): err= 0: ...")
    op: str = ""  # the direction fio's lines under it are of ("  write: IOPS=..": its lat lines are the write's)


def marker(line: str) -> tuple[Side | None, str, str] | None:
    """(side, name, the rest of the line) when the line opens a side; a banner may name none."""
    banner = _BANNER.match(line)
    if banner:
        return side_of(banner.group("name")), banner.group("name"), ""
    line = _LEAD.sub("", line)  # "******* Without the patchset:", "- Before:", "1) w/o patch"
    bracket = _BRACKET.match(line)
    if bracket:
        name = bracket.group("name")
        side = "after" if name.lower() == "w" else side_of(name)
        return (side, name, "") if side else None
    opening = _OPENING.match(line)
    if opening and side_of(opening.group("name").split(",")[0]):  # "After this submission was merged, ...:"
        return side_of(opening.group("name").split(",")[0]), opening.group("name"), ""
    comma = _COMMA.match(line)  # "with the patch,  IOPS=218k, BW=852MiB/s": a side, then its output on its line
    if comma and side_of(comma.group("name")) and line_figures(comma.group("rest")):
        return side_of(comma.group("name")), comma.group("name"), comma.group("rest")
    variant = _VARIANT.match(line)
    if variant:  # a side by its name, else by which variant the text says the change brings
        return side_of(variant.group("name")), variant.group("name"), variant.group("rest")
    label = _LABEL.match(line)
    name = label.group("name") if label else ""
    # a long caption names its side in its first clause: "For modified 6.1, with all completions in the handler:"
    said = name if len(name.split()) <= 10 else name.split(",")[0] if "," in name else ""
    if label and said and len(said.split()) <= 10 and not NOISE.match(line):
        side = side_of(said)
        return (side, name, label.group("rest")) if side else None
    return None


def _prose(line: str) -> bool:
    """A sentence of the mail's own (the end of a side's pasted output)."""
    text = line.strip()
    return len(text.split()) >= 8 and (text[-1] in ".?!" or not re.search(r"\d", text))


def _continued(lines: list[str], k: int) -> bool:
    """Line k ends a sentence that the line above opened with a side ("Before this was merged, when" /
    "creating 2000 files, the results are:")."""
    above = lines[k - 1].rstrip() if k else ""
    return bool(above) and above[-1] not in ".:" and _OPENING.match(above + ":") is not None \
        and lines[k].rstrip().endswith(":")


def _bare(lines: list[str], k: int) -> tuple[Side | None, str, str] | None:
    """A short line that names a side without a colon, when figures come right under it (under a
    line naming what they are of: ``before`` / ``SEGS_PER_SEC 1`` / ``2556MiB/s``)."""
    text = _LEAD.sub("", lines[k]).rstrip()
    bare = _BARE.match(text)
    name = bare.group("name") if bare else text.strip()
    if len(name.split()) > (10 if bare else 6) or k + 1 >= len(lines) or (not bare and _heading(text) is None):
        return None
    words = name.split()  # a name opens or ends with its side ("Stock kernel", "6.8 + series"), or has a plus
    side = side_of(" ".join(words[:4])) if bare else \
        side_of(words[0]) or side_of(" ".join(words[-2:])) or (side_of(name) if "+" in name else None)
    under = [line for line in lines[k + 1:k + 3] if line.strip()]
    return (side, name, "") if side and under and (line_figures(under[0]) or len(under) > 1 and (
        not re.search(r"[.:]\s*$", under[0]) and line_figures(under[1])) or bare and told(lines, k)) else None


def _item(lines: list[str], k: int) -> tuple[Side | None, str, str] | None:
    """A list item that names a side (in parentheses after its name, or opening it), not a
    sentence, when figures come within the three lines under it."""
    item = _ITEM.match(lines[k])
    name = item.group("name") if item else ""
    if not item or len(name.split()) > 10 or "." in name.split("(")[0]:
        return None  # "- Introduce a framework to track read counts. (New patch)": a changelog's item
    said = re.search(r"\(([^()]+)\)$", name)
    side = side_of(said.group(1)) if said else side_of(name) if _BARE.match(name) else None
    under = [line for line in lines[k + 1:k + 8] if line.strip()][:3]
    return (side, name, "") if side and any(line_figures(line) for line in under) else None


def _heading(text: str) -> str | None:
    """A short line of words alone, a name (``Stock kernel results``, ``next-20250101``), not a sentence."""
    name = text.strip().rstrip(":").strip()
    if not name or len(name.split()) > 6 or name[-1] in ".,;!?" or line_figures(name) or "=" in name:
        return None
    return name


def segments(lines: list[str], about: tuple[str, ...] = ()) -> list[Segment]:
    """The sides in the text, each with the figures under it until the next side,
    a paragraph of prose, or a banner that names no side where others do."""
    files = _files(lines, about)
    markers = [files.get(k) or marker(line) or (marker(lines[k - 1].rstrip() + " " + line.strip())
                                                if _continued(lines, k) else None)
               or _bare(lines, k) or _item(lines, k) or _sentence(lines, k) or settings_caption(lines, k)
               for k, line in enumerate(lines)]
    markers = [None if m and m[1] == "-" and k and _HEADER.match(lines[k - 1]) else m for k, m in enumerate(markers)]
    _row_keys(markers)  # a rule under a table's header ("Operation  Count  AvgLat") is the table's, no banner
    _from_to(lines, markers)
    _and_captions(lines, markers)
    unnamed_befores(lines, markers)  # "... is much worse:" over what "After this fix, the timings are:" shows
    _switch_lines(lines, markers, about)
    setting_headings(lines, markers, about)  # "1. fua_disable = 1" / "2. fua_disable = 0 (default 0)"
    changed = [m[1].strip() for m in markers if m is not None and m[0] == "after"]
    for k, m in enumerate(markers):  # "== v6.12 ==" where "== v6.12 + this series ==" is after: the baseline
        label = _LABEL.match(_LEAD.sub("", lines[k])) if m is None and changed else None  # "v6.2:  write: IOPS=.."
        name = m[1].strip() if m is not None else _heading(_LEAD.sub("", lines[k])) or \
            (label.group("name") if label else None) if changed else None
        if name and (m is None or m[0] is None) and any(c.startswith(name + " ") or c.startswith(name + "+")
                                                        for c in changed):
            markers[k] = ("before", name, m[2] if m else label.group("rest") if label and name == label.group("name")
                          else "")
    out = _cut(lines, markers, True)
    # names that are no sides count only where no side named has figures under it
    return out if any(s.side is not None and s.figures for s in out) else _cut(lines, markers, False)


_HEADER = re.compile(r"^\s*[A-Za-z][\w%/()]*(?:\s{2,}[A-Za-z][\w%/()]*){2,}\s*$")  # three named columns
Marker = tuple[Side | None, str, str] | None
# a file's name opening its line, as grep prints a match in several files ("nowait-off-2.fio:  read: IOPS=..")
_FILE = re.compile(r"^\s*(?P<file>[A-Za-z][\w.+-]*?)\.(?:fio|log|out|txt|json|res)\s*:\s*(?P<rest>\S.*)$")


def _files(lines: list[str], about: tuple[str, ...]) -> dict[int, Marker]:
    """Lines opening with the name of the file they were found in, of two kinds of files (a run's
    number aside: ``base.2.log``): a side each, by a side's word (``default-nullb.1.fio`` /
    ``with-memcpy-page-nullb.1.fio``), or switched off and on (``nowait-off-1.fio`` / ``nowait-on-1.fio``)
    where the subjects name what is switched."""
    found = {k: (re.sub(r"[-_.]?\d{1,3}$", "", m.group("file")), m.group("rest")) for k, line in enumerate(lines)
             if (m := _FILE.match(line)) and line_figures(m.group("rest"))}
    stems = list(dict.fromkeys(stem for stem, _ in found.values()))
    if len(stems) != 2:
        return {}
    sides = [side_of(re.sub(r"[-_.]+", " ", stem)) for stem in stems]  # "stock-run", "with-memcpy-page"
    if sides.count(None) == 1:
        sides = [s or ("after" if "before" in sides else "before") for s in sides]
    if set(sides) != {"before", "after"} and _named_switch(stems, about):
        sides = list(switched(*stems) or sides)
    if set(sides) != {"before", "after"}:
        return {}
    return {k: (sides[stems.index(stem)], stem, rest) for k, (stem, rest) in found.items()}


def _sentence(lines: list[str], k: int) -> Marker:
    """A sentence that opens with a side where the one before it ends, on a line above, and ends in a
    colon over figures (``... a copy operation. Without`` / ``this patch, the cold file reads in`` /
    ``3 seconds:``)."""
    if not lines[k].rstrip().endswith(":") or not lines[k - 1:k] or not lines[k - 1].strip():
        return None
    above = [line.strip() for line in lines[max(0, k - 3):k]]
    while above and not above[0]:
        above.pop(0)
    if "" in above:
        above = above[above.index("") + 1:]
    text = " ".join([*above, lines[k].strip()])
    last = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)[-1]
    return marker(last) if last != text and len(last.split()) <= 25 else None


def _row_keys(markers: list[Marker]) -> None:
    """Labels that name a row, not a side: the same label with its figure under both sides named above
    them (``Before this change:`` / ``with $count == 200000:  165 seconds`` / ``After this change:`` /
    ``with $count == 200000:  149 seconds``)."""
    labelled: dict[str, list[int]] = {}
    for k, m in enumerate(markers):
        if m is not None and m[2].strip():
            labelled.setdefault(m[1].strip(), []).append(k)
    for at in labelled.values():
        between = [m for m in markers[at[0] + 1:at[-1]] if m is not None and m[0] is not None and not m[2].strip()]
        if len(at) > 1 and between:
            for k in at:
                markers[k] = None


_SETTING_TOKEN = re.compile(r"^(?P<name>[A-Za-z][\w-]*)=(?P<value>\w+)[,:]?$")


def _switch_lines(lines: list[str], markers: list[Marker], about: tuple[str, ...]) -> None:
    """Two lines alike but for one setting switched off and on (mkfs's ``... ftype=1, parent=0`` and
    ``... ftype=1, parent=1``), each over figures, where the subjects or the text say the change brings
    what is switched (``enable parent pointers``): the off line is before, the on line after."""
    heads = [k for k, line in enumerate(lines) if markers[k] is None and "=" in line and
             any(line_figures(t) for t in [t for t in lines[k + 1:k + 4] if t.strip()][:1])][:50]
    text = " ".join([*about, *lines])
    for k in heads:
        for j in heads:
            mine, theirs = lines[k].split(), lines[j].split()
            apart = [(a, b) for a, b in zip(mine, theirs) if a != b] if len(mine) == len(theirs) else []
            found = [_SETTING_TOKEN.match(t) for t in apart[0]] if len(apart) == 1 else []
            if len(found) != 2 or not found[0] or not found[1] or found[0]["name"] != found[1]["name"] or \
                    introduced([found[0]["name"]], [], text) is None and not _named_switch([apart[0][0]] * 2, about):
                continue
            sides = switched(found[0]["name"] + "=" + found[0]["value"], found[1]["name"] + "=" + found[1]["value"])
            if sides is not None:
                markers[k] = (sides[0], lines[k].strip().rstrip(":"), "")


_AND = re.compile(r"^\s*and\s+[^:.;]{3,80}:\s*$")  # "and a subsequent cache hot run looks like this:"


def _and_captions(lines: list[str], markers: list[Marker]) -> None:
    """A caption that goes on with the sentence of the side above it (``With this patch, the cold
    case takes:`` ... ``and the cache hot case looks like this:``) opens another case of that side."""
    side: Side | None = None
    for k, line in enumerate(lines):
        m = markers[k]
        if m is not None:
            side = m[0]
        elif side is not None and _AND.match(line) and \
                any(line_figures(t) for t in [t for t in lines[k + 1:k + 8] if t.strip()][:3]):
            markers[k] = (side, line.strip().rstrip(":"), "")


def _from_to(lines: list[str], markers: list[Marker]) -> None:
    """Output pasted between ``... the performance from`` and ``... to`` (a colon or none), figures
    under each: the first is before, the second after."""
    def under(k: int) -> bool:
        return any(line_figures(line) for line in [t for t in lines[k + 1:k + 8] if t.strip()][:3])
    opened = [k for k, line in enumerate(lines) if re.search(r"\bfrom:?\s*$", line) and under(k)]
    closed = [k for k, line in enumerate(lines)  # "to", "... 86% sys time, to:", "without CQE to": figures under it
              if (re.fullmatch(r"\s*to:?\s*", line) or re.search(r"\bto:?\s*$", line)) and under(k)]
    for k in opened[:50]:  # a few such sentences a mail; a hostile one is not read further
        j = next((j for j in closed if j > k), None)
        if j is not None:
            markers[k], markers[j] = ("before", "from", ""), ("after", "to", "")


def _cut(lines: list[str], markers: list[Marker], known: bool) -> list[Segment]:
    """The lines cut at the markers (those naming no side too, unless known) into sides."""
    out: list[Segment] = []
    current: Segment | None = None
    text = " ".join(lines)
    parts = tuple(p for p, said in (("user", r"\buser\s+time"), ("sys", r"\b(?:system|sys)\s+time"))
                  if re.search(said, text, re.I))  # time(1)'s breakdown, claimed where the text speaks of it
    spoken = _spoken(lines)
    for k, line in enumerate(lines):
        opened = markers[k]
        if opened is not None and (opened[0] is not None or not known and opened[1] != "-"):  # a rule: no name
            side, name, rest = opened
            if current is not None and current.name == name and (markers[k - 1] or ("",))[:2] == opened[:2] \
                    and _FILE.match(line):  # the same file's next run, a line of grep's each: the side's samples
                current.figures += [replace(f, line=line, run=current.runs, at=k) for f in line_figures(rest)]
                continue
            current = Segment(side, name, [replace(f, line=line) for f in line_figures(rest)] if rest else [],
                              unit=unit_of(name) or (unit_of(lines[k - 1]) if k else None))
            out.append(current)
            continue
        if current is not None and opened is not None and opened[0] is None and _ROUND.search(opened[1]):
            current.runs += 1  # "*** Executing round 2 ***" within a side: its next run
            continue
        if current is None or opened is not None or current.lines > 80 or _GOOD.match(line):
            current = None
            continue
        following = next((text for text in lines[k + 1:] if text.strip()), "")
        if not line.strip() and current.figures and _prose(following):
            current = None
            continue
        job, op = FIO_JOB_HEAD.match(line), _FIO_OP.match(line)
        current.job = job.group(1) if job else current.job
        current.op = op.group(1).lower() if op else "" if job else current.op
        found = [_keyed(f, current) for f in line_figures(line, parts=parts)
                 if not f.counter or _listed(lines, k) and spoken(f.key)]
        current.runs += not found  # a line without figures ends a run of samples
        current.figures += [replace(f, run=current.runs, at=k, unit=f.unit if f.unit[0] or current.unit is None
                                    else current.unit) for f in found]
        current.lines += 1
    return out


_FIO_OP = re.compile(r"^\s*(read|write|trim|randread|randwrite|mixed)\s*:\s*IOPS=", re.I)
_PER_OP = re.compile(r"^(?:[cs]?lat|bw|iops) avg$")  # fio's lines under a direction's: its latencies, bw and iops


def _keyed(figure: Figure, segment: Segment) -> Figure:
    """A figure of fio's output keyed by its job, and its latencies by the direction they are of
    (a mixed job's ``read:`` and ``write:`` each print their own ``lat (usec): .. avg=``)."""
    if not figure.fio:
        return figure
    key = f"{segment.op} {figure.key}" if segment.op and _PER_OP.match(figure.key) else figure.key
    return replace(figure, key=f"{segment.job} {key}" if segment.job else key)


def measure(figure: Figure) -> str:
    """What a figure measures, whatever unit of its kind a side wrote it in (``bw KiB/s`` and ``bw MiB/s``)."""
    unit, kind = figure.unit[0], figure.unit[1]
    if unit and kind in ("bandwidth", "time") and (figure.key == unit or figure.key.endswith(" " + unit)):
        return figure.key[:-len(unit)] + kind
    return figure.key


def _rows(figures: list[Figure], key: str) -> list[list[Figure]]:
    """A key's figures as rows: those on lines one after the other (one run) are one row's samples."""
    rows: list[list[Figure]] = []
    for figure in (f for f in figures if measure(f) == key):
        if rows and rows[-1][-1].run == figure.run and rows[-1][-1].at != figure.at and not figure.alone:
            rows[-1].append(figure)
        else:
            rows.append([figure])
    return rows


def pair_sides(before: Segment, after: Segment, named: bool) -> list[Claim]:
    """The same key's rows on the two sides, in order (the nth with the nth); a row of samples
    (``1s: ..`` to ``20s: ..``, three runs of time(1)) is claimed by its mean."""
    out = []
    for key in dict.fromkeys(measure(f) for f in before.figures):
        mine, theirs = _rows(before.figures, key), _rows(after.figures, key)
        runs = {f.run for row in mine for f in row}, {f.run for row in theirs for f in row}
        rounds = key in ("real", "user", "sys") and len(mine) == len(theirs) > 1  # time(1) a round, several rounds a side
        if len(mine) > 1 and len(theirs) > 1 and all(f.fio for row in mine + theirs for f in row) \
                and len(runs[0]) == len(runs[1]) == 1 or rounds:  # fio's output twice in a row, not two results
            out += _series(key, [f for row in mine for f in row], [f for row in theirs for f in row])
            continue  # fio run more than once a side: the mean of each side's runs
        for n, (a, b) in enumerate(zip(mine, theirs)):
            if len(a) > 1 or len(b) > 1:
                out += _series(key, a, b)
                continue
            units = a[0].unit[0], b[0].unit[0]
            value = convert(b[0].value, units[1], units[0]) if all(units) else b[0].value  # one unit for both
            if value is None:
                continue
            label = a[0].key + (f" #{n + 1}" if len(mine) > 1 else "") + (f" ({after.name})" if named else "")
            out.append(make(label, a[0].value, value, a[0].unit if units[0] else b[0].unit, a[0].better, "",
                            f"{a[0].line.strip()} / {b[0].line.strip()}"))
    return out


def _series(key: str, mine: list[Figure], theirs: list[Figure]) -> list[Claim]:
    """A series a side without an aggregate row: the claim is the mean of each side's samples."""
    unit = mine[0].unit
    values = [convert(f.value, f.unit[0], unit[0]) for f in theirs]
    if any(v is None for v in values):
        return []
    before = sum(f.value for f in mine) / len(mine)
    after = sum(v for v in values if v is not None) / len(values)
    return [make(f"{mine[0].key} (mean of {len(mine)} and {len(theirs)} samples)", before, after, unit, mine[0].better, "",
                 f"{mine[-1].line.strip()} / {theirs[-1].line.strip()}")]


def side_pairs(lines: list[str], about: tuple[str, ...] = ()) -> list[Claim]:
    """Every after side's figures paired with those of the before side nearest it. ``about``: the
    patches' subjects (of two variants named alike, the one a subject names is after)."""
    found = [s for s in segments(lines, about) if s.figures]
    for segment in found:
        segment.figures = stated(segment.figures)
    neutral = list(dict.fromkeys(s.name for s in found if s.side is None))
    said = introduced(neutral, lines) if len(neutral) == 2 else None  # "implements io_uring passthrough": after
    turned = switched(*neutral) if len(neutral) == 2 and said is None and _named_switch(neutral, about) else None
    said = said if turned is None else turned.index("after")  # "== dax=never ==" / "== dax=always ==" under "dax"
    guessed = {id(s) for s in found if s.side is None} if said is None else set()
    for segment in found:
        if segment.side is None:
            first = neutral[0] if said is None else neutral[1 - said]
            segment.side = "before" if segment.name == first else "after"
    _two_withs(found, lines, about)
    named = len({s.name.lower() for s in found if s.side == "after"}) > 1
    out: list[Claim] = []
    paired: set[int] = set()
    twins = named_twins([s.name for s in found], [s.side for s in found])  # "bind node before:" / "bind node after:"
    for k, j in _blocks(found) or twins:  # "before: cold, hot" then "after: cold, hot": the nth case of each
        out += _ordered(pair_sides(found[k], found[j], named), {id(found[k]), id(found[j])} & guessed)
        paired |= {k, j}
    for k in range(len(found) - 1):  # neighbours first: "with" then "without", then "with" then "without" again
        if k not in paired and {found[k].side, found[k + 1].side} == {"before", "after"} and \
                {measure(f) for f in found[k].figures} & {measure(f) for f in found[k + 1].figures}:
            before, after = (found[k], found[k + 1]) if found[k].side == "before" else (found[k + 1], found[k])
            out += _ordered(pair_sides(before, after, named), {id(before), id(after)} & guessed)
            paired |= {k, k + 1}
    befores = [k for k, s in enumerate(found) if s.side == "before"]
    for k, segment in enumerate(found):  # another variant after the same baseline
        if k in paired or segment.side != "after" or not befores:
            continue
        nearest = min(befores, key=lambda j: (abs(j - k), j > k))
        out += _ordered(pair_sides(found[nearest], segment, named), {id(found[nearest]), id(segment)} & guessed)
    # "(2560 blocks of 4096 bytes)": a setting; 0 on both sides ("cur_commit_ms 0", fio's idle write IOPS): nothing ran
    return [c for c in out if (c.kind != "size" or c.before != c.after) and (c.before or c.after)]


def _named_switch(names: list[str], about: tuple[str, ...]) -> bool:
    """Whether the subjects name what two names switch (``nowait`` of ``nowait=0`` / ``nowait=1``)."""
    words = [{re.sub(r"^no(?=[a-z]{3})", "", w) for w in re.split(r"[-_=.:\s]+", n.lower())} for n in names]
    subject = " ".join(about).lower()
    return any(len(w) > 2 and w in subject for w in words[0] & words[1])


def _blocks(found: list[Segment]) -> list[tuple[int, int]]:
    """The cases of a side pasted one after the other, then the other side's in the same order
    (``Without the patch, cold:`` / ``and hot:`` / ``With it, cold:`` / ``and hot:``): (before, after)
    by position, when the two runs are as long and each case measures what its twin does."""
    sides = [s.side for s in found]
    half = len(found) // 2
    if half < 2 or len(found) % 2 or len(set(sides[:half])) != 1 or len(set(sides[half:])) != 1 or \
            {sides[0], sides[-1]} != {"before", "after"}:
        return []
    twins = [(k, half + k) if sides[0] == "before" else (half + k, k) for k in range(half)]
    alike = all({measure(f) for f in found[a].figures} & {measure(f) for f in found[b].figures} for a, b in twins)
    return twins if alike else []


def _two_withs(found: list[Segment], lines: list[str], about: tuple[str, ...]) -> None:
    """Two variants both named as after (``With premapped bvec:`` / ``With premapped DMA:``) and no
    before: the one the subjects name, else the one the text says the change brings, by the words
    the two names do not share, stays after; the other is the before side."""
    names = list(dict.fromkeys(s.name for s in found))
    if len(names) != 2 or any(s.side != "after" for s in found):
        return
    words = [set(unsided(n.lower()).split()) for n in names]
    own = [" ".join(w for w in unsided(n).split() if w.lower() not in words[1 - k]) for k, n in enumerate(names)]
    if not all(re.search(r"[A-Za-z]{3}", o) for o in own):
        return  # "With 4 jobs:" / "With 8 jobs:": a setting's two values, not a change and its baseline
    subject = " ".join(re.sub(r"\[[^\]]*\]", " ", line) for line in about).lower()  # "[PATCH v2 4/8]" aside
    named = [k for k, o in enumerate(own) if re.search(rf"(?<![\w-]){re.escape(o.lower())}(?![\w-])", subject)]
    said = named[0] if len(named) == 1 else introduced(own, lines)
    for segment in found if said is not None else []:
        segment.side = "after" if segment.name == names[said or 0] else "before"


def _ordered(found: list[Claim], guessed: set[int]) -> list[Claim]:
    """The rows, marked when a side of theirs was taken by its order alone (the gate,
    iolab.mail.claimed.evidence, asks more of them)."""
    return [replace(c, sides="order") for c in found] if guessed else found


def _listed(lines: list[str], k: int) -> bool:
    """A counter's line in a listing of them (one above or under it), not a heading (``SEGS_PER_SEC 128``
    over the figure it names)."""
    return any(counted(line) for line in lines[max(0, k - 1):k] + lines[k + 1:k + 2])


_CODE = re.compile(r"[$={}|<>]|^\s*(?:#|//|\*)")


def _spoken(lines: list[str]) -> Callable[[str], bool]:
    """Whether the mail's sentences (no code, no listing) name a counter: one listed under a side is a
    claim only where they do (``pgsteal drops by half``), not where only a script prints it."""
    text = " ".join(line for line in lines if len(line.split()) >= 6 and not _CODE.search(line)
                    and counted(line) is None).lower()[:1 << 18]  # a hostile mail's time stays bounded
    words = set(re.findall(r"[\w./()-]+", text))

    @functools.lru_cache(maxsize=256)
    def said(name: str) -> bool:
        name = name.lower()
        return name in words if " " not in name else \
            re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None
    return said
