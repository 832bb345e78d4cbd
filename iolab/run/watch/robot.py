"""One pass of the list robot over its inboxes: read what is new, group it,
check each series, queue what iolab can test, and remember where it stopped.

The experiment a series becomes is made by the caller's ``queue`` (the
command line's, which has ``iolab patch``'s pipeline): given the series and
the cached source it applies to, it queues the rounds and returns the run.
A dry run reads the store's position but writes nothing: no position, no
series, nothing queued.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.run.watch import checks, inbox
from iolab.run.watch.series import Series, Skip, group
from iolab.spec import SpecError

if TYPE_CHECKING:
    from iolab.store import Store

Queue = Callable[[Series, checks.Source], int]  # the run it queued; SpecError when the pipeline refuses it
Say = Callable[[str], None]


@dataclass
class Tally:
    messages: int = 0
    queued: list[tuple[Series, int | None]] = field(default_factory=list)  # run None: a dry run's "would queue"
    skipped: list[Skip] = field(default_factory=list)


def _skip(say: Say, tally: Tally, skip: Skip) -> None:
    tally.skipped.append(skip)
    subject = f' "{skip.subject}"' if skip.subject else ""
    say(f"  skip   <{skip.message_id}>{subject}: {skip.reason}")


def _earlier(store: Store | None, series: Series) -> str | None:
    """Why a series was already dealt with in an earlier pass, or None."""
    if store is None:
        return None
    from iolab.store import watch as memory

    seen = memory.known(store, series.key)
    if seen is not None:
        return f"checked before ({seen.status}" + (f", run {seen.run_id})" if seen.run_id else ")")
    newer = [c for c in memory.checked(store) if c.family == series.family and c.revision > series.revision]
    if newer:
        return f"superseded by v{newer[-1].revision} <{newer[-1].message_id}> (checked before)"
    return None


def _remember(store: Store, where: str, series: Series, status: str, reason: str | None, run_id: int | None) -> None:
    from iolab.mail.claimed import claims
    from iolab.store import watch as memory

    found = [{"label": c.label, "before": c.before, "after": c.after, "unit": c.unit, "better": c.better}
             for c in claims(series.text, series.title)]
    memory.add(store, inbox=where, key=series.key, family=series.family, subject=series.subject,
               revision=series.revision, message_id=series.message_id, headers=series.headers, claims=found,
               status="queued" if status == "queued" else "skipped", reason=reason, run_id=run_id)


def _one_series(series: Series, store: Store | None, where: str, sources: list[checks.Source],
                queue: Queue | None, say: Say, tally: Tally) -> None:
    shown = f"<{series.message_id}> \"{series.subject}\" (v{series.revision}, {len(series.patches)} " \
        f"patch{'es' if len(series.patches) > 1 else ''}{', with a cover letter' if series.cover else ''})"
    earlier = _earlier(store, series)
    if earlier is not None:
        say(f"  known  {shown}: {earlier}")
        return
    verdict = checks.check(series, sources)
    run_id = None
    reason = verdict.reason
    if reason is None and verdict.source is not None and queue is not None:
        try:
            run_id = queue(series, verdict.source)
        except SpecError as error:
            reason = f"iolab patch refused it: {' '.join(str(error).split())[:300]}"
    if reason is not None:
        _skip(say, tally, Skip(series.message_id, series.subject, reason))
        if store is not None and queue is not None:
            _remember(store, where, series, "skipped", reason, None)
        return
    assert verdict.source is not None
    what = "queued" if run_id is not None else "would queue"
    say(f"  {'queue ' if run_id is not None else 'would '} {shown} on {verdict.source.label}: "
        f"{'; '.join(verdict.workloads[:4])}" + (f" -> run {run_id}" if run_id is not None else f" ({what})"))
    tally.queued.append((series, run_id))
    if store is not None and run_id is not None:
        _remember(store, where, series, "queued", None, run_id)


def one_pass(inboxes: list[Path], store: Store | None, *, queue: Queue | None, backlog: int, say: Say,
             stop: threading.Event | None = None) -> Tally:
    """Read each inbox from where the store says it stopped, and queue each
    testable series (``queue`` None: a dry run, nothing written)."""
    from iolab.store import watch as memory

    tally = Tally()
    sources = checks.cached_sources()
    for path in inboxes:
        where = str(path)
        last = memory.positions(store, where) if store is not None else {}
        again = tuple(memory.pending(store, where)) if store is not None else ()
        messages, position = inbox.read(path, last, backlog, again)
        tally.messages += len(messages)
        say(f"inbox {where}: {len(messages)} message{'s' if len(messages) != 1 else ''} to read"
            + (f" ({len(again)} kept from before)" if again else ""))
        grouped = group(messages)
        for skip in grouped.skipped:
            _skip(say, tally, skip)
        for series in grouped.series:
            if stop is not None and stop.is_set():
                say(f"inbox {where}: stopped; its position is not moved (the next pass reads it again)")
                return tally
            _one_series(series, store, where, sources, queue, say, tally)
        if store is not None and queue is not None:
            memory.set_pending(store, where, [(m.epoch, m.commit) for m in grouped.pending])
            memory.set_positions(store, where, position)
    return tally
