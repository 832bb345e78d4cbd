"""The experiment file's schema.

An experiment is a TOML file (see README.md and scenarios/), validated into
the `Experiment` model. This module is the schema only: it imports no
engine, kernel or machine check. Reading a file, the checks that need an
engine, a kernel name or this machine, and error messages naming the field
(``variant[2].fio``, ``workload["normal"].job_file``) are in iolab.load.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from iolab.units import format_size, parse_duration, parse_size

FILESYSTEMS = ("ext4", "xfs", "btrfs", "erofs", "f2fs", "none")
# The smallest filesystem each mkfs accepts (mkfs.xfs refuses under 300MB).
MIN_SIZE = {"ext4": 16 << 20, "xfs": 300 << 20, "btrfs": 128 << 20, "f2fs": 64 << 20, "none": 1 << 20, "erofs": 0}
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

    @field_validator("name")
    @classmethod
    def _inside_the_tree(cls, name: str) -> str:
        """A relative name inside the packed tree: written as root, it must not escape it."""
        plain = name.replace("{n}", "0")
        if "{" in plain or "}" in plain:
            raise ValueError("only {n} may be in braces")
        parts = plain.split("/")
        if not plain or plain.startswith("/") or ".." in parts or "" in parts or not plain.isprintable() \
                or len(name) > 200:
            raise ValueError("must be a relative file name inside the image (no '..', not absolute, "
                             "at most 200 characters)")
        return name


class Loop(Strict):
    """How the loop device over the image is set up (losetup)."""

    direct_io: bool = False
    sector_size: Literal[512, 1024, 2048, 4096] | None = None
    # A reused image (erofs) is evicted from the host's page cache before each
    # cell ("drop": the loop device reads the disk) or left there ("keep": a
    # RAM-speed lower layer, so the disk's noise stays out of the figures).
    image_cache: Literal["drop", "keep"] = "drop"


class Target(Strict):
    kind: Literal["loop", "device", "dir"] = "loop"
    fs: Literal["ext4", "xfs", "btrfs", "erofs", "f2fs", "none"] = "ext4"
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


class CellSettings(Strict):
    """Settings of a variant or a workload applied for each of its cells and
    restored after (see iolab.knobs): a memory limit and CPUs for the
    workload's processes, sysfs and sysctl values."""

    memory_max: Size | None = None
    cpus: list[Annotated[int, Field(ge=0)]] | None = None
    sysfs: dict[str, KnobValue] = {}
    sysctl: dict[str, KnobValue] = {}

    @field_validator("memory_max")
    @classmethod
    def _page_multiple(cls, limit: int | None) -> int | None:
        if limit is not None and (limit < 4 << 20 or limit % 4096):
            raise ValueError("must be at least 4MiB and a multiple of 4KiB")
        return limit

    @field_validator("sysfs")
    @classmethod
    def _under_sys(cls, values: dict[str, KnobValue]) -> dict[str, KnobValue]:
        for path in values:
            if not path.startswith("/sys/"):
                raise ValueError(f"{path!r}: a sysfs path starts with /sys/ ({{dev}} names the target's device)")
        return values


TARGET_OVERRIDES = ("fs", "mkfs_options", "mount_options", "loop")


class TargetOverrides(Strict):
    """Target settings a variant (or a workload, for its data set) may change."""

    fs: Literal["ext4", "xfs", "btrfs", "erofs", "f2fs", "none"] | None = None
    mkfs_options: Words | None = None
    mount_options: str | None = None
    loop: Loop | None = None

    def overrides(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in TARGET_OVERRIDES if getattr(self, name) is not None}

    def target_of(self, base: Target) -> Target:
        """`base` with these overrides applied."""
        overrides = self.overrides()
        if not overrides:
            return base
        return Target.model_validate({**base.model_dump(), **overrides})


