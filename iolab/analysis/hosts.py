"""Which host ran which round of a queued run, and the tries that no longer count.

A queued run's rounds are taken by agents (iolab.run.agent); each try at a
round is an attempt (iolab.store). The report names each round's host and
shows every superseded try (an agent killed mid-round, a round given back
or one that raised) beside the counted one, never silently replaced.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from iolab.store import Attempt, Sample


@dataclass(frozen=True)
class HostRounds:
    host: str
    rounds: tuple[int, ...]  # the rounds whose counted samples it took
    kernel: str | None
    cpus: int | None


@dataclass(frozen=True)
class Superseded:
    round: int
    attempt: int  # 0-based try
    host: str
    status: str  # killed | stalled | given back | failed | done
    error: str | None
    cells: int  # samples it stored (kept, out of the analysis)
    failed: int  # of which failed cells
    by: Attempt | None  # the try that counts instead


@dataclass(frozen=True)
class Hosts:
    by_host: tuple[HostRounds, ...]
    superseded: tuple[Superseded, ...]
    superseded_samples: tuple[Sample, ...]
    attempts: tuple[Attempt, ...]


def hosts(attempts: list[Attempt], counted: list[Sample], superseded: list[Sample]) -> Hosts:
    rounds: dict[str, set[int]] = defaultdict(set)
    facts: dict[str, dict[str, Any]] = {}
    for sample in counted:
        if sample.host is not None:
            rounds[sample.host].add(sample.round)
    for item in attempts:
        facts.setdefault(item.host, item.host_facts)
    by_host = tuple(HostRounds(host, tuple(sorted(found)), facts.get(host, {}).get("kernel"),
                               facts.get(host, {}).get("cpus")) for host, found in sorted(rounds.items()))
    latest: dict[int, Attempt] = {}
    for item in attempts:
        if item.status != "refused" and (item.round not in latest or item.attempt > latest[item.round].attempt):
            latest[item.round] = item
    left = []
    for item in attempts:
        if item.status == "refused" or latest.get(item.round) is item:
            continue
        mine = [s for s in superseded if s.round == item.round and s.attempt == item.attempt]
        left.append(Superseded(item.round, item.attempt, item.host, item.status, item.error, len(mine),
                               sum(1 for s in mine if s.status != "ok"), latest.get(item.round)))
    return Hosts(by_host, tuple(left), tuple(superseded), tuple(attempts))


def lines(found: Hosts, cells_per_round: int) -> list[str]:
    """One line per host, then one per superseded try."""
    out = []
    for machine in found.by_host:
        numbers = ", ".join(str(r) for r in machine.rounds)
        facts = f" (kernel {machine.kernel}, {machine.cpus} CPUs)" if machine.kernel else ""
        out.append(f"host {machine.host}: {'round' if len(machine.rounds) == 1 else 'rounds'} {numbers}{facts}")
    for old in found.superseded:
        failed = f", {old.failed} failed" if old.failed else ""
        why = f" ({old.error})" if old.error and old.status != "done" else ""
        by = f" by try {old.by.attempt + 1} on {old.by.host}" if old.by else ""
        out.append(f"round {old.round}: try {old.attempt + 1} on {old.host} {old.status}{why} after "
                   f"{old.cells} of {cells_per_round} cells{failed}; kept, superseded{by}")
    return out
