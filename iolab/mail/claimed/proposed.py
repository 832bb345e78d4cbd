"""Rows the rules missed, proposed from pairs of figures on one line and chosen by learned weights;
not called by the reader (tried and not taken: docs/claims.md).

Every pair of figures on a line that could be a before and an after (iolab.mail.claimed.oneline)
is scored by a logistic regression over its named features: the weights, the bias and the
threshold are plain data in ``proposed.json`` beside this file, written by
``scripts/train_proposer.py`` from the labelled corpus (docs/claims.md); nothing here trains.
Of the pairs scored at or above the threshold, best first, a row is made of each whose figures
the reader did not return already (in either order), whose figures no row taken from its line
used, and whose two figures were not taken in the other order.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from iolab.mail.claimed.better import infer
from iolab.mail.claimed.model import Claim, convert, make, unit_of
from iolab.mail.claimed.oneline import Candidate, candidates

WEIGHTS = Path(__file__).with_name("proposed.json")
FORM = "proposed"
_FACTORS = (1.0, 1e3, 1e-3, 1e6, 1e-6)


@dataclass(frozen=True)
class Model:
    bias: float
    weights: dict[str, float]
    threshold: float

    def probability(self, features: frozenset[str]) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) for name in features)
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0


def model_of(data: dict[str, Any]) -> Model:
    """The model a weights file holds (``bias``, ``weights``, ``threshold``)."""
    return Model(float(data["bias"]), {str(k): float(v) for k, v in data["weights"].items()}, float(data["threshold"]))


@cache
def stored() -> Model:
    """The weights shipped with iolab."""
    return model_of(json.loads(WEIGHTS.read_text()))


def proposed(lines: list[str], found: list[Claim], model: Model | None = None, seen: list[Claim] | None = None) -> list[Claim]:
    """The rows the model proposes that the reader did not return (see the module's text); ``seen``:
    every form's rows before the gate (its lines and figures are the rules', proposed from no more)."""
    model = model or stored()
    scored = sorted(((model.probability(c.features), n, c, claim) for n, (c, claim)
                     in enumerate(selectable(lines, [*found, *(seen or [])]))), key=lambda item: (-item[0], item[1]))
    out: list[Claim] = []
    taken: set[tuple[int, int]] = set()
    for probability, _, cand, claim in scored:
        if probability < model.threshold:
            break
        if (cand.line, cand.first) in taken or (cand.line, cand.second) in taken or any(returned(claim, c) for c in out):
            continue
        taken |= {(cand.line, cand.first), (cand.line, cand.second)}
        out.append(claim)
    return infer(lines, out) if out else []


def selectable(lines: list[str], found: list[Claim]) -> list[tuple[Candidate, Claim]]:
    """The candidates the model may choose among on these lines, each with the row it would be: those
    on a line no row of ``found`` was read from, whose pair no such row has (what training sees)."""
    read = _read(lines, found)
    out = []
    for cand in candidates(lines, frozenset(read)):
        claim = as_claim(cand, lines[cand.line])
        if not any(returned(claim, c) for c in found):
            out.append((cand, claim))
    return out


def _read(lines: list[str], found: list[Claim]) -> set[int]:
    """The lines the rows were read from."""
    where: dict[str, int] = {}
    for k, line in enumerate(lines):
        where.setdefault(" ".join(line.split()), k)
    return {where[part] for claim in found for part in (" ".join(p.split()) for p in claim.source.split(" / "))
            if part in where}


def as_claim(cand: Candidate, line: str) -> Claim:
    """The row a candidate would be: the before's unit, the after in it where the two differ."""
    before, after = cand.before, cand.after
    value = convert(after.value, after.unit, before.unit) if after.unit != before.unit else after.value
    unit = unit_of(before.unit) if before.kind else None
    if before.percent:
        unit = ("%", "ratio", None)
    label = " ".join(line[:min(before.start, after.start)].split()).strip(" :|-") or "figure"
    stated = line[max(before.end, after.end):].strip().split(" ")[0] if "percent_after" in cand.features else ""
    claim = make(label[:80], before.value, after.value if value is None else value, unit, None, stated, line)
    return replace(claim, form=FORM)


def returned(claim: Claim, other: Claim) -> bool:
    """The two rows have the same figures, in either order, to a unit's factor."""
    return any(_close(claim.before * f, x) and _close(claim.after * f, y)
               for f in _FACTORS for x, y in ((other.before, other.after), (other.after, other.before)))


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 0.005 * max(abs(a), abs(b))
