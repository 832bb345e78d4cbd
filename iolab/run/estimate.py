"""How long a run will take, before it runs (the dry run's estimate).

Per cell, the best figure at hand, and where it comes from:

1. earlier runs of the same experiment (by name) in the store: their wall
   time per cell (setup, the workload, teardown, VM boots: everything);
2. else the workload's own time (fio's runtime with time_based, a runtime
   cap, read from the job: iolab.engines.fio_jobs) plus the setup and
   teardown of cells measured on this machine (the median over the store's
   recent cells that ran alike: on the host, or in a VM in the same timing
   mode); a size-bound job or a probe workload has no time of its own
   until it ran once.

Plus, for variants that name kernels, their boots: as many as the plan's
cell order makes (consecutive cells of one kernel share a boot, up to
[vm] cells_per_boot), each the median time to boot of that kernel in the
store's recent samples (env.vm.boot_s, same timing mode), else of the other
kernels booted here. And the kernels the variants need: cached, or built
(the last build in that object tree took, or its last full build where the
tree is gone: iolab.kernels.build), or fetched.
Nothing here is a constant: where nothing was measured the estimate says so.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from iolab import load, plan
from iolab.cell.sample import Sample
from iolab.engines import fio_jobs
from iolab.spec import Build, Experiment
from iolab.store import RunInfo, Store
from iolab.units import format_duration

RECENT_RUNS = 5  # runs of the store whose cells give the setup/teardown figure
RECENT_BOOT_RUNS = 20  # runs of the store whose VM samples give the boot times


@dataclass(frozen=True)
class WorkloadTime:
    workload: str
    cell_s: float | None  # one cell, all in; None: unknown
    how: str  # where the figure comes from


@dataclass(frozen=True)
class BootTime:
    kernel: str  # as the VM records it (env.vm.kernel)
    boots: int  # planned
    boot_s: float | None  # one boot; None: none measured here
    how: str


@dataclass(frozen=True)
class Estimate:
    cells: int
    workloads: list[WorkloadTime]
    total_s: float | None  # None when nothing of the run's time is known
    at_least: bool  # some figure is a lower bound (VM boots or size-bound jobs left out)
    kernels: list[str] = field(default_factory=list)  # one line per variant with a kernel
    boots: list[BootTime] = field(default_factory=list)  # counted in total_s where boot_s is known
    untimed: int = 0  # workloads with no time of their own (counted at their setup and teardown only)

    def lines(self) -> list[str]:
        out = []
        for w in self.workloads:
            figure = f"{format_duration(w.cell_s)} a cell" if w.cell_s is not None else "time unknown"
            out.append(f"  {w.workload}: {figure} ({w.how})")
        for b in self.boots:
            figure = f"{b.boot_s:.1f} s each" if b.boot_s is not None else "time unknown"
            out.append(f"  boots of {b.kernel}: {b.boots}, {figure} ({b.how})")
        if self.total_s is not None:
            whose = "the workloads with no time of their own" if self.untimed > 1 else \
                "the workload with no time of its own"
            without = f" ({whose} counted at setup and teardown only, until one ran)" if self.untimed else ""
            out.append(f"  all {self.cells} cells: {'at least ' if self.at_least else 'about '}"
                       f"{format_duration(self.total_s)}{without}")
        else:
            out.append(f"  all {self.cells} cells: unknown until a workload without a time of its own ran once")
        return out + [f"  kernel {line}" for line in self.kernels]


def _where(experiment: Experiment) -> str | None:
    """Where its cells run: None on the host, else in VMs in this timing mode."""
    return experiment.vm.timing if any(v.kernel is not None for v in experiment.variant) else None


def _history(store: Store, experiment: Experiment) -> dict[str, float]:
    """Seconds per cell of each workload in earlier runs of this experiment
    whose cells ran alike (on the host, or in VMs in this timing mode): the
    runs' wall time shared over their cells by each cell's own time."""
    per: dict[str, list[float]] = {}
    alike = [run for run in store.runs(experiment.name)
             if _where(Experiment.model_validate_json(run.experiment_json)) == _where(experiment)]
    for run in alike[-RECENT_RUNS:]:
        if run.finished is None:
            continue
        samples = [s for s in store.samples(run.id, with_histograms=False)]
        own = [(s.setup_s or 0) + (s.run_s or 0) + (s.teardown_s or 0) for s in samples]
        if not samples or sum(own) <= 0:
            continue
        wall = _active_seconds(run, samples, own) if _where(experiment) is None else run.finished - run.started
        scale = wall / sum(own)  # boots and gaps, shared in proportion
        for sample, seconds in zip(samples, own):
            per.setdefault(sample.workload, []).append(seconds * scale)
    return {w: statistics.median(v) for w, v in per.items()}


PAUSE_S = 60.0  # between two host cells of a run, longer than this is a pause (interrupted, resumed later)


def _active_seconds(run: RunInfo, samples: list[Sample], own: list[float]) -> float:
    """A host run's wall time without its pauses: its cells' own times plus
    the gaps between them (the host's clock), a gap of PAUSE_S or more (the
    run was interrupted and resumed later) left out; plus the time to its
    first cell."""
    cells = sorted(zip((s.started for s in samples), own))
    gaps = [later - (start + seconds) for (start, seconds), (later, _) in zip(cells, cells[1:])]
    first = cells[0][0] - run.started
    return sum(own) + sum(gap for gap in gaps if 0 < gap < PAUSE_S) + (first if 0 < first < PAUSE_S else 0)


def _timing_of(sample: Sample) -> str | None:
    """Where a sample's cell ran: None on the host, else its VM's timing mode."""
    vm = sample.env.get("vm")
    return str(vm.get("timing", "wall")) if isinstance(vm, dict) else None


def _recent_cells(store: Store, timing: str | None) -> list[list[Sample]]:
    """The ok cells of the store's recent runs (RECENT_BOOT_RUNS) that ran
    where this run's will: on the host (None), or in a VM in this timing
    mode; a list per run that has such cells, the latest last."""
    found = []
    for run in store.runs()[-RECENT_BOOT_RUNS:]:
        cells = [s for s in store.samples(run.id, with_histograms=False)
                 if s.status == "ok" and _timing_of(s) == timing]
        if cells:
            found.append(cells)
    return found


def _overhead(recent: list[list[Sample]]) -> tuple[float | None, int]:
    """Median setup + teardown of the cells of the latest RECENT_RUNS of
    those runs, and how many."""
    found = [(s.setup_s or 0) + (s.teardown_s or 0) for cells in recent[-RECENT_RUNS:] for s in cells
             if s.setup_s is not None]
    return (statistics.median(found) if found else None), len(found)


def _job_seconds(experiment: Experiment, name: str) -> tuple[float | None, bool]:
    workload = experiment.workload_named(name)
    if workload.engine != "fio":
        return None, False
    longest, exact = 0.0, True
    for variant in experiment.variant:
        seconds, whole = fio_jobs.duration(fio_jobs.jobs(load.job_text(experiment, workload), dict(variant.fio)))
        if seconds is None:
            return None, False
        longest, exact = max(longest, seconds), exact and whole
    return longest, exact


def _kernels(experiment: Experiment) -> tuple[list[str], dict[str, str]]:
    """A line per variant with a kernel (cached, to build, to fetch), and each
    such variant's kernel by the name its VM records (env.vm.kernel)."""
    from iolab.kernels import build, fetch, sources
    from iolab.kernels.kernel_ref import for_variant

    lines, names = [], {}
    for variant in experiment.variant:
        if isinstance(variant.kernel, Build):
            resolved = build.plan(build.request_for(variant.kernel, experiment))
            names[variant.name] = f"build-{resolved.key}"
            if build.cached(resolved) is not None:
                lines.append(f"{variant.name}: cached ({resolved.source.label})")
                continue
            likely = build.last_build_seconds(resolved.tree_key)
            took = f"{likely[1]} {format_duration(likely[0])}" if likely else "no build timed yet"
            if resolved.request.patches and not sources.is_unpacked(sources.tree(resolved.source)):
                took += "; the source is not unpacked here yet, so the build checks that its patches apply"
            lines.append(f"{variant.name}: to build from {resolved.source.label} ({took})")
        elif variant.kernel is not None:
            ref = for_variant(variant.kernel, variant.modules, experiment.base_dir)
            names[variant.name] = ref.name
            missing = "to prepare (its initramfs)" if ref.kind == "local" else "to fetch"
            state = "cached" if fetch.cached(ref) else missing
            lines.append(f"{variant.name}: {state} ({variant.kernel})")
    return lines, names


