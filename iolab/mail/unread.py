"""The blocks of figures in a mail's text that no claim row was read from.

``unread(text, claims)`` takes the text the claim reader reads (a mail's
cover letter and each patch's description, iolab.mail.reading) and the rows
it returned, and finds what is left: a table (consecutive lines whose figures
are aligned in columns or split by pipes), a tool's output pasted, or prose
with two or more figures with a unit. What is not a result is passed over:
headers and trailers, diffstats, version changelogs ("v2: ..."), command
lines and job files (the benchmark reader shows those), dmesg, trace and
stack dumps, hex, dates, C, a machine's description, settings
("iodepth=32"), and a block whose figures are only changes ("+4.1%
throughput", "about 25% faster": no row's two sides can be written from
them). Each block says its first and last line in the text (``placed``: in
the mail's file), its first line, and how many figures its unread lines
hold, so that a developer sees where the mail's claim is that iolab did not
read, and can write the row by hand. A table read in part is listed too:
its rows not read may be claims. Blocks alike and near one another are one
place to fill and listed as one: a "before:" block and an "after:" one, a
test's sections one after another (headers the same but for figures, or
rows of figures the same shape), a table and its summary line in turn;
never across two parts of the text (a cover letter, a description). The
blocks likeliest to hold a claim come first (``likely``: two sides' words,
a change stated, figures with a unit, a table; prose less), as the
experiment shows only the first few; blocks equally likely keep the text's
order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.mail.claimed.model import NOT_MEASURED, NOT_TABLE, Claim, figures

HEADER = 60  # columns of a block's first line as shown


@dataclass(frozen=True)
class Block:
    """Lines of figures no claim row came from."""

    first_line: int  # 1-based, in the text read (or in the file lines_of names: placed())
    last_line: int
    header: str  # its first line, cut to HEADER columns
    figures: int  # the figures its unread lines hold
    lines_of: str = "text"  # what the line numbers count: "text" (the text read), or a file's name

    @property
    def where(self) -> str:
        """What its line numbers count, as a reader is told: "the text read", or the file's name."""
        return "the text read" if self.lines_of == "text" else Path(self.lines_of).name


# a figure as a table or a tool writes it: 1234, 1,234, 12.5, -3%, 4994MiB/s, 562K, 1.5x, 0m9.865s
_FIGURE = re.compile(r"^[~+-]?(?:\d[\d.]*-)?(?:\d+m)?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?:%|x|[a-zµμ]{1,6}(?:/[a-z]+)?)?$",
                     re.I)  # and a range, 25-50MB/s
_CELLS = re.compile("[\\s|,;()\\[\\]{}=<>±\u2500-\u257f]+|\\+/-")  # box drawing's │ too
_URL = re.compile(r"(?<![\w.+-])(?:[a-z][\w+.-]*://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)", re.I)  # each tried once
_LISTED = re.compile(r"^\s*(?:[-*]\s*)?(?:\(?\d{1,2}[.)]|\[\d+\])\s")  # a list's "1.", "(2)", "3)", a note's "[1]"
_RULE = re.compile("^[\\s+=|:*_~\u2500-\u257f-]{3,}$")  # a table's rule: ----, ====, +---+---+, ├──┼──┤
_ALIGNED = re.compile(r"\S(?: {2,}|\t+| ?\| ?)\S")  # a gap of columns, a tab, a pipe between cells

_DIFFSTAT = re.compile(r"^\s*\S+\s+\|\s+(?:\d+ ?[+-]*|Bin .*)\s*$|^\s*\d+ files? changed\b")
_PROGRAMS = (r"(?:sudo\s+)?(?:time\s+)?(?:fio|dd|taskset|numactl|perf|xfs_io|t/io_uring|\S*/io_uring|stress-ng|"
             r"sysbench|mkfs\S*|mount|umount|echo|cat|blktrace|bpftrace|modprobe|insmod|sysctl|fs_mark|dbench|"
             r"iozone|hdparm|qemu\S*|cd|git|make|cp|rm|tar|sync|[./~][\w./-]*)")
_COMMAND = re.compile(rf"^\s*\$\s+\S|(?:^|\s)[#$%]\s+{_PROGRAMS}(?:\s|$)|^\s*{_PROGRAMS}\s+[-\w\"'/<>|]", re.I)
_OPTIONS = re.compile(r"(?:^|\s)--?[a-z][\w-]*(?==|\s|$)", re.I)  # -iodepth=1, --direct=1, -p0
_JOB = re.compile(r"^\s*(?:\[[\w .:-]+\]|[a-z_][\w.]*=[^\s=,]*(?:\s+[a-z_][\w.]*=[^\s=,]*)*)\s*$",
                  re.I)  # fio's [section], key=value, several on a line
