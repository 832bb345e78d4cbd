"""The kernel supply: every kernel a variant boots, ready before any host exists.

    kernel_ref  a kernel as the experiment names it; KernelError
    fetch       Debian kernel packages, and kernels of your own (a bzImage)
    build       kernels built from source: sources, patches, kconfig -> a kernel
    initramfs   the guest's init, built into every cached kernel
    cache entry the content-keyed cache (~/.cache/iolab) and its entries
    supply      ready(experiment): the stage's entry for the runner and the CLI

This file only re-exports.
"""

from iolab.kernels.entry import Kernel, listing
from iolab.kernels.kernel_ref import KernelError, KernelRef, parse
from iolab.kernels.supply import Steps, label, origin, ready

__all__ = ["Kernel", "KernelError", "KernelRef", "Steps", "label", "listing", "origin", "parse", "ready"]