class Build(Strict):
    """A kernel built from source (iolab.kernels.build): the file's [kernel]
    table (every variant's kernel) or a variant's ``kernel = { ... }``."""

    source: str = Field(min_length=1)  # debian:linux-source-7.2[=version] | a tarball | a git tree
    commit: str | None = None  # with a git tree
    patches: list[str] = []  # patch files (-p1), applied in order
    reverse: list[str] = []  # patch files applied reversed (patch -R), before `patches`
    config: str = ""  # .config lines over iolab's base fragment
    config_file: str | None = None  # a fragment file, merged before `config`


class Series(Strict):
    """A patch series dissected: each step is the base ([kernel], and the one
    [[variant]] if given) with patches 1..k on it (iolab.run.series)."""

    patches: list[str] = Field(min_length=1)  # patch files (-p1), in order
    # every: run every step (exact with instructions timing); bisect: compare
    # the ends, then midpoints where they differ (wall timing); auto: by the timing mode
    strategy: Literal["auto", "every", "bisect"] = "auto"


def step_name(step: int, patch: str) -> str:
    """A series step's variant name: its number and its patch's name, at most 24 characters."""
    stem = Path(patch).name.removesuffix(".patch").removesuffix(".diff")
    stem = re.sub(r"^\d{4}-", "", stem)  # git format-patch's numbering
    return f"{step} {stem}"[:24].rstrip()


def with_series_steps(data: Any) -> Any:
    """A [series] becomes its steps as variants: step 0 is the base (the one
    [[variant]], or "base"), step k the base with patches 1..k added to its
    kernel. Stored experiments already have their steps (``step`` is set)."""
    if not isinstance(data, dict) or not isinstance(data.get("series"), dict):
        return data
    patches = data["series"].get("patches")
    variants = data.get("variant") or []
    if not isinstance(patches, list) or not patches or len(variants) > 1 or not isinstance(variants, list):
        return data
    if any(isinstance(v, dict) and "step" in v for v in variants):
        return data
    base = dict(variants[0]) if variants and isinstance(variants[0], dict) else {"name": "base"}
    own = base.get("kernel")
    if own is not None and not isinstance(own, dict):
        return data
    steps = [{**base, "step": 0}]
    for k in range(1, len(patches) + 1):
        kernel = dict(own or {})
        kernel["patches"] = [*(kernel.get("patches") or []), *patches[:k]]
        steps.append({**base, "name": step_name(k, str(patches[k - 1])), "kernel": kernel, "step": k})
    return {**data, "variant": steps}


def with_default_kernel(data: Any) -> Any:
    """Give each variant the file's [kernel] table: a variant without a
    kernel gets it whole; a variant's kernel table is laid over it (its
    patches and reverse lists added to the table's)."""
    if not isinstance(data, dict) or not isinstance(data.get("kernel"), dict):
        return data
    default = data["kernel"]
    variants = []
    for variant in data.get("variant") or []:
        if isinstance(variant, dict):
            own = variant.get("kernel")
            if own is None:
                variant = {**variant, "kernel": dict(default)}
            elif isinstance(own, dict):
                merged = {**default, **own}
                for key in ("patches", "reverse"):
                    if key in default and key in own and own[key] != default[key]:
                        merged[key] = [*default[key], *[p for p in own[key] if p not in default[key]]]
                variant = {**variant, "kernel": merged}
        variants.append(variant)
    return {**data, "variant": variants}


def with_timing_defaults(data: Any) -> Any:
    """In instructions mode a file that sets no [run] iterations runs
    INSTRUCTIONS_ITERATIONS rounds (deterministic values need no more); one
    that sets no [vm] cpus one vCPU: one vCPU's count does not depend on
    how QEMU's single thread interleaves several, and Debian's 6.1 kernel
    never brings up a second vCPU under -icount; and one that sets no [vm]
    disk has its target in the guest's memory (disk = "ram"): a wait for an
    emulated disk is a jump of the guest's clock, not a count (README,
    "Instructions mode")."""
    if not isinstance(data, dict) or not isinstance(data.get("vm"), dict):
        return data
    if data["vm"].get("timing") != "instructions":
        return data
    vm = {"cpus": 1, "disk": "ram", **data["vm"]}
    run = data.get("run", {})
    if isinstance(run, dict) and "iterations" not in run:
        run = {**run, "iterations": INSTRUCTIONS_ITERATIONS}
    return {**data, "vm": vm, "run": run}


