"""Changes iolab carries into the kernels it builds, where an experiment needs them.

One today: null_blk's modeled device (carry/null_blk-model.patch), for
[vm] disk = "model" with a rate, a seek cost or poll queues
(iolab.spec.DeviceModel.carried): null_blk serves one request at a time,
each taking completion_nsec plus its bytes at mib_per_s (docs/device-model.md).
It is applied before the experiment's own patches (reverse ones included),
so every variant's kernel carries it alike and variants that differ only by
their patches still share the object tree; null_blk is as it was unless
its iolab_model parameter is set. The patch is part of the build's key, and
the header and the kernel's manifest name it with the others.
"""

from __future__ import annotations

from pathlib import Path

from iolab.kernels.patches import Patch
from iolab.spec import CARRIED_PATCH, VM

NULL_BLK_MODEL = Path(__file__).with_name("carry") / Path(CARRIED_PATCH).name  # the package's own copy


def carried(vm: VM) -> tuple[Patch, ...]:
    """The patches a kernel booted with these VM settings must carry (first, before the experiment's)."""
    model = vm.device_model
    return (Patch(NULL_BLK_MODEL),) if model is not None and model.carried else ()
