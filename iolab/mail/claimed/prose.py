"""Before -> after pairs in a mail's prose.

``562K -> 574K IOPS``, ``from 4994 MiB/s to 5762 MiB/s``, also across a
line break (``increases from 122 MB/s`` / ``to 167 MB/s (+36%)``), a delta
in parentheses after it read as the mail's own; and one line that names
both sides (``base IOPS is 562K, patch IOPS is 574K``); two lines of a
variant and its figure each (``dd: 0.5s`` / ``FALLOC_FL_WRITE_ZEROES: 0.17s``)
where the text says the change brings one. A pair is two figures with a
unit: ``1 to 4 threads`` is none.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.clauses import clause_pairs
from iolab.mail.claimed.model import NOT_TABLE, Better, Claim, convert, figures, make, multiplier, number, said_unit, \
    Unit, unit_of
from iolab.mail.claimed.naming import introduced, side_of
from iolab.mail.claimed.narrated import narrated
from iolab.mail.claimed.outputs import worded

_VALUE = r"~?[+-]?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMgG](?![A-Za-z/]))?"
_WORD_UNIT = r"[A-Za-zµ/%]+(?:/[a-z]+)?"
_MOVED = r"(?:decreased|increased|dropped|reduced|fell|rose|improved|went\s+(?:up|down))"
_LINK = rf"(?:->|→|=>|-->|\b(?:down\s+|up\s+)?to\b|\bvs\.?(?=\s)|\bversus\b|,?\s*(?:which|and)\s+(?:has\s+|is\s+|was\s+)?{_MOVED}\s+to\b)"
# "42.40M(BATCH_IO)": the side's name after its figure; "139736 blocks (545M)": the figure again in another unit
_NAMED = r"(?:\s*\((?:[A-Za-z_][\w\s-]*|(?:or\s+|i\.e\.,?\s+)?~?\d[^()%\n]{0,40})\))?"
_RANGE = rf"(?:\s*(?:{_WORD_UNIT})?\s*[-–]\s*{_VALUE}(?![\d.]))?"  # "60-90MB/s", "2.4GB/s - 2.6GB/s": its middle
_ABOUT = r"(?:(?:about|around|roughly|approximately|nearly|almost|an?\s+(?:max(?:imum)?|peak|average|mean)\s+of)\s+)?"  # "from about 1.1GB/s to about 1.5GB/s"
PAIR = re.compile(rf"(?:\bfrom\s+{_ABOUT})?(?P<a>{_VALUE}{_RANGE})\s*(?P<ua>{_WORD_UNIT})?{_NAMED}\s*(?P<link>{_LINK})\s*"
                  rf"{_ABOUT}(?P<b>{_VALUE}{_RANGE})\s*(?P<ub>{_WORD_UNIT})?{_NAMED}"
                  r"(?:\s*,?\s*(?:or\s+|i\.e\.,?\s+|that\s+is\s+)?\(?(?P<stated>[+-]?\d+(?:\.\d+)?%)\)?)?")
# the after side first: "reduces the size to 1472 bytes from 1216", "36 extent maps per 4K page instead of 32",
# "mempool_alloc() as ~8% rather than ~62%"
_REVERSED = re.compile(rf"\bto\s+(?P<b>{_VALUE})\s*(?P<ub>{_WORD_UNIT})?\s+from\s+(?P<a>{_VALUE})(?!\.?\d)\s*"
                       rf"(?P<ua>{_WORD_UNIT})?|(?P<b2>{_VALUE})(?P<ub2>\s?%)?\s*(?P<count>[A-Za-z][\w-]*s\b)?(?:\s+(?:per\s+\S+|"
                       rf"[A-Za-z][\w-]*)){{0,4}}\s+(?:instead\s+of|rather\s+than)\s+(?P<a2>{_VALUE})(?!\.?\d)\s*"
                       rf"(?P<ua2>{_WORD_UNIT})?")
# "no difference (~750 MB/s)": a claim of no change, the one figure both sides
_SAME = re.compile(rf"(?:\bno\s+(?:difference|change|regression)|\bwithin\s+~?\d+(?:\.\d+)?\s*%|\bunchanged|"
                   rf"\bidentical)[^()\n]{{0,30}}\(\s*(?P<a>{_VALUE})\s*(?P<ua>{_WORD_UNIT})\s*\)")
# "Result without and with this patch: 555 K IOPS", "before and after the series: about 1.2 GB/s": both sides one figure
_BOTH = re.compile(rf"\b(?:without\s+and\s+with|with\s+and\s+without|before\s+and\s+after|after\s+and\s+before)"
                   rf"\b[^:;.\n]{{0,30}}:\s*{_ABOUT}(?P<a>{_VALUE})\s*(?P<ua>{_WORD_UNIT})(?![\w/]|\s*(?:->|→|=>|/|vs\b))", re.I)
_SHARE = re.compile(r"\b(cpu|usage|overhead|cycles|profile|perf|spent|time in|function)\b|\w\(\)", re.I)
_SPREAD = re.compile(r"\b(?:var(?:y|ies|ied|ying)|rang(?:e|es|ed|ing)|anywhere|fluctuat\w*)\b"
                     r"[^.;:]{0,20}$", re.I)
_SUPPOSED = re.compile(r"\bif\s+(?:we|you|one)\b|\bwould\s+(?:be|give|get|make|have)\b", re.I)  # not made
# a paragraph that tells the problem a patch fixes: its figures are the bug's, context
_PROBLEM = re.compile(r"\b(?:problem|regression|regressed|bug|make this (?:much )?worse)\b", re.I)
_FIX = re.compile(r"\b(?:patch|patched|fix(?:ed|es)?|with (?:this|it)|now|after|series|improv\w*|solv\w*|gone)\b",
                  re.I)
# "changes the default timeout from", "Bump the writeback interval from": a setting changed (its verb, then its name)
_SETTING = re.compile(r"\b(?:set|sets|chang(?:e|es|ed)|bump(?:s|ed)?|lower(?:s|ed)?|rais(?:e|es|ed)|increas(?:e|es|ed)|"
                      r"decreas(?:e|es|ed)|reduc(?:e|es|ed)|adjust(?:s|ed)?|tun(?:e|es|ed)|switch(?:es|ed)?)\s+"
                      r"(?:the\s+|its\s+|our\s+)?(?:[\w-]+\s+){0,2}(?:default|timeout|interval|threshold|limit|target|"
                      r"watermark|setting|parameter|knob|tunable)s?(?:\s+[\w-]+){0,2}\s*$", re.I)
# "3.2 GB/s vs 2.9 GB/s (patched vs unpatched)": the two sides named after the pair, in its order
_NAMES_AFTER = re.compile(r"\(\s*([^()]{1,30}?)\s+(?:vs\.?|versus)\s+([^()]{1,30}?)\s*\)")
# "was 120s and is now 95s", "was 12.5s, now it is 8.1s", "is now 2.5 GB/s, compared to 2.0 GB/s before": the
# side said by its tense
_WAS_NOW = re.compile(rf"\b(?:was|were)\s+(?:about\s+|~)?(?P<a>{_VALUE})\s*(?P<ua>{_WORD_UNIT})?[^.;\d]{{0,30}}?"
                      rf"\b(?:(?:is|are)\s+now|now(?:,?\s+(?:it|that|this)(?:\s+is|'s))?)\s+(?:about\s+|~)?(?P<b>{_VALUE})\s*(?P<ub>{_WORD_UNIT})?|"
                      rf"\bnow\s+(?:about\s+|~)?(?P<b2>{_VALUE})\s*(?P<ub2>{_WORD_UNIT})?,?\s+(?:compared\s+(?:to|with)|"
                      rf"against|versus|vs\.?)\s+(?:about\s+|~)?(?P<a2>{_VALUE})\s*(?P<ua2>{_WORD_UNIT})?\s+before\b")
_SENTENCE_END = re.compile(r"[.;:](?:\s|$)")


# words before a pair that name no row ("gives 3.68M -> 3.70M IOPS" is the IOPS row)
_NOT_LABEL = {"from", "is", "was", "by", "the", "for", "gives", "give", "gave", "goes", "go", "went", "it", "this",
              "improves", "improved", "increases", "increased", "drops", "dropped", "rises", "rose", "changes",
              "changed", "moves", "moved", "here", "we", "get", "got", "see", "saw"}


def _label(lines: list[str], k: int, before: str, after: str) -> list[str]:
    """The words naming a pair: those before it in its sentence, else after it, else ending the line above."""
    words = re.findall(r"[A-Za-z][\w/.-]*", re.split(r"[.;:]\s", before)[-1])
    if not words:
        words = re.findall(r"[A-Za-z][\w/.-]*", _SENTENCE_END.split(after)[0])[:4]
    if not words and k:
        words = re.findall(r"[A-Za-z][\w/.-]*", re.split(r"[.;:]\s", lines[k - 1])[-1])
    return [w for w in words[-4:] if w.lower() not in _NOT_LABEL]


def _figure(text: str | None) -> float | None:
    """A figure as written, a range's middle (``60-90``: 75)."""
    ends = [number(re.sub(r"(?<=\d)\s*[A-Za-zµ/%]{2,}$", "", part.replace(" ", "").lstrip("~")))
            for part in re.split(r"(?<=[\w/%])\s*[-–]\s*(?=~?\d)", text or "")]
    return sum(e for e in ends if e is not None) / len(ends) if text and all(e is not None for e in ends) else None