# A kernel's name (a string) or a build (a table): one or the other, so an
# error speaks of the one that was given
KernelField = Annotated[
    Annotated[str, Tag("name")] | Annotated[Build, Tag("build")],
    Discriminator(lambda value: "name" if isinstance(value, str) else "build"),
] | None


class Variant(CellSettings, TargetOverrides):
    name: str = Field(min_length=1)
    description: str = ""
    fio: dict[str, FioValue] = {}
    probe: dict[str, str | int | float | bool | list[str]] = {}  # iolab-probe parameter overrides
    # The kernel its cells boot in a VM (iolab.kernels): "debian:6.1.0-56-amd64",
    # a path to a bzImage of your own with its module tree in `modules`, or a
    # kernel built from source (a table: Build).
    kernel: KernelField = None
    modules: str | None = None
    allow: list[str] = []  # fio options refused unless named here (iolab.engines.fio_options)
    step: int | None = Field(default=None, ge=0)  # a [series] step (set by iolab: 0 is the base)
    # Workloads whose cells of this variant the kernel refuses by design, and the short reason the
    # table shows instead of FAILED ("needs the series"); the cells still run, their error is kept
    fails: dict[str, Annotated[str, Field(min_length=1, max_length=20)]] = {}

    @model_validator(mode="after")
    def _modules_with_kernel(self) -> Variant:
        if self.modules is not None and not isinstance(self.kernel, str):
            raise ValueError("modules = '...' goes with kernel = '/path/to/bzImage'")
        return self

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


class Workload(CellSettings, TargetOverrides):
    name: str = Field(min_length=1)
    engine: Literal["fio", "probe"] = "fio"
    job: str | None = None  # engine = "probe": set by iolab, the probe table as JSON
    job_file: str | None = None
    probe: dict[str, str | int | float | bool | list[str]] | None = None  # mode and parameters
    metrics: list[str] | None = None
    allow: list[str] = []  # fio options refused unless named here (iolab.engines.fio_options)
    # the metrics whose comparisons form the corrected family (the question
    # asked); the other rows are exploratory. Default: iolab.analysis.metrics.PRIMARY
    primary: list[str] | None = None

    @model_validator(mode="after")
    def _one_job(self) -> Workload:
        if self.engine == "probe" or self.probe is not None:
            if self.engine != "probe":
                raise ValueError("probe = {...} is for engine = 'probe'")
            if self.probe is None or self.job_file is not None:
                raise ValueError("engine = 'probe' takes probe = { mode = ..., ... } (no job, no job_file)")
            return self
        if (self.job is None) == (self.job_file is None):
            raise ValueError("give exactly one of job (inline text, or '@other-workload') and job_file")
        return self


def _seconds(value: Any) -> Any:
    """A duration: seconds, or "90s", "20m", "1h30m"."""
    return parse_duration(value) if isinstance(value, str) else value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(gt=0)]


