"""Running an experiment: plan -> cells on a host -> store, sample by sample.

A fixed-length run runs its whole plan. An adaptive run (``iterations =
"auto"``) makes its rounds one at a time (iolab.plan.round_cells) and, from
``min_iterations`` on, asks iolab.run.adaptive.look after every round whether
every headline delta is decided; it also stops at ``max_iterations`` or when
the next round would end after ``time_budget``. Why it stopped is stored
with the run (runs.stop_reason).
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, Protocol

from iolab import analysis, engines, kernels, load, plan
from iolab.run import adaptive, early, inputs, lock, parallel, recovery, series
from iolab.process import interrupts
from iolab.cell.cellspec import CellSpec, Record
from iolab.hosts import Host
from iolab.hosts.local import LocalHost
from iolab.kernels import Kernel
from iolab.spec import Experiment, Workload
from iolab.cell.sample import Sample
from iolab.store import RunStatus, Store
from iolab.stats.exact import MIN_ROUNDS
from iolab.sysutil import ToolError, require


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the run and its samples so far are in the store."""

    def __init__(self, run_id: int):
        super().__init__(run_id)
        self.run_id = run_id


def fio_binary(experiment: Experiment, log: Callable[[str], None] = lambda _: None) -> str:
    """The fio the experiment's fio workloads run: "fio" on PATH, or one built
    from Debian's source package (cached; built on first use)."""
    if experiment.fio == "fio" or not any(w.engine == "fio" for w in experiment.workload):
        return "fio"
    return _built_fio(experiment.fio, log)


@functools.lru_cache(maxsize=8)
def _built_fio(name: str, log: Callable[[str], None]) -> str:
    from iolab.kernels import fio_source

    return str(fio_source.ensure(name, log).path)


def _say(text: str) -> None:
    print(f"iolab: {text}", file=sys.stderr)


def preflight(experiment: Experiment) -> None:
    """Refuse to start a run that cannot work: the experiment's fio built
    first where it names one from source, then what the experiment needs of
    this machine (iolab.load.check_here), missing tools, not root."""
    fio = fio_binary(experiment, _say)
    load.check_here(experiment)
    for workload in experiment.workload:
        engines.get(workload.engine, fio).version()
    target = experiment.target
    if target.kind != "dir":
        if os.geteuid() != 0:
            raise ToolError("iolab needs root for loop devices, mkfs and mount (or use target.kind = 'dir')")
        for tool in ("losetup", "mount", "umount"):
            require(tool)
        for variant in experiment.variant:
            for workload in experiment.workload:
                fs = experiment.target_for(variant, workload).fs
                if fs != "none":
                    require(f"mkfs.{fs}")


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def cell_started(self, label: str) -> None: ...

    def cell_done(self, sample: Sample) -> None: ...

    def stop(self) -> None: ...


class NoProgress:
    def start(self, total: int) -> None:
        pass

    def cell_started(self, label: str) -> None:
        pass

    def cell_done(self, sample: Sample) -> None:
        pass

    def stop(self) -> None:
        pass


def job_of(experiment: Experiment, workload: Workload) -> str:
    """The job a cell runs: the workload's, with its op count cut to what an
    instruction count needs in instructions mode ([vm] op_counts = "fewest")."""
    job = load.job_text(experiment, workload)
    if experiment.timing == "instructions" and experiment.vm.op_counts == "fewest":
        return engines.for_instructions(workload.engine, job)
    return job


def cell_specs(experiment: Experiment, planned: list[plan.PlannedCell]) -> list[CellSpec]:
    variants = {v.name: v for v in experiment.variant}
    workloads = {w.name: w for w in experiment.workload}
    return [
        CellSpec(
            seq=cell.seq,
            round=cell.round,
            iteration=cell.iteration,
            warmup=cell.warmup,
            target=Record.of(experiment.target_for(variants[cell.variant], workloads[cell.workload])),
            variant=Record.of(variants[cell.variant]),
            workload=Record.of(workloads[cell.workload]),
            job=job_of(experiment, workloads[cell.workload]),
            setup=Record.of(experiment.cell),
            collect=Record.of(experiment.collect),
            derived=experiment.derived,
            fio=fio_binary(experiment, _say),
        )
        for cell in planned
    ]


