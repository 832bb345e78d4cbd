"""Tables of whitespace-separated columns in a mail's text.

A table is two or more rows of at least two figures each under a header
line (``case nofix this series improvement`` / ``write_u1k 1.418 0.3405
76.0%``), or one row under a header that names both sides (``before
after`` / ``BW 2874MiB/s 3305MiB/s``). A figure's unit may follow it
(``65264.50 ns``), a spread after ``±`` is skipped, a percentage is the
mail's own delta (iolab.mail.claimed.rows reads a line), and a line of words alone above rows is their group
(``A seq 128k qd1`` / ``BW (MB/s) 4333 ± 27 4374 ± 34 +0.9%``).

Which way a table is read:

- across (the usual): the first figure is before, the second after,
  unless the header names the after side first;
- down, when its rows are the two sides (``native kernel`` / ``modified``,
  ``6.15.1`` / ``6.15.1+revert``) and its columns what was measured (devices,
  metrics): each column is a claim;
- a series (rows numbered by the second, ``1`` .. ``25``) ending in an
  ``avg`` row: only that row is the claim.

The unit comes from the figure, the row's label (``BW (MB/s)``) or the
sentence above the table (``median usecs/call``).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, replace

from iolab.mail.claimed.axes import axis_groups, axis_row, axis_sides, side_columns
from iolab.mail.claimed.banded import banded_tables
from iolab.mail.claimed.brought import brought_columns
from iolab.mail.claimed.blocks import block_pairs, config_rows, spread_rows
from iolab.mail.claimed.captioned import captioned_tables
from iolab.mail.claimed.cells import (corner_unit, even_rows, joined_side, gain_claims, gains, key_cells, percent_cells,
                                      sizes_line, two_measures)
from iolab.mail.claimed.grids import aligned_grid
from iolab.mail.claimed.keyed import keyed_rows
from iolab.mail.claimed.legend import legend_pair
from iolab.mail.claimed.mmtests import compare_tables
from iolab.mail.claimed.model import NOT_TABLE, Better, Claim, Unit, aligned, better_of, make, unit_of
from iolab.mail.claimed.naming import introduced, patch_side, row_sides, side_groups, side_of, unsided
from iolab.mail.claimed.rows import KEYED, Row, caption, read_row, table_row, units_line, with_units
from iolab.mail.claimed.samples import breakdown, sample_means, sampled
from iolab.mail.claimed.slashed import slashed_tables
from iolab.mail.claimed.spans import spanned_columns
from iolab.mail.claimed.steps import step_pair
from iolab.mail.claimed.switches import switch_order

_RUN = re.compile(r"^(?:run|#|test|iter(?:ation)?|try|round)\s*#?\s*\d+$", re.I)
_SUMMARY = re.compile(r"^(avg|average|mean|median|total)\b", re.I)


def _context_unit(lines: list[str]) -> tuple[Unit | None, Better | None]:
    """The unit named in the lines above a table (the nearest that names one), and 'lower/higher is better'."""
    text = " ".join(lines)
    better: Better | None = None
    said = re.search(r"\b(lower|higher)\s+is\s+better\b", text, re.I)
    if said:
        better = "lower" if said.group(1).lower() == "lower" else "higher"
    for line in reversed(lines):  # the nearest line that names one ("IOPS" above, then "lat (usec)": usec)
        if table_row(line.strip()):
            continue  # another table's row ("lat p99  1.2 ms  980 us"): its units are its own
        for word in re.findall(r"(?<![A-Za-zµ/%])(?<!\bper )(?<![\s-]-)(?<!^-)(?<!\d )[A-Za-zµ/%]+", line):  # "per sec",
            found = unit_of(word)  # "-s 32"; "for 20 minutes" (how long it ran) names no measure
            if found and found[1] in ("time", "rate", "bandwidth"):
                return found, better
    return None, better


@dataclass(frozen=True)
class _Table:
    header: str
    rows: tuple[tuple[str, Row], ...]  # each row with its group's name
    end: int  # the line after it


_BANNER = re.compile(r"([-=#*~]{3,})\s*[^-=#*~]+?\s*\1")  # "---- v6.8 + this series ----", "=== base ==="


def _rule(text: str) -> bool:
    return set(text) <= set("-=+ ")


def _table_at(lines: list[str], i: int) -> _Table:
    """The rows from line i on, with the header above them and the groups between."""
    rows: list[tuple[str, Row]] = []
    group = header = ""
    j = i
    while j < len(lines):
        text = lines[j].strip()
        if not text and j > i and not lines[j - 1].strip():
            break  # two blank lines: whatever follows is another table (and a run of them is crossed once)
        row = table_row(text)
        ruled = row and row.tags and not rows and j + 1 < len(lines) and lines[j + 1].strip() and \
            _rule(lines[j + 1].strip())  # settings over a rule ("rw  bs  hipri=0  hipri=1" over "----"): names
        ruled = ruled or (not rows and sizes_line(text, lines[j + 1:j + 2]))  # "64B  1K  4K  64K": sizes
        if ruled:
            header, group = text, ""
        elif row:
            rows.append((group, key_cells(group or header, percent_cells(group or header, row))))
        elif text and not _rule(text):
            following = next((line.strip() for line in itertools.islice(lines, j + 1, None)  # no copy: linear
                              if line.strip() and not _rule(line.strip())), "")
            opening = not rows and not header
            if not rows and text.count("|") >= 2:
                header = group = ""  # a pipe table's line above: the pipe tables' reader's, no header here
                j += 1
                continue
            if len(text) > 60 or text[-1] in ".:;,：。，" or (not opening and not table_row(following)):
                break  # a sentence, or text not above rows: the table ends
            if rows and side_of(header.split(":")[0]) and side_of(text.split(":")[0]):
                break  # "after:  avg" under the rows of "before:  avg": the other side's table
            if not rows and header and not group and units_line(text):
                header = with_units(header, text)  # "base  patched" over "(MB/s)  (MB/s)": one header
            elif opening and _BANNER.fullmatch(text):
                pass  # "---- v6.8 ----" above the columns' names: the table's name (name_above), no header
            elif opening or not rows and not group and caption(header, text, following):
                header = text  # the columns' names, under a caption naming a side ("Results with the patch")
            else:
                group = text  # a group's name above its rows ("A seq 128k qd1")
        j += 1
    return _Table(header, tuple(zip([g for g, _ in rows], even_rows([r for _, r in rows]))), j)


def _columns(header: str, count: int, label: int = 1) -> list[str]:
    """The names of a table's count figure columns, from its header (columns apart by two spaces or a tab);
    ``label``: the columns the rows' labels take (``4k  base``: two)."""
    names = [n for n in re.split(r"\s{2,}|\t", header.strip()) if n]
    if count >= 4 and count % 2 == 0 and len(names) == label + count // 2:  # "rand read" over "12.3k (48.1MiB/s)"
        names = names[:label] + [n for n in names[label:] for n in (n, n)]
    if len(names) > count:
        skip = label if len(names) == label + count else 1  # the labels' columns first; a delta's column after
        names = names[skip:skip + count]
    return names if len(names) == count else [f"column {k + 1}" for k in range(count)]