def _sentence(lines: list[str], k: int, before: str) -> str:
    """The sentence a pair is in, up to the pair, from the lines above it where it began (three at most)."""
    said = before
    for j in range(k - 1, max(-1, k - 4), -1):
        if _SENTENCE_END.search(said) or not lines[j].strip():
            break
        said = lines[j][-200:] + " " + said
    return _SENTENCE_END.split(said)[-1]


def _paragraph(lines: list[str], k: int) -> str:
    """The lines of line k's paragraph up to it (ten at most)."""
    start = next((j + 1 for j in range(k - 1, max(-1, k - 11), -1) if not lines[j].strip()), max(0, k - 10))
    return " ".join(line[-200:] for line in lines[start:k + 1])  # a line's tail: a hostile mail's time bounded


_SIDED = re.compile(r"\b(?:before|after|baseline|base|vanilla|unpatched|patched|patch(?:es|set)?|series|w/o|w/|"
                    r"without|with\s+(?:the|this|these|my)|old|new|orig(?:inal)?|stock|mainline|upstream|fix(?:ed)?|"
                    r"improv\w*|regress\w*|speed-?up|faster|slower)\b", re.I)


def _context(lines: list[str], k: int, text: str) -> str:
    """A pair's line with the two lines above it."""
    return " ".join([*lines[max(0, k - 2):k], text])