def run(
    experiment: Experiment,
    store: Store,
    *,
    experiment_path: str | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
    recheck_of: int | None = None,
    host: Host | None = None,
    clock: Callable[[], float] = time.monotonic,
    show_command: bool = False,
    resume: int | None = None,
    build_progress: Any = None,
) -> int:
    """Run the planned cells and store each sample as it comes; the run's id.

    Ctrl-C (or SIGTERM) stops after the current cell's teardown: the run is
    marked 'interrupted', its samples so far stay in the store, and
    KeyboardInterrupt propagates to the caller. ``clock`` times the budget
    of an adaptive run. ``resume`` continues that stored run (interrupted or
    killed): the same seed and plan, only the cells without a sample.
    Without a host given, this machine's leftovers of killed runs are
    reclaimed first and the machine lock is held (iolab.run.lock).
    ``build_progress`` shows the build of a kernel built from source
    (iolab.kernels.make.Reporter; None: log lines): every kernel the
    variants boot is made ready before the host exists.
    """
    if resume is None:
        experiment = series.with_reach(experiment)  # a resumed run has its stored [series] unreached
    with ExitStack() as stack:
        holder = None
        if host is None:
            preflight(experiment)
            recovery.report(recovery.reclaim())
            holder = stack.enter_context(lock.machine_lock(experiment))
            steps = kernels.Steps(experiment, _say, build_progress) if experiment.series is not None else None
            if steps is not None:
                stack.enter_context(steps)
                steps.ahead(series.build_ahead(experiment))
            host = host_for(experiment, kernels.ready(experiment, _say, build_progress), show_command=show_command,
                            steps=steps)
        with interrupts.deferred():  # a stored run always has its journal entry
            if resume is None:
                run_id, seed = _begin(experiment, store, host, experiment_path, seed, recheck_of)
            else:
                run_id, seed = resume, store.run(resume).seed
                store.reopen_run(resume)
            stack.enter_context(recovery.journalled_run(store, run_id))
        if holder is not None:
            holder.update(run_id=run_id)
        _execute(experiment, store, run_id, seed, host, progress or NoProgress(), clock)
    return run_id


def _begin(
    experiment: Experiment, store: Store, host: Host, experiment_path: str | None, seed: int | None,
    recheck_of: int | None,
) -> tuple[int, int]:
    """Store a new run; (its id, its seed)."""
    if seed is None:
        seed = experiment.run.seed if experiment.run.seed is not None else random.randrange(2**31)
    run_id = store.begin_run(
        name=experiment.name,
        experiment_path=experiment_path,
        experiment_json=experiment.model_dump_json(),
        seed=seed,
        planned_cells=plan.total_rounds(experiment) * len(plan.pairs(experiment)),
        host=host.describe(),
        recheck_of=recheck_of,
        files=inputs.read(experiment),
    )
    return run_id, seed