class Run(Strict):
    """How many rounds, in which order. ``iterations = "auto"`` adds
    interleaved rounds until every headline delta is decided (iolab.run.adaptive),
    between ``min_iterations`` and ``max_iterations``, within ``time_budget``."""

    iterations: int | Literal["auto"] = Field(default=8)
    # alternate: variants in file order, each running [vm] cells_per_boot
    # cells in a row (ABAB..., one boot each when the variants name kernels)
    order: Literal["interleaved", "sequential", "alternate"] = "interleaved"
    warmup: int = Field(default=0, ge=0, le=100)
    seed: int | None = None
    min_iterations: int = Field(default=5, ge=4, le=100)
    max_iterations: int = Field(default=30, ge=4, le=100)
    time_budget: Seconds | None = None  # "20m", "1h30m", "90s" (or seconds) in a file
    target_ci: float = Field(default=0.01, ge=0, lt=1)  # relative half-width of the delta CI

    @field_validator("iterations", mode="before")
    @classmethod
    def _iterations(cls, value: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, int) and not 1 <= value <= 10_000):
            raise ValueError(f"must be a number of rounds from 1 to 10000 or \"auto\", got {value!r}")
        if isinstance(value, str) and value != "auto":
            raise ValueError(f"must be a number of rounds or \"auto\", got {value!r}")
        return value

    @model_validator(mode="after")
    def _auto(self) -> Run:
        adaptive = ("min_iterations", "max_iterations", "time_budget", "target_ci")
        if self.iterations != "auto":
            given = [name for name in adaptive if getattr(self, name) != Run.model_fields[name].default]
            if given:
                raise ValueError(f"{', '.join(given)}: only with iterations = \"auto\"")
            return self
        if self.order != "interleaved":
            raise ValueError("iterations = \"auto\" adds interleaved rounds: set order = \"interleaved\"")
        if self.max_iterations < self.min_iterations:
            raise ValueError(f"max_iterations ({self.max_iterations}) < min_iterations ({self.min_iterations})")
        return self

    @property
    def auto(self) -> bool:
        return self.iterations == "auto"

    @property
    def max_rounds(self) -> int:
        """Measured rounds at most: the fixed count, or max_iterations."""
        return self.max_iterations if self.iterations == "auto" else int(self.iterations)


class ReportSettings(Strict):
    """The experiment's [report] table: how its table is computed and shown
    (the computed Report every renderer takes is iolab.analysis.model's)."""

    view: Literal["median", "mean", "hmean"] = "median"
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    correction: Literal["holm", "bh"] = "holm"
    metrics: list[str] | None = None
    # the metrics whose comparisons form the corrected family (the question
    # asked); the other rows are exploratory. Default: iolab.analysis.metrics.PRIMARY
    primary: list[str] | None = None
    min_max: bool = False  # a min..max line under each row (JSON always has them)
    kind: Literal["comparison", "calibration"] = "comparison"  # "calibration": set by iolab calibrate
    # Exact comparisons (iolab.stats.exact): a variant whose values over at
    # least 2 rounds lie within this relative width ((max - min) / |median|)
    # is deterministic, and its delta is taken as measured, with no test.
    # Default: EXACT_TOLERANCE (0, identical values, in wall mode)
    tolerance: float | None = Field(default=None, ge=0, lt=0.1)


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




Timing = Literal["wall", "instructions"]
ICOUNT_SHIFT = 0  # the one shift iolab runs: a guest nanosecond is one instruction
INSTRUCTIONS_ITERATIONS = 3  # default rounds in instructions mode: 2 prove determinism, a third confirms it
# [report] tolerance by default in instructions mode: a variant's values within
# 1% of each other are deterministic (README "Instructions mode": measured
# spreads); in wall mode only identical values are
EXACT_TOLERANCE = {"wall": 0.0, "instructions": 0.01}


