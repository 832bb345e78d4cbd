"""Captions over a side's output that the sides' reader (iolab.mail.claimed.sides) does not name alone.

A caption that names a side and then the settings of its run (``current master, rw=randwrite,
numjobs=32 iodepth=32`` over fio's lines, ``this patchset,  rw=randwrite, ...`` over the same lines
again): the side is its first clause, the settings say which run it is. The cases of a run of
befores and a run of as many afters, paired by case (``before this patchset:`` / ``bind node before
this patchset:`` / ``after ...`` / ``bind node after ...``). A caption naming no side over the same
figures as the one named after side under it (``the IO submission time is much worse:`` / ``After
this fix, the timings are:``): the before side. Two headings of one setting switched off and on
that the subjects name (``1. fua_disable = 1`` / ``2. fua_disable = 0 (default 0)``): the sides.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.naming import Side, side_of, switched, unsided
from iolab.mail.claimed.outputs import line_figures

# a side's name, a comma, then settings only ("rw=randwrite, numjobs=32 iodepth=32", "bs=4k qd=32")
_CAPTION = re.compile(r"^\s*(?P<name>[A-Za-z][^,:=]{1,40}?)\s*[,:]\s*(?P<settings>[\w.-]+=[\w.+/-]+(?:[,\s]+[\w.-]+=[\w.+/-]+)*)"
                      r"\s*[,:]?\s*$")


def settings_caption(lines: list[str], k: int) -> tuple[Side | None, str, str] | None:
    """(side, the caption, "") when line k names a side and the settings of its run, with figures in the
    three lines under it."""
    found = _CAPTION.match(lines[k])
    side = side_of(found.group("name")) if found else None
    if found is None or side is None:
        return None
    under = [line for line in lines[k + 1:k + 6] if line.strip()][:3]
    return (side, " ".join(lines[k].split()), "") if any(line_figures(line) for line in under) else None


def named_twins(names: list[str], sides: list[Side | None]) -> list[tuple[int, int]]:
    """(before, after) indexes of the cases of a run of befores then a run of as many afters, whose
    names are the same cases in the same order but for the side's words (``before this patchset:`` /
    ``bind node before this patchset:`` / ``after this patchset:`` / ``bind node after this patchset:``):
    each after with its case's before, not with its neighbour of another case."""
    cases = [" ".join(unsided(name).lower().split()) for name in names]
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(names):
        befores = next((n for n in range(k, len(names) + 1) if n == len(names) or sides[n] != "before"), k) - k
        afters = [j for j in range(k + befores, min(len(names), k + 2 * befores)) if sides[j] == "after"]
        run = cases[k:k + befores]
        if befores > 1 and len(afters) == befores and len(set(run)) == befores and \
                [cases[j] for j in afters] == run:
            out += [(k + n, j) for n, j in enumerate(afters)]
        k += max(befores, 1)
    return out


def _keys(lines: list[str], start: int, stop: int) -> list[str]:
    """The keys of the figures on lines start..stop, up to the first line of prose after a figure."""
    keys: list[str] = []
    for line in lines[start:stop]:
        found = line_figures(line)
        if not found and keys and len(line.split()) >= 6:
            break
        keys += [f.key for f in found]
    return keys


def unnamed_befores(lines: list[str], markers: list[tuple[Side | None, str, str] | None]) -> None:
    """A caption naming no side (``the IO submission time is much worse:``) over the same figures, key by key,
    as the one named after side under it (``After this fix, the timings are:``), where the text names no
    before side: the caption is the before side."""
    named = [k for k, m in enumerate(markers) if m is not None and m[0] is not None]
    if len(named) != 1 or markers[named[0]][0] != "after" or markers[named[0]][2].strip():  # type: ignore[index]
        return
    after = named[0]
    above = next((k for k in range(after - 1, max(-1, after - 30), -1) if lines[k].rstrip().endswith(":")
                  and not line_figures(lines[k]) and markers[k] is None), None)
    if above is None:
        return
    if any(re.match(r"\s*[$#]\s", line) for line in lines[above + 1:after]):
        return  # a shell session under the caption: a reproducer's run, no measurement of the change
    mine, theirs = _keys(lines, above + 1, after), _keys(lines, after + 1, after + 30)
    if mine and len(mine) == len(set(mine)) and mine == theirs[:len(mine)] and len(theirs) == len(mine):
        markers[above] = ("before", lines[above].strip().rstrip(":"), "")


# a setting's heading over its side's runs: "1. fua_disable = 1", "2. fua_disable = 0 (default 0)", "poll_queues = 4:"
_SETTING_HEAD = re.compile(r"^\s*(?:\d{1,2}[.)]\s*)?(?P<name>[A-Za-z_][\w.-]*)\s*=\s*(?P<value>\w+)\s*(?:\([^()]{0,30}\))?"
                           r"\s*:?\s*$")


def setting_headings(lines: list[str], markers: list[tuple[Side | None, str, str] | None], about: tuple[str, ...]) -> None:
    """Two headings of one setting switched off and on (``1. fua_disable = 1`` / ``2. fua_disable = 0
    (default 0)``), each over figures, where the patches' subjects name the setting (``add a fua_disable
    option``): the off one is before, the on one after, as two banners of a setting are (``naming.switched``)."""
    found = [(k, m.group("name"), m.group("value")) for k, line in enumerate(lines[:2000])
             if markers[k] is None and (m := _SETTING_HEAD.match(line)) and
             any(line_figures(t) for t in lines[k + 1:k + 12])]
    if len(found) != 2 or found[0][1] != found[1][1] or found[0][2] == found[1][2]:
        return
    name = found[0][1]
    subject = " ".join(about).lower()
    if name.lower() not in subject and not any(len(w) > 2 and w in subject for w in re.split(r"[_.-]", name.lower())):
        return
    sides = switched(f"{name}={found[0][2]}", f"{name}={found[1][2]}")
    for (k, _, value), side in zip(found, sides or ()):
        markers[k] = (side, f"{name}={value}", "")