def _sides(rows: list[Row], lines: list[str] | None = None) -> tuple[Row, Row] | None:
    """The two rows, before then after, when a table's rows are the two sides: by their names, else
    by what the patch does to what one of them names (``async`` / ``sync`` where it drops async)."""
    order = row_sides(rows[0].label, rows[1].label) if len(rows) == 2 else None
    if order is None and len(rows) == 2 and lines:
        said = [patch_side(row.label, lines) for row in rows]
        order = (0, 1) if said in (["before", None], [None, "after"], ["before", "after"]) else \
            (1, 0) if said in ([None, "before"], ["after", None], ["after", "before"]) else None
        brought = brought_columns([r.label.strip().rstrip(":") for r in rows], [t for t in lines if t.startswith("Subject:")])
        order = order or (brought[0][:2] if brought else None)  # "RR" / "WRR" rows under "Add Weighted Round Robin"
    return (rows[order[0]], rows[order[1]]) if order else None


def _down(table: _Table, unit: Unit | None, better: Better | None,
          pair: tuple[Row, Row] | None = None) -> list[Claim]:
    """A table whose two rows are the sides (before, after): a claim per column."""
    pair = pair or _sides([row for _, row in table.rows])
    if pair is None:
        return []
    before, after = pair
    count = min(len(before.values), len(after.values))
    names = _columns(table.header, count, len(before.label.split()))
    group = next((g for g, row in table.rows if row is before), "")
    if names[0] == "column 1" and group and _columns(group, count)[0] != "column 1":
        names = _columns(group, count)  # the line right above the rows names the columns; the header was a caption
    runs = [k for k, n in enumerate(names) if _RUN.match(n)]
    if len(runs) >= 2 and len(runs) == count:  # a column a run, no average: the claim is each side's mean
        mean = [sum(v for v, _ in row.values[:count]) / count for row in (before, after)]
        return [make(f"mean of {count} runs", mean[0], mean[1], unit_of(before.values[0][1]) or unit, better, "",
                     f"{before.text} / {after.text}")]
    columns = [k for k, n in enumerate(names) if _SUMMARY.match(n)] or range(count)  # runs and their average
    out = []
    for k in columns:
        (a, ua), (b, ub) = before.values[k], after.values[k]
        found, b = unit_of(ua or ub) if (ua or ub) else unit_of(names[k]) or unit, aligned(b, unit_of(ub), unit_of(ua))
        stated = after.stated if count == 1 else ""
        out.append(make(names[k], a, b, found, better, stated, f"{names[k]}: {before.text} / {after.text}"))
    return out


