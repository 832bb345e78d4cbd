"""[run], [report], [cell] and [collect]: how many rounds in which order,
how the table is computed, what each cell does before its workload and
what it measures around it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from iolab.spec.base import Seconds, Strict


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
    # Stop after 2 measured rounds when every primary comparison is exact
    # (iolab.stats.exact: values that do not vary, or apart beyond their
    # spread), else run on to `iterations`: instructions mode's default when
    # the file sets no iterations (iolab.spec.vm.with_timing_defaults)
    exact_stop: bool = False
    # After `iterations` measured rounds, rounds added one at a time while a claimed row ([claims]) is
    # undecided, up to this many measured rounds in all (0: none): `iolab patch` sets it, so a row whose
    # values vary gets the rounds a test needs (iolab.run.runner, the claim words of iolab.analysis.claims)
    claims_rounds: int = Field(default=0, ge=0, le=1000)

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
        if self.exact_stop and (self.iterations == "auto" or self.iterations < 3):
            raise ValueError("exact_stop stops a run of 3 or more rounds after 2: set iterations = 3 or more")
        if self.claims_rounds and (self.iterations == "auto" or self.claims_rounds <= self.iterations
                                   or self.order == "sequential"):
            raise ValueError("claims_rounds adds rounds after a fixed number of paired rounds: set iterations "
                             "below it, and order = \"alternate\" or \"interleaved\"")
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
        """Measured rounds at most: the fixed count (or claims_rounds, the most it may add to), or
        max_iterations."""
        return self.max_iterations if self.iterations == "auto" else max(int(self.iterations), self.claims_rounds)


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


class KprobeEvent(Strict):
    """The calls of a kernel function, counted through a kprobe event iolab makes for the cell."""

    kprobe: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]{0,127}$")
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class Collect(Strict):
    """Kernel-side metrics measured around the workload of every cell."""

    proc_stat: bool = True
    vmstat: bool | list[str] = True
    diskstats: bool = True
    rusage: bool = False
    perf: list[str | PerfEvent | KprobeEvent] = []
    phase: list[Phase] = []


class CellSetup(Strict):
    """What happens in every cell before the measured workload."""

    drop_caches: bool = False
    warmup_run: bool = False