class VM(Strict):
    """The VM that cells of variants with a kernel run in (iolab.hosts.vm);
    recorded with every sample."""

    memory: Size = parse_size("2GiB")
    cpus: int = Field(default=2, ge=1, le=64)
    timeout: Seconds = 600.0  # per cell: a guest silent for longer is killed
    boot_timeout: Seconds = 120.0  # from QEMU's start to the first cell
    cells_per_boot: int = Field(default=1, ge=1, le=10_000)
    machine: Literal["microvm", "q35"] = "microvm"
    accel: Literal["auto", "kvm", "tcg"] = "auto"  # auto: KVM where a probe shows it works, else TCG
    # Where the target lives in the guest: "virtio", a disk image on this
    # host attached as virtio-blk (cache=none); "ram", an image in the guest's
    # memory (tmpfs) on a loop device: no emulated device in the I/O path, so
    # the guest kernel's own work is what is timed (needs memory for the image)
    disk: Literal["virtio", "ram"] = "virtio"
    # What the guest's clock counts: "wall", real time (the default); or
    # "instructions", QEMU's TCG with a fixed instruction count (single
    # thread, -icount shift=N,sleep=off): the guest's clock advances 2^N ns
    # per executed instruction, so every duration the guest measures is an
    # instruction count (exact and repeatable), never a time
    timing: Timing = "wall"
    icount_shift: int = ICOUNT_SHIFT  # with timing = "instructions": guest ns per instruction = 2^shift

    @field_validator("memory")
    @classmethod
    def _memory(cls, memory: int) -> int:
        if memory < 256 << 20 or memory % (1 << 20):
            raise ValueError("must be at least 256MiB and a whole number of MiB")
        return memory

    @field_validator("icount_shift", mode="before")
    @classmethod
    def _shift(cls, value: Any) -> Any:
        if value == "auto":
            raise ValueError("\"auto\" is QEMU's adaptive shift: the guest's clock would follow the host's "
                             "speed, so counts would change from run to run; give a number (0: one "
                             "instruction per guest nanosecond)")
        if isinstance(value, bool) or value != ICOUNT_SHIFT:
            raise ValueError(f"must be {ICOUNT_SHIFT}, got {value!r}: at shift 0 one guest nanosecond is one "
                             "instruction, which is what the reports' instruction units count")
        return value

    @property
    def accel_setting(self) -> str:
        """The accelerator asked for: always TCG in instructions mode ("auto" would pick KVM)."""
        return "tcg" if self.timing == "instructions" else self.accel

    @model_validator(mode="after")
    def _instructions(self) -> VM:
        if self.timing == "instructions" and self.accel == "kvm":
            raise ValueError("timing = \"instructions\" needs QEMU's TCG (it counts the instructions it "
                             "emulates); KVM runs the guest on the CPU, whose clock is real time: "
                             "set accel = \"tcg\" or \"auto\", or timing = \"wall\"")
        return self


class CellSetup(Strict):
    """What happens in every cell before the measured workload."""

    drop_caches: bool = False
    warmup_run: bool = False