_DUMP = re.compile(r"^\s*(?:<\w+>)?\[\s*\d+\.\d+\]|\+0x[0-9a-f]+/0x[0-9a-f]+|^\s*(?:Call Trace|RIP|RSP|RAX|RBX|RCX|"
                   r"RDX|RBP|RSI|RDI|R\d\d|CR2|Code|Modules linked in|Hardware name|CPU: \d+ U?I?D?:? ?PID)\b|"
                   r"^\s*\S+-\d+\s+\[\d+\]\s+\S*\s*\d+\.\d+:", re.I)
_HEX = re.compile(r"\b(?:0x[0-9a-f]+|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,})\b", re.I)
# a date ("Fri, Jan 14, 2022 at 10:09:35AM", "Aug 17 12:34"), an 'ls -l' line, diff's "120c117", C code
_OTHER = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*,? [^:]{0,30}"
                    r"\d:\d\d\b|^\s*[-dlcb][rwxsStT-]{9}[.+@]?\s|^\d+(?:,\d+)?[acd]\d+(?:,\d+)?\s*$|^On .* wrote:\s*$")
_CODE = re.compile(r"^\s*[^\s/*].*[;{]\s*(?:/\*.*\*/)?\s*$|^\s*}\s*;?\s*$")  # C, as pahole prints it too
_ARGUMENT = re.compile(r"(?:^|\s)(?:-\S+|\S+=\S*)")  # a command's option, a job's key=value
# a machine's description ("Intel(R) Xeon(R) Gold 6338 @ 2.00GHz", "RAM: 64 GB"): no result unless it has one
_MACHINE = re.compile(r"\b(?:[GM]Hz|Xeon|EPYC|Ryzen|Opteron|Core\(TM\)|Intel\(R\)|Kunpeng|Neoverse|Graviton|Ampere|"
                      r"Snapdragon|Cortex|DDR\d|DRAM|DIMMs?|RAM)\b|\b(?:memory|mem|ram)\s*[:=]", re.I)
_CHANGES = re.compile(r"^\s*(?:[-*]\s*)?(?:v\d+\s*(?:->|-|:|\.\.|to\b)|(?:changes|changelog|change log)\b.*"
                      r"(?:v\d|:\s*$)|since\s+v\d|link to v\d)", re.I)


def cells(line: str) -> list[str]:
    """The line's words, cut at blanks, pipes, commas and brackets, less a URL or an address."""
    line = _LISTED.sub(" ", _URL.sub(" ", line))
    return [c.strip(".:*!'\"") for c in _CELLS.split(line) if c.strip(".:*!'\"")]


def count(line: str) -> int:
    """How many figures the line holds (a version, an identifier, a hex word is none)."""
    return sum(1 for c in cells(line) if _FIGURE.match(c))


def skipped(line: str) -> bool:
    """A line that is not a result: a header or trailer, a diffstat, a command line or job file's line,
    a dmesg, trace or stack line, hex, a date, C, a machine's description."""
    if NOT_TABLE.match(line.strip()) or NOT_MEASURED.match(line.strip()) or _DIFFSTAT.match(line) or _DUMP.search(line):
        return True
    if _JOB.match(line) or _OTHER.search(line) or (_CODE.match(line) and not _units(line)):
        return True
    if _MACHINE.search(line) and not figures(line):
        return True
    if _COMMAND.search(line) or len(_OPTIONS.findall(line)) >= 2:
        return not figures(_ARGUMENT.sub(" ", line))  # a command, unless its result follows it
    return len(_HEX.findall(line)) >= 2


def passed(lines: Sequence[str]) -> set[int]:
    """The lines (0-based) that are not results: each line skipped, a command's continued lines
    (after a trailing backslash) and the version changelogs."""
    out = {k for k, line in enumerate(lines) if skipped(line)} | _changelogs(lines)
    for k, line in enumerate(lines):
        if line.rstrip().endswith("\\"):  # a command line continued on the next
            out |= {k, k + 1}
    return out


def _changelogs(lines: Sequence[str]) -> set[int]:
    """The lines of the mail's version changelogs: from a line that names a version ("v2:", "Changes
    since v1") to the next paragraph that is not a list."""
    out: set[int] = set()
    inside = False
    for k, line in enumerate(lines):
        if _CHANGES.match(line):
            inside = True
        elif inside and line.strip() and not lines[k - 1].strip() and not (line[:1].isspace()
                                                                           or line.lstrip()[:1] in "-*+"):
            inside = False
        if inside:
            out.add(k)
    return out