def _named(group: str, row: Row, unit: Unit | None, better: Better | None) -> list[Claim]:
    """A row of cells of named figures, one cell a side: each name's two figures."""
    out = []
    for tag in dict.fromkeys(row.tags):
        found = [v for v, t in zip(row.values, row.tags) if t == tag]
        if len(found) != 2:
            return []
        (a, ua), (b, ub) = found
        label, b = " ".join(x for x in (group, row.label, tag) if x), aligned(b, unit_of(ub), unit_of(ua))
        out.append(make(label, a, b, unit_of(ua or ub) or unit, better, row.stated, row.text))
    return out


def _compared(table: _Table, about: list[str]) -> bool:
    """Whether a table's figure columns are a before and an after: its header names a side, or
    its rows state a delta, or it has no header of names. Columns that are modes, devices or
    settings (``read  write``, ``Gen3  Gen4``) with no delta are not."""
    names = [n for n in re.split(r"\s{2,}|\t", table.header.strip()) if n]
    if len(names) < 2 or any(side_of(n) for n in names) or _both_sides(table.header) or brought_columns(names, about):
        return True
    return any(row.stated for _, row in table.rows) or all(row.tags for _, row in table.rows)


def _across(table: _Table, unit: Unit | None, better: Better | None, about: list[str]) -> list[Claim]:
    rows = list(table.rows)
    series = len(rows) >= 3 and all(re.fullmatch(r"\d+", r.label) or _SUMMARY.match(r.label) for _, r in rows) \
        and any(_SUMMARY.match(r.label) for _, r in rows)
    if series:  # a series by the second (its columns the two ways compared): its average is the claim
        rows = [(g, r) for g, r in rows if _SUMMARY.match(r.label)]
    elif all(gains(row.values) for _, row in rows) and not _compared(table, about):
        return [claim for group, row in rows for claim in gain_claims(group, row, unit, better)]
    elif not _compared(table, about):
        return []
    out = []
    for group, row in rows:
        if row.tags:  # cells of named figures, one a side: only under a header naming the sides
            sided = {side_of(n) for n in re.split(r"\s{2,}|\t", table.header.strip())} >= {"before", "after"}
            out += _named(group, row, unit, better) if sided else []
            continue
        pairs = _header_pairs(table.header, row, about)
        if len(pairs) > 1 or (pairs and pairs[0][:2] != (0, 1)):  # "base  patched  base  patched", "new  old"
            out += [_cell_pair(table.header, group, row, pair, unit, better) for pair in pairs]
            continue
        (a, ua), (b, ub) = row.values[0], row.values[1]
        if ua and ub and (unit_of(ua) or ("", ""))[1] != (unit_of(ub) or ("", ""))[1]:
            continue  # "3462 msec  1183Mbit": two measures of a row, not a before and an after
        found, b = unit_of(ua or ub) if (ua or ub) else unit_of(row.label) or unit or \
            unit_of(" ".join(table.header.split()[1:])) or corner_unit(table.header), aligned(b, unit_of(ub), unit_of(ua))
        if len(row.values) == 4 and [n for n, _ in row.deltas] == [2, 4]:  # two measures a row, each with its delta
            out += two_measures(table.header, row, found, better)
            continue
        out.append(make(f"{group}: {row.label}" if group else row.label, a, b, found, better, row.stated, row.text))
    return out


