"""Which way a claim row is better when neither its unit nor its name says.

A kernel developer reads it from the mail around the row, in this order:

- the mail's own delta against the figures: a delta whose sign is the
  opposite of the figures' move is a gain (``p99 1.876 -> 0.963 +48.69%``:
  lower is better);
- mmtests' comparison, whose changes are gains (its compare prints each
  kernel's change against the first as ``pdiff`` for a measure better
  higher and ``pndiff`` for one better lower: ``71.22 (0.00%) 64.94 *
  8.81%*`` is lower better), and where a row did not move, its mean's name
  (mmtests takes the harmonic mean of rates, the arithmetic one of times);
- a factor under a column named gain, speedup or improvement (``1117
  1921  1.72``): above 1 the figures moved the better way;
- the table's header over the row's two figures (``comparisons(old)
  comparisons(new)``, ``IOPS base  IOPS patched``) or over the rows' names
  (``faults | base | patched``), and the unit written
  after the figure (``524708.0 KBps``): the words a name would say;
- a profile's share of a function (``blk_mq_submit_bio() 12.5%``, perf
  report's ``[k]`` rows): lower is better, as time spent in it; a share of
  a measure (``81% of buffered throughput``) is better its measure's way;
  a compression ratio in percent (the compressed size's share) and a
  structure's size (pahole's ``/* size: 128 */``, ``sizeof``) lower;
  /proc/meminfo's free memory higher, what the kernel holds (Slab, Dirty) lower;
- what the lines above the row say is measured (``Test result: iops``,
  ``Observation: Average fallocate operations per container per second``,
  ``fio (iops higher better, p99 lower better)``, ``(lower is better)``,
  ``(shorter is better)``; of ``(Energy less is better, Throughput more is
  better,`` the way of the measure the row names; a sentence with figures
  in it, ``we see 4K IOPs with fio``; the table's own header and rules are
  not such lines):
  throughput, IOPS and rates are better higher, latency, time and usage
  lower; the size of what is built (``sizeof .text section``, ``Kernel
  image size:``) lower.

Last, the rows of one table that none of these gave a way, where the
sentences above it say the change improves (``should also improve the
performance``, ``is faster``, ``gains are evident``, ``reduces the work``) and nothing worse: the way 3 of 4 of them
moved or more is the better one.

Where none of these says, the row's better stays None: a wrong way is worse
than none.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.model import Better, Claim, better_of, number, unit_of

_SIGNED = re.compile(r"^[-+\u2212]")
_REACH = 40  # lines above a row that may say what it measures
_SAID = 3  # lines of words above a row (its table's passed over) that may
_WAYS = "lower|higher|less|more|smaller|bigger|larger|greater|fewer|shorter|longer"  # the words of "... is better"
_STATED = re.compile(rf"\b({_WAYS})\s+(?:is\s+|=\s*)?better\b", re.I)
_LESS = ("lower", "less", "smaller", "fewer", "shorter")


def _way(claim: Claim, gain: bool) -> Better:
    """The way the figures moved when the move is a gain, else the other."""
    return "higher" if (claim.direction == "up") == gain else "lower"


def _gain(claim: Claim) -> Better | None:
    """The better way when the mail's delta has the opposite sign of the figures' move."""
    stated = claim.stated.strip().lstrip("~(")
    if not _SIGNED.match(stated) or claim.direction == "none" or not re.search(r"\d", stated):
        return None
    up = stated[0] == "+"
    if up == (claim.direction == "up"):
        return None  # the delta is the change itself: it says nothing of which way is better
    if stated[0] in "-\u2212":
        return None  # against a rise: a loss (lower better) or the inverse measure's change (higher): not said
    return "higher" if claim.direction == "up" else "lower"


_MMTESTS = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*[(*]\s*(-?\d+(?:\.\d+)?)%\s*[)*]")


def _mmtests(claim: Claim) -> Better | None:
    """mmtests' comparison row (``Amean 1  71.22 (   0.00%)  64.94 *   8.81%*``): the first column
    the baseline (0.00%), each other's percentage its gain against it, whichever way is better; where
    the row did not move, its mean's name: mmtests takes the harmonic mean (Hmean) of rates, better
    higher, and the arithmetic one (Amean) of times, better lower."""
    for part in claim.source.split(" / "):
        cells = [(float(v), float(p)) for v, p in _MMTESTS.findall(part)]
        if len(cells) < 2 or cells[0][1] != 0.0 or cells[0][0] != claim.before:
            continue
        gains = {p for v, p in cells[1:] if v == claim.after and p != 0.0}
        if len(gains) == 1 and claim.direction != "none":
            return _way(claim, gains.pop() > 0)
        mean = re.match(r"\s*B?([AH])mean\b", part)
        return None if mean is None else "higher" if mean.group(1) == "H" else "lower"
    return None


def _where(index: dict[str, int], claim: Claim) -> int | None:
    """The line the claim was read from (its after side's, for a row of two lines), by the lines' index."""
    parts = [p.strip() for p in claim.source.split(" / ") if p.strip()]
    for part in reversed(parts):
        for text in (part, part.split(": ", 1)[-1], " ".join(part.split())):  # "deadline: | before this set |
            if text in index:  # 263k |": a column's row; a row of tabs quoted with spaces
                return index[text]
    return None


def _stated(text: str) -> Better | None:
    """'(lower is better)', 'higher = better', 'less is better': one way said, else None."""
    said: set[Better] = {"lower" if w.lower() in _LESS else "higher" for w in _STATED.findall(text)}
    return said.pop() if len(said) == 1 else None


_EACH = re.compile(rf"([A-Za-z][^,;()]*?)\s+(?:is\s+)?({_WAYS})\s+(?:is\s+)?better\b", re.I)


def _stated_each(line: str, label: str) -> tuple[bool, Better | None]:
    """Of a line stating a way for each of several measures (``Energy less is better, Throughput more is
    better``): whether it does, and the way of the measure the row's label names (None: another's only)."""
    ways: dict[str, Better] = {m.group(1).lower(): ("lower" if m.group(2).lower() in _LESS else "higher")
                               for m in _EACH.finditer(line)}
    if len(set(ways.values())) < 2:
        return False, None
    named = {way for measure, way in ways.items()
             if any(re.search(rf"(?<![a-z]){re.escape(word)}", label, re.I) for word in re.findall(r"[a-z]{3,}", measure)
                    if word not in ("per", "the", "and", "for"))}
    return True, named.pop() if len(named) == 1 else None


def _said_above(lines: list[str], k: int, label: str = "") -> Better | None:
    """The way the nearest lines above the row that say what is measured say is better (a table's
    rows and headers, lines of figures, are passed over, but for a way they state)."""
    said, head = 0, _header(lines, k)
    for n in range(k - 1, max(-1, k - _REACH - 1), -1):
        line = lines[n]
        near = " ".join(lines[max(0, n - 1):n + 2]) if len(line) <= 200 else ""  # a statement wrapped
        several, each = _stated_each(near, label) if _EACH.search(line) else (False, None)
        if several:
            if each is None:
                continue  # the ways of other measures
            return each
        stated = _stated(line) if len(line) <= 200 else None
        if stated is not None:
            return stated
        if _SIZE_OF.search(line) and len(line) <= 200:
            return "lower"  # "2. sizeof .text section from vmlinux:", "bzImage size:": what the change costs
        if n == head or not line.strip() or len(line) > 200 or "|" in line or _RULE.match(line) or \
                (re.search(r"\d", re.sub(r"\([^()]*\)", "", line).split(":")[-1]) and not _prose(line)):
            continue  # a table's row or header, a device's name: not a line that says what was measured
        units = [u for u in (unit_of(w) for w in line.split()) if u and u[1] in ("rate", "bandwidth")]
        named = better_of(line) or (units[0][2] if units else None)  # "sec  normal MB/s  dontcache MB/s"
        if named is not None:
            return named
        said += 1
        if said >= _SAID:
            break
    return None


# the size of what is built or held: an image, a binary, a section, a module, an object (``sizeof .text``)
_SIZE_OF = re.compile(r"\bsizeof\b|\b(?:image|binary|kernel|vmlinux|bzimage|text|data|bss|section|module|object|"
                      r"code|\.ko)\s+sizes?\b|\bsizes?\s+of\s+(?:the\s+)?(?:\.?text|\.?data|image|binary|kernel|vmlinux|"
                      r"bzimage|module|object|code|section)\b", re.I)


def _prose(line: str) -> bool:
    """A sentence: six words or more, most of them words (``we see 4K IOPs with fio``), not a row of figures."""
    words = line.split()
    return len(words) >= 6 and sum(w.isalpha() for w in words) * 2 > len(words)


_GAIN = re.compile(r"\b(gain|speed-?up|improvement)s?\b", re.I)
_RULE = re.compile(r"^[\s|+:=*-]*$")  # a table's rule: "|-----|-----|", "----  ------", "+===+"


def _numeric(line: str) -> int:
    """How many cells of a line are figures ("| 10000 |  239233 |": 2; "jobs  base  patched": 0)."""
    return sum(number(w.strip("()*%,")) is not None for w in line.replace("|", " ").split())


def _header(lines: list[str], k: int) -> int | None:
    """The header of the table whose row is line k: the nearest line above its rows of figures and its
    rules that has words and at most one figure; None when a blank line or prose comes first."""
    for j in range(k - 1, max(-1, k - _REACH), -1):
        text = lines[j].strip()
        if not text:
            return None
        if _RULE.match(text) or _numeric(text) >= 2:
            continue
        return j if len(text) <= 200 else None
    return None


def _cells(line: str) -> list[tuple[int, int, str]]:
    """A line's cells with their columns (tabs expanded): between pipes, else apart by two spaces or a tab."""
    text = "".join(c if c != "\t" else "\0" * (8 - n % 8) for n, c in _columns(line))
    pattern = r"[^|]+" if "|" in text else r"[^\s\0]+(?: [^\s\0]+)*"
    return [(m.start(), m.end(), m.group().strip()) for m in re.finditer(pattern, text) if m.group().strip()]