def planned_boots(cells: list[plan.PlannedCell], kernel_of: dict[str, str], per_boot: int,
                  by_round: bool = False) -> Counter[str]:
    """Boots per kernel of this cell order: consecutive cells of one kernel
    share a boot, up to `per_boot`, and with `by_round` (instructions mode)
    only cells of one variant's round (as iolab.hosts.vm.VMHosts.batches)."""
    boots: Counter[str] = Counter()
    last: tuple[str, str, int] | None = None
    size = 0
    for cell in cells:
        kernel = kernel_of.get(cell.variant, cell.variant)
        if last is not None and kernel == last[0] and size < per_boot and \
                (not by_round or (cell.variant, cell.round) == last[1:]):
            size += 1
            continue
        boots[kernel] += 1
        last, size = (kernel, cell.variant, cell.round), 1
    return boots


def _boot_times(recent: list[list[Sample]]) -> dict[str, list[float]]:
    """Seconds from QEMU's start to a ready guest, per kernel, of each boot of
    these VM cells (one value a boot, however many cells it ran)."""
    found: dict[str, dict[tuple[object, ...], float]] = {}
    for run, cells in enumerate(recent):
        for sample in cells:
            vm = sample.env["vm"]
            if vm.get("boot_s") is not None:
                found.setdefault(str(vm.get("kernel")), {})[(run, vm.get("boot"), vm["boot_s"])] = vm["boot_s"]
    return {kernel: list(boots.values()) for kernel, boots in found.items()}