def _header_said(table: _Table, found: list[Claim], about: list[str]) -> list[Claim]:
    """The rows read across, each saying whether its table's header names a side or what the change
    brings (the gate, iolab.mail.claimed.evidence, asks more of a row whose header names none)."""
    names = [n for n in re.split(r"\s{2,}|\t", table.header.strip()) if n]
    said = "names" if any(side_of(n) for n in names) or _both_sides(table.header) or \
        brought_columns(names, about) or brought_columns(names[1:], about) else ""
    return [replace(c, sides=said) for c in found]


_DELTA_NAME = re.compile(r"^(?:diff\w*|delta|change|gain|improvement|speed-?up|ratio|%\S*|\+/-)$", re.I)


def _header_pairs(header: str, row: Row, about: list[str]) -> list[tuple[int, int, str]]:
    """The row's before and after figures by the side each column of the header names (a delta's
    column set aside), when the header names one column a figure."""
    for cut in (r"\s{2,}|\t", r"\s+"):  # columns apart by two spaces or a tab, else names of one word each
        names = [n for n in re.split(cut, header.strip()) if n and not (row.deltas and _DELTA_NAME.match(n))]
        names = names[1:] if len(names) == len(row.values) + 1 else names
        if len(names) == len(row.values):
            step = step_pair(names)  # "before  p 1  p 2+3  p 4+5": the baseline against the last step
            return [step] if step else side_columns(names) or brought_columns(names, about)
    return []


def _cell_pair(header: str, group: str, row: Row, pair: tuple[int, int, str], unit: Unit | None,
               better: Better | None) -> Claim:
    (a, ua), (b, ub) = row.values[pair[0]], row.values[pair[1]]
    label = " ".join(x for x in (f"{group}:" if group else "", row.label, f"({pair[2]})" if pair[2] else "") if x)
    found = unit_of(ua or ub) if (ua or ub) else unit_of(row.label) or unit or unit_of(" ".join(header.split()[1:]))
    stated = next((d for n, d in row.deltas if n > pair[1]), "") if row.deltas else row.stated
    return make(label, a, aligned(b, unit_of(ub), unit_of(ua)), found, better, stated, row.text)


def _two_sides(header: str) -> bool:
    """A header that names both sides (``before after``, ``baseline  with_cache``, ``6.12  6.12+patch``)."""
    names = [n for n in re.split(r"\s{2,}|\t", header.strip()) if n]
    return _both_sides(header) or (len(names) == 2 and side_of(names[0]) == "before")  # a baseline and another


def _both_sides(header: str) -> bool:
    """A header whose columns name a before and an after (names apart by two spaces or a tab, else by one)."""
    return any(side_columns(names) or side_columns(names[1:]) or step_pair(names) for cut in (r"\s{2,}|\t", r"\s+")
               for names in [[n for n in re.split(cut, header.strip()) if n]])  # the labels' column named too


def _named_columns(table: _Table) -> bool:
    """One row under a header that names each of its columns (iostat's ``Device  r/s  rkB/s ...``):
    a table, read only as one of twins (a table a side)."""
    row = table.rows[0][1]
    return len(table.header.split()) == len(row.values) + 1 >= 4


def _tables(lines: list[str]) -> list[tuple[int, _Table]]:
    """Each table of columns and the line its search started at."""
    found = []
    i = 0
    while i < len(lines):
        table = _table_at(lines, i)
        if len(table.rows) >= 2 or (table.rows and (_two_sides(table.header) or _named_columns(table))):
            found.append((i, _Table(table.header or (lines[i - 1] if i > 0 else ""), table.rows, table.end)))
            i = table.end
        else:
            i += 1
    return found


