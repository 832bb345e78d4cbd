"""The kernel stage's entry: every kernel an experiment's variants boot,
made ready (from the cache, fetched, or built) before any host exists.

The runner calls ``ready`` and gives the kernels to the VM hosts, which
only boot them; ``iolab kernel build`` calls it ahead of a run.
"""

from __future__ import annotations

from pathlib import Path

from iolab.kernels import build, fetch
from iolab.kernels.build import Reporter
from iolab.kernels.entry import Kernel
from iolab.kernels.kernel_ref import KernelError, Log, for_variant
from iolab.spec import Build, Experiment


class Steps:
    """The kernels of a series' steps, built when a step is first asked for
    (a bisection builds only the steps it runs), in the shared object tree.
    Every step's patches are checked to apply when this is made, before
    anything is built; a step whose build fails is remembered with its error."""

    def __init__(self, experiment: Experiment, log: Log, reporter: Reporter | None = None):
        self.log, self.reporter = log, reporter
        self.requests = {v.name: build.request_for(v.kernel, experiment) for v in experiment.variant
                         if isinstance(v.kernel, Build)}
        build.check_steps(list(self.requests.values()), log)
        self.built: dict[str, Kernel] = {}
        self.errors: dict[str, str] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.requests

    def get(self, name: str) -> Kernel | None:
        """The step's kernel, built now if it is not yet; None when its build failed (see errors)."""
        if name in self.built or name in self.errors:
            return self.built.get(name)
        try:
            self.built[name] = build.ensure(self.requests[name], self.log, self.reporter)
        except KernelError as error:
            self.errors[name] = str(error)
            # all of it: the first error, the log's path and its last lines (as a build outside a series says)
            self.log(f"the kernel of {name} did not build; its cells fail: {error}")
            return None
        return self.built[name]


def ready(experiment: Experiment, log: Log, reporter: Reporter | None = None) -> dict[str, Kernel]:
    """Each variant's kernel by variant name (empty when no variant names one):
    from the cache, else fetched or built now (a build shows its progress
    on `reporter`, else as log lines). A series' steps are left to Steps."""
    kernels: dict[str, Kernel] = {}
    for variant in experiment.variant if experiment.series is None else ():
        if isinstance(variant.kernel, Build):
            request = build.request_for(variant.kernel, experiment)
            kernels[variant.name] = build.ensure(request, log, reporter)
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
