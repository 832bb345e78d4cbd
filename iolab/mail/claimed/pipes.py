"""Pipe tables in a mail's text: markdown, or ASCII boxes.

Also a table whose line breaks were lost (a web archive's copy: its
``|---|`` line gives the column count). Read across (the first figure is
before, the second after, unless the header names the after side first),
or down when its two rows are the sides (``Before change`` / ``After
change``, ``6.15.1`` / ``6.15.1+revert``): then each column is a claim;
rows that state their change in each cell against a baseline row
(``ZWP mq-deadline  943 (+0%)`` against ``ZWL (baseline)``) each against it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.axes import side_columns
from iolab.mail.claimed.brought import brought_columns
from iolab.mail.claimed.grids import named_unit, prose_only, side_tables, sided_grid
from iolab.mail.claimed.groups import group_cells
from iolab.mail.claimed.model import PERCENT, Claim, Unit, aligned, make, number, said_unit, unit_of
from iolab.mail.claimed.naming import introduced, introduced_all, row_sides, side_groups, side_of
from iolab.mail.claimed.rows import word_sides
from iolab.mail.claimed.runs import run_means
from iolab.mail.claimed.steps import step_pair
from iolab.mail.claimed.switches import switch_names, switch_order

_RULE_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
_CROSSING = re.compile(r"^\s*-{3,}(?:\+-{3,})+\s*$")  # an org-mode rule between pipes ("|-----+-----|")
_BORDER = re.compile(r"^[+=|-][-+=| ]*$")
_SIZE = re.compile(r"^\s*\d+(?:\.\d+)?\s*[KMGT]i?B\s*$")  # a size (an I/O size seen by iostat): no measure
_PADDING = re.compile(r"(?<![^\s|])_+(?![^\s|])")  # "|__ 6604 (630 MiB) __|_ Time _|": underscores that pad a cell
_MIN_SEC = re.compile(r"^\s*(\d+)m(\d+(?:\.\d+)?)s\b")  # time(1)'s "4m12.249s" in a cell


def unpadded(text: str) -> str:
    """A table line with the underscores that pad its cells (an underscore-ruled box) as spaces;
    an identifier's underscores (``__blk_mq_alloc``) stay."""
    return _PADDING.sub(lambda m: " " * len(m.group()), text) if text.count("|") >= 2 else text


def _pipe_rows(line: str) -> list[list[str]]:
    """The rows of pipe-table text; a line that holds a whole table (its
    line breaks lost) is cut into rows by the column count of its rule."""
    start, end = line.find("|"), line.rfind("|")
    if start < 0 or end <= start:
        return []
    if not line.startswith("|") and not any(_RULE_CELL.match(c) for c in line.split("|")):
        cells = line.split("|")  # "6.15.1 |   362  |  2KiB": no outer pipes (or only the last)
        return [cells[:-1] if line.rstrip().endswith("|") else cells]
    cells = line.split("|")
    rule = next((k for k, c in enumerate(cells) if _RULE_CELL.match(c)), None)
    if rule is None and not line.rstrip().endswith("|"):
        return [cells[1:]]  # "|  numjobs=2  |  numjobs=4": no pipe after its last cell
    if rule is None or (cells[0].strip() == "" and cells[-1].strip() == "" and
                        all(_RULE_CELL.match(c) for c in cells[1:-1])):
        return [line[start:end + 1].split("|")[1:-1]]
    width = 1
    while rule + width < len(cells) and _RULE_CELL.match(cells[rule + width]):
        width += 1
    if rule + width >= len(cells) - 1:  # the rule ends the line: a table of lines, not one line
        return [line[start:end + 1].split("|")[1:-1]]
    rows = []
    if rule - 1 - width >= 0 and not cells[rule - 1].strip():
        rows.append(cells[rule - 1 - width:rule - 1])  # the header, before the rule
    rows.append(cells[rule:rule + width])
    k = rule + width + 1
    while k + width < len(cells) and not cells[k - 1].strip():
        rows.append(cells[k:k + width])
        k += width + 1
    return rows


