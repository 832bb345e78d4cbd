"""Load the corpus of real list mails and their hand labels (see README.md).

A mail is tests/corpus/mails/SLUG.eml, byte for byte as its public-inbox
archive holds it; its label is tests/corpus/labels/SLUG.toml; split.toml
assigns each slug to "tune" or "held_out" by the rule written there.
"""
from __future__ import annotations

import email
import email.policy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent
MAILS = HERE / "mails"
LABELS = HERE / "labels"
SPLIT = HERE / "split.toml"

Split = Literal["tune", "held_out"]
# A multiplier written with the value ("562K", "6.4 Million IOPS", "553k iops")
# is kept in the label's unit; normalized() takes it out for a comparison.
MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "Million": 1e6, "million": 1e6, "G": 1e9}


@dataclass(frozen=True)
class Claim:
    label: str
    before: float
    after: float
    unit: str
    better: Literal["higher", "lower"]
    line: str
    delta: str | None = None
    before_line: str | None = None
    # Set where the mail gives a side as samples with no aggregate row: the
    # values are then the mean of each side's samples, not a number on a line.
    aggregate: str | None = None
    # Set where the before side is written in another unit than the after
    # side ("lat (nsec): ... avg=9840.65" vs "lat (usec): ... avg=11.03").
    before_unit: str | None = None
    # Set where a side is computed from what the mail prints rather than
    # printed itself (perf diff: after = baseline share + delta).
    derived: str | None = None


@dataclass(frozen=True)
class CorpusMail:
    slug: str
    path: Path
    raw: bytes
    text: str
    label: dict[str, Any]
    split: Split
    claims: tuple[Claim, ...] = field(default=())

    @property
    def message_id(self) -> str:
        return str(self.label["message_id"])

    @property
    def negative(self) -> bool:
        return not self.claims


def tuned_on() -> list[str]:
    """Samples 1 and 2 (140 mails), all "tune": the reader has been tuned on
    every one of them (each held-out part was measured once, then tuned on)."""
    with open(SPLIT, "rb") as f:
        return list(tomllib.load(f)["tuned_on"])


def part_of(slug: str, message_id: str) -> Split:
    """The part the rule gives a mail: "tune" for a mail already tuned on,
    "held_out" for every later one (split.toml)."""
    return "tune" if slug in tuned_on() else "held_out"


def decoded_text(raw: bytes) -> str:
    """The mail as a reader sees it: its header block, then each text/plain
    part decoded from its transfer encoding (quoted-printable, base64)."""
    msg = email.message_from_bytes(raw, policy=email.policy.compat32)
    head = raw.split(b"\n\n", 1)[0].decode("utf-8", "replace")
    parts = []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_type() != "text/plain":
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            charset = part.get_content_charset() or "utf-8"
            try:
                parts.append(payload.decode(charset, "replace"))
            except LookupError:
                parts.append(payload.decode("utf-8", "replace"))
    return head + "\n\n" + "\n".join(parts)


def normalized(value: float, unit: str) -> tuple[float, str]:
    """(value, unit) with a leading multiplier word or letter of the unit
    applied: (562, "K IOPS") -> (562000.0, "IOPS")."""
    first, _, rest = unit.partition(" ")
    if rest and first in MULTIPLIERS:
        return value * MULTIPLIERS[first], rest
    return value, unit


def _claims(label: dict[str, Any]) -> tuple[Claim, ...]:
    return tuple(Claim(**row) for row in label.get("claims", []))


def splits() -> dict[str, Split]:
    with open(SPLIT, "rb") as f:
        return dict(tomllib.load(f)["mails"])


def load(split: Split | None = None) -> list[CorpusMail]:
    """Every corpus mail with its label, or only those of one split."""
    assigned = splits()
    out = []
    for path in sorted(MAILS.glob("*.eml")):
        slug = path.stem
        with open(LABELS / f"{slug}.toml", "rb") as f:
            label = tomllib.load(f)
        part = assigned[slug]
        if split is not None and part != split:
            continue
        raw = path.read_bytes()
        out.append(CorpusMail(slug, path, raw, decoded_text(raw), label, part, _claims(label)))
    return out