_BLOCKS: dict[str, Unit] = {"blocks": ("blocks", "count", None)}  # "from 139736 blocks (545M) to 8672 blocks"


def _per_second(word: str) -> Unit | None:
    """Things done a second that no unit names (``9k creates/s``, ``9000/s``): a rate, better higher."""
    found = re.fullmatch(r"([A-Za-z]{3,})/s(?:ec)?", word)
    return (f"{found.group(1) or ''}/s", "rate", "higher") if found else None


def _sentence_unit(lines: list[str], k: int, text: str, match: re.Match[str], said: str) -> Unit | None:
    """The unit a pair's sentence names for figures that write none: before them on their line (``IOPS from
    7.15M to 7.65M``), in the sentence begun on the lines above (``we see IOPs go`` / ``from 360K to 640K``),
    a heading's (``Latency (usec):``), or, for figures in thousands or millions, a rate the sentence names
    after them (``go from 180K to 400K where the native device can get 500K IOPs``)."""
    heading = next((lines[j] for j in range(k - 1, max(-1, k - 4), -1) if lines[j].strip().endswith(":")), "")
    unit = unit_of(" ".join(said.split()[-8:])) or unit_of(" ".join(_sentence(lines, k, text[:match.start()]).split()[-8:])) or \
        (unit_of(heading) if heading and len(heading) < 60 else None)
    thousands = all(re.search(r"\d\s?[kKM]$", match.group(g) or "") for g in ("a", "b") if g in match.groupdict())
    rest = _SENTENCE_END.split(text[match.end():])[0]
    named = unit_of(rest) if thousands and "a" in match.groupdict() else None
    return unit or (named if named is not None and named[1] == "rate" else None)