def name_above(lines: list[str], table: _Table, start: int) -> str:
    """The line that names a table ("buffer_head:", "Without the patch:"), above its header."""
    k = next((j for j in range(start, table.end) if lines[j].strip() == table.header.strip()), start)
    return next((lines[j].strip().strip("-=#*~ ") for j in range(k - 1, max(-1, k - 3), -1) if lines[j].strip()), "")


def _twins(first: tuple[int, _Table], second: tuple[int, _Table], lines: list[str]) -> tuple[int, int] | None:
    """Two tables of one shape one after the other, a side each (``buffer_head:`` then ``iomap:``):
    which is before (0 or 1) and which after; None when they are not."""
    (i, a), (j, b) = first, second
    commands = [command_above(lines, k) for k in (i, j)]
    if all(commands) and commands[0] != commands[1]:
        return None  # two commands' outputs ($ time fs_mark, $ time rm -rf), not a side each
    if _unsided_words(a.header) != _unsided_words(b.header) or _both_sides(a.header) or \
            j - a.end > 4 and not _twin_names(first, second, lines):  # prose between: only twins named as sides
        return None  # "before:  avg" and "after:  avg" are one header, a side each
    if any(len(t.rows) == 2 and _sides([r for _, r in t.rows]) for t in (a, b)):
        return None  # "4K:" then "64K:", each of a base and a patched row: a table a size, not a side
    pairs = _row_pairs(a, b)
    if not pairs and not (sampled(a.header) and sampled(b.header)):  # fs_mark's lines pair as a run's samples
        return None
    if any(len(r.values) != len(t.values) or r.tags for r, t in pairs):
        return None  # cells of named figures (IOPS=88.2k, BW=344MiB/s) are what tools print: the sides' reader's
    return _twin_names(first, second, lines) or (0, 1)  # names that are no sides: the first is the baseline


def _twin_names(first: tuple[int, _Table], second: tuple[int, _Table], lines: list[str]) -> tuple[int, int] | None:
    """Which of two twin tables is before, by their headers or the names above them (None: they name no side)."""
    (i, a), (j, b) = first, second
    order = row_sides(a.header, b.header) if a.header.split() != b.header.split() else None
    return order or row_sides(name_above(lines, a, i).rstrip(":"), name_above(lines, b, j).rstrip(":"))


def _row_pairs(a: _Table, b: _Table) -> list[tuple[Row, Row]]:
    """The rows of two tables a side each, paired: in order when each pair opens with one key ("8k
    (bigalloc)", "8k (LBS)"), else by that key where each table names each key once and most are in both
    (``qd 1 8 32`` before, ``qd 8 32 64`` after: 8 and 32)."""
    keys = [[row.label.split()[0] if row.label.split() else "" for _, row in t.rows] for t in (a, b)]
    if keys[0] == keys[1]:
        return [(r, t) for (_, r), (_, t) in zip(a.rows, b.rows)]
    common = [k for k in keys[0] if k in keys[1]]
    if any(len(set(k)) != len(k) for k in keys) or len(common) < 2 or 2 * len(common) < max(map(len, keys)):
        return []
    theirs = {key: row for key, (_, row) in zip(keys[1], b.rows)}
    return [(row, theirs[key]) for key, (_, row) in zip(keys[0], a.rows) if key in theirs]


def _unsided_words(header: str) -> list[str]:
    return [w for w in header.split() if side_of(w.rstrip(":")) is None]


def twin_claims(before: _Table, after: _Table, unit: Unit | None, better: Better | None) -> list[Claim]:
    """A claim per row and column: the same cell of the two tables (only the last, when the header
    ends in an average's name over runs: ``before:  avg``)."""
    if sampled(before.header):  # fs_mark's lines a side: each side's mean rate
        return sample_means(before.header, [r for _, r in before.rows], [r for _, r in after.rows], better)
    out = []
    averaged = bool(before.header.split()) and _SUMMARY.match(before.header.split()[-1]) is not None
    groups = dict((id(row), group) for group, row in before.rows)
    for mine, theirs in _row_pairs(before, after):
        group, names = groups[id(mine)], _columns(before.header, len(mine.values))
        for k, ((a, ua), (b, ub)) in enumerate(zip(mine.values, theirs.values)):
            if averaged and k != len(mine.values) - 1:
                continue
            label = " ".join(x for x in (group, mine.label, names[k]) if x)
            out.append(make(label, a, aligned(b, unit_of(ub), unit_of(ua)), unit_of(ua or ub) or unit_of(names[k]) or unit, better, "",
                            f"{mine.text} / {theirs.text}"))
    return out