def _tables(lines: list[str]) -> list[tuple[int, list[list[str]]]]:
    """Each pipe table and the line it starts at."""
    tables: list[tuple[int, list[list[str]]]] = []
    current: list[list[str]] = []
    start = 0
    texts = [unpadded(line.strip().lstrip(">").strip()) for line in lines]
    for k, text in enumerate(texts):
        near = [t for t in _neighbours(texts, k) if t.count("|") >= 2 or ("+" in t and _BORDER.match(t))]
        if text.count("|") >= 3 or (text.count("|") >= 2 and (current or near)):
            start = start if current else k
            current += _pipe_rows(text)
        elif current and text and set(text) <= set("+-=~| "):
            continue  # an ASCII box's border
        else:
            if current:
                tables.append((start, current))
            current = []
    if current:
        tables.append((start, current))
    return [(k, [row for row in table if not all(_RULE_CELL.match(c) or not c.strip() for c in row)])
            for k, table in tables]


def _header_above(lines: list[str], k: int, table: list[list[str]]) -> list[list[str]]:
    """The table with the line of words above its first row of figures as its header, when that line
    has no pipes and names one column a figure cell (``  Mainline     Patch`` over a rule, then
    ``RAID1  | 18.9 MiB/s | 26.5 MiB/s``)."""
    if not table or not any(_first(c) is not None for c in table[0][1:]):
        return table
    j = k - 1
    while j >= 0 and len(lines[j].strip()) >= 3 and set(lines[j].strip()) <= set("-=+"):
        j -= 1  # a rule under the header
    above = lines[j].strip() if j >= 0 else ""
    names = [n for n in re.split(r"\s{2,}|\t", above) if n]
    if "|" in above or re.search(r"\d", above) or len(names) != len(table[0]) - 1 or len(names) < 2:
        return table
    return [["", *names], *table]


def _neighbours(texts: list[str], k: int) -> list[str]:
    """The lines above and below line k, past a rule of dashes between a table's rows."""
    out = []
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(texts) and len(texts[j]) >= 3 and set(texts[j]) <= set("-="):
            j += step
        out += [texts[j]] if 0 <= j < len(texts) else []
    return out


_LEADING = re.compile(r"^\s*(~?[+-]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?:[kKMG](?![A-Za-z]))?)(?=[A-Za-zµ/%\s(]|$)\s*(.*)$")


def _first(cell: str) -> float | None:
    """The figure a cell opens with ("101.8ms": 101.8; "4m12.249s": 252.249 seconds)."""
    timed = _MIN_SEC.match(cell)
    if timed:
        return int(timed.group(1)) * 60 + float(timed.group(2))
    found = _LEADING.match(cell)
    return number(found.group(1)) if found else None


def _unit(cell: str) -> Unit | None:
    """The unit written after a cell's figure ("101.8ms", "2064.6 GiB/s")."""
    if _MIN_SEC.match(cell):
        return unit_of("s")
    found = _LEADING.match(cell)
    return unit_of(found.group(2)) if found and found.group(2) else None


def _sides(body: list[list[str]]) -> tuple[list[str], list[str]] | None:
    """The two rows, before then after, when a table's rows are the two sides."""
    order = (row_sides(body[0][0], body[1][0]) or word_sides(body[0][0], body[1][0])) if len(body) == 2 else None
    return (body[order[0]], body[order[1]]) if order else None


def _down(header: list[str], before: list[str], after: list[str], said: Unit | None) -> list[Claim]:
    out = []
    for k in range(1, min(len(header), len(before), len(after))):
        a, b = _first(before[k]), _first(after[k])
        if _SIZE.match(before[k]) or _SIZE.match(after[k]):
            continue
        if a is not None and b is not None and header[k].strip():
            unit = _unit(before[k]) or unit_of(header[k]) or said
            out.append(make(header[k].strip(), a, aligned(b, _unit(after[k]), _unit(before[k])), unit, None, "",
                            f"{header[k].strip()}: {'|'.join(before).strip()} / {'|'.join(after).strip()}"))
    return out


