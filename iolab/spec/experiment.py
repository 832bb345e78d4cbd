"""The experiment: its variants and workloads, and the checks that need
the whole file (unique names, a [series]' steps, kernels for every variant
or none, the target each variant and workload make)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from iolab.spec.base import FioValue, Size, Strict
from iolab.spec.claims import Claims
from iolab.spec.kernel import Build, KernelField, Series, with_default_kernel, with_series_steps
from iolab.spec.mail import MailRecord
from iolab.spec.run import CellSetup, Collect, ReportSettings, Run
from iolab.spec.target import Target, TargetOverrides
from iolab.spec.vm import EXACT_TOLERANCE, NULL_BLK_DISKS, VM, Clock, Timing, with_timing_defaults


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
    engine: Literal["fio", "probe", "script"] = "fio"  # script: a shell script, only with allow = ["script"]
    job: str | None = None  # engine = "probe": set by iolab, the probe table as JSON
    job_file: str | None = None
    probe: dict[str, str | int | float | bool | list[str]] | None = None  # mode and parameters
    metrics: list[str] | None = None
    allow: list[str] = []  # fio options refused unless named here (iolab.engines.fio_options)
    # the metrics whose comparisons form the corrected family (the question
    # asked); the other rows are exploratory. Default: iolab.analysis.metrics.PRIMARY
    primary: list[str] | None = None
    # every row of it exploratory, outside the corrected family (iolab patch: the library's workloads
    # beside the mail's own benchmark)
    exploratory: bool = False
    # its I/O pattern's rows (iolab.analysis.iorows): "changed", each device counter that moved between
    # the variants is a row after its own; "primary", the count of I/Os (disk.ios) heads its rows, in
    # the corrected family, where the I/O pattern is the point (readahead, block, writeback, erofs)
    io: Literal["changed", "primary"] = "changed"

    @model_validator(mode="after")
    def _one_job(self) -> Workload:
        if self.engine == "probe" or self.probe is not None:
            if self.engine != "probe":
                raise ValueError("probe = {...} is for engine = 'probe'")
            if self.probe is None or self.job_file is not None:
                raise ValueError("engine = 'probe' takes probe = { mode = ..., ... } (no job, no job_file)")
            return self
        if self.engine == "script":
            if self.job is None or self.job_file is not None or self.job.startswith("@"):
                raise ValueError("engine = 'script' takes job = the script's text (no job_file)")
            if "script" not in self.allow:
                raise ValueError("engine = 'script' runs a shell script, any program: say allow = [\"script\"] "
                                 "to run it (iolab patch --allow script)")
            return self
        if (self.job is None) == (self.job_file is None):
            raise ValueError("give exactly one of job (inline text, or '@other-workload') and job_file")
        return self


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
    mail: MailRecord | None = None  # the patch mail it was written from (iolab patch)
    claims: Claims | None = None  # a patch mail's claim, checked by the report (iolab patch writes it)
    # The fio that runs the fio workloads: "fio" (the one on PATH), or "debian:fio[=VERSION]": built from
    # Debian's source package (unstable) and cached (iolab.kernels.fio_source), for options this fio lacks
    fio: str = Field(default="fio", pattern=r"^(fio|debian:fio(=[0-9][0-9a-z.+~:-]*)?)$")
    # Where the file was read from: relative job_file paths start there.
    base_dir: str = "."
    # The stored copies of the files it names, when it is read back from a run (iolab.run.inputs): each
    # name as written -> a path on this machine. Set by iolab, never by a file; not stored with the run.
    inputs: dict[str, str] = Field(default={}, exclude=True)

    def file(self, name: str) -> Path:
        """Where a file the experiment names (a job file, a patch, a config
        fragment) is read: its stored copy, else relative to base_dir."""
        return Path(self.inputs[name]) if name in self.inputs else Path(self.base_dir, name)

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
        steps, workloads = {v.name for v in self.variant if v.step}, {w.name for w in self.workload}
        for step, names in self.series.unreached.items():
            if step not in steps or not set(names) <= workloads:
                raise ValueError(f"series: unreached: {step!r}: {names} are not a step and its workloads")
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
        if self.vm.disk in ("ram", *NULL_BLK_DISKS):
            # the image lives in the guest's /run, a tmpfs of half the VM's memory (or null_blk's pages)
            sizes = {self.target_for(v, w).size for v in self.variant for w in self.workload} - {None}
            if sizes and max(sizes) > self.vm.memory // 2:
                raise ValueError(
                    f"vm.memory: {self.vm.memory >> 20} MiB is too little for a {max(sizes) >> 20} MiB image in "
                    f"the guest's memory (disk = \"{self.vm.disk}\" keeps it in half the VM's memory): set "
                    f"memory = \"{max(sizes) * 2 >> 20}MiB\" or more, a smaller target size, or disk = \"virtio\"")
        return self

    @model_validator(mode="after")
    def _carried_device(self) -> Experiment:
        model = self.vm.device_model
        if model is None or not model.carried:
            return self
        named = [v.name for v in self.variant if isinstance(v.kernel, str)]
        if named:
            raise ValueError(
                f"vm.model: a rate, a seek cost, poll queues or parallel service need iolab's change to null_blk, "
                f"which it carries into the kernels it builds; variant {named[0]!r} boots a kernel as it came: give it one built "
                "from source ([kernel] source = \"debian:linux-source-7.2\"), or keep completion_nsec alone")
        return self

    @model_validator(mode="after")
    def _claimed_rows(self) -> Experiment:
        names = {w.name for w in self.workload}
        for row in self.claims.row if self.claims else []:
            if row.workload and row.workload not in names:
                raise ValueError(f"claims: row {row.label!r} names no workload {row.workload!r}")
        return self

    @property
    def timing(self) -> Timing:
        """What the guest's durations count: "instructions" or "wall" (real time)."""
        return self.vm.timing

    @property
    def clock(self) -> Clock:
        """What a workload's durations count: "wall" (time), "instructions",
        or "modeled" (instructions plus a modeled device's waits: timing =
        "instructions" with disk = "model"). Units and comparisons follow it."""
        if self.vm.timing == "instructions" and self.vm.disk == "model":
            return "modeled"
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

    @property
    def unreached(self) -> dict[str, list[str]]:
        """A series' steps and the workloads each does not run ([series] unreached); {} without a series."""
        return self.series.unreached if self.series is not None else {}

    def workload_named(self, name: str) -> Workload:
        for workload in self.workload:
            if workload.name == name:
                return workload
        raise KeyError(name)
