"""The experiment file: schema, loading and validation.

An experiment is a TOML file (see README.md and scenarios/). It is loaded
into the `Experiment` model; every error names the field it is about, as a
path like ``variant[2].fio`` or ``workload["normal"].job_file``.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from iolab.units import format_size, parse_size

FILESYSTEMS = ("ext4", "xfs", "btrfs", "erofs", "none")
# The smallest filesystem each mkfs accepts (mkfs.xfs refuses under 300MB).
MIN_SIZE = {"ext4": 16 << 20, "xfs": 300 << 20, "btrfs": 128 << 20, "none": 1 << 20, "erofs": 0}
VIEWS = ("median", "mean", "hmean")


class SpecError(Exception):
    """An experiment file that cannot be run; the message names the field."""


def _size(value: Any) -> int:
    return parse_size(value)


Size = Annotated[int, BeforeValidator(_size)]


def _words(value: Any) -> list[str]:
    """Options given as a list of words or as one shell-like string."""
    if isinstance(value, str):
        return value.split()
    return value


Words = Annotated[list[str], BeforeValidator(_words)]
FioValue = str | int | float | bool


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ErofsFiles(Strict):
    """Files generated into the tree that mkfs.erofs packs into the image."""

    name: str = Field(description="file name; {n} is replaced by 0..count-1")
    count: int = Field(default=1, ge=1, le=100_000)
    size: Size
    content: Literal["random", "compressible"] = "random"


class Loop(Strict):
    """How the loop device over the image is set up (losetup)."""

    direct_io: bool = False
    sector_size: Literal[512, 1024, 2048, 4096] | None = None


class Target(Strict):
    kind: Literal["loop", "device", "dir"] = "loop"
    fs: Literal["ext4", "xfs", "btrfs", "erofs", "none"] = "ext4"
    size: Size = parse_size("1GiB")
    device: str | None = None
    path: str | None = None
    image_dir: str | None = None
    allow_destroy: bool = False
    mkfs_options: Words = []
    mount_options: str = ""
    loop: Loop = Loop()
    files: list[ErofsFiles] = []

    @model_validator(mode="after")
    def _consistent(self) -> Target:
        if self.kind == "device" and not self.device:
            raise ValueError("kind = 'device' needs device = '/dev/...'")
        if self.kind == "device" and not self.allow_destroy:
            raise ValueError(
                f"kind = 'device' reformats {self.device} on every cell; "
                "set allow_destroy = true to confirm its data may be destroyed"
            )
        if self.kind == "dir" and not self.path:
            raise ValueError("kind = 'dir' needs path = '/some/dir'")
        if self.kind == "dir" and self.fs not in ("none",):
            raise ValueError("kind = 'dir' uses an existing filesystem: set fs = 'none'")
        if self.fs == "erofs" and not self.files:
            raise ValueError("fs = 'erofs' is read-only: give [[target.files]] to pack into the image")
        if self.fs != "erofs" and self.files:
            raise ValueError("[[target.files]] is only for fs = 'erofs'")
        if self.kind == "loop" and self.size < MIN_SIZE[self.fs]:
            raise ValueError(
                f"size {format_size(self.size)} is too small for {self.fs} "
                f"(mkfs.{self.fs} needs at least {format_size(MIN_SIZE[self.fs])})"
            )
        return self


KnobValue = str | int


class Placement(Strict):
    """Settings of a variant or workload that shape where the workload runs."""

    memory_max: Size | None = None
    cpus: list[Annotated[int, Field(ge=0)]] | None = None

    @field_validator("memory_max")
    @classmethod
    def _page_multiple(cls, limit: int | None) -> int | None:
        if limit is not None and (limit < 4 << 20 or limit % 4096):
            raise ValueError("must be at least 4MiB and a multiple of 4KiB")
        return limit

    @field_validator("cpus")
    @classmethod
    def _online(cls, cpus: list[int] | None) -> list[int] | None:
        if cpus is not None and (not cpus or max(cpus) >= (os.cpu_count() or 1)):
            raise ValueError(f"must name CPUs between 0 and {(os.cpu_count() or 1) - 1}")
        return cpus


class Variant(Placement):
    name: str = Field(min_length=1)
    description: str = ""
    fio: dict[str, FioValue] = {}
    fs: Literal["ext4", "xfs", "btrfs", "erofs", "none"] | None = None
    mkfs_options: Words | None = None
    mount_options: str | None = None
    loop: Loop | None = None
    sysfs: dict[str, KnobValue] = {}
    sysctl: dict[str, KnobValue] = {}

    def target_of(self, base: Target) -> Target:
        """The experiment's target with this variant's overrides (fs, mkfs and mount options, loop)."""
        overrides = {
            name: getattr(self, name)
            for name in ("fs", "mkfs_options", "mount_options", "loop")
            if getattr(self, name) is not None
        }
        if not overrides:
            return base
        return Target.model_validate({**base.model_dump(), **overrides})

    @field_validator("sysfs")
    @classmethod
    def _under_sys(cls, values: dict[str, KnobValue]) -> dict[str, KnobValue]:
        for path in values:
            if not path.startswith("/sys/"):
                raise ValueError(f"{path!r}: a sysfs path starts with /sys/ ({{dev}} names the target's device)")
        return values

    @field_validator("sysctl")
    @classmethod
    def _known_sysctl(cls, values: dict[str, KnobValue]) -> dict[str, KnobValue]:
        for key in values:
            if not os.path.exists("/proc/sys/" + key.replace(".", "/")):
                raise ValueError(f"{key!r}: no such sysctl on this kernel (/proc/sys/{key.replace('.', '/')})")
        return values

    @field_validator("name")
    @classmethod
    def _printable(cls, name: str) -> str:
        if not name.isprintable() or len(name) > 24:
            raise ValueError("must be printable and at most 24 characters (it is a table column)")
        return name

    @field_validator("fio")
    @classmethod
    def _no_placement(cls, options: dict[str, FioValue]) -> dict[str, FioValue]:
        for key in options:
            if key in ("filename", "directory", "opendir"):
                raise ValueError(f"'{key}' is chosen by iolab from [target]; remove it")
        return options


class Workload(Placement):
    name: str = Field(min_length=1)
    engine: Literal["fio"] = "fio"
    job: str | None = None
    job_file: str | None = None
    metrics: list[str] | None = None

    @model_validator(mode="after")
    def _one_job(self) -> Workload:
        if (self.job is None) == (self.job_file is None):
            raise ValueError("give exactly one of job (inline text, or '@other-workload') and job_file")
        return self


class Run(Strict):
    iterations: int = Field(default=6, ge=1, le=10_000)
    order: Literal["interleaved", "sequential"] = "interleaved"
    warmup: int = Field(default=0, ge=0, le=100)
    seed: int | None = None


class Report(Strict):
    view: Literal["median", "mean", "hmean"] = "median"
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    correction: Literal["holm", "bh"] = "holm"
    metrics: list[str] | None = None


class Phase(Strict):
    """A phase timed between two tracepoints (see iolab/collectors/trace_phase.py)."""

    name: str
    start: str
    end: str
    start_filter: str = ""
    end_filter: str = ""
    pair: Literal["global", "pid"] = "global"
    buffer_size_kb: int = Field(default=4096, ge=4)


class PerfEvent(Strict):
    """A tracepoint counted only where its filter holds, under a name of its own."""

    event: str
    filter: str = ""
    name: str = ""


class Collect(Strict):
    """Kernel-side metrics measured around the workload of every cell."""

    proc_stat: bool = True
    vmstat: bool | list[str] = True
    diskstats: bool = True
    rusage: bool = False
    perf: list[str | PerfEvent] = []
    phase: list[Phase] = []

    def config(self, device: str | None) -> dict[str, Any]:
        """The table iolab.collectors.build_collectors takes."""
        table: dict[str, Any] = {"proc_stat": self.proc_stat, "vmstat": self.vmstat, "rusage": self.rusage}
        if self.diskstats and device:
            table["diskstats"] = True
        if self.perf:
            table["perf"] = [e if isinstance(e, str) else e.model_dump(exclude_defaults=True) for e in self.perf]
        if self.phase:
            table["phase"] = [phase.model_dump(exclude_defaults=False) for phase in self.phase]
        return {key: value for key, value in table.items() if value}


class CellSetup(Strict):
    """What happens in every cell before the measured workload."""

    drop_caches: bool = False
    warmup_run: bool = False


class Experiment(Strict):
    name: str = Field(min_length=1)
    description: str = ""
    target: Target = Target()
    variant: list[Variant] = Field(min_length=2)
    workload: list[Workload] = Field(min_length=1)
    run: Run = Run()
    report: Report = Report()
    cell: CellSetup = CellSetup()
    collect: Collect = Collect()
    derived: dict[str, str] = {}
    # Where the file was read from: relative job_file paths start there.
    base_dir: str = "."

    @model_validator(mode="after")
    def _unique_names(self) -> Experiment:
        for kind, items in (("variant", self.variant), ("workload", self.workload)):
            seen: set[str] = set()
            for item in items:
                if item.name in seen:
                    raise ValueError(f"two [[{kind}]] are named {item.name!r}; names must be unique")
                seen.add(item.name)
        for variant in self.variant:
            try:
                variant.target_of(self.target)
            except ValidationError as error:
                reason = "; ".join(e["msg"].removeprefix("Value error, ") for e in error.errors())
                raise ValueError(f"variant {variant.name!r} makes the target invalid: {reason}") from None
            for workload in self.workload:
                for field_name in ("memory_max", "cpus"):
                    if getattr(variant, field_name) is not None and getattr(workload, field_name) is not None:
                        raise ValueError(
                            f"{field_name} is set by variant {variant.name!r} and by workload "
                            f"{workload.name!r}; set it in one place"
                        )
        return self

    @field_validator("derived")
    @classmethod
    def _derived_parse(cls, expressions: dict[str, str]) -> dict[str, str]:
        from iolab import derived

        derived.parse_all(expressions)
        return expressions

    @property
    def baseline(self) -> Variant:
        return self.variant[0]

    def workload_named(self, name: str) -> Workload:
        for workload in self.workload:
            if workload.name == name:
                return workload
        raise KeyError(name)


def _field_path(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    """('variant', 1, 'fio') -> variant[1].fio, naming the item where it has a name."""
    parts: list[str] = []
    node: Any = raw
    for key in loc:
        if isinstance(key, int):
            name = node[key].get("name") if isinstance(node, list) and key < len(node) and isinstance(node[key], dict) else None
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


def parse(raw: dict[str, Any], base_dir: str = ".") -> Experiment:
    try:
        experiment = Experiment.model_validate({**raw, "base_dir": base_dir})
    except ValidationError as error:
        raise SpecError(_explain(error, raw)) from None
    _check_job_references(experiment)
    return experiment


def load(path: str | os.PathLike[str]) -> Experiment:
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


def job_text(experiment: Experiment, workload: Workload) -> str:
    """The fio job text of a workload, following '@other' references and job files."""
    if workload.job_file is not None:
        return Path(experiment.base_dir, workload.job_file).read_text()
    assert workload.job is not None
    if workload.job.startswith("@"):
        return job_text(experiment, experiment.workload_named(workload.job[1:].strip()))
    return workload.job