def _across(header: list[str], body: list[list[str]], said: Unit | None, about: list[str]) -> list[Claim]:
    named = [c.strip() for c in header[1:] if c.strip()]
    deltas = _delta_column(header) or any(_stated_change(row) for row in body)  # a delta after two figures
    step = step_pair([c.strip() for c in header])  # "| before | p 1 | p 2+3 |": the first against the last
    pairs = [step] if step else side_columns([c.strip() for c in header]) or \
        brought_columns([c.strip() for c in header], about)  # "| none | bitmap | llbitmap |" under "md/llbitmap"
    if len(named) >= 2 and not any(side_of(n) for n in named) and not deltas and not pairs:
        return []  # columns that are modes or devices with no delta: no before and after
    if not step and (len(pairs) > 1 or pairs and pairs[0][:2] not in ((1, 2), (2, 1))):
        return paired_cells(header, body, pairs, said)  # "| jobs | 4.18 | 5.6 | 5.6-patched |": each pair
    swap = bool(pairs) and pairs[0][0] > pairs[0][1]  # "| test | patched | base |": the after side first
    out, name = [], ""
    for row in body:
        found = [(k, v) for k, v in ((k, _first(c)) for k, c in enumerate(row) if k) if v is not None
                 and (not step or k in step[:2])]
        name = _row_name(row, name, found[0][0] if found else 0)
        if len(found) < 2 or not name:
            continue
        (ka, a), (kb, b) = found[0], found[1]
        kinds = [(_unit(row[k]) or ("", "", None))[1] for k in (ka, kb)]
        if kinds[0] != kinds[1]:
            continue  # "| 11.14s | 3808 |": a time and a count, two measures of the row
        if swap:
            (ka, a), (kb, b) = (kb, b), (ka, a)
        stated = next((c.strip().lstrip("~") for c in row if PERCENT.match(c.strip().lstrip("~"))), "")
        unit = _unit(row[ka]) or unit_of(row[0]) or (named_unit(header[ka]) if ka < len(header) else None) or said
        out.append(make(name, a, aligned(b, _unit(row[kb]), _unit(row[ka])), unit, None, stated, "|".join(row).strip()))
        out += _parts(header[0], row[0], row[ka], row[kb], "|".join(row).strip())
    return out


def paired_cells(header: list[str], body: list[list[str]], pairs: list[tuple[int, int, str]],
                 said: Unit | None) -> list[Claim]:
    """Each row's before and after cells of each pair of columns the header names (a column in no pair
    is context): a claim per row and pair, named by the row and the pair's key."""
    out, name = [], ""
    for row in body:
        name = _row_name(row, name, min(b for b, _, _ in pairs))
        for b, a, key in pairs:
            if max(a, b) >= len(row) or _first(row[b]) is None or _first(row[a]) is None or not name:
                continue
            unit = _unit(row[b]) or _unit(row[a]) or unit_of(row[0]) or named_unit(header[b]) or said
            label = f"{header[0].strip()} {name}" if _first(name) is not None else name
            label = f"{label} ({key})" if len(pairs) > 1 and key else label  # "jobs 24 (4k)"
            out.append(make(label, _first(row[b]) or 0.0, aligned(_first(row[a]) or 0.0, _unit(row[a]), _unit(row[b])),
                            unit, None, "", "|".join(row).strip()))
    return out


def _stated_change(row: list[str]) -> bool:
    """A row that states its change: a percentage after two figures that agrees with their change
    (``| 100 | 120 | +20% |``, ``| 100 | 80 | 20% |``), not a share beside them (``| 450 | 300 | 75% |``)."""
    figures = [(_first(c), bool(PERCENT.match(c.strip().lstrip("~")))) for c in row[1:]]
    shown = [(v, share) for v, share in figures if v is not None]
    for k in range(2, len(shown)):
        (a, share_a), (b, share_b), (p, delta) = shown[k - 2], shown[k - 1], shown[k]
        if delta and not share_a and not share_b and a and b is not None and p is not None:
            change = (b - a) / abs(a) * 100
            if abs(abs(change) - abs(p)) <= max(1.0, 0.1 * abs(p)) or abs(b / a * 100 - abs(p)) <= max(1.0, 0.1 * abs(p)):
                return True
    return False


def _row_name(row: list[str], above: str, first: int) -> str:
    """A row's name: its first cell, or the row's above when that cell is blank (a test's second
    measure under its first), with the words of the cells before its figures (``| CoreOS | Size |``)."""
    if not row[0].strip() and not above:
        return ""
    head = row[0].strip() or above.rsplit(" / ", 1)[0]
    words = [c.strip() for c in row[1:first] if c.strip()]
    return " / ".join([head, *words]) if words and all(_first(w) is None for w in words) else head


def _parts(names: str, label: str, before: str, after: str, source: str) -> list[Claim]:
    """The figures after the first of cells of several (``16 / 11 / 10e5c`` under ``ebs / leaves /
    Index``): one claim per part the corner cell names, both sides' parts figures."""
    parts = [p.strip() for p in names.split("/")]
    cells = [[number(p.strip()) for p in cell.split("/")] for cell in (before, after)]
    if len(parts) < 2 or any(len(c) != len(parts) for c in cells):
        return []
    return [make(f"{label.strip()} {parts[k]}", cells[0][k] or 0.0, cells[1][k] or 0.0, None, None, "", source)
            for k in range(1, len(parts)) if cells[0][k] is not None and cells[1][k] is not None]