def _columns(line: str) -> list[tuple[int, str]]:
    """Each character of the line with the column it starts at, a tab reaching the next multiple of 8."""
    out, n = [], 0
    for c in line:
        out.append((n, c))
        n += 8 - n % 8 if c == "\t" else 1
    return out


def _over(header: str, row: str, value: float | None) -> str:
    """The header's cell over the row's cell holding the value, or over its first cell when value is
    None (the rows' names: "MB/s", "lat (us)"), by its place in the columns, or by its count when the
    two lines have as many cells: "" when none is."""
    heads, cells = _cells(header), _cells(row)
    for n, (start, end, cell) in enumerate(cells):
        if value is not None and not any(number(w.strip("()*,")) == value for w in cell.split()):
            continue
        if len(heads) == len(cells):
            return heads[n][2]
        over = [h for s, e, h in heads if s < end and e > start]
        return over[0] if len(over) == 1 else ""
    return ""


def _headed(lines: list[str], k: int, claim: Claim) -> Better | None:
    """What the header's cells over the row's two figures name (``comparisons(old)``,
    ``IOPS (base)``, ``lat (lower is better)``): the way both say, or one says and the other leaves open;
    else what the header over the rows' names says (``MB/s   base   patched``)."""
    h = _header(lines, k)
    if h is None:
        return None
    found = _under([lines[h]], lines[k], claim)
    above = lines[h - 1].strip() if h > 0 else ""
    if found is None and above and not _RULE.match(above) and _numeric(above) <= 1 and len(_cells(above)) >= 2:
        return _under([lines[h - 1], lines[h]], lines[k], claim)  # a header wrapped over two lines
    return found


