"""Loading an experiment file: TOML -> checked `Experiment`.

    load(path)  read, parse, validate (iolab.spec) and check
    parse(raw)  the same from a TOML table

Beyond the schema, the checks here need other parts of iolab or this
machine: probe parameters (iolab.engines.probe), kernel names
(iolab.hosts.vm.kernels), derived-metric expressions (iolab.cell.derived),
job files and '@workload' references, and the knobs that name this host's
CPUs and sysctls -- checked against this host only for cells that run on
it (a variant with a kernel runs in a VM: its CPUs are the VM's and its
sysctls the guest kernel's). Every error is a SpecError whose message names
the field, as ``variant["direct"].fio`` or ``workload[1].probe``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iolab.spec import CellSettings, Experiment, SpecError, Workload


def load(path: str | os.PathLike[str]) -> Experiment:
    """The checked experiment of a TOML file; SpecError names the file and field."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise SpecError(f"{path}: cannot read the experiment file: {error.strerror}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {error}") from None
    if "base_dir" in raw:
        raise SpecError(f"{path}: base_dir: unknown field")
    try:
        return parse(raw, base_dir=str(path.resolve().parent))
    except SpecError as error:
        raise SpecError(f"{path}: {error}".replace("\n", f"\n{path}: ")) from None


def parse(raw: dict[str, Any], base_dir: str = ".") -> Experiment:
    """The checked experiment of a TOML table (paths relative to ``base_dir``)."""
    prepared = _probe_tables(raw)
    try:
        experiment = Experiment.model_validate({**prepared, "base_dir": base_dir})
    except ValidationError as error:
        raise SpecError(_explain(error, raw)) from None
    for check in CHECKS:
        check(experiment)
    return experiment


def job_text(experiment: Experiment, workload: Workload) -> str:
    """The fio job text of a workload, following '@other' references and job files."""
    if workload.job_file is not None:
        return Path(experiment.base_dir, workload.job_file).read_text()
    assert workload.job is not None
    if workload.job.startswith("@"):
        return job_text(experiment, experiment.workload_named(workload.job[1:].strip()))
    return workload.job


# -- probe tables: normalised before validation ------------------------------


def _probe_tables(raw: dict[str, Any]) -> dict[str, Any]:
    """Probe workloads get their job text (the checked probe table as JSON)
    and variants their normalised probe overrides; errors name the field."""
    from iolab.engines import probe

    out = dict(raw)
    for kind in ("workload", "variant"):
        items = raw.get(kind)
        if not isinstance(items, list):
            continue
        out[kind] = [_probe_item(kind, index, item, probe) for index, item in enumerate(items)]
    return out


def _probe_item(kind: str, index: int, item: Any, probe: Any) -> Any:
    if not isinstance(item, dict) or not isinstance(item.get("probe"), dict):
        return item
    where = f"{kind}{_name_of(item, index)}.probe"
    try:
        if kind == "variant":
            return {**item, "probe": probe.normalize_overrides(item["probe"])}
        if item.get("engine") != "probe":
            return item  # the schema says probe = {...} is for engine = 'probe'
        text = probe.job_text(item["probe"])
    except ValueError as error:
        raise SpecError(f"{where}: {error}") from None
    if item.get("job") not in (None, text):
        raise SpecError(f"{kind}{_name_of(item, index)}.job: a probe workload takes its parameters "
                        "from probe = {...}; leave out job")
    return {**item, "job": text, "probe": probe.normalize(item["probe"])}


def _name_of(item: dict[str, Any], index: int) -> str:
    name = item.get("name")
    return f'["{name}"]' if isinstance(name, str) and name else f"[{index}]"


# -- checks of a validated experiment ------------------------------------------


def _check_job_references(experiment: Experiment) -> None:
    for index, workload in enumerate(experiment.workload):
        where = f'workload["{workload.name}"]'
        if workload.job_file is not None:
            job_path = Path(experiment.base_dir, workload.job_file)
            if not job_path.is_file():
                raise SpecError(f"{where}.job_file: no such file: {job_path}")
        elif workload.job is not None and workload.job.startswith("@"):
            other = workload.job[1:].strip()
            names = [w.name for w in experiment.workload[:index]]
            if other not in names:
                raise SpecError(
                    f"{where}.job: '@{other}' must name a workload defined before it "
                    f"(defined before: {', '.join(names) or 'none'})"
                )


def _check_kernels(experiment: Experiment) -> None:
    """Kernel names parse; a kernel of your own (a path, relative to the
    experiment file) exists here."""
    from iolab.hosts.vm import kernels

    for variant in experiment.variant:
        if variant.kernel is None:
            continue
        where = f'variant["{variant.name}"]'
        try:
            ref = kernels.parse(variant.kernel, variant.modules)
        except kernels.KernelError as error:
            raise SpecError(f"{where}.kernel: {error}") from None
        if ref.kind != "local":
            continue
        for name in ("kernel", "modules"):
            value = getattr(variant, name)
            if value is not None and not Path(experiment.base_dir, value).exists():
                raise SpecError(f"{where}.{name}: no such file: {Path(experiment.base_dir, value)}")


def _check_derived(experiment: Experiment) -> None:
    from iolab.cell import derived

    try:
        derived.parse_all(experiment.derived)
    except ValueError as error:
        raise SpecError(f"derived: {error}") from None


def _check_machine(experiment: Experiment) -> None:
    """CPUs and sysctls name ones that exist where the cells run: this host,
    or for variants with a kernel the VM ([vm] cpus; the guest kernel's
    sysctls are checked when the cell runs)."""
    in_vm = any(v.kernel is not None for v in experiment.variant)
    cpus = experiment.vm.cpus if in_vm else (os.cpu_count() or 1)
    items: list[tuple[str, CellSettings]] = [(f'variant["{v.name}"]', v) for v in experiment.variant]
    items += [(f'workload["{w.name}"]', w) for w in experiment.workload]
    for where, item in items:
        if item.cpus is not None and (not item.cpus or max(item.cpus) >= cpus):
            place = "the VM ([vm] cpus)" if in_vm else "this host"
            raise SpecError(f"{where}.cpus: must name CPUs between 0 and {cpus - 1} of {place}")
        if in_vm:
            continue
        for key in item.sysctl:
            if not os.path.exists("/proc/sys/" + key.replace(".", "/")):
                raise SpecError(
                    f"{where}.sysctl: {key!r}: no such sysctl on this kernel (/proc/sys/{key.replace('.', '/')})"
                )


CHECKS: tuple[Callable[[Experiment], None], ...] = (
    _check_job_references, _check_kernels, _check_derived, _check_machine,
)


# -- pydantic's errors, with the field's path -----------------------------------


def _field_path(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    """('variant', 1, 'fio') -> variant[1].fio, naming the item where it has a name."""
    parts: list[str] = []
    node: Any = raw
    for key in loc:
        if isinstance(key, int):
            item = node[key] if isinstance(node, list) and key < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            parts[-1] += f'["{name}"]' if name else f"[{key}]"
        else:
            parts.append(str(key))
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(parts) or "(file)"


def _explain(error: ValidationError, raw: dict[str, Any]) -> str:
    lines = []
    for item in error.errors():
        loc = tuple(k for k in item["loc"] if not (isinstance(k, str) and k.startswith("function-")))
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field (check its spelling; see README.md for the fields)"
        elif item["type"] == "literal_error":
            message = f"{message}, got {item['input']!r}"
        lines.append(f"{_field_path(loc, raw)}: {message}")
    return "\n".join(lines)
