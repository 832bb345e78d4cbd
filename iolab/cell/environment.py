"""The environment that travels with every sample.

Keys in CHECKED must agree between the samples that are compared; the
report flags a comparison where they do not (a different kernel between
variants is expected only when the variants name kernels).
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path
from typing import Any

import iolab

# Dotted keys name a value in a table of the environment (env["vm"]["timing"]):
# the timing mode, its icount shift and QEMU's version decide what a VM's
# numbers measure (iolab.hosts.vm.host.timing_env), and so does the boot
# ([vm] boot: a lean TCG boot's tick comes from another timer).
CHECKED = ("kernel", "fio", "probe", "cpus", "cpu_model", "vm.timing", "vm.icount_shift", "vm.qemu",
           "vm.device_model", "vm.boot_mode")


def lookup(env: dict[str, Any], key: str) -> Any:
    """The value of a (dotted) key of an environment, None where it is missing."""
    value: Any = env
    for part in key.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _mem_total_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1])
    return 0


@functools.cache
def host() -> dict[str, Any]:
    """Facts about this machine (or guest) that do not change during a run."""
    return {
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "cmdline": Path("/proc/cmdline").read_text().strip(),
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "mem_kib": _mem_total_kib(),
        "hostname": platform.node(),
        "iolab": iolab.__version__,
        "virtualized": Path("/sys/hypervisor/type").exists() or "hypervisor" in Path("/proc/cpuinfo").read_text(),
    }