def _pair(lines: list[str], k: int, text: str, match: re.Match[str]) -> Claim | None:
    groups = match.groupdict()
    a, b = _figure(groups.get("a") or groups.get("a2")), _figure(groups.get("b") or groups.get("b2") or groups.get("a"))
    said = _SENTENCE_END.split(text[:match.start()])[-1] or \
        re.sub(r"^.*[.;]\s", "", text[:match.start()].rstrip()[:-1]) * text[:match.start()].rstrip().endswith(":")
    words = groups.get("ua") or groups.get("ua2") or "", groups.get("ub") or groups.get("ub2") or ""
    first, second = (unit_of(w) or _BLOCKS.get(w.lower()) or _per_second(w) for w in words)
    scales = [multiplier(words[0] or words[1]), multiplier(words[1] or words[0])]  # one unit written: both sides'
    a, b = (None if v is None else v * scale for v, scale in zip((a, b), scales))  # "from 350 to 420 KIOPS"
    if first and second and b is not None and first != second:  # "from ~250MB/s to ~1.2GB/s"
        b = convert(b, second[0], first[0])
    unit = first or second
    if groups.get("count") and unit is None:  # "36 extent maps ... instead of 32": a count of the things named
        label = " ".join(re.split(r"\s+instead\s+of\s", match.group(0))[0].split()[1:])
        return make(label, a, b, None, None, "", text) if a is not None and b is not None else None
    unit = unit or _sentence_unit(lines, k, text, match, said)
    stated = match.groupdict().get("stated") or ""
    unit = unit or (said_unit(lines, k) if stated else None)  # "Performance test result(IOPS):" above
    sided = len({side_of(n) for n in re.findall(r"\(([^()]*)\)", match.group(0))} - {None}) == 2
    if a is None or b is None or (unit is None and not stated and not sided and not groups.get("count")):
        return None  # "1 to 4 threads": a pair is figures with a unit, the mail's own delta, or its sides named
    if _SETTING.search(said[-60:]):
        return None  # "changes the default timeout from 30 s to 60 s": a setting changed, not a measure
    if _SPREAD.search(said[-40:]):
        return None  # "varies from 16% to 49%", "ranging from 2 to 8 ms": a range, not a before and an after
    sentence = _sentence(lines, k, text[:match.start()])
    if _SUPPOSED.search(sentence):
        return None  # "If we rolled up the loop too, the change would be 7024 bytes => 1584 bytes": not made
    paragraph = _paragraph(lines, k) + " " + text[match.end():]
    if _PROBLEM.search(paragraph) and not _FIX.search(paragraph):
        return None  # "Problem in RT kernel: ... Throughput drops from 640 MB/s to 153 MB/s": the bug, not the fix
    link = match.groupdict().get("link") or ""
    if unit is not None and unit[0] == "%" and link == "to" and not match.group(0).startswith("from"):
        return None  # "an improvement of 30% to 50%": a range of a change, not its two sides
    if groups.get("ub2") and "count" in groups and (re.search(r"[+-]", groups["b2"] + groups["a2"]) or
                                                  not _SHARE.search((lines[k - 1] if k else "") + " " + text)):
        return None  # "-20% instead of -30%" (changes), "(0.39% instead of 1.5% of total memory)": no share's sides
    if sided and side_of(re.findall(r"\(([^()]*)\)", match.group(0))[0]) == "after":
        a, b = b, a  # "1.5 GB/s (patched) vs 1.1 GB/s (unpatched)": the sides named say which is before
    named = _NAMES_AFTER.search(text[match.start("b") if groups.get("b") else match.end():match.end() + 40])
    if named and link[:1] in ("v", "V") and [side_of(named.group(1)), side_of(named.group(2))] == ["after", "before"]:
        a, b, sided = b, a, True
    if link[:1] in ("v", "V") and not (stated or sided or _SIDED.search(_context(lines, k, text))):
        return None  # "throughput now matches buffered (4,532 vs 4,616 MB/s)": two variants, no side said
    if link.startswith("v") and stated[:1] in ("+", "-") and (b - a) * float(stated.rstrip("%")) < 0:
        a, b = b, a  # "42.40M vs. 37.77M, -11%": for "vs" the signed delta says which is before
    label = " ".join(_label(lines, k, text[:match.start()], text[match.end():]))
    context = (lines[k - 1] if k else "") + " " + text
    better: Better | None = "lower" if unit is not None and unit[0] == "%" and _SHARE.search(context) else None
    return make(label or (unit[0] if unit else "figure"), a, b, unit, better, stated, text)


_ALTERNATE = re.compile(r"\((?:or\s+|i\.e\.,?\s+)?(?P<v>~?\d[\d,]*(?:\.\d+)?(?:\s?[kKMG](?![A-Za-z]))?)\s*"
                        r"(?P<u>[A-Za-z/]+)(?:[,;][^()]{0,30})?\)")  # "(or ~5290MiB/sec)", "(3,096,842,240 bytes, 2.9G)"