def _introduced(names: list[str], lines: list[str]) -> tuple[str, str] | None:
    """(before, after) of two variants when the text says the change brings one of them
    ("This patch introduces the use of the Intel QAT"), or when their names are the sides."""
    said = introduced(names, lines)
    if said is not None:
        return names[1 - said], names[said]
    order = row_sides(*names)
    return (names[order[0]], names[order[1]]) if order else None


def _variant_rows(header: list[str], body: list[list[str]], lines: list[str]) -> list[Claim] | None:
    """Rows that name a variant and a key (``| Intel QAT | 4096 | 538 MiB/s |`` ... ``| deflate | 4096 |
    499 MiB/s |``): the rows of one key paired across the two variants, a claim per figure column."""
    names = list(dict.fromkeys(row[0].strip() for row in body))
    if len(names) != 2 or len(body) < 4 or any(len(row) < 3 for row in body):
        return None
    rows = {n: {row[1].strip(): row for row in body if row[0].strip() == n} for n in names}
    common = [key for key in rows[names[0]] if key in rows[names[1]]]
    order = _introduced(names, lines) if len(common) >= 2 else None
    if order is None:
        return None
    out = []
    for key in common:
        before, after = rows[order[0]][key], rows[order[1]][key]
        for c in range(2, min(len(header), len(before), len(after))):
            a, b = _first(before[c]), _first(after[c])
            if a is not None and b is not None:
                out.append(make(f"{header[c].strip()}, {header[1].strip()} {key}", a, b,
                                _unit(before[c]) or unit_of(header[c]), None, "", "|".join(after).strip()))
    return out


def pipe_tables(lines: list[str], about: list[str] | None = None) -> list[Claim]:
    """Every pipe table's claims: a cell per variant, or read down when its rows are the sides, else across
    (``about``: the patches' subjects, ``Subject: ...`` lines, read only for what a change drops or brings)."""
    claims, used = side_tables(lines)
    for k, table in _tables(lines):
        if k in used:
            continue
        table = _wrapped(_header_above(lines, k, table))
        variants = grouped(lines, k) or group_cells(lines, k) or sided_grid(lines, k, about)
        if variants is not None:
            claims += variants[0]
            continue
        if len(table) < 2:
            continue
        table = run_means(table)  # "| 1st run |", "| 2nd run |": one row, each side's mean
        against = _against_baseline(table, lines) or _introduced_rows(table, lines)
        if against is not None:
            claims += against
            continue
        header, body = table[0], table[1:]
        if len(header) == len(body[0]) - 1:
            header = ["", *header]  # "|  Nodatasum | Device speed |" above "Read (Vanilla) | ... |": no label cell
        variants_of = _variant_rows(header, body, lines)
        if variants_of is not None:
            claims += variants_of
            continue
        sides, said = _sides(body), said_unit(prose_only(lines), k)
        order = switch_order([row[0] for row in body], about or []) if not sides and len(body) == 2 else None
        sides = (body[order[0]], body[order[1]]) if order else sides  # "| poll=0 |" / "| poll=1 |": the knob added
        groups = side_groups([row[0] for row in body]) if not sides and len(body) > 2 else []
        if groups:  # "Read (Vanilla)", "Read (Patched)", "Write (Vanilla)", ...: each pair read down
            for key, b, a in groups:
                claims += [replace(c, label=f"{key} {c.label}") for c in _down(header, body[b], body[a], said)]
            continue
        if sides and not _delta_column(header):  # a column of the changes: the two before it are compared
            claims += _down(header, *sides, said)
        else:
            switch = switch_names([c.strip() for c in header[1:]], about or []) if len(header) == 3 else None
            claims += _across([header[0], *switch] if switch else header, body, said, about or [])  # "| send | send-zc |"
    return claims


_DELTA_NAME = re.compile(r"^(?:diff\w*|delta|change|gain|improvement|speed-?up|%\s*\w*)$", re.I)


def _delta_column(header: list[str]) -> bool:
    """A header whose last column names the change (``| IOPS (IRQ mode) | IOPS (iopoll=1 mode) | diff``)
    after two columns of figures: each row compares those two."""
    named = [c.strip() for c in header[1:] if c.strip()]
    return len(named) == 3 and _DELTA_NAME.match(named[-1]) is not None


# -- rows against a baseline row ------------------------------------------------------------