def _boots_word(count: int) -> str:
    return f"{count} boot" + ("" if count == 1 else "s")


def _boots(experiment: Experiment, recent: list[list[Sample]], kernel_of: dict[str, str]) -> list[BootTime]:
    cells = plan.plan(experiment, 0)
    measured = _boot_times(recent)
    others = [s for seconds in measured.values() for s in seconds]
    out = []
    by_round = experiment.timing == "instructions"
    for kernel, count in planned_boots(cells, kernel_of, experiment.vm.cells_per_boot, by_round).items():
        if measured.get(kernel):
            mine = measured[kernel]
            out.append(BootTime(kernel, count, statistics.median(mine),
                                f"the median of its {_boots_word(len(mine))} in the store"))
        elif others:
            out.append(BootTime(kernel, count, statistics.median(others),
                                f"not booted here yet: the median of {_boots_word(len(others))} of other kernels"))
        else:
            out.append(BootTime(kernel, count, None, f"no {experiment.vm.timing}-mode boot measured here yet"))
    return out


def _cells_of(timing: str | None) -> str:
    return "host cells" if timing is None else f"{timing}-mode VM cells"


def estimate(experiment: Experiment, store: Store | None) -> Estimate:
    per_round = Counter(workload for _, workload in plan.pairs(experiment))  # a series' steps: those they reach
    cells_of = {w.name: plan.total_rounds(experiment) * per_round[w.name] for w in experiment.workload}
    history = _history(store, experiment) if store else {}
    kernels, kernel_of = _kernels(experiment)
    where = _where(experiment)
    recent = _recent_cells(store, where) if store else []
    overhead, counted = _overhead(recent)
    # earlier runs of this experiment already share their boots over their cells
    boots = _boots(experiment, recent, kernel_of) if kernel_of and not history else []
    rows, total, at_least, untimed = [], 0.0, False, 0
    for workload in experiment.workload:
        if workload.name in history:
            rows.append(WorkloadTime(workload.name, history[workload.name], "earlier runs of this experiment"))
            total += history[workload.name] * cells_of[workload.name]
            continue
        seconds, exact = _job_seconds(experiment, workload.name)
        if seconds is None:
            rows.append(WorkloadTime(workload.name, None, "bound by its size or its op count: no time of its own"))
            untimed, at_least = untimed + 1, True
            total += (overhead or 0) * cells_of[workload.name]  # its setup and teardown at least
            continue
        how = "the job's runtime" if exact else "the job's runtime cap"
        if overhead is not None:
            seconds += overhead
            how += f" + setup/teardown {overhead:.1f} s, the median of {counted} {_cells_of(where)} in the store"
        else:
            how += f"; setup/teardown of {_cells_of(where)} not measured here yet"
            at_least = True
        if kernel_of:
            # under emulation fio's start and its file layout take seconds of their own
            how += "; VM boots not counted" if history else "; fio's start-up in the VM not counted"
            at_least = True
        rows.append(WorkloadTime(workload.name, seconds, how))
        total += seconds * cells_of[workload.name]
    for boot in boots:
        if boot.boot_s is None:
            at_least = True
        else:
            total += boot.boots * boot.boot_s
    cells = sum(cells_of.values())
    return Estimate(cells, rows, total if total > 0 else None, at_least, kernels, boots, untimed)