def _alternate(found: Claim, match: re.Match[str]) -> list[Claim]:
    """The same pair in another measure, each side's in parentheses after its figure (``from ~1350K
    IOPS (or ~5290MiB/sec) to ~1410K IOPS (or ~5500MiB/sec)``): a row of its own."""
    if "b" not in match.groupdict() or not match.group("b"):
        return []
    text, cut = match.string, match.start("b")
    first, second = _ALTERNATE.search(text, match.end("a"), cut), _ALTERNATE.search(text, match.end("b"), match.end())
    if first is None or second is None:
        return []
    units = [unit_of(m.group("u")) for m in (first, second)]
    a, b = (number(m.group("v").replace(" ", "")) for m in (first, second))
    if units[0] is None or units[1] is None or units[0][1] != units[1][1] or units[0][1] == found.kind or \
            a is None or b is None:
        return []
    b = convert(b, units[1][0], units[0][0]) if units[0] != units[1] else b
    return [make(f"{found.label} ({units[0][0]})", a, b, units[0], None, found.stated, found.source)] \
        if b is not None else []


_SLASHED = re.compile(r"(?P<names>(?:[A-Za-z]\w*/)+[A-Za-z]\w*)?[^\d\n]{0,30}?(?P<a>\d[\d.]*(?:/\d[\d.]*)+)\s*"
                      rf"(?P<ua>{_WORD_UNIT})?\s*(?:->|→|=>|\bto\b)\s*(?P<b>\d[\d.]*(?:/\d[\d.]*)+)\s*"
                      rf"(?P<ub>{_WORD_UNIT})?")


def slash_pairs(line: str) -> list[Claim]:
    """Figures joined by slashes on each side of an arrow (``p50/p99/p999 latency: 10/20/30 us ->
    8/15/25 us``): a pair per place, named by the slashed names before them if as many."""
    out = []
    for match in _SLASHED.finditer(line):
        a, b = (match.group(g).split("/") for g in ("a", "b"))
        unit = unit_of(match.group("ua") or match.group("ub") or "")
        names = (match.group("names") or "").split("/")
        if len(a) != len(b) or unit is None:
            continue
        for n, (x, y) in enumerate(zip(a, b)):
            name = names[n] if len(names) == len(a) else f"#{n + 1}"
            out.append(make(name, float(x), float(y), unit, None, "", line))
    return out


_FIG = rf"~?\d[\d,]*(?:\.\d+)?\s?(?:{_WORD_UNIT})?"
_RUNS = re.compile(rf"(?<![\w.,/])(?P<a>{_FIG}(?:(?:\s*,\s*|\s+){_FIG})+)\s*(?:->|→|=>)\s*"
                   rf"(?P<b>{_FIG}(?:(?:\s*,\s*|\s+){_FIG})+)(?![\w.,/])")


def _run(text: str) -> list[tuple[float, Unit]] | None:
    """A side's figures (``4.1ns 4.2ns``, ``10, 20, 30 us``), each with its unit or the last one's."""
    found = [(m.group(1), m.group(2)) for m in re.finditer(rf"(~?\d[\d,]*(?:\.\d+)?)\s?({_WORD_UNIT})?", text)]
    units = {u for _, u in found if u}
    unit = unit_of(found[-1][1] or "") if len(units) == 1 else None
    values = [number(v.lstrip("~").replace(",", "")) for v, _ in found]
    if unit is None or any(u is None for _, u in found[:-1]) and any(u for _, u in found[:-1]):
        return None
    return [(v, unit) for v in values if v is not None] if None not in values else None


def run_pairs(line: str) -> tuple[list[Claim], list[tuple[int, int]]]:
    """Figures written one after another on each side of an arrow (``4k: 4.1ns 4.2ns -> 3.9ns 4.0ns``,
    ``10, 20, 30 us -> 8, 15, 25 us``): a pair per place when both sides have as many, in one unit;
    with the spans they cover (the pair-by-pair reader leaves those)."""
    out: list[Claim] = []
    spans = []
    for match in _RUNS.finditer(line):
        a, b = _run(match.group("a")), _run(match.group("b"))
        if a is None or b is None or len(a) != len(b) or a[0][1] != b[0][1]:
            continue
        name = re.findall(r"[A-Za-z0-9][\w/.-]*", line[:match.start()].rsplit(".", 1)[-1])[-2:]
        for n, ((x, unit), (y, _)) in enumerate(zip(a, b)):
            out.append(make(f"{' '.join(name)} #{n + 1}".strip(), x, y, unit, None, "", line))
        spans.append(match.span())
    return out, spans


