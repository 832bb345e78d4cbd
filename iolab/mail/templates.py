"""A fio command line the mail wrote as a template (``-rw=$rw``, ``-bs=${bs}``), filled in from what
the mail says of its values.

A shell variable in a job option takes, in order of how exactly the mail says them:

- the values of a loop over it (``for rw in read randread; do``): one job per value;
- else the values the claim's rows name, where each row names one (``read IOPS`` and ``randread BW``
  for rw, an ``overwrite`` row a write where the command sets ``overwrite=1``; ``4k`` or ``128KiB``
  for bs; ``qd32`` for iodepth; ``16 jobs`` or ``single job`` for numjobs): one job per value.

Each job is tied to the rows that name its value, and only to them: a row that names no value the
job ran with is checked by none, and a template the mail gives no value for is not run. Placement
(``filename=/dev/$disk``, ``directory=$MNT``) is iolab's own and never a template here.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from iolab.mail.claimed import Claim
from iolab.mail.jobs import PLACEMENT  # iolab places files: never a template

Sections = list[tuple[str, dict[str, str]]]

MAX_JOBS = 8  # the jobs one template may become (a loop over more values is cut, and says so)
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_VALUE = re.compile(r"[\w.:/%+-]+")

# a row's words -> fio's rw value; random and mixed forms before the plain ones; an overwrite is a write only
# where the command sets overwrite=1 (checked apart)
_RW = (
    ("randrw", r"\brand(?:om)?[\s_-]*(?:rw|read[\s/_-]*write|mixed)\b|\brandrw\b"),
    ("randread", r"\brand(?:om)?[\s_-]*reads?\b"),
    ("randwrite", r"\brand(?:om)?[\s_-]*(?:over)?writes?\b"),
    ("rw", r"\b(?:readwrite|rw|read/write|mixed)\b"),
    ("read", r"\b(?:seq(?:uential)?[\s_-]*)?reads?\b"),
    ("write", r"\b(?:seq(?:uential)?[\s_-]*)?(?:over)?writes?\b"),
)
_SIZE = re.compile(r"\b(\d+)\s?([kKmM])(?:i?B)?\b")
_JOBS = re.compile(r"\b(?:(\d+)[\s-]*|(?:single|one)[\s-]+)(?:jobs?|threads?|workers?)\b", re.I)
_DEPTH = re.compile(r"\b(?:qd|iodepth\s*=?\s*|depth\s*=?\s*)(\d+)\b", re.I)


@dataclass(frozen=True)
class Filled:
    """One job of a template: the values put in, its sections, the rows it is for, and how the mail said it."""

    values: dict[str, str]
    sections: Sections
    rows: tuple[str, ...]  # the labels of the claim's rows that name these values
    said: str  # "$rw=read (named by the rows 'read IOPS', 'read BW')"


def variables(sections: Sections) -> dict[str, str]:
    """Each shell variable in a job option (placement aside), with the option it fills."""
    found: dict[str, str] = {}
    for _, options in sections:
        for key, value in options.items():
            if key not in PLACEMENT:
                for match in _VARIABLE.finditer(value):
                    found.setdefault(match.group(1) or match.group(2), key)
    return found


def template(sections: Sections) -> str:
    """The options that carry a variable, as the mail wrote them ("rw=$rw")."""
    return ", ".join(dict.fromkeys(f"{key}={value}" for _, options in sections for key, value in options.items()
                                   if key not in PLACEMENT and _VARIABLE.search(value)))


def loop_values(text: str, name: str) -> list[str]:
    """The values a shell loop of the mail gives the variable (``for rw in read write; do``), or []."""
    found = re.search(rf"\bfor\s+{re.escape(name)}\s+in\s+([^;\n]+?)\s*(?:;|\n|\bdo\b)", text)
    if found is None:
        return []
    words = found.group(1).replace('"', " ").replace("'", " ").split()
    return list(dict.fromkeys(words)) if all(_VALUE.fullmatch(w) for w in words) else []


def named_value(option: str, label: str, sections: Sections) -> str | None:
    """The value of the option the row's label names, or None (no such word, or an option iolab does not read
    from words)."""
    label = label.lower()
    if option in ("rw", "readwrite"):
        overwrite = any(o.get("overwrite", "0") not in ("0", "false") for _, o in sections if "overwrite" in o)
        for value, pattern in _RW:
            found = re.search(pattern, label)
            if found and ("over" not in found.group(0) or overwrite):
                return value
        return None
    if option in ("bs", "blocksize"):
        size = _SIZE.search(label)
        return f"{size.group(1)}{size.group(2).lower()}" if size else None
    if option == "iodepth":
        depth = _DEPTH.search(label)
        return depth.group(1) if depth else None
    if option == "numjobs":
        jobs = _JOBS.search(label)
        return None if jobs is None else jobs.group(1) or "1"
    return None


def _put(sections: Sections, values: dict[str, str]) -> Sections:
    def filled(value: str) -> str:
        return _VARIABLE.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), value)

    return [(name, {k: (v if k in PLACEMENT else filled(v)) for k, v in options.items()})
            for name, options in sections]


def _assigned(values: dict[str, str]) -> str:
    """The values put into a template, as said: "$rw=read, $bs=4k"."""
    return ", ".join(f"${n}={v}" for n, v in values.items())


def _quoted(labels: list[str]) -> str:
    shown = ", ".join(f"'{label}'" for label in labels[:3])
    return shown + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")


def fill(sections: Sections, text: str, claims: list[Claim]) -> tuple[list[Filled], list[str]]:
    """The template's jobs, each with the rows it is for; and what is not mapped, said plainly."""
    names = variables(sections)
    shown = template(sections)
    looped = {name: loop_values(text, name) for name in names}
    if all(looped.values()):
        combos = [dict(zip(names, values)) for values in itertools.product(*looped.values())]
        how = "loop"
    elif len(names) == 1:
        (name, option), = names.items()
        combos = [{name: v} for v in dict.fromkeys(named_value(option, c.label, sections) for c in claims) if v]
        how = "rows"
    else:
        combos, how = [], ""
    missing = []
    if not combos:
        return [], [f"a template ({shown}): the mail gives no value for {', '.join('$' + n for n in names)} "
                    f"(no loop over it, no row named by one): its rows are not checked"]
    if len(combos) > MAX_JOBS:
        missing.append(f"a template ({shown}): {len(combos)} values, the first {MAX_JOBS} run")
        combos = combos[:MAX_JOBS]
    out = []
    for values in combos:
        rows = [c.label for c in claims  # one job from a loop of one value: the mail's only one, every row its own
                if len(combos) == 1 and how == "loop"
                or all(named_value(names[n], c.label, sections) == v for n, v in values.items())]
        said = _assigned(values)
        named = f"named by the rows {_quoted(rows)}" if rows else "no row names it"
        if any(re.search(r"\bover[\s_-]*writes?\b", row, re.I) for row in rows):
            named += " (an overwrite: a write, as the command sets overwrite=1)"
        out.append(Filled(values, _put(sections, values), tuple(dict.fromkeys(rows)),
                          f"{said} ({named})" if how == "rows" else f"{said} (the mail's loop; {named})"))
    tied = {row for filled in out for row in filled.rows}
    loose = [c.label for c in claims if c.label not in tied]
    if loose:
        missing.append(f"a template ({shown}) run with {', '.join(_assigned(f.values) for f in out)}: "
                       f"{_quoted(list(dict.fromkeys(loose)))} name none of these values: not checked")
    return out, missing