def column_tables(lines: list[str], about: list[str] | None = None) -> list[Claim]:
    """Every table of columns in the lines, read across, down, as a series or as twins (a table a side);
    ``about``: the patches' subjects, ``Subject: ...`` lines, read only for what a change drops or brings."""
    claims, compared = compare_tables(lines)  # mmtests' comparisons: their own reader
    keyed, paired = keyed_rows(lines)  # a side's name and a key opening each row: their own reader
    captioned, held = captioned_tables(lines, about or [])  # tables a side under captions naming the sides
    slashed, both = slashed_tables(lines)  # cells of both sides ("318K/316K") under "(before/after)"
    banded, bands = banded_tables(lines, about or [])  # a table in two bands, a side each
    claims, compared = claims + keyed + captioned + slashed + banded, compared | paired | held | both | bands
    claims += block_pairs(lines, about) + config_rows(lines, about)  # labelled figures a side, one a line
    tables = [(i, t) for i, t in column_table_list(tuple(lines)) if not compared & set(range(i, t.end))
              and not breakdown(t.header)]  # dbench's operations: its Throughput line is the claim
    k = 0
    while k < len(tables):
        i, table = tables[k]
        grid = spanned_columns(lines, i, table.end) or aligned_grid(lines, i, table.end, about)
        if grid:  # "clients  async  sync" over "BW  Latency  BW  Latency": its groups are the sides
            claims += grid
            k += 1
            continue
        unit, better = _context_unit(lines[max(0, i - 4):i])
        twins = _twins(tables[k], tables[k + 1], lines) if k + 1 < len(tables) else None
        if twins is not None:
            twin = (tables[k][1], tables[k + 1][1])
            said = "" if _twin_names(tables[k], tables[k + 1], lines) else "order"  # the gate asks more of "order"
            claims += [replace(c, sides=said) for c in twin_claims(twin[twins[0]], twin[twins[1]], unit, better)]
            k += 2
            continue
        rows = [row for _, row in table.rows]
        groups = side_groups([joined_side(row.label) for row in rows]) if len(rows) > 2 else []
        if axis_row(rows[0]) and not _both_sides(table.header):  # "K  4  8  16  32": columns are settings
            claims += _defined(rows, lines, unit, better)
        elif groups:  # "before: 9.601s 10.229s ..." and "after: ..." under a row that names the columns
            for key, b, a in groups:  # each pair named by its key ("4k-randread")
                claims += [replace(c, label=f"{key} {c.label}") for c in _down(table, unit, better, (rows[b], rows[a]))]
        else:
            legend = legend_pair([row.label for row in rows], lines) or \
                step_pair([row.label.strip().rstrip(":") for row in rows])  # "Config 1: ... (base)"; "before", "p 1"
            legend = legend or (switch_order([r.label for r in rows], about or []) if len(rows) == 2 else None)
            sides = _sides(rows, [*(about or []), *lines]) or ((rows[legend[0]], rows[legend[1]]) if legend else None)
            read = _down(table, unit, better, sides) if sides else \
                _header_said(table, _across(table, unit, better, about or []), about or [])
            claims += [c for c in read if c not in spread_rows(read)]
        k += 1
    return claims


def _defined(rows: list[Row], lines: list[str], unit: Unit | None, better: Better | None) -> list[Claim]:
    """Under a row of settings, the two rows that are the sides read down, a claim per setting
    (iolab.mail.claimed.axes), or each measure's pair of side rows."""
    found = axis_sides(rows, lines)
    header = found[0] if found else "  ".join([rows[0].label, *(f"{rows[0].label}={v:g}" for v, _ in rows[0].values)])
    pairs = [("", found[1], found[2])] if found else axis_groups(rows)
    return [replace(c, label=f"{key} {c.label}".strip()) for key, b, a in pairs
            for c in _down(_Table(header, (), 0), unit_of(b.label) or unit_of(a.label) or unit, better, (b, a))]