# "100 MB/s unpatched vs 120 MB/s patched", "50us with the patch vs 80us without": each figure named by its side
_NAMED_VS = re.compile(rf"(?P<a>{_VALUE})\s*(?P<ua>{_WORD_UNIT})?\s+(?P<na>(?:with(?:out)?\s+(?:the\s+|this\s+)?)?"
                       rf"[\w/.+-]+)\s+(?:vs\.?|versus|compared\s+(?:to|with)|against)\s+(?P<b>{_VALUE})\s*"
                       rf"(?P<ub>{_WORD_UNIT})?\s+"
                       rf"(?P<nb>(?:with(?:out)?\s+(?:the\s+|this\s+)?)?[\w/.+-]+)")


_VERSUS = re.compile(r"\b(?:vs|versus|compared|against)\b", re.I)
_ARROWED = re.compile(r"->|→|=>|\bto\b")


# "now reaches 81% of buffered throughput (was 35%)": the figure now, then the one before it in parentheses
_WAS = re.compile(rf"(?P<b>{_VALUE})\s*(?P<ub>{_WORD_UNIT})?\b[^()\n]{{0,60}}\(was\s+(?P<a>{_VALUE})\s*"
                  rf"(?P<ua>{_WORD_UNIT})?\)")


def was_pairs(lines: list[str], k: int) -> list[Claim]:
    """A figure and, in parentheses after it, what it was before the change."""
    out = []
    for match in _WAS.finditer(lines[k]):
        a, b = _figure(match.group("a")), _figure(match.group("b"))
        unit = unit_of(match.group("ub") or match.group("ua") or "")
        if a is not None and b is not None and unit is not None:
            label = " ".join(_label(lines, k, lines[k][max(0, match.start() - 80):match.start()], "")) or unit[0]
            out.append(make(label, a, b, unit, None, "", lines[k]))
    return out


def named_vs(lines: list[str], k: int) -> list[Claim]:
    """Two figures either side of a "vs", each followed by a name, one of them a side's."""
    out = []
    for match in _NAMED_VS.finditer(lines[k]):
        sides = side_of(match.group("na")), side_of(match.group("nb"))
        figures = _figure(match.group("a")), _figure(match.group("b"))
        units = [unit_of(match.group(g) or match.group(o) or "") for g, o in (("ua", "ub"), ("ub", "ua"))]
        if sides[0] == sides[1] or not {"before", "after"} & set(sides) or None in (*figures, *units):
            continue
        order = (0, 1) if sides[0] == "before" or sides[1] == "after" else (1, 0)
        (a, ua), (b, ub) = ((figures[n], units[n]) for n in order)
        value = convert(b or 0.0, ub[0], ua[0]) if ua and ub else None
        if a is not None and ua is not None and value is not None:
            label = " ".join(_label(lines, k, lines[k][max(0, match.start() - 80):match.start()], "")) or ua[0]
            out.append(make(label, a, value, ua, None, "", lines[k]))
    return out


