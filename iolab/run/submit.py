"""iolab submit: a run whose rounds test hosts take from the queue.

The experiment is checked as ``iolab run`` checks it (the caller loads it
with iolab.load), stored as a run with the labels it is queued for, and each
round becomes one procrastinate job (iolab.run.queue) with a queueing lock
per round, so a round cannot be queued twice. A job carries the build key
of each variant's kernel built from source (iolab.kernels.build: source,
patches, configuration, toolchain), as this machine computes it: an agent
builds by its own key or finds it in its cache, and says so when its
toolchain gives another key. The files the experiment names (job files,
patches, config fragments) are stored with the run (iolab.run.inputs):
an agent runs those, not what its own disk holds. The agents (iolab.run.agent)
do the rest; the run is marked complete by the agent that finishes its last
round.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from iolab import plan
from iolab.kernels import KernelError
from iolab.run import inputs, queue, series
from iolab.spec import Build, Experiment, SpecError
from iolab.store import Store


@dataclass(frozen=True)
class Submitted:
    run_id: int
    rounds: int
    queue: str
    job_ids: list[int]


def build_keys(experiment: Experiment) -> dict[str, str]:
    """The cache key of each variant's kernel built from source, by variant name."""
    from iolab.kernels import build

    keys = {}
    for variant in experiment.variant:
        if isinstance(variant.kernel, Build):
            try:
                keys[variant.name] = build.plan(build.request_for(variant.kernel, experiment)).key
            except (KernelError, OSError) as error:
                raise SpecError(f"variant[{variant.name!r}].kernel: {str(error)[:300]}") from None
    return keys


def submit(experiment: Experiment, store: Store, *, labels: tuple[str, ...] = (), seed: int | None = None,
           experiment_path: str | None = None) -> Submitted:
    """Store the run and queue one job per round; what was queued."""
    if experiment.run.auto:
        raise SpecError("run.iterations: a queued run needs a fixed number of rounds, not 'auto' "
                        "(give --iterations N); adaptive stopping looks at every round as it ends, on one machine")
    name = queue.queue_of(labels)
    experiment = series.with_reach(experiment)  # a series' steps: the workloads they reach, as a local run plans them
    keys = build_keys(experiment)
    queue.ensure_schema(store)
    if seed is None:
        seed = experiment.run.seed if experiment.run.seed is not None else random.randrange(2**31)
    rounds = plan.total_rounds(experiment)
    run_id = store.begin_run(
        name=experiment.name, experiment_path=experiment_path, experiment_json=experiment.model_dump_json(),
        seed=seed, planned_cells=rounds * len(plan.pairs(experiment)), host={}, labels=",".join(labels),
        files=inputs.read(experiment))
    app = queue.app(queue.postgres(store).url)
    with app.open():
        job_ids = [
            app.configure_task(queue.TASK, queue=name, queueing_lock=f"run-{run_id}-round-{index}").defer(
                run_id=run_id, round=index, kernels=dict(keys))  # typed as procrastinate's JSON dict
            for index in range(rounds)
        ]
    return Submitted(run_id, rounds, name, job_ids)
