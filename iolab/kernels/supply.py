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
from iolab.kernels.kernel_ref import Log, for_variant
from iolab.spec import Build, Experiment


def ready(experiment: Experiment, log: Log, reporter: Reporter | None = None) -> dict[str, Kernel]:
    """Each variant's kernel by variant name (empty when no variant names one):
    from the cache, else fetched or built now (a build shows its progress
    on `reporter`, else as log lines)."""
    kernels: dict[str, Kernel] = {}
    for variant in experiment.variant:
        if isinstance(variant.kernel, Build):
            request = build.request_for(variant.kernel, experiment.base_dir)
            kernels[variant.name] = build.ensure(request, log, reporter)
        elif variant.kernel is not None:
            kernels[variant.name] = fetch.ensure(for_variant(variant.kernel, variant.modules, experiment.base_dir),
                                                 log)
    return kernels


def label(kernel: Kernel) -> str:
    """A kernel as the report's header names it: its release, and for a
    kernel built from source the patches on it (-R: reversed)."""
    patched = kernel.manifest.get("patches") or []
    if kernel.manifest.get("kind") != "build" or not patched:
        return kernel.kver
    names = [("-R " if name.endswith(" (reversed)") else "+") + Path(name.removesuffix(" (reversed)")).name
             for name in patched]
    return f"{kernel.kver} {' '.join(names)}"