def pairs(lines: list[str]) -> list[Claim]:
    """Each pair in the prose, on one line or across a line break, and each line naming both sides."""
    claims = []
    for k, line in enumerate(lines):
        if "|" in line or NOT_TABLE.match(line.strip()):
            continue
        line = worded(line)  # "from 3 minutes, 38 seconds to 62 seconds": each side one figure
        claims += slash_pairs(line) if "/" in line and _ARROWED.search(line) else []
        claims += named_vs(lines, k) if _VERSUS.search(line) else []
        claims += was_pairs(lines, k) if "(was " in line else []
        runs, spans = run_pairs(line) if _ARROWED.search(line) else ([], [])
        claims += runs
        for match in [*PAIR.finditer(line), *_SAME.finditer(line), *_BOTH.finditer(line), *_REVERSED.finditer(line),
                      *_WAS_NOW.finditer(line)]:
            if line[:match.start()].endswith("/") or re.match(r"/\d", line[match.end("b"):]
                                                              if "b" in match.groupdict() else ""):
                continue  # one figure of "10/20/30 us -> 8/15/25 us": the slashes' reader's
            if any(start <= match.start() < end for start, end in spans):
                continue  # one place of "4.1ns 4.2ns -> 3.9ns 4.0ns": the runs' reader's
            found = _pair(lines, k, line, match)
            claims += [found, *_alternate(found, match)] if found else []
        following = lines[k + 1] if k + 1 < len(lines) else ""
        if following.strip() and "|" not in following:  # a pair the line break cut: "from 122 MB/s" / "to 167 MB/s"
            joined = line.rstrip() + " " + following.strip()
            for match in [*PAIR.finditer(joined), *_SAME.finditer(joined), *_REVERSED.finditer(joined)]:
                if match.start() < len(line.rstrip()) < match.start("a") or \
                        match.start() < len(line.rstrip()) < match.end() - 1 and "b" in match.groupdict() and \
                        match.start("b") > len(line.rstrip()):
                    found = _pair(lines, k, joined, match)
                    claims += [found] if found else []
        clauses = clause_pairs(line)  # "2.6 GB/s vs 2.0 GB/s without it": each clause says its side, not the order
        turned = {(c.after, c.before) for c in clauses if c.before != c.after}
        claims = [c for c in claims if c.source != line.strip() or (c.before, c.after) not in turned] + clauses
    return claims + variant_pairs(lines) + narrated(lines)


_NAMED_LINE = re.compile(r"^\s*(?P<name>[A-Za-z][\w.+-]*)\s*:\s+(?P<rest>\S.*)$")


def variant_pairs(lines: list[str]) -> list[Claim]:
    """Two lines one under the other, each a variant's one-word name (a tool, a flag) and one
    figure (``dd:  0.5s`` / ``FALLOC_FL_WRITE_ZEROES: 0.17s``), of which the text says the change
    brings one: that one after."""
    out = []
    text = ""
    for k in range(len(lines) - 1):
        found = [m for m in (_NAMED_LINE.match(line) for line in lines[k:k + 2]) if m is not None]
        if len(found) != 2:
            continue
        names = [m.group("name") for m in found]
        values = [[f for f in figures(m.group("rest")) if f[1][0] != "%"] for m in found]
        if any(side_of(n) for n in names) or any(len(v) != 1 for v in values) or \
                values[0][0][1][1] != values[1][0][1][1]:
            continue
        text = text or " ".join(lines)
        said = introduced(names, lines, text)
        if said is None:
            continue
        (a, unit, _), (b, other, _) = values[1 - said][0], values[said][0]
        value = convert(b, other[0], unit[0])
        if value is not None:
            out.append(make(f"{names[1 - said]} vs {names[said]}", a, value, unit, None, "", lines[k + said]))
    return out


def _restated(prose: str, symbol: str) -> bool:
    """Whether a sentence of the prose names the symbol with a share or a change ("we drop more
    than 9% of _copy_from_user() time"): then the row is the prose's, context."""
    return any(re.search(rf"\b{re.escape(symbol)}\b", sentence) and re.search(r"\d\s*%", sentence)
               for sentence in re.split(r"(?<=[.!?])\s+", prose))


_PERF_ROW = re.compile(r"^\s*[+-]?\d+(?:\.\d+)?%.*\[[k.]\]\s+\S+\s*$")  # perf's own row, not prose
_PERF_DIFF = re.compile(r"^\s*(?P<base>\d+(?:\.\d+)?)%\s+(?P<delta>[+-]\d+(?:\.\d+)?)%\s+.*?(?P<symbol>[\w.]+)\s*$")


def perf_diff(lines: list[str]) -> list[Claim]:
    """perf diff's rows (``0.84%   -0.49%  [kernel.kallsyms]  [k] foo``): the baseline's share and
    the baseline plus the delta, unless the prose names the symbol (then it restates the pair)."""
    found = [(line, _PERF_DIFF.match(line)) for line in lines]
    prose = " ".join(line for line, match in found if match is None and not _PERF_ROW.search(line))
    out = []
    for line, match in found:
        if match is None:
            continue
        symbol = match.group("symbol")
        base, delta = float(match.group("base")), float(match.group("delta"))
        after = round(base + delta, 6)
        if _restated(prose, symbol.split(".")[0]):
            continue
        out.append(make(f"{symbol} share", base, after, ("%", "ratio", "lower"), "lower", match.group("delta") + "%",
                        line))
    return out
