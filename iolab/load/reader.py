"""An experiment file read and parsed: TOML -> a checked `Experiment`, pure
(the schema, and the structure checks of iolab.load.structure; nothing of
this machine)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iolab.load.errors import explain, name_of
from iolab.load.files import read_text
from iolab.load.structure import STRUCTURE, check_series
from iolab.spec import Experiment, SpecError

MAX_DEPTH = 8  # nesting of tables and arrays in an experiment file


def load(path: str | os.PathLike[str], timing: str | None = None) -> Experiment:
    """The checked experiment of a TOML file; SpecError names the file and field.
    ``timing`` overrides [vm] timing (iolab run --timing) before that mode's
    defaults of what the file leaves unset apply (spec.with_timing_defaults)."""
    path = Path(path)
    text = read_text(path, "experiment file")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {str(error)[:200]}") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML: nested more than {MAX_DEPTH} levels deep") from None
    for field in ("base_dir", "inputs"):  # iolab's own, not a file's
        if field in raw:
            raise SpecError(f"{path}: {field}: unknown field")
    if timing is not None:
        vm = raw.get("vm", {})
        raw = {**raw, "vm": {**(vm if isinstance(vm, dict) else {}), "timing": timing}}
    with in_file(path):
        return parse(raw, base_dir=str(path.resolve().parent))


@contextmanager
def in_file(path: str | os.PathLike[str]) -> Iterator[None]:
    """SpecErrors raised inside name the file on each of their lines."""
    try:
        yield
    except SpecError as error:
        raise SpecError(f"{path}: {error}".replace("\n", f"\n{path}: ")) from None


def parse(raw: dict[str, Any], base_dir: str = ".", inputs: dict[str, str] | None = None) -> Experiment:
    """The experiment of a TOML table, its schema and structure checked
    (paths relative to ``base_dir``, or the stored copies in ``inputs``:
    Experiment.file); nothing of this machine."""
    _check_depth(raw)
    check_series(raw)
    prepared = _probe_tables(_renamed_metrics(raw))
    try:
        experiment = Experiment.model_validate({**prepared, "base_dir": base_dir, "inputs": inputs or {}})
    except ValidationError as error:
        raise SpecError(explain(error, raw, Experiment)) from None
    for check in STRUCTURE:
        check(experiment)
    return experiment


def _check_depth(raw: Any) -> None:
    """Refuse tables and arrays nested deeper than MAX_DEPTH (without recursion)."""
    todo: list[tuple[Any, int, str]] = [(raw, 0, "")]
    while todo:
        node, depth, where = todo.pop()
        if depth > MAX_DEPTH:
            raise SpecError(f"{where or '(file)'}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            todo += [(v, depth + 1, f"{where}.{k}" if where else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(node)]


def _renamed_metrics(raw: dict[str, Any]) -> dict[str, Any]:
    """An older file's metric names ([report] and [[workload]] metrics and
    primary) read as today's (iolab.engines.probe.RENAMED: us_per_call is
    per_call): a stored run's experiment, or a file written for an older iolab."""
    from iolab.engines.probe import RENAMED

    def names(table: Any) -> Any:
        if not isinstance(table, dict):
            return table
        return {**table, **{field: [RENAMED.get(n, n) if isinstance(n, str) else n for n in table[field]]
                            for field in ("metrics", "primary") if isinstance(table.get(field), list)}}

    out = {**raw, "report": names(raw["report"])} if "report" in raw else dict(raw)
    if isinstance(raw.get("workload"), list):
        out["workload"] = [names(item) for item in raw["workload"]]
    return out


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
    where = f"{kind}{name_of(item, index)}.probe"
    try:
        if kind == "variant":
            return {**item, "probe": probe.normalize_overrides(item["probe"])}
        if item.get("engine") != "probe":
            return item  # the schema says probe = {...} is for engine = 'probe'
        text = probe.job_text(item["probe"])
    except ValueError as error:
        raise SpecError(f"{where}: {error}") from None
    if item.get("job") not in (None, text):
        raise SpecError(f"{kind}{name_of(item, index)}.job: a probe workload takes its parameters "
                        "from probe = {...}; leave out job")
    return {**item, "job": text, "probe": probe.normalize(item["probe"])}