class Experiment(Strict):
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    target: Target = Target()
    variant: list[Variant] = Field(min_length=2)
    workload: list[Workload] = Field(min_length=1)
    run: Run = Run()
    report: ReportSettings = ReportSettings()
    cell: CellSetup = CellSetup()
    collect: Collect = Collect()
    derived: dict[str, str] = {}
    vm: VM = VM()
    kernel: Build | None = None  # every variant's kernel, built from source (a variant's own table adds to it)
    series: Series | None = None  # the variants are its steps (with_series_steps)
    # The fio that runs the fio workloads: "fio" (the one on PATH), or "debian:fio[=VERSION]": built from
    # Debian's source package (unstable) and cached (iolab.kernels.fio_source), for options this fio lacks
    fio: str = Field(default="fio", pattern=r"^(fio|debian:fio(=[0-9][0-9a-z.+~:-]*)?)$")
    # Where the file was read from: relative job_file paths start there.
    base_dir: str = "."

    @model_validator(mode="before")
    @classmethod
    def _steps_and_kernels(cls, data: Any) -> Any:
        return with_default_kernel(with_series_steps(data))

    _default_rounds = model_validator(mode="before")(with_timing_defaults)

    @model_validator(mode="after")
    def _series_steps(self) -> Experiment:
        if self.series is None:
            if any(v.step is not None for v in self.variant):
                raise ValueError("step is set by iolab for the variants of a [series]; remove it")
            return self
        patches = self.series.patches
        for k, variant in enumerate(self.variant):
            build = variant.kernel
            if variant.step != k or not isinstance(build, Build) or \
                    (k and build.patches[len(build.patches) - k:] != patches[:k]):
                raise ValueError("series: the variants must be its steps (iolab makes them from the one "
                                 "[[variant]] or [kernel] and [series] patches; leave the rest out)")
        if len(self.variant) != len(patches) + 1:
            raise ValueError(f"series: {len(patches)} patches need {len(patches) + 1} steps, found "
                             f"{len(self.variant)} variants")
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> Experiment:
        for kind, items in (("variant", self.variant), ("workload", self.workload)):
            seen: set[str] = set()
            for item in items:
                if item.name in seen:
                    raise ValueError(f"two [[{kind}]] are named {item.name!r}; names must be unique")
                seen.add(item.name)
        names = {w.name for w in self.workload}
        for variant in self.variant:
            unknown = sorted(set(variant.fails) - names)
            if unknown:
                raise ValueError(f"variant {variant.name!r}: fails names no workload {unknown[0]!r}")
        for variant in self.variant:
            for workload in self.workload:
                clashes = [", ".join(sorted(set(variant.overrides()) & set(workload.overrides())))]
                clashes += [name for name in ("memory_max", "cpus")
                            if getattr(variant, name) is not None and getattr(workload, name) is not None]
                clashes += [f"{table} {', '.join(sorted(both))}" for table in ("sysfs", "sysctl")
                            if (both := set(getattr(variant, table)) & set(getattr(workload, table)))]
                if any(clashes):
                    raise ValueError(f"{next(c for c in clashes if c)} set by variant {variant.name!r} and by "
                                     f"workload {workload.name!r}; set it in one place")
                try:
                    self.target_for(variant, workload)
                except ValidationError as error:
                    reason = "; ".join(e["msg"].removeprefix("Value error, ") for e in error.errors())
                    raise ValueError(
                        f"variant {variant.name!r} with workload {workload.name!r} makes the target invalid: {reason}"
                    ) from None
        return self

    @model_validator(mode="after")
    def _kernels(self) -> Experiment:
        with_kernel = [v.name for v in self.variant if v.kernel is not None]
        if not with_kernel:
            return self
        if len(with_kernel) != len(self.variant):
            without = [v.name for v in self.variant if v.kernel is None]
            raise ValueError(
                f"variants {', '.join(map(repr, with_kernel))} run in VMs (kernel = ...) but "
                f"{', '.join(map(repr, without))} would run on this host: give every variant a kernel "
                "(numbers from a VM compare only with numbers from a VM)"
            )
        if self.target.kind == "dir":
            raise ValueError("target.kind = 'dir' cannot be used in a VM: use a loop image or a device")
        if self.vm.disk == "ram":
            # the image lives in the guest's /run, a tmpfs of half the VM's memory
            sizes = {self.target_for(v, w).size for v in self.variant for w in self.workload} - {None}
            if sizes and max(sizes) > self.vm.memory // 2:
                raise ValueError(
                    f"vm.memory: {self.vm.memory >> 20} MiB is too little for a {max(sizes) >> 20} MiB image in "
                    f"the guest's memory (disk = \"ram\" keeps it in a tmpfs of half the VM's memory): set "
                    f"memory = \"{max(sizes) * 2 >> 20}MiB\" or more, a smaller target size, or disk = \"virtio\"")
        return self

    @property
    def timing(self) -> Timing:
        """What the guest's durations count: "instructions" or "wall" (real time)."""
        return self.vm.timing

    @property
    def tolerance(self) -> float:
        """The relative width within which a variant's values count as deterministic."""
        return self.report.tolerance if self.report.tolerance is not None else EXACT_TOLERANCE[self.timing]

    def target_for(self, variant: Variant, workload: Workload) -> Target:
        """The target a cell of this variant and workload runs on."""
        return variant.target_of(workload.target_of(self.target))

    @property
    def baseline(self) -> Variant:
        return self.variant[0]

    def workload_named(self, name: str) -> Workload:
        for workload in self.workload:
            if workload.name == name:
                return workload
        raise KeyError(name)
