"""The kernel stage's entry: every kernel an experiment's variants boot,
made ready (from the cache, fetched, or built) before any host exists.

The runner calls ``ready`` and gives the kernels to the VM hosts, which
only boot them; ``iolab kernel build`` calls it ahead of a run.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from types import TracebackType

from iolab.kernels import build, cache, fetch
from iolab.kernels.build import Fleet
from iolab.kernels.make import Reporter
from iolab.kernels.entry import Kernel
from iolab.kernels.kernel_ref import KernelError, Log, for_variant
from iolab.spec import Build, Experiment


class Stopped(Exception):
    """The run stopped while a boot thread waited for its step's kernel."""


class _Quiet:
    """A build in the background says only its last line (the cells' progress has the terminal)."""

    def phase(self, name: str, detail: str = "") -> None:
        pass

    def files(self, done: int, expected: int | None, eta_s: float | None) -> None:
        pass

    def finish(self) -> None:
        pass


class Steps:
    """The kernels of a series' steps, built when a step is first asked for
    (a bisection builds only the steps it runs), in the shared object tree.
    Every step's patches are checked to apply when this is made, before
    anything is built; a step whose build fails is remembered with its error.

    ``ahead(order)`` builds the given steps one after another in a thread of
    their own, in that order, while the caller runs cells (iolab.run.series
    says when: where a value does not depend on the host's load); ``get``
    then waits for its step's build. In step order each build adds one patch
    to the tree the previous one left (iolab.kernels.patches)."""

    def __init__(self, experiment: Experiment, log: Log, reporter: Reporter | None = None,
                 fleet: Fleet | None = None):
        self.log, self.reporter, self.fleet = log, reporter, fleet
        self.requests = {v.name: build.request_for(v.kernel, experiment) for v in experiment.variant
                         if isinstance(v.kernel, Build)}
        build.check_steps(list(self.requests.values()), log)
        self.built: dict[str, Kernel] = {}
        self.errors: dict[str, str] = {}
        self.pending: dict[str, Future[None]] = {}
        self.pool: ThreadPoolExecutor | None = None
        self.lock = threading.Lock()
        self.cancel = threading.Event()  # set: the build ahead stops waiting for another process's lock

    def __contains__(self, name: str) -> bool:
        return name in self.requests

    def ahead(self, order: list[str]) -> None:
        """Build these steps in this order in the background (one build at a time)."""
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="iolab-steps")
        for name in order:
            if name in self.requests and name not in self.pending:
                self.pending[name] = self.pool.submit(self._ahead, name)

    def _ahead(self, name: str) -> None:
        cache.cancel_waits(self.cancel)
        self._build(name, _Quiet())

    def get(self, name: str, stop: threading.Event | None = None) -> Kernel | None:
        """The step's kernel, built now if it is not yet (or, where it is being
        built ahead, once it is); None when its build failed (see errors).
        ``stop`` (the run's: a boot thread's) set while it waits for a build
        ahead: Stopped, so an interrupted run's threads end at once."""
        waiting = self.pending.get(name)
        if waiting is not None:
            while not wait([waiting], timeout=cache.LOCK_POLL_S).done:
                if stop is not None and stop.is_set():
                    raise Stopped(f"the run stopped while {name}'s kernel was being built")
            waiting.result()
        elif name not in self.built and name not in self.errors:
            self._build(name, self.reporter)
        return self.built.get(name)

    def _build(self, name: str, reporter: Reporter | None) -> None:
        with self.lock:
            if name in self.built or name in self.errors:
                return
            try:
                kernel = build.ensure(self.requests[name], self.log, reporter, self.fleet)
            except KernelError as error:
                self.errors[name] = str(error)
                self.log(f"the kernel of {name} did not build; its cells fail: {error}")
                return
            self.built[name] = kernel

    def close(self, interrupted: bool = False) -> None:
        """Stop building ahead: steps not started are dropped; a build under
        way ends first, and where the run was ``interrupted`` one that waits
        for another process's lock stops waiting (Ctrl-C must not wait for
        another checkout's build)."""
        if interrupted:
            self.cancel.set()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def __enter__(self) -> Steps:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(interrupted=kind is not None)


def ready(experiment: Experiment, log: Log, reporter: Reporter | None = None,
          fleet: Fleet | None = None) -> dict[str, Kernel]:
    """Each variant's kernel by variant name (empty when no variant names one):
    from the cache, else fetched or built now (a build shows its progress
    on `reporter`, else as log lines; with a ``fleet``, a kernel another
    machine built or is building is fetched from it). A series' steps are
    left to Steps."""
    kernels: dict[str, Kernel] = {}
    for variant in experiment.variant if experiment.series is None else ():
        if isinstance(variant.kernel, Build):
            request = build.request_for(variant.kernel, experiment)
            kernels[variant.name] = build.ensure(request, log, reporter, fleet)
        elif variant.kernel is not None:
            kernels[variant.name] = fetch.ensure(for_variant(variant.kernel, variant.modules, experiment.base_dir),
                                                 log)
    return kernels


def origin(kernel: Kernel) -> str:
    """Where a kernel came from, with the package's version: the source it was
    built from ("linux-source-7.2 7.2.13-1"), or the Debian package it is."""
    manifest = kernel.manifest
    if manifest.get("kind") == "build":
        return str(manifest.get("source") or "?")
    if manifest.get("package"):
        return f"{manifest['package']} {manifest.get('version') or '?'}"
    return str(manifest.get("name") or "?")


def label(kernel: Kernel) -> str:
    """A kernel as the report's header names it: its release, and for a
    kernel built from source the patches on it (-R: reversed)."""
    patched = kernel.manifest.get("patches") or []
    if kernel.manifest.get("kind") != "build" or not patched:
        return kernel.kver
    names = [("-R " if name.endswith(" (reversed)") else "+") + Path(name.removesuffix(" (reversed)")).name
             for name in patched]
    return f"{kernel.kver} {' '.join(names)}"