def _under(header: list[str], row: str, claim: Claim) -> Better | None:
    """The way the header's cells over the row's figures say (its lines' cells joined, top first)."""
    for values in ((claim.before, claim.after), (None,)):
        said: set[Better] = set()
        for value in values:
            cell = " ".join(_over(line, row, value) for line in header).strip()
            unit = unit_of(cell)
            way = _stated(cell) or (unit[2] if unit and unit[1] != "ratio" else None) or better_of(cell)
            if way is not None:
                said.add(way)
        if said:
            return said.pop() if len(said) == 1 else None
    return None


def _gain_column(lines: list[str], k: int, claim: Claim) -> Better | None:
    """Under a column named gain or speedup, the row's factor (``2023  3998  2.42``): above 1, the
    way the figures moved is the better one; below 1, the other. With a gain column to each pair of
    columns, the factor is the cell after the row's after."""
    h = _header(lines, k)
    above = lines[max(0, k - _SAID * 2):k] + ([lines[h]] if h is not None else [])
    if claim.direction == "none" or not any(_GAIN.search(line) for line in above):
        return None
    written = [float(w) for w in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.%])", lines[k])]
    factors = [r for r in written if r not in (claim.before, claim.after) and r > 0 and r != 1]
    after = _after_cell(lines[k], claim)
    if len(factors) > 1 and after in factors:  # a gain column to each pair of columns: the cell after the row's
        factors = [after]
    if len(factors) == 1:
        return _way(claim, factors[0] > 1)
    return None