def _has_figures(row: list[str]) -> bool:
    return any(_first(c) is not None for c in row[1:])


_RELEASE = re.compile(r"\(v?\d+\.\d+(?:\.\d+)?(?:-rc\d+)?\)|\b(?:mainline|vanilla|stock|upstream)\b", re.I)


def _introduced_rows(table: list[list[str]], lines: list[str]) -> list[Claim] | None:
    """Rows of variants against the one the change does not bring (``pid``, where "this patch introduces
    three balancing methods: rotation, latency, and devid"): a row of a name alone heads the rows of
    numbers under it (``rotation`` / ``196608``). Each variant's cell against the baseline's, in the
    columns whose figures carry a unit: bare counts beside them say how the work spread."""
    table = [row for row in table if not (len(row) == 1 and _CROSSING.match(row[0]))]  # org-mode's rules
    start = next((k for k, row in enumerate(table) if _has_figures(row)), 0)
    width = len(table[start]) if start else 0
    if not start or any(len(row) != width for row in table[start:]):
        return None
    heads = [row for row in table[:start] if len(row) == width]  # a cell spanning two columns names neither
    header = [" ".join(c.strip() for c in cells).strip() for cells in zip(*heads)] if heads else [""] * width
    rows: list[tuple[str, list[str]]] = []
    group = ""
    for row in table[start:]:
        label = row[0].strip()
        if not _has_figures(row):
            group = label
            continue
        rows.append((f"{group} {label}" if group and re.fullmatch(r"[\d.]+[kKM]?", label) else label, row))
    said = set(introduced_all([re.sub(r"[^A-Za-z\w-].*$", "", n) for n, _ in rows], lines))
    base = [row for k, (_, row) in enumerate(rows) if k not in said]
    if len(base) > 1:  # "Buddy Allocator (v5.7)" beside "With --prefetch": the row naming a release is the base
        base = [row for row in base if _RELEASE.search(row[0])]
    if len(base) != 1 or not said:
        return None
    out = []
    for k in sorted(said):
        label, row = rows[k]
        for c in range(1, len(row)):
            a, b = _first(base[0][c]), _first(row[c])
            unit = _unit(base[0][c]) or _unit(row[c]) or unit_of(header[c])
            b = None if b is None else aligned(b, _unit(row[c]), unit)  # "6.8 KB/s" against "2.6 MB/s"
            if a is not None and b is not None and unit is not None and unit[0] != "%":
                out.append(make(f"{label} {header[c]}", a, b, unit, None, "", "|".join(row).strip()))
    return out


def _wrapped(table: list[list[str]]) -> list[list[str]]:
    """The table with a header wrapped over lines joined column by column (``Irritator |  |``,
    ``wakeup | Without | With``, ``period | Patch | Patch``: ``Without Patch``): lines of no figures
    over the first row of figures, as wide as it (or shorter when blank but for their first cell: a
    group's name over two columns is no wrapped name)."""
    head = 0
    while head < len(table) and not any(_first(c) is not None for c in table[head][1:]):
        head += 1
    if head < 2 or head == len(table) or any(len(row) > len(table[head]) or len(row) < 2 or
                                             len(row) < len(table[head]) and any(c.strip() for c in row[1:]) or
                                             set("".join(row)) <= set("-=+~: ") for row in table[:head]):
        return table
    width = len(table[head])
    rows = [row + [""] * (width - len(row)) for row in table[:head]]
    return [[" ".join(c.strip() for c in column if c.strip()) for column in zip(*rows)], *table[head:]]


def _merged(rows: list[list[str]]) -> list[list[str]]:
    """Rows with a row's second line joined to it (a box table's ``|mq-deadline| (+0%) |`` under
    ``|    ZWP    | 943 |``): a line of no figures under one of as many cells."""
    out: list[list[str]] = []
    for row in rows:
        if out and len(row) == len(out[-1]) and not any(_first(c) is not None for c in row[1:]):
            out[-1] = [f"{a.strip()} {b.strip()}".strip() for a, b in zip(out[-1], row)]
        else:
            out.append(list(row))
    return out


