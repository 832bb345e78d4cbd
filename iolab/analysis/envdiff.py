"""The environment of a run's samples as rows, and where it differs.

Every sample carries the environment it ran in (iolab.environment: kernel,
command line, CPUs, fio version, the target as prepared, the variant's
settings, knob values). Flattened to dotted keys (``variant.fio.direct``),
grouped by variant (a run) or by run (two runs compared), each key is one
row: its value per group, whether the groups differ, and whether it is a
checked key (one that must agree between samples compared with each other).

Only the setup is compared: keys that differ from cell to cell by
construction (VOLATILE: temporary names, what a VM's boot measured) are
left out, and a cell's own block device in a key is named ``<target>``, so
two runs that got different loop devices do not differ in their knobs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from iolab.cell.environment import CHECKED, lookup
from iolab.store import Sample

# Keys that differ from cell to cell by construction: temporary names, and
# what a VM's boot measured (its time to ready, the guest's uptime at each
# step, which boot and cell of it this was): per-cell facts, not the setup.
VOLATILE = ("prepared.mountpoint", "prepared.device", "prepared.image", "variant.name", "variant.description",
            "vm.boot_s", "vm.boot", "vm.cells_in_boot", "vm.guest_timeline", "vm.boot_host",
            "guest.python_started_uptime", "guest.import_s", "guest.ready_uptime", "guest.cell_index",
            "guest.cell_uptime")
# A tool's version: a sample of a workload that does not run the tool has none (a probe
# workload's cell has no fio version), and lacking it is no difference
TOOLS = ("fio", "probe")
TARGET = "<target>"  # a cell's own block device, in a key (knobs.sysfs /sys/block/<target>/queue/...)
MAX_VALUE = 200  # characters of a value shown


@dataclass(frozen=True)
class EnvRow:
    key: str
    values: dict[str, str]  # by group, in group order; "a | b" when a group saw several
    differs: bool  # the groups' values are not all the same
    checked: bool  # in CHECKED: must agree between compared samples


def flatten(env: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"variant": {"fio": {"direct": 1}}}`` -> ``{"variant.fio.direct": "1"}``;
    empty tables and nulls are left out."""
    out: dict[str, str] = {}
    for key, value in env.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        elif value is None or value == [] or value == "":
            continue
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            out[name] = text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."
    return out


def _volatile(key: str) -> bool:
    return any(key == v or key.startswith(v + ".") for v in VOLATILE)


def _device_names(env: dict[str, Any]) -> Callable[[str], str]:
    """A key with the cell's own block device (prepared.device: the loop
    device a cell was given, loop0 in one run and loop3 in the next) named
    ``<target>``: ``knobs.sysfs /sys/block/loop3/queue/read_ahead_kb`` ->
    ``knobs.sysfs /sys/block/<target>/queue/read_ahead_kb``."""
    device = lookup(env, "prepared.device")
    if not isinstance(device, str) or not device.startswith("/dev/"):
        return lambda key: key
    name = re.escape(device.removeprefix("/dev/"))
    pattern = re.compile(rf"(/sys/(?:class/)?block/|/dev/){name}(?=/|$|\s)")
    return lambda key: pattern.sub(rf"\g<1>{TARGET}", key)


def rows(samples: Iterable[Sample], group: Callable[[Sample], str], groups: list[str], *,
         mixed_differs: bool = True) -> list[EnvRow]:
    """One row per key of the ok samples' environments, groups in the given
    order. A row differs when its groups saw different sets of values, and,
    with ``mixed_differs``, when one group saw several (the cells of one
    variant ran in different environments)."""
    seen: dict[str, dict[str, list[str]]] = {}
    for sample in samples:
        if sample.status != "ok":
            continue
        named = _device_names(sample.env)
        for key, value in flatten(sample.env).items():
            if _volatile(key):
                continue
            key = named(key)
            values = seen.setdefault(key, {}).setdefault(group(sample), [])
            if value not in values:
                values.append(value)
    result = []
    for key in sorted(seen, key=lambda k: (k not in CHECKED, k)):
        by_group = {g: " | ".join(sorted(seen[key].get(g, ["-"]))) for g in groups}
        present = {v for g, v in by_group.items() if g in seen[key] or key not in TOOLS}
        differs = len(present) > 1 or (mixed_differs and any(len(v) > 1 for v in seen[key].values()))
        result.append(EnvRow(key, by_group, differs, key in CHECKED))
    return result


def differences(found: list[EnvRow]) -> list[str]:
    """The rows that differ, as one line each (checked keys first)."""
    return [
        f"{row.key}: " + "; ".join(f"{group} {value}" for group, value in row.values.items())
        + (" (a checked key)" if row.checked else "")
        for row in found if row.differs
    ]