def _normal(text: str) -> str:
    return " ".join(text.split())


def read_lines(lines: Sequence[str], claims: Iterable[Claim]) -> set[int]:
    """The lines (0-based) a claim row was read from: its source, or a part of it ("a / b", a row
    joined across lines), found in them."""
    parts = {_normal(p) for c in claims for p in re.split(r" / |\n", c.source) if _normal(p)}
    out = set()
    for k, line in enumerate(lines):
        mine = _normal(line)
        if mine and any(mine == p or (len(mine) >= 12 and mine in p) or (len(p) >= 12 and p in mine)
                        for p in parts):
            out.add(k)
    return out


_SIZED = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:[KMGTP]i?B|[KMG](?![a-z])|x|times|[kM]?pps|"
                    r"[A-Za-z]+/s(?:ec)?)(?![\w/])", re.I)  # sizes, factors and rates model.figures leaves out
_KEYED = re.compile(r"[\w)]\s?[:=]\s*[~+-]?\d")  # a tool's "name: value", "avg=99.81"
_RESULT = r"(?:iops|bw|bandwidth|lat\w*|avg|mean|min|max|stdev|p\d+\w*|usr|sys|ctx|cpu|io|run|runt|util|aggrb|" \
          r"throughput|time|qps|ops|rate|speed|real|user|elapsed|med\w*)"
# a setting, "iodepth=32", "bs=4k", "queue_mode=2": a whole number or a size given to a key not a result's name
_SETTING = re.compile(rf"\b(?!{_RESULT}\b)[a-z_][\w.]*\s?=\s?\d+[kmgt]?\b(?![.%/])", re.I)


def _units(line: str) -> int:
    """The figures of the line written with a unit (a time, a rate, a size, a share, a factor)."""
    return max(len(figures(line)), len(_SIZED.findall(line)))


# a change stated alone: "+4.1%", "by ~30%", "25% faster", "2x": no row's before and after can be written from it
_CHANGE = re.compile(r"(?:[+-]|~|\bby\s+(?:about\s+|around\s+|roughly\s+|~)?|\bup\s+to\s+~?)\d[\d.]*\s?%|\b~?\d[\d.]*\s?"
                     r"(?:%|x|times)\s+(?:faster|slower|better|worse|more|less|higher|lower|improve\w*|regress\w*|"
                     r"increase\w*|decrease\w*|reduc\w*|speedup|gain\w*|drop\w*|overhead|boost\w*|win)\b|\b\d[\d.]*x\b",
                     re.I)


def _change_only(line: str) -> bool:
    """A line whose figures are all changes stated (no value of a side: a figure left, a clock's 81:04)."""
    return bool(_CHANGE.search(line)) and not re.search(r"(?<![\w.])\d", _CHANGE.sub(" ", line))


def _data(line: str) -> bool:
    """A line that holds a result's figure: aligned in columns, with a unit, named by a key, or
    a line of figures alone; not a line whose only figures are settings ("iodepth=32, bs=4k")."""
    found = count(line)
    if not found or not count(_SETTING.sub(" ", line)):  # none, or only settings: a setup, not a result
        return False
    words = len(line.split())  # in prose a size is no result ("a 4 KiB page"): a time, a rate, a share is
    return bool(_ALIGNED.search(line.strip()) or figures(line) or _KEYED.search(line) or 2 * found >= words)


def _segments(lines: Sequence[str], passed: set[int]) -> Iterable[list[int]]:
    """Runs of lines that are neither blank nor passed over: a paragraph, a table, a tool's output."""
    run: list[int] = []
    for k, line in enumerate(lines):
        if line.strip() and k not in passed:
            run.append(k)
            continue
        if run:
            yield run
        run = []
    if run:
        yield run


def _block(lines: Sequence[str], run: list[int], done: set[int]) -> Block | None:
    """The run's lines of figures, its header above them, when enough of them are unread."""
    data = [k for k in run if _data(lines[k])]
    unread_data = [k for k in data if k not in done]
    if not unread_data or all(_change_only(lines[k]) for k in unread_data):
        return None
    first = run[0] if data[0] - run[0] <= 2 else data[0]  # a table's header of two lines: its first
    while first > run[0] and (first == data[0] or _RULE.match(lines[first])):
        first -= 1  # the line above, over a table's rule: its header
    units = sum(_units(lines[k]) for k in unread_data)
    one = lines[unread_data[0]]
    if len(unread_data) < 2 and units + len(_KEYED.findall(one)) < 2 and not (
            first < data[0] and count(one) >= 2 and _ALIGNED.search(one.strip())):  # a table of one row
        return None
    return Block(first + 1, data[-1] + 1, _cut(lines[first]), sum(count(lines[k]) for k in unread_data))


