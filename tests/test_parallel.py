"""Batches side by side (iolab.run.parallel): every sample back in the caller's thread, each batch's end,
no more batches at once than asked, and an error that stops the others."""

import threading
import time

import pytest

from iolab.run import parallel


def test_every_sample_and_every_batch_end_come_back_with_at_most_the_workers_running():
    running, most, lock = [0], [0], threading.Lock()

    def run_batch(batch):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        for cell in batch:
            time.sleep(0.01)
            yield cell
        with lock:
            running[0] -= 1

    batches = [[f"b{b}c{c}" for c in range(3)] for b in range(5)]
    seen = list(parallel.run(batches, run_batch, 2, threading.Event()))
    assert sorted(s for _, s in seen if s is not None) == sorted(c for b in batches for c in b)
    assert sorted(i for i, s in seen if s is None) == [0, 1, 2, 3, 4]
    for index, batch in enumerate(batches):  # a batch's samples in its order, then its end
        assert [s for i, s in seen if i == index] == [*batch, None]
    assert most[0] == 2


def test_an_error_in_one_batch_is_raised_here_and_stops_the_others():
    stop = threading.Event()
    stopped = []

    def run_batch(batch):
        if batch == ["bad"]:
            raise RuntimeError("QEMU failed")
        while not stop.is_set():  # a boot that watches the run's stop, as VMHost._follow does
            time.sleep(0.01)
        stopped.append(batch)
        yield from ()

    with pytest.raises(RuntimeError, match="QEMU failed"):
        list(parallel.run([["slow"], ["bad"], ["never"]], run_batch, 2, stop))
    assert stop.is_set() and stopped == [["slow"]]  # the running batch ended; the third never started


def test_every_host_says_how_many_batches_it_runs_at_once_and_how_to_stop_them():
    """The runner asks the Host protocol for `parallel` and `stopping` (it read
    them with getattr, beside the protocol): a host that runs one cell at a
    time says 1, with an event of its own."""
    from iolab.hosts.base import Host
    from iolab.hosts.local import LocalHost

    assert {"parallel", "stopping"} <= set(dir(Host))
    one, two = LocalHost(), LocalHost()
    assert one.parallel == 1 and isinstance(one.stopping, threading.Event) and one.stopping is not two.stopping
