"""Batches side by side: the cells of a host whose counts do not depend on
the host's load (VMs in instructions mode: iolab.hosts.vm.variants) run
several boots at once, one per host CPU, since QEMU's TCG runs each guest
in one thread. Samples come back to the caller's thread as they arrive, and
are stored there; a batch's end comes back too, so the caller can look
between batches (iolab.run.early)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iolab.cell.cellspec import CellSpec
    from iolab.cell.sample import Sample

Event = tuple[int, "Sample | None | BaseException"]  # (batch index, a sample | None at its end | its error)
Done = tuple[int, "Sample | None"]  # what the caller gets: a sample, or None at its batch's end


def run(batches: Sequence[Sequence[CellSpec]], run_batch: Callable[[Sequence[CellSpec]], Iterator[Sample]],
        workers: int, stop: threading.Event) -> Iterator[Done]:
    """(batch index, sample) as each sample comes, (index, None) when a batch
    ends, with at most ``workers`` batches running; a batch's exception is
    raised here. Leaving early (an error, Ctrl-C in the caller, the caller
    closing the generator) sets ``stop``, which the host's batches watch to
    end their VMs, and waits for the workers to go."""
    events: queue.Queue[Event] = queue.Queue()
    todo: queue.Queue[int] = queue.Queue()
    for index in range(len(batches)):
        todo.put(index)

    def work() -> None:
        while not stop.is_set():
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            try:
                for sample in run_batch(batches[index]):
                    events.put((index, sample))
                events.put((index, None))
            except BaseException as error:  # handed to the caller's thread, which raises it
                stop.set()  # no other batch starts; those under way end
                events.put((index, error))

    threads = [threading.Thread(target=work, name=f"iolab-batch-{n}", daemon=True)
               for n in range(max(1, min(workers, len(batches))))]
    for thread in threads:
        thread.start()
    ended = 0
    try:
        while ended < len(batches):
            index, event = events.get()
            if isinstance(event, BaseException):
                raise event
            if event is None:
                ended += 1
            yield index, event  # a Sample, or None
    finally:
        if ended < len(batches):
            stop.set()
        for thread in threads:
            thread.join()