def unread(text: str, claims: Iterable[Claim], parts: Sequence[str] = ()) -> tuple[Block, ...]:
    """The blocks of figures in the text that no claim row was read from (see the module's text). ``parts``:
    the pieces the text joins with a blank line (a cover letter, each description: Mail.parts()), which
    no block spans."""
    lines = text.splitlines()
    over = passed(lines)
    done = read_lines(lines, claims)
    found = _joined(lines, over, _starts(text, parts), [
        block for block in (_block(lines, run, done) for run in _segments(lines, over)) if block is not None])
    return tuple(sorted(found, key=lambda block: -likely(lines, block)))  # the likeliest first, else in the text's order


GAP = 4  # lines of text at most between two blocks alike that are one place to fill (blank and passed over aside)
SPAN = 12  # lines of any kind at most between them


def _key(header: str) -> str:
    """A header less its figures and sides' words: "Test 2: sync_mod = 1" and "Test 3: sync_mod = 2" are one."""
    return " ".join(_SIDES.sub(" ", re.sub(r"[\d.,]+", " ", header.lower())).split())


def _shape(lines: Sequence[str], block: Block) -> tuple[int, ...]:
    """How many figures each line of figures of the block holds."""
    return tuple(n for n in map(count, lines[block.first_line - 1:block.last_line]) if n)


def _alike(lines: Sequence[str], one: Block, two: Block) -> bool:
    """Two blocks of one result: their headers the same but for figures and sides' words, or naming
    each a side and not the same ("before:", "after:"), or their rows of figures the same shape."""
    sides = [{m.group(0).lower() for m in _SIDES.finditer(block.header)} for block in (one, two)]
    shape = _shape(lines, one)
    return (_key(one.header) == _key(two.header) and bool(_key(one.header).strip(":"))
            or all(sides) and sides[0] != sides[1] or len(shape) >= 2 and shape == _shape(lines, two))


def _starts(text: str, parts: Sequence[str]) -> set[int]:
    """The lines (0-based) of the text where each of its parts after the first begins."""
    if "\n\n".join(parts) != text:
        return set()
    ends = accumulate(len(part) + 2 for part in parts[:-1])  # each part and the blank line after it
    return {text.count("\n", 0, end) for end in ends}


def _near(lines: Sequence[str], over: set[int], starts: set[int], one: Block, two: Block) -> bool:
    """The second block follows the first after at most GAP lines of text (a blank line, a command, a trace:
    a line passed over, is none) and SPAN lines in all, in the same part of the text."""
    between = range(one.last_line, two.first_line - 1)  # 0-based
    return len(between) <= SPAN and sum(1 for k in between if lines[k].strip() and k not in over) <= GAP and \
        not any(one.last_line <= k < two.first_line for k in starts)


def _joined(lines: Sequence[str], over: set[int], starts: set[int], blocks: Sequence[Block]) -> list[Block]:
    """The blocks (in the text's order), each run of blocks near one another (_near), each alike the one or
    the two before it, made one: one place to fill, as a "before:" block and an "after:" one, a test's
    sections one after another, or a table and its summary line in turn."""
    near = [j > 0 and _near(lines, over, starts, blocks[j - 1], blocks[j]) for j in range(len(blocks))]
    joins = [False] * len(blocks)  # the block is one with the block before it
    for j in range(1, len(blocks)):
        if near[j] and _alike(lines, blocks[j - 1], blocks[j]):
            joins[j] = True
        elif j >= 2 and near[j] and near[j - 1] and _alike(lines, blocks[j - 2], blocks[j]):
            joins[j - 1] = joins[j] = True
    out: list[Block] = []
    for block, join in zip(blocks, joins):
        if join:
            out[-1] = replace(out[-1], last_line=block.last_line, figures=out[-1].figures + block.figures)
        else:
            out.append(block)
    return out


# a side's word ("before", "patched", "w/o", "->"): a block naming two compares them
_SIDES = re.compile(r"\b(?:before|after|base(?:line)?|patch(?:ed|set)?|with(?:out)?|w/o|vanilla|stock|unpatched|"
                    r"orig(?:inal)?|old|new|mainline|master|revert(?:ed)?|upstream)\b|->|\u2192|\bvs\b", re.I)