def _against_baseline(table: list[list[str]], lines: list[str]) -> list[Claim] | None:
    """A table of a baseline row (its label named so: ``against ZWL (baseline)``, or a before side)
    and rows that state their change against it in each cell (``943 (+0%)``): a claim per row and column."""
    rows = _merged(table)
    if len(rows) < 3:
        return None
    header, body = rows[0], rows[1:]
    header = ["", *header] if len(header) == len(body[0]) - 1 else header
    if not any(_STATED.search(c) for row in body for c in row[1:]):
        return None  # no row states its change: no rows against a baseline
    text = " ".join(lines)
    named = [k for k, row in enumerate(body) if row[0].split() and (side_of(row[0]) == "before" or re.search(
        rf"(?<![\w-]){re.escape(row[0].split()[0])}\s*\((?:the\s+)?baseline\)", text, re.I))]
    if len(named) != 1 or len(header) != len(body[0]):
        return None
    base = body[named[0]]
    others = [row for row in body if row is not base and len(row) == len(base)]
    if not others or not all(any(_STATED.search(c) for c in row[1:]) for row in others):
        return None
    out = []
    for row in others:
        for k in range(1, len(row)):
            a, b = _first(base[k]), _first(row[k])
            stated = _STATED.search(row[k])
            if a is not None and b is not None:
                out.append(make(f"{row[0]} {header[k]}", a, b, _unit(row[k]) or unit_of(header[k]), None,
                                stated.group(1) if stated else "", "|".join(row).strip()))
    return out


# -- a cell per variant, each of several figures -------------------------------------------

_CELL_FIGURE = re.compile(r"(?<![\w.+-])(\d[\d,]*(?:\.\d+)?[kKMG]?)(?![\w.])")
_STATED = re.compile(r"\(\s*([+-]?\d+(?:\.\d+)?%)\)?")


def _cell(cell: str) -> list[float]:
    """The figures of a cell, without its stated delta ("762k  2975(+32%)": 762000, 2975)."""
    found = [number(t) for t in _CELL_FIGURE.findall(_STATED.sub(" ", cell))]
    return [f for f in found if f is not None]


def _segments(line: str, cuts: list[int]) -> list[list[str]]:
    """The words of a header line in each segment between the cuts (a word is where it starts)."""
    out: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
    for match in re.finditer(r"\S+", line):
        out[sum(match.start() >= c for c in cuts)].append(match.group(0))
    return out


def _variants(names: list[str]) -> tuple[int, int] | None:
    """Which variant column is before and which after: ``base`` and ``base+large folio`` (the
    before's name plus the change), else the only before and after sides, else the two there are."""
    before = next((g for g, n in enumerate(names) if side_of(n) == "before"), 0)
    name = names[before].strip()
    after = [g for g, n in enumerate(names) if g != before and name and n.strip().startswith(name + "+")]
    after = after or [g for g, n in enumerate(names) if g != before and side_of(n) == "after"]
    if len(after) == 1:
        return before, after[0]
    return (0, 1) if len(names) == 2 else None


def grouped(lines: list[str], k: int) -> tuple[list[Claim], int] | None:
    """A table whose rows are a label then a cell per variant of the same figures
    (``hole 4K | 576k 2253 | 762k 2975(+32%) | 747k 2918(+29%)``) under a line naming the
    variants and a line naming the figures: a claim per row and figure, before against after."""
    rows: list[str] = []
    while k + len(rows) < len(lines) and lines[k + len(rows)].count("|") == lines[k].count("|") >= 2 \
            and not lines[k + len(rows)].lstrip().startswith("|"):
        rows.append(lines[k + len(rows)])
    cells = [[_cell(c) for c in row.split("|")[1:]] for row in rows]
    width = len(cells[0][0]) if cells and cells[0] else 0
    if len(rows) < 2 or width < 2 or any(len(c) != width for row in cells for c in row):
        return None
    above = [line for line in lines[max(0, k - 4):k] if line.strip() and not _BORDER.match(line.strip())]
    if len(above) < 2:
        return None
    cuts = [m.start() for m in re.finditer(r"\|", rows[0])]
    names = [" ".join(s) for s in _segments(above[-2], cuts)][1:]
    metrics = _segments(above[-1], cuts)[1:]
    order = _variants(names) if len(names) == len(cells[0]) else None
    if order is None:
        return None
    b, a = order
    out = []
    for row, found in zip(rows, cells):
        label, stated = row.split("|")[0].strip(), _STATED.search(row.split("|")[1 + a])
        for m in range(width):
            metric = " ".join(metrics[a][m:m + 1]) if len(metrics[a]) == width else f"figure {m + 1}"
            out.append(make(f"{label} {metric}", found[b][m], found[a][m], unit_of(metric) or said_unit(lines, k),
                            None, stated.group(1) if stated and m == width - 1 else "", row))
    return out, k + len(rows)