def _execute(
    experiment: Experiment, store: Store, run_id: int, seed: int, host: Host, progress: Progress,
    clock: Callable[[], float],
) -> None:
    """Run what is left of the run's plan; mark it complete, interrupted or
    failed (an exception, no measured cell succeeded, or a variant that
    cannot run: iolab.run.early)."""
    done = {sample.seq for sample in store.samples(run_id)}
    watch = early.watching(experiment, seed, done)
    status: RunStatus = "failed"
    stop_reason: str | None = None
    planned = plan.total_rounds(experiment) * len(plan.pairs(experiment))
    progress.start(planned - len(done))
    try:
        with host:
            if experiment.series is not None and series.strategy(experiment) == "bisect":
                stop_reason = series.bisect(
                    experiment, lambda cells: _run_cells(store, run_id, cells, host, progress),
                    lambda: analysis.analyse(store.run(run_id), store.samples(run_id)),
                    lambda planned: cell_specs(experiment, planned), seed, done, clock)
            elif experiment.run.auto:
                stop_reason = _run_adaptive(experiment, store, run_id, seed, host, progress, clock, done, watch)
            else:
                every = [c for c in cell_specs(experiment, plan.plan(experiment, seed)) if c.seq not in done]
                last = experiment.run.warmup + int(experiment.run.iterations)  # claims_rounds: more after it
                cells = [c for c in every if c.round < last]
                if experiment.run.exact_stop:
                    stop_reason = _run_until_exact(experiment, store, run_id, cells, host, progress, watch)
                else:
                    _run_cells(store, run_id, cells, host, progress, watch)
                more = [c for c in every if c.round >= last]
                if more:
                    stop_reason = _while_claims_undecided(store, run_id, more, host, progress, watch) or stop_reason
            _vm_as_ended(store, run_id, host)
        status, stop_reason = _outcome(store, run_id, stop_reason)
    except early.CannotRun as cannot:  # the variant that cannot run, or that every cell failed
        status, stop_reason = _outcome(store, run_id, None)
        stop_reason = f"{stop_reason}; stopped after round {cannot.round}" if status == "failed" else cannot.why
        status = "failed"
    except KeyboardInterrupt:
        status = "interrupted"
        raise Interrupted(run_id) from None
    finally:
        progress.stop()
        store.end_run(run_id, status, stop_reason)


def _vm_as_ended(store: Store, run_id: int, host: Host) -> None:
    """The stored VM facts as the run ended: a VM run whose accelerator fell
    back from KVM to TCG mid-run (iolab.hosts.vm.accel) says so in its header."""
    stored = store.run(run_id).host
    vm = host.describe().get("vm") if "vm" in stored else None
    if vm is not None and vm != stored["vm"]:
        store.restate_run_host(run_id, {**stored, "vm": vm})


def _outcome(store: Store, run_id: int, stop_reason: str | None) -> tuple[RunStatus, str | None]:
    """"complete", or "failed" with the first error when no measured cell succeeded."""
    ok, failed = store.sample_counts(run_id)
    if ok or not failed:
        return "complete", stop_reason
    first = min((s for s in store.samples(run_id, with_histograms=False) if s.status != "ok"),
                key=lambda s: s.seq)
    return "failed", f"every cell failed; the first (cell {first.seq}): {first.error or 'unknown error'}"


def host_for(experiment: Experiment, variant_kernels: dict[str, Kernel], show_command: bool = False,
             steps: kernels.Steps | None = None) -> Host:
    """This machine, or VMs booting the variants' kernels (made ready by
    iolab.kernels.ready; a series' steps built as they are first run)."""
    if variant_kernels or steps is not None:
        from iolab.hosts.vm.variants import VMHosts

        hosts = VMHosts(variant_kernels, experiment.vm, show_command=show_command, steps=steps)
        if steps is not None and series.build_ahead(experiment):
            # the steps are built ahead one at a time in a thread of their own (kernels.Steps) and a count
            # does not depend on the host's load: boots side by side, one per CPU, as without a series
            hosts.parallel = os.cpu_count() or 1
        return hosts
    return LocalHost()


def _run_cells(store: Store, run_id: int, cells: list[CellSpec], host: Host, progress: Progress,
               watch: early.FirstRound | None = None) -> None:
    """Run cells batch by batch (a VM boot runs a batch), storing each sample at
    once; ``watch`` stops the run between batches (early.CannotRun). A host
    whose counts do not depend on its load (``parallel`` > 1: VMs in
    instructions mode) runs that many batches at once (iolab.run.parallel)."""
    batches = host.batches(cells)
    if host.parallel > 1 and len(batches) > 1:
        for _, sample in parallel.run(batches, host.run_batch, host.parallel, host.stopping):
            if sample is None:
                if watch is not None:
                    watch.check()
                continue
            _store(store, run_id, sample, progress, watch)
        return
    for batch in batches:
        progress.cell_started(_label(batch[0]))
        for index, sample in enumerate(host.run_batch(batch)):
            _store(store, run_id, sample, progress, watch)
            if index + 1 < len(batch):
                progress.cell_started(_label(batch[index + 1]))
        if watch is not None:
            watch.check()