def _one_side(a: Row, b: Row) -> tuple[int, int] | None:
    """Two rows of which one names the baseline (``Base XFS : 308 MiB/s``) and the other, with
    the mail's delta, what changed (``Parallel Writeback XFS : 1534 MiB/s (+398%)``)."""
    sides = [side_of(a.label), side_of(b.label)]
    if sides == ["before", None] and (b.stated or _within(a.label, b.label)):
        return 0, 1
    return (1, 0) if sides == [None, "before"] and (a.stated or _within(b.label, a.label)) else None


def _within(base: str, other: str) -> bool:
    """Whether what a baseline row names, its side's word taken out, the other row names too
    (``Base XFS :`` and ``Parallel Writeback XFS :``): the other is the base with the change."""
    words = {w.lower() for w in re.findall(r"\w+", base) if side_of(w) is None}
    return bool(words) and words <= {w.lower() for w in re.findall(r"\w+", other)}


def _plus_feature(first: str, second: str, lines: list[str]) -> tuple[int, int] | None:
    """Two rows, a path and the path plus a feature the text says the series brings (``Send ring`` /
    ``Send ring + bundles``, where the mail adds "bundles"): the path before, the feature after."""
    a, b = (x.strip().rstrip(":").strip() for x in (first, second))
    for order, (short, long) in (((0, 1), (a, b)), ((1, 0), (b, a))):
        plus = re.fullmatch(re.escape(short) + r"\s*\+\s*([A-Za-z][\w-]*)", long) if short else None
        if plus and introduced([plus.group(1)], lines) == 0:
            return order
    return None


def _one_key(first: str, second: str) -> bool:
    """Two rows' labels that name one thing once their sides' words are out (``4k base`` and ``4k
    patched``; ``-git`` and ``-git+commit``), not two (``4k patched`` and ``64k base``)."""
    a, b = (unsided(x).strip(" :,") for x in (first, second))
    return not a or not b or a.startswith(b) or b.startswith(a)


def side_rows(lines: list[str]) -> list[Claim]:
    """Two rows of one figure or more whose labels are the two sides (``-git  4720 usec`` /
    ``-git+commit  4311 usec  -8.7%``), read down under the header above them."""
    claims: list[Claim] = []
    paired = keyed_rows(lines)[1]  # rows paired by key are their own reader's
    texts = [(k, line.strip()) for k, line in enumerate(lines) if line.strip() and not _rule(line.strip())]
    for (k, first), (_, second) in zip(texts, texts[1:]):
        a, b = (read_row(t) if t and "|" not in t and not NOT_TABLE.match(t) and not KEYED.search(t) else None
                for t in (first, second))  # fio's "min=4, max=241, avg=99.81" lines are the sides reader's
        if a is None or b is None or not a.values or len(a.values) != len(b.values) or len(a.values) > 4 or k in paired:
            continue
        order = (row_sides(a.label, b.label) if _one_key(a.label, b.label) else None) or _one_side(a, b) or \
            _plus_feature(a.label, b.label, lines)
        if order is None or a.tags and a.tags == b.tags and a.values == b.values:
            continue  # "unpatched, iodepth=32" / "patched, iodepth=32": two captions' equal setting, no measure
        a, b = (a, b) if order == (0, 1) else (b, a)
        header = next((t for j, t in reversed(texts) if j < k), "")
        above = read_row(header)
        header = header if above is None or not above.values else ""  # words alone: the columns' names
        header = re.sub(r"\s*\((?:std\s*dev|stddev|stdev|sd|std)\)", "", header, flags=re.I)  # "time_ms (stdev)": its spread
        unit, better = _context_unit(lines[max(0, k - 4):k])
        rows = ((a.label, a), (b.label, b))
        claims += _down(_Table(header, tuple(("", r) for _, r in rows), k + 2), unit, better, (a, b))
    return claims


@functools.lru_cache(maxsize=1)  # each table of columns and its line: found once a text (seconds on a long mail)
def column_table_list(lines: tuple[str, ...]) -> tuple[tuple[int, _Table], ...]:
    return tuple(_tables(list(lines)))


def command_above(lines: list[str], start: int) -> str:
    """The command line (``$ time fs_mark ...``) a table's output is of, within the ten lines above it."""
    above = range(start - 1, max(-1, start - 11), -1)
    return next((lines[k].strip() for k in above if lines[k].lstrip().startswith("$ ")), "")