# a change stated: "+12%", "-3.5 %", "20% faster", "1.5x", a column named delta (not _CHANGE, which takes "by 30%"
# and "~30%" too: with it here one fewer missed row was in the first 3 on s6..s10-check, 365 -> 364)
_DELTA = re.compile(r"[+-]\s?\d[\d.]*\s?%|\b\d[\d.]*\s?%\s*(?:faster|slower|better|worse|more|less|higher|lower|"
                    r"improve|regress|increase|decrease|reduc)|\b\d[\d.]*x\b|\b(?:delta|diff|change|improve\w*|"
                    r"regress\w*|speedup|gain)\b", re.I)


def likely(lines: Sequence[str], block: Block) -> int:
    """How likely the block (numbered in ``lines``) holds a claim: one point each for two sides' words in it
    or the two lines above it, a change stated, two figures with a unit, two rows of aligned figures; one
    point less for prose (no figures aligned, four words or more to a figure: a setup, a remark, one side)."""
    run = lines[block.first_line - 1:block.last_line]
    sides = {m.group(0).lower() for line in [*lines[max(block.first_line - 3, 0):block.first_line - 1], *run]
             for m in _SIDES.finditer(line)}
    table = sum(bool(_ALIGNED.search(line.strip())) and count(line) >= 2 for line in run) >= 2
    prose = not any(_ALIGNED.search(line.strip()) for line in run) and \
        sum(len(line.split()) for line in run) >= 4 * max(sum(map(count, run)), 1)
    return ((len(sides) >= 2) + any(_DELTA.search(line) for line in run) + (sum(map(_units, run)) >= 2)
            + table - prose)


def _cut(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= HEADER else line[:HEADER - 3] + "..."


SLACK = 4  # lines the file may hold in a block that the text read leaves out (a "---" before a patch's notes)


def run_at(have: Sequence[str], run: Sequence[str], start: int = 0) -> int | None:
    """Where the run of lines first is, whole and as it is, in the lines from ``start`` (None: nowhere)."""
    return next((k for k in range(start, len(have) - len(run) + 1) if have[k:k + len(run)] == run), None)


def _found(have: Sequence[str], run: Sequence[str], start: int) -> tuple[int, int] | None:
    """Where the run of lines is in the file's lines from ``start`` (0-based, first and last): as a whole, else
    its lines in order with at most SLACK lines more between its first and its last."""
    whole = run_at(have, run, start)
    if whole is not None:
        return whole, whole + len(run) - 1
    for k in (k for k in range(start, len(have)) if have[k] == run[0]):
        rest = iter(have[k + 1:k + len(run) + SLACK])
        if all(line in rest for line in run[1:]):  # each next line further on
            return k, have.index(run[-1], k + len(run) - 1, k + len(run) + SLACK)
    return None


def placed(blocks: Iterable[Block], text: str, files: Mapping[str, str]) -> tuple[Block, ...]:
    """The blocks numbered by the lines of the mail's file that holds each, its lines found there as they
    are in the text read, in order (_found); a block not found so (a mail sent quoted-printable) keeps the
    text's."""
    lines = text.splitlines()
    held = {name: [line.rstrip() for line in content.splitlines()] for name, content in files.items()}
    after = dict.fromkeys(held, 0)
    out = list(blocks)
    for i in sorted(range(len(out)), key=lambda i: out[i].first_line):  # sought in the text's order, kept in theirs
        block = out[i]
        run = [line.rstrip() for line in lines[block.first_line - 1:block.last_line]]
        spot = next(((name, span) for name, have in held.items() if (span := _found(have, run, after[name]))), None)
        if spot is None:
            continue
        name, (first, last) = spot
        after[name] = last + 1
        out[i] = replace(block, first_line=first + 1, last_line=last + 1, lines_of=name)
    return tuple(out)


def placed_in(blocks: Iterable[Block], text: str, paths: Iterable[str | Path]) -> tuple[Block, ...]:
    """The blocks numbered by the lines of the mail's files at ``paths`` (placed()); a file that cannot
    be read (a mail given on stdin, or gone) leaves its blocks the text's numbers."""
    return placed(blocks, text, files_at(paths))


def files_at(paths: Iterable[str | Path]) -> dict[str, str]:
    """The mail files' contents by name, whose lines a block's numbers count (a file that cannot be read
    counts none)."""
    files = {}
    for path in dict.fromkeys(map(str, paths)):
        try:
            files[path] = Path(path).read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
    return files
