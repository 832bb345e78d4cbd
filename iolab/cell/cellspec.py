"""What a cell is told: plain, validated data that travels as JSON.

The experiment file is validated once, on the host, by iolab.spec
(pydantic). A cell gets the result as plain data: its target, variant,
workload, set-up and collector tables as `Record`s, read-only views of the
validated values with attribute access (``cell.target.loop.direct_io``).
The schema stays in one place (iolab.spec); the cell side -- also a VM
guest, where every import costs seconds under emulation -- imports no
pydantic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, NoReturn


def _plain(value: Any) -> Any:
    """A validated model (anything with model_dump) or JSON-like data as
    plain data, every dict in it a Record."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, Record):
        return value
    if isinstance(value, Mapping):
        return Record(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value


class Record(dict[str, Any]):
    """A dict of validated values that is also read by attribute
    (``target.loop.direct_io``); read-only: change a copy with replace()."""

    def __init__(self, data: Mapping[str, Any] | None = None):
        super().__init__({str(k): _plain(v) for k, v in dict(data or {}).items()})

    @classmethod
    def of(cls, table: Any) -> Record:
        """A validated model (anything with model_dump) or a mapping, as a Record."""
        plain = _plain(table)
        if not isinstance(plain, Record):
            raise TypeError(f"a table must be a model or a mapping, got {type(table).__name__}")
        return plain

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a Record is read-only: use replace()")

    __setitem__ = __delitem__ = __setattr__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    # typeshed declares a dict unhashable (dict.__hash__ is None); a Record is read-only, so it hashes
    def __hash__(self) -> int:  # type: ignore[override]
        return hash(json.dumps(self, sort_keys=True, default=str))

    def replace(self, **changes: Any) -> Record:
        return Record({**self, **changes})

    def to_dict(self) -> dict[str, Any]:
        return _json(self)


@dataclass(frozen=True)
class CellSpec:
    """Everything needed to run one cell, anywhere.

    ``target`` is the variant's effective target (iolab.spec.Target), and
    ``variant``/``workload``/``setup``/``collect`` the validated tables of
    the experiment file; given as models or plain dicts, kept as Records.
    """

    seq: int
    round: int
    iteration: int
    warmup: bool
    target: Record
    variant: Record
    workload: Record
    job: str  # the workload's job text, resolved on the host
    setup: Record = field(default_factory=Record)
    collect: Record = field(default_factory=Record)
    derived: Mapping[str, str] = field(default_factory=dict)
    fio: str = "fio"  # the fio binary: on PATH, or a path (a fio built from source, iolab.kernels.fio_source)

    def __post_init__(self) -> None:
        for name in ("target", "variant", "workload", "setup", "collect"):
            object.__setattr__(self, name, _plain(getattr(self, name)))
        object.__setattr__(self, "derived", dict(self.derived))

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _json(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CellSpec:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown cell field(s): {', '.join(sorted(unknown))}")
        return cls(**data)

    def with_target(self, **changes: Any) -> CellSpec:
        return replace(self, target=self.target.replace(**changes))