def _after_cell(line: str, claim: Claim) -> float | None:
    """The figure in the cell after the row's before and after (``1117  1921  1.72  1902  1942  1.02``: 1.72
    for 1117 -> 1921)."""
    cells = [number(w) for w in line.replace("|", " ").split()]
    for n in range(len(cells) - 2):
        if cells[n] == claim.before and cells[n + 1] == claim.after:
            return cells[n + 2]
    return None


_SYMBOL = re.compile(r"_*[A-Za-z]\w*(?:\.\w+)*\(\)")  # "blk_mq_submit_bio()", "nvme_prep_rq.part.68()"
_PROFILE = re.compile(r"\bperf\b|\bprofil\w*|\boverhead\b|\bcycles\b|\bsamples\b", re.I)


def _share(lines: list[str], k: int | None, claim: Claim) -> Better | None:
    """A profile's share of a function, lower better: perf report's ``[k]`` row, a name written as a
    call, or a kernel symbol (words joined by underscores) where the text above speaks of a profile."""
    if claim.unit != "%":
        return None
    name = claim.label.removesuffix(" share").strip()
    if re.search(r"\[[k.]\]", claim.source) or _SYMBOL.fullmatch(name):
        return "lower"
    if k is not None and re.fullmatch(r"_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\.\w+)*", name) and \
            any(_PROFILE.search(line) for line in lines[max(0, k - _REACH):k + 1]):
        return "lower"
    return None


def _unit_after(claim: Claim) -> Better | None:
    """The word written after the after figure in its line (``569218.0 KBps``), when it names a way;
    a share of a measure (``reaches 81% of buffered throughput``, ``40% of CPU``) is better its way."""
    for part in claim.source.split(" / "):
        for match in re.finditer(r"(?<![\w.])([\d,]+(?:\.\d+)?)\s*(%\s+of\s+(?:the\s+)?(?:[\w/-]+\s*){1,3}|"
                                 r"[A-Za-z][\w/]*)", part):
            if number(match.group(1)) != claim.after:
                continue
            word = match.group(2)
            if word.startswith("%"):  # "% of the time" (idle? waiting?) names no way
                measure = re.sub(r"^%\s+of\s+(?:the\s+)?", "", word).strip()
                return None if re.fullmatch(r"time\b.*", measure, re.I) else better_of(measure)
            unit = unit_of(word)
            return unit[2] if unit else better_of(word)
    return None


def _compressed(claim: Claim) -> Better | None:
    """A compression ratio in percent is the compressed size's share of the original: lower is better
    (written as a factor, ``2.4x``, it is the other way round, and left to the mail). A structure's
    size (pahole's ``/* size: 128, cachelines: 2 */``, ``sizeof(struct bio)``) is lower better too."""
    if claim.unit == "%" and re.search(r"\bcompress\w*\s+ratio\b", claim.label, re.I) and \
            max(claim.before, claim.after) <= 100:
        return "lower"
    if _STRUCT.search(claim.label) or _STRUCT.search(claim.source):
        return "lower"
    return None


