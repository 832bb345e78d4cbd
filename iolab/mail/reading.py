"""What iolab reads from a patch mail, once: its patches, its benchmark and its claims.

``reading(mail)`` takes the ``Mail`` that iolab.mail.message read and adds
what the later stages need of its text, read once into a frozen value:
each patch's files and ``base-commit:`` trailer, the benchmark
(iolab.mail.benchmark), the claim rows (iolab.mail.claimed) and the
blocks of figures no row was read from (iolab.mail.unread), less those the
user's hints read (iolab.mail.hinted: their rows join the claims). No kernel
source is needed: ``iolab mail`` prints this value, and ``iolab patch``
builds its experiment from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from iolab.mail import benchmark as benchmarks
from iolab.mail.benchmark import Benchmark, MailWorkload
from iolab.mail.claimed import Claim, claims
from iolab.mail.hinted import HintRead, uncovered
from iolab.mail.message import Mail, Patch
from iolab.mail.unread import Block, unread

_BASE_COMMIT = re.compile(r"^base-commit:\s*([0-9a-f]{7,40})\s*$", re.M)


@dataclass(frozen=True)
class PatchRead:
    """One patch of the mail as ``iolab mail`` shows it."""

    subject: str
    counter: int
    total: int
    message_id: str | None
    files: tuple[str, ...]  # the -p1 paths its diff changes
    base_commit: str | None  # its own trailer, else the cover letter's


@dataclass(frozen=True)
class Reading:
    """The mail read once: what every later stage takes."""

    mail: Mail
    patches: tuple[PatchRead, ...]
    benchmark: Benchmark
    claims: tuple[Claim, ...]
    unread: tuple[Block, ...] = ()  # the blocks of figures no claim row came from (iolab.mail.unread)
    hints: tuple[HintRead, ...] = ()  # what each --read the user gave read (iolab.mail.hinted): its rows are in claims

    @property
    def source(self) -> str:
        """The mail as a report names it: its title and Message-Id."""
        return self.mail.title + (f" <{self.mail.message_id}>" if self.mail.message_id else "")


def base_commit(text: str | None) -> str | None:
    """The ``base-commit:`` trailer git format-patch --base and b4 write (None when absent)."""
    found = _BASE_COMMIT.search(text or "")
    return found.group(1) if found else None


def patch_base(patch: Patch, cover: str | None) -> str | None:
    """The commit a patch was written on: its own ``base-commit:`` trailer, else its cover letter's."""
    return base_commit(patch.diff) or base_commit(patch.body) or base_commit(cover)


def _patch(patch: Patch, cover: str | None) -> PatchRead:
    from iolab.kernels.diff import paths

    return PatchRead(patch.subject or patch.title, patch.counter, patch.total, patch.message_id,
                     tuple(paths(patch.diff)), patch_base(patch, cover))


def claims_of(mail: Mail) -> tuple[Claim, ...]:
    """The claim rows of the mail's text (its cover letter and each patch's description)."""
    subjects = dict.fromkeys([mail.title, *(p.title for p in mail.patches)])
    return tuple(claims(mail.text(), "\n".join(s for s in subjects if s)))


def reading(mail: Mail, allow: tuple[str, ...] = (), hints: tuple[HintRead, ...] = ()) -> Reading:
    """The mail's patches, benchmark and claims (``allow``: the fio options or engines
    the user allows by name, as ``iolab patch --allow``; ``hints``: the rows of the blocks the user
    named, iolab.mail.hinted, after the reader's, a row it read already left out)."""
    found = claims_of(mail)
    seen = {(c.source, c.before, c.after) for c in found}
    found += tuple(row for hint in hints for row in hint.rows if (row.source, row.before, row.after) not in seen)
    return Reading(mail, tuple(_patch(p, mail.cover) for p in mail.patches),
                   benchmarks.benchmark(mail.text(), mail.title, list(found), allow), found,
                   uncovered(unread(mail.text(), found, mail.parts()), hints), hints)


# -- as plain data (JSON) -------------------------------------------------------------


def maps_to(workload: MailWorkload) -> str:
    """What iolab runs for a command or job of the mail, in one line."""
    if workload.script is not None:
        return "a shell script, run as written (only with --allow script)"
    if workload.probe is not None:
        return "iolab-probe " + " ".join(f"{k}={v}" for k, v in workload.probe.items())
    if workload.job is not None:
        options = [line.strip() for line in workload.job.splitlines()
                   if "=" in line and not line.strip().startswith(("#", ";"))]
        return "fio " + " ".join(options) + (" (raw device)" if workload.raw else "")
    return "nothing"


def claim_dict(claim: Claim) -> dict[str, Any]:
    """A claim row as JSON; ``form`` says which of the reader's forms read it, "hinted" for a --read hint."""
    return {"label": claim.label, "before": claim.before, "after": claim.after, "unit": claim.unit,
            "better": claim.better, "kind": claim.kind, "delta": claim.delta, "stated": claim.stated,
            "source": claim.source, "form": claim.form}


def as_dict(read: Reading) -> dict[str, Any]:
    """The reading as JSON's keys: ``mail``, ``patches``, ``benchmark``, ``claims``, ``unread``, ``hints``."""
    mail, bench = read.mail, read.benchmark
    env = bench.environment
    return {
        "mail": {"title": mail.title, "message_id": mail.message_id, "author": mail.author, "date": mail.date,
                 "cover": mail.cover is not None, "missing": list(mail.missing)},
        "patches": [{"subject": p.subject, "counter": p.counter, "total": p.total, "message_id": p.message_id,
                     "files": list(p.files), "base_commit": p.base_commit} for p in read.patches],
        "benchmark": {
            "workloads": [{"name": w.name, "origin": w.origin, "source": w.source, "maps_to": maps_to(w),
                           "job": w.job, "probe": w.probe, "memory_max": w.memory_max} for w in bench.workloads],
            "environment": {"fs": env.fs, "sysctl": env.sysctl, "mount_options": env.mount_options,
                            "mkfs_options": list(env.mkfs_options), "device": env.device,
                            "device_source": env.device_source, "memory_max": env.memory_max},
            "scaled": list(bench.scaled), "not_reproduced": list(bench.not_reproduced),
            "refused": list(bench.refused)},
        "claims": [claim_dict(c) for c in read.claims],
        "unread": [{"first_line": b.first_line, "last_line": b.last_line, "header": b.header, "figures": b.figures,
                    "lines_of": b.lines_of} for b in read.unread],
        "hints": [{"spec": h.spec, "rows": len(h.rows), "skipped": h.skipped, "lines_of": h.where}
                  for h in read.hints],
    }
