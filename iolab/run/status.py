"""What the queue is doing, for people: `iolab runs` (a queued run's rounds
per host) and `iolab agents` (each agent's labels, heartbeat, current round)."""

from __future__ import annotations

import datetime
from collections import defaultdict

from iolab.run import queue
from iolab.store import Attempt, RunInfo, Store


def _rounds(numbers: list[int]) -> str:
    return ("round " if len(numbers) == 1 else "rounds ") + ", ".join(str(n) for n in sorted(numbers))


def counted(attempts: list[Attempt]) -> dict[int, Attempt]:
    """The attempt that counts for each round: its latest not refused (as iolab.store.COUNTED)."""
    found: dict[int, Attempt] = {}
    for item in attempts:
        if item.status != "refused" and (item.round not in found or item.attempt > found[item.round].attempt):
            found[item.round] = item
    return found


def round_lines(store: Store, run: RunInfo) -> list[str]:
    """A queued run's rounds: queued, running and done per host, and the tries that no longer count."""
    attempts = store.attempts(run.id)
    current = counted(attempts)
    jobs = queue.rounds_by_status(store, run.id) if store.sql.kind == "postgresql" else {}
    done: dict[str, list[int]] = defaultdict(list)
    running: dict[str, list[int]] = defaultdict(list)
    for item in current.values():
        if item.status in ("done", "running"):
            (done if item.status == "done" else running)[item.host].append(item.round)
    labels = run.labels or "any"
    lines = [f"queued for labels {labels}: {jobs.get('todo', 0)} queued, "
             f"{sum(len(v) for v in running.values())} running, {sum(len(v) for v in done.values())} done"
             + (f", {jobs['cancelled']} cancelled" if jobs.get("cancelled") else "")]
    for host in sorted(set(done) | set(running)):
        parts = [f"{_rounds(done[host])} done"] if done[host] else []
        parts += [f"running {_rounds(running[host])}"] if running[host] else []
        lines.append(f"  {host}: {'; '.join(parts)}")
    for item in attempts:
        counts = current.get(item.round) is item
        if counts and item.status in ("done", "running"):
            continue
        why = f": {item.error}" if item.error else ""
        lines.append(f"  round {item.round} try {item.attempt + 1} on {item.host}: {item.status}{why}"
                     + ("" if counts or item.status == "refused" else " (superseded)"))
    return lines


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.0f} s ago" if seconds < 120 else f"{seconds / 60:.0f} min ago"


def agent_lines(store: Store) -> list[str]:
    agents = store.agents()
    if not agents:
        return ["no agents have taken rounds from this store (start one: iolab agent --store URL)"]
    beats = queue.heartbeats(store) if store.sql.kind == "postgresql" else {}
    rows = [["name", "labels", "state", "heartbeat", "where"]]
    for agent in agents:
        beat = beats.get(agent.worker_id) if agent.worker_id is not None else None
        if agent.stopped is not None:
            when = datetime.datetime.fromtimestamp(agent.stopped).strftime("%Y-%m-%d %H:%M")
            state = f"stopped {when}"
        elif beat is None:
            state = "starting" if agent.worker_id is None else "gone (its worker was pruned: no heartbeat)"
        elif agent.job:
            state = f"running {agent.job}"
        else:
            state = "idle"
        if beat is not None and agent.stopped is None and beat > 3 * agent.heartbeat:
            state += " (silent for 3 heartbeats: killed or cut off; its round goes back to the queue)"
        allow = f", allows {agent.allow}" if agent.allow else ""
        rows.append([agent.name, agent.labels or "-", state, _ago(beat) if agent.stopped is None else "-",
                     f"pid {agent.pid} on {agent.hostname}{allow}"])
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4] for row in rows]