def _store(store: Store, run_id: int, sample: Sample, progress: Progress, watch: early.FirstRound | None) -> None:
    with interrupts.deferred():  # a Ctrl-C mid-commit must not lose a finished cell's sample
        store.add_sample(run_id, sample)
    progress.cell_done(sample)
    if watch is not None:
        watch.seen(sample)


def _run_until_exact(experiment: Experiment, store: Store, run_id: int, cells: list[CellSpec], host: Host,
                     progress: Progress, watch: early.FirstRound | None) -> str | None:
    """[run] exact_stop: the first MIN_ROUNDS measured rounds (warm-up
    first), then the rest of the plan only where a primary comparison is not
    exact (iolab.run.adaptive.not_exact); the stop reason, or None when
    every round ran."""
    first = experiment.run.warmup + MIN_ROUNDS
    _run_cells(store, run_id, [c for c in cells if c.round < first], host, progress, watch)
    rest = [c for c in cells if c.round >= first]
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    if experiment.series is not None:  # every step: more rounds only for the steps not yet exact
        wanted = series.third_round(result)
        more = [c for c in rest if (c.variant.name, c.workload.name) in wanted]
        _run_cells(store, run_id, more, host, progress, watch)
        if not rest or len(more) == len(rest):
            return None
        return adaptive.ALL_EXACT if not more else \
            f"{len(more)} of {len(rest)} later cells run: the steps whose comparison was not exact"
    if not adaptive.not_exact(result):
        return adaptive.ALL_EXACT if rest else None
    _run_cells(store, run_id, rest, host, progress, watch)
    return None


def _while_claims_undecided(store: Store, run_id: int, cells: list[CellSpec], host: Host, progress: Progress,
                            watch: early.FirstRound | None) -> str | None:
    """[run] claims_rounds: the rounds after the planned ones, one at a time while a claimed row
    is undecided (iolab.analysis.claims); the stop reason (None when none was undecided)."""
    rounds = sorted({c.round for c in cells})
    for index, round_ in enumerate([*rounds, None]):
        result = analysis.analyse(store.run(run_id), store.samples(run_id))
        still = [a.label for a in result.claims if a.word == "undecided" and a.needed]  # rounds would tell
        if not still:
            return None if index == 0 else f"claimed rows decided after {result.rounds_done} rounds"
        if round_ is None:
            return (f"claimed rows undecided at the limit of {result.rounds_done} rounds ([run] claims_rounds): "
                    f"{', '.join(still)}")
        _run_cells(store, run_id, [c for c in cells if c.round == round_], host, progress, watch)
    return None


def _label(cell: CellSpec) -> str:
    return f"{cell.variant.name} / {cell.workload.name}"


def _rounds(experiment: Experiment, seed: int) -> Iterator[tuple[int, list[CellSpec]]]:
    for round_index in range(plan.total_rounds(experiment)):
        yield round_index, cell_specs(experiment, plan.round_cells(experiment, seed, round_index))


def _run_adaptive(
    experiment: Experiment,
    store: Store,
    run_id: int,
    seed: int,
    host: Host,
    progress: Progress,
    clock: Callable[[], float],
    done: set[int] | frozenset[int] = frozenset(),
    watch: early.FirstRound | None = None,
) -> str:
    """Rounds until iolab.run.adaptive.look says stop; the stop reason."""
    settings = experiment.run
    started = clock()
    for round_index, cells in _rounds(experiment, seed):
        _run_cells(store, run_id, [cell for cell in cells if cell.seq not in done], host, progress, watch)
        if round_index + 1 - settings.warmup >= settings.min_iterations:
            result = analysis.analyse(store.run(run_id), store.samples(run_id))
            decision = adaptive.look(result, elapsed=clock() - started, rounds_run=round_index + 1)
            if decision.stop:
                return decision.reason
    return adaptive.max_reached(settings.max_iterations)