_STRUCT = re.compile(r"/\*\s*size:\s*\d+|\bsizeof\b|\bcachelines\b|\bstruct\s+\w+\s+size\b|"
                     r"\bsize\s+of\s+(?:the\s+|a\s+)?(?:struct\b|structure\b)", re.I)


_MEMINFO = re.compile(r"(?:^|\s)(?P<key>[A-Za-z_]+(?:\(\w+\))?):\s+\d+\s*kB\s*$")
# /proc/meminfo's keys: what is left free, better higher; what the kernel holds, better lower (the page cache's,
# Cached, Buffers, Active, Inactive, are neither: a cache that holds more may serve more)
_MEMINFO_WAY: dict[str, Better] = {**dict.fromkeys(("MemFree", "MemAvailable"), "higher"),
                                   **dict.fromkeys(("Slab", "SReclaimable", "SUnreclaim", "KernelStack", "PageTables",
                                                    "Percpu", "VmallocUsed", "Committed_AS", "Dirty", "Writeback",
                                                    "AnonPages", "Shmem", "Mlocked"), "lower")}


def _meminfo(claim: Claim) -> Better | None:
    """A /proc/meminfo line (``Slab:  123456 kB``): its key's way, where it has one."""
    for part in claim.source.split(" / "):
        line = _MEMINFO.search(part)
        if line:
            return _MEMINFO_WAY.get(line.group("key"))
    return None


def _better(lines: list[str], k: int | None, claim: Claim) -> Better | None:
    """The first of the rules above that says which way the row is better."""
    found = _gain(claim) or _mmtests(claim) or _share(lines, k, claim) or _unit_after(claim) or \
        _compressed(claim) or _meminfo(claim)
    if found is not None or k is None:
        return found
    return _gain_column(lines, k, claim) or _headed(lines, k, claim) or _said_above(lines, k, claim.label)


def infer(lines: list[str], found: list[Claim]) -> list[Claim]:
    """Each claim with its better way, where the unit and the name left it open and the mail says it."""
    out = []
    index: dict[str, int] = {}
    for n, line in enumerate(lines):  # each line stripped, and its pipe cells joined as a reader quotes them
        for text in (line.strip(), "|".join(line.strip().split("|")[1:-1]).strip()):
            index.setdefault(text, n)
        words = line.split()
        for cut in (0, 1):  # its words one space apart, also without a side's name before the row's own
            index.setdefault(" ".join(words[cut:]), n)
    for claim in found:
        if claim.better is None:
            better = _better(lines, _where(index, claim), claim)
            claim = replace(claim, better=better) if better else claim
        out.append(claim)
    return _improved(lines, out, index)


_IMPROVES = re.compile(r"\b(?:improv(?:e|es|ed|ing|ement|ements)|faster|speed(?:s|ed)?[- ]?up|boost(?:s|ed)?|"
                       r"better\s+performance|outperforms?|gains?|reduc(?:e|es|ed|ing|tion))\b", re.I)
_WORSE = re.compile(r"\b(?:regress\w*|slower|worse|degrad\w*|drops?|penalty)\b", re.I)


def _improved(lines: list[str], found: list[Claim], index: dict[str, int]) -> list[Claim]:
    """Rows no rule gave a way, of one table, where the sentences above it say the change improves
    (``should also improve the performance``, ``is 20% faster``) and say nothing worse: the way nearly
    all of the table's rows moved (3 of 4 or more, two rows at least) is the better one."""
    tables: dict[int, list[int]] = {}
    for n, claim in enumerate(found):
        k = _where(index, claim) if claim.better is None else None
        head = _header(lines, k) if k is not None else None
        if head is not None:
            tables.setdefault(head, []).append(n)
    out = list(found)
    for head, rows in tables.items():
        said = " ".join(line for line in lines[max(0, head - _REACH):head] if _prose(line))
        moves = [found[n].direction for n in rows if found[n].direction != "none"]
        ups = moves.count("up")
        if len(moves) < 2 or not _IMPROVES.search(said) or _WORSE.search(said) or \
                max(ups, len(moves) - ups) * 4 < len(moves) * 3:
            continue
        way: Better = "higher" if ups * 2 > len(moves) else "lower"
        for n in rows:
            out[n] = replace(found[n], better=way)
    return out
