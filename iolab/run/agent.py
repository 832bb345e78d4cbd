"""iolab agent: a test host that takes rounds from the queue and runs them.

An agent is a procrastinate worker (iolab.run.queue) with concurrency 1.
A job is one round of a queued run (iolab.run.submit): every variant's
cells of that round, on this host, in the planned order, so pairing by
round stays within one machine. For each job the agent

1. checks the stored experiment as ``iolab run`` checks a file (schema,
   fio option check, limits, fio's own parse), reading the job files, patches
   and config fragments it names from the copies stored with the run
   (iolab.run.inputs), and refuses what it cannot
   run -- an experiment that ``allow``s options this agent was not started
   with ``--allow``, a tool it lacks -- saying why: the round is recorded as
   refused, the run fails with that reason, its queued rounds are cancelled;
2. takes the machine lock, exclusive, waiting its turn (iolab.run.lock),
   and reclaims what dead iolab processes here left (iolab.run.recovery);
3. records its attempt (store.begin_attempt) and journals it, then runs the
   cells and writes each sample to the shared store the moment it exists,
   stamped with the agent's name and the attempt;
4. marks the attempt done, and the run complete when it was the last round.

Kernels built from source are built once per fleet (iolab.run.fleet): the
first agent that needs a build key builds it and offers it in the store's
PostgreSQL; the others wait for it, then fetch it.

Faults. procrastinate's worker sends heartbeats; a job whose worker's
heartbeat is older than 3 heartbeats is stalled, and an agent gives it back
to the queue (procrastinate's get_stalled_jobs / retry_job), which counts
one more attempt. The killed try's samples stay in the store under their
attempt, superseded (a round counts its latest attempt: iolab.store), and
its journal entry marks it killed when its host reclaims. SIGTERM (or
Ctrl-C) lets the current cell finish, then gives the round back and exits.
A round that raised goes back to the queue while it has had fewer than
MAX_TRIES tries (perhaps on another host); every try shows in the report.

The store's server restarted. A round's writes are retried on a new
connection for up to RECONNECT_S (a sample whose commit was cut off is not
written twice: its row is unique); procrastinate stops a worker whose
heartbeat or listener fails, so the agent starts its worker again. The
agent keeps its worker's heartbeat up itself (procrastinate's public
update_heartbeat) while a round runs, and gives back another agent's round
only after its own connection has been up for 3 heartbeats: after a
restart every live agent has sent one by then.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import logging
import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from iolab import kernels, knobs, load, plan
from iolab.cell import environment
from iolab.journal import default_journal
from iolab.run import inputs, lock, queue, recovery, runner
from iolab.run.fleet import PostgresFleet
from iolab.spec import Experiment, SpecError
from iolab.store import Sample, Store, StoreError
from iolab.store.db import shown
from iolab.sysutil import ToolError, require

MAX_TRIES = 3  # a round that raised goes back to the queue while it has had fewer tries (of any kind)
STALLED_HEARTBEATS = 3  # a worker silent for this many heartbeats is taken for dead
RECONNECT_S = 120.0  # how long a sample is retried while the store's server is away
EXIT_LOST = 4


class Refused(Exception):
    """This agent cannot run the job; the message says why."""


class GiveBack(Exception):
    """SIGTERM: the round goes back to the queue."""


@dataclass(frozen=True)
class Settings:
    url: str
    name: str = platform.node()
    labels: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    until_idle: bool = False
    heartbeat: float = 10.0  # seconds between heartbeats

    @property
    def stalled_after(self) -> float:
        return STALLED_HEARTBEATS * self.heartbeat


def say(name: str, text: str) -> None:
    stamp = datetime.datetime.now().strftime("%H:%M:%S")
    print(f"{stamp} iolab agent {name}: {text}", file=sys.stderr, flush=True)


def allowed_names(experiment: Experiment) -> set[str]:
    """The names an experiment lets past iolab's fio check (its ``allow`` lists)."""
    return {name for item in [*experiment.workload, *experiment.variant] for name in getattr(item, "allow", [])}


def checked(run_json: str, stored: dict[str, str] | None = None) -> Experiment:
    """The stored experiment checked again here, as ``iolab run`` checks a
    file, reading the files it names from the copies stored with the run
    (``stored``: iolab.run.inputs.of_run)."""
    if len(run_json.encode()) > load.MAX_FILE:
        raise SpecError(f"the experiment is larger than {load.MAX_FILE} bytes")
    try:
        data = json.loads(run_json)
    except ValueError:
        raise SpecError("the stored experiment is not JSON") from None
    if not isinstance(data, dict):
        raise SpecError("the stored experiment is not a table")
    base_dir = str(data.pop("base_dir", "."))
    if not os.path.isdir(base_dir):
        base_dir = "."
    return load.parse(data, base_dir=base_dir, inputs=stored)


def refusal(experiment: Experiment, settings: Settings) -> str | None:
    """Why this agent cannot run the experiment's rounds, or None."""
    missing = sorted(allowed_names(experiment) - set(settings.allow))
    if missing:
        return (f"the experiment allows {', '.join(missing)}; this agent runs such an experiment only when "
                f"started with --allow {' --allow '.join(missing)}")
    try:
        runner.preflight(experiment)
        if any(variant.kernel is not None for variant in experiment.variant):
            from iolab.hosts.vm.qemu import QEMU

            require(QEMU)
    except ToolError as error:
        return str(error)
    return None


class Agent:
    def __init__(self, settings: Settings, journal: Any = None):
        self.settings = settings
        self.queues = queue.queues_for(settings.labels)
        self.journal = journal or default_journal()
        self.stopping = threading.Event()
        self.worker: Any = None
        self.rounds = 0
        self.connected_since: float | None = None  # monotonic time our connection to the store came up

    # -- the worker

    def serve(self) -> int:
        """Run until stopped (or, with until_idle, until nothing is left for us); the exit status."""
        store = Store(self.settings.url)
        queue.ensure_schema(store)
        recovery.report(recovery.reclaim(), "a killed iolab process")
        store.agent_started(self.settings.name, ",".join(self.settings.labels), ",".join(self.settings.allow),
                            platform.node(), os.getpid(), self.settings.heartbeat)
        store.close()
        logging.getLogger("procrastinate").setLevel(logging.WARNING)
        try:
            asyncio.run(self._serve())
        finally:
            self._update(job=None, stopped=time.time())
        return 0

    async def _serve(self) -> None:
        from procrastinate import worker as workers

        app = queue.app(self.settings.url)
        app.task(name=queue.TASK, pass_context=True, retry=_Retry())(self._round_job)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal)
        labels = ",".join(self.settings.labels) or "none"
        say(self.settings.name, f"taking rounds for labels {labels} from {shown(self.settings.url)}")
        async with app.open_async():
            self.connected_since = time.monotonic()
            while not self.stopping.is_set():
                self.worker = workers.Worker(
                    app, queues=self.queues, name=self.settings.name, concurrency=1,
                    wait=not self.settings.until_idle, install_signal_handlers=False,
                    update_heartbeat_interval=self.settings.heartbeat,
                    stalled_worker_timeout=self.settings.stalled_after,
                    fetch_job_polling_interval=min(5.0, self.settings.heartbeat))
                sweeper = asyncio.create_task(self._sweep(app))
                try:
                    await self.worker.run()
                    failed = None
                except Exception as error:  # procrastinate's connector errors: the server went away
                    failed = error
                finally:
                    sweeper.cancel()
                if self.stopping.is_set():
                    break
                try:
                    if failed is None and self.settings.until_idle:
                        if await self._give_back_stalled(app):
                            continue
                        if not await self._anything_left(app):
                            say(self.settings.name, f"nothing left for labels {labels}: {self.rounds} rounds run")
                            break
                        await asyncio.sleep(self.settings.heartbeat)
                        continue
                except Exception as error:
                    failed = error
                # a worker that waits stops by itself only when its heartbeat could not be written
                why = str(failed)[:120] if failed else "its heartbeat could not be written"
                say(self.settings.name, f"lost the store ({why}); starting again in {self.settings.heartbeat:.0f} s")
                await asyncio.sleep(self.settings.heartbeat)

    def _on_signal(self) -> None:
        if not self.stopping.is_set():
            say(self.settings.name, "stopping: the current cell finishes, then its round goes back to the queue")
        self.stopping.set()
        if self.worker is not None:
            self.worker.stop()

    async def _sweep(self, app: Any) -> None:
        """While the worker runs: name its worker id, keep its heartbeat up
        (procrastinate's own stops at the first failure), give back stalled rounds."""
        named = None
        while True:
            worker_id = self.worker.worker_id
            try:
                if worker_id is not None:
                    await app.job_manager.update_heartbeat(worker_id)
                if worker_id is not None and worker_id != named:
                    named = worker_id
                    await asyncio.to_thread(self._update, worker_id=named)
                self.connected_since = self.connected_since or time.monotonic()
                await self._give_back_stalled(app)
            except Exception:  # the server is away: the round goes on, its writes are retried
                self.connected_since = None
            await asyncio.sleep(self.settings.heartbeat)

    async def _give_back_stalled(self, app: Any) -> int:
        """Rounds of our queues held by workers silent for too long go back to the queue."""
        if self.connected_since is None or time.monotonic() - self.connected_since < self.settings.stalled_after:
            return 0  # just (re)connected: live agents may not have sent a heartbeat since the server came back
        given = 0
        for job in await app.job_manager.get_stalled_jobs(task_name=queue.TASK,
                                                          seconds_since_heartbeat=self.settings.stalled_after):
            ours = job.worker_id is not None and job.worker_id == self.worker.worker_id
            if job.queue not in self.queues or ours:
                continue  # another agent's labels; or our own round, running here
            try:
                await app.job_manager.retry_job(job)
            except Exception:  # another agent gave it back first
                continue
            given += 1
            say(self.settings.name, f"run {job.task_kwargs.get('run_id')} round {job.task_kwargs.get('round')}: "
                f"its agent has been silent for {self.settings.stalled_after:.0f} s; back to the queue")
        return given

    async def _anything_left(self, app: Any) -> bool:
        """Is a round of our queues still queued (our worker stopped for another
        reason than idleness) or running on another agent (which may die: its
        round then comes back to the queue once it is stalled)?"""
        for status in ("todo", "doing"):
            jobs = await app.job_manager.list_jobs_async(task=queue.TASK, status=status)
            if any(job.queue in self.queues for job in jobs):
                return True
        return False

    def _update(self, **fields: Any) -> None:
        try:
            store = Store(self.settings.url)
            store.agent_update(self.settings.name, **fields)
            store.close()
        except Exception as error:  # the registry is for people; a store that is away must not stop a round
            say(self.settings.name, f"could not update the agents table: {str(error)[:120]}")

    # -- a job: one round

    def _round_job(self, context: Any, run_id: int, round: int, kernels: dict[str, str] | None = None) -> str:
        job = context.job
        store = Reconnecting(self.settings.url, self.settings.name, min(5.0, self.settings.heartbeat))
        try:
            return self._round(store, job, run_id, round, kernels or {})
        finally:
            store.close()

    def _round(self, store: Any, job: Any, run_id: int, round_index: int, keys: dict[str, str]) -> str:
        name, attempt = self.settings.name, int(job.attempts)
        what = f"run {run_id} round {round_index}" + (f" (attempt {attempt + 1})" if attempt else "")
        run = store.run(run_id)
        if run.status != "running":
            say(name, f"{what}: the run is {run.status}; nothing to do")
            return f"run {run.status}"
        try:
            experiment = checked(run.experiment_json, inputs.of_run(store, run_id))
            why = refusal(experiment, self.settings)
        except SpecError as error:
            experiment, why = None, f"the experiment does not pass iolab's check here: {error}"
        except StoreError as error:  # a stored file whose digest does not match
            experiment, why = None, str(error)
        facts = {**environment.host(), "agent": name}
        if why is None and experiment is not None and keys:
            facts["kernel_keys"] = self._kernel_keys(experiment, keys, what)
        if why is not None:
            self._refuse(store, job, run_id, round_index, attempt, facts, why)
        assert experiment is not None
        with lock.machine_lock(experiment, exclusive=True, waiting=lambda: not self.stopping.is_set(),
                               agent=name, run_id=run_id, round=round_index):
            if self.stopping.is_set():
                raise GiveBack("stopped before the round began")
            recovery.report(recovery.reclaim(), "a killed iolab process")
            attempt_id = store.begin_attempt(run_id, round_index, attempt, name, job.id, facts)
            store.set_run_host(run_id, facts)
            entry = knobs.Journal(self.journal).add(
                f"{what} on agent {name}",
                {"kind": "attempt", "store": recovery.store_name(store.store), "attempt_id": attempt_id})
            self._update(job=what)
            say(name, f"{what}: started")
            try:
                self._cells(store, experiment, run, round_index, attempt, job)
            except GiveBack:
                store.end_attempt(attempt_id, "given back", "its agent was stopped (SIGTERM)")
                say(name, f"{what}: given back to the queue")
                raise
            except Exception as error:
                store.end_attempt(attempt_id, "failed", f"{type(error).__name__}: {str(error)[:500]}")
                raise
            finally:
                knobs.Journal(self.journal).discard(entry)
                self._update(job=None)
            store.end_attempt(attempt_id, "done")
            self.rounds += 1
            if store.complete_if_done(run_id, plan.total_rounds(experiment)):
                say(name, f"run {run_id}: every round is done; the run is complete")
        say(name, f"{what}: done")
        return "done"

    def _kernel_keys(self, experiment: Experiment, submitted: dict[str, str], what: str) -> dict[str, str]:
        """This host's build key of each variant's kernel; says where it is not the submitter's."""
        from iolab.run.submit import build_keys

        try:
            mine = build_keys(experiment)
        except SpecError as error:
            say(self.settings.name, f"{what}: cannot compute the kernels' build keys here: {error}")
            return {}
        for variant, key in sorted(mine.items()):
            if submitted.get(variant) not in (None, key):
                say(self.settings.name, f"{what}: variant {variant}: this host's toolchain or sources give build "
                    f"key {key}, the submitter's {submitted[variant]}: the kernel here is built by its own key "
                    "(the report's environment rows show where the kernels differ)")
        return mine

    def _refuse(self, store: Any, job: Any, run_id: int, round_index: int, attempt: int,
                facts: dict[str, Any], why: str) -> None:
        attempt_id = store.begin_attempt(run_id, round_index, attempt, self.settings.name, job.id, facts)
        store.end_attempt(attempt_id, "refused", why)
        store.end_run(run_id, "failed", f"round {round_index} refused by agent {self.settings.name}: {why}")
        cancelled = queue.cancel_queued(self.settings.url, run_id)
        say(self.settings.name, f"run {run_id} round {round_index}: refused: {why} (the run fails; "
            f"{cancelled} queued rounds cancelled)")
        raise Refused(why)

    def _cells(self, store: Any, experiment: Experiment, run: Any, round_index: int, attempt: int,
               job: Any) -> None:
        cells = [cell for cell in runner.cell_specs(experiment, plan.plan(experiment, run.seed))
                 if cell.round == round_index]
        log = lambda text: say(self.settings.name, text)  # noqa: E731
        fleet = PostgresFleet(self.settings.url, self.settings.name, log)
        variant_kernels = kernels.ready(experiment, log, fleet=fleet)
        steps = kernels.Steps(experiment, log, fleet=fleet) if experiment.series is not None else None
        host = runner.host_for(experiment, variant_kernels, steps=steps)
        with host:
            batches = host.batches(cells)
            for index, batch in enumerate(batches):
                if index and self.stopping.is_set():
                    raise GiveBack("stopped between cells")
                self._still_mine(store, job, attempt)
                for sample in host.run_batch(batch):
                    stamped = dataclasses.replace(sample, attempt=attempt, host=self.settings.name)
                    store.add_sample(run.id, stamped)
                    say(self.settings.name, f"run {run.id} round {round_index}: {sample.variant} / "
                        f"{sample.workload}: {sample.status}" + (f" ({sample.error[:80]})" if sample.error else ""))
        self._still_mine(store, job, attempt)  # not done if it froze in its last cell: the round is another's

    def _still_mine(self, store: Any, job: Any, attempt: int) -> None:
        """Exit at once when the queue gave this round to another agent (our
        heartbeats stopped reaching the store for too long: a zombie, frozen
        or cut off, that lives on): no further cell of this try may run, its
        round may not be marked done, nor may procrastinate finish a job
        another worker now holds. Checked before each cell and after the last;
        the cell under way when it froze is kept, superseded."""
        owner = store.call(queue.job_owner, job.id)
        if owner and owner["status"] == "doing" and owner["worker_id"] == job.worker_id \
                and owner["attempts"] == attempt:
            return
        say(self.settings.name, f"job {job.id}: the queue gave this round to another agent; exiting")
        os._exit(EXIT_LOST)


class Reconnecting:
    """The shared store for one round: every call is tried again on a new
    connection while the server is away (at most RECONNECT_S)."""

    def __init__(self, url: str, name: str, pause: float):
        self.url, self.name, self.pause = url, name, pause
        self.store = Store(url)

    def call(self, action: Callable[..., Any], *args: Any) -> Any:
        """action(store, *args), reconnecting while the server is away."""
        deadline = time.monotonic() + RECONNECT_S
        retried = False
        while True:
            try:
                return action(self.store, *args)
            except Exception as error:
                if retried and action is Store.add_sample and _duplicate(error):
                    return None  # the first try's commit went through before the connection broke
                if time.monotonic() > deadline or not _connection_error(error):
                    raise
                say(self.name, f"the store is away ({str(error).strip()[:80]}); trying again")
                time.sleep(self.pause)
                retried = True
                try:
                    self.store = Store(self.url)
                except StoreError:
                    continue

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(Store, name)
        return lambda *args: self.call(method, *args)

    def close(self) -> None:
        try:
            self.store.close()
        except Exception:  # a connection the server dropped
            pass


def _duplicate(error: BaseException) -> bool:
    import psycopg

    return isinstance(error, psycopg.errors.UniqueViolation)


def _connection_error(error: BaseException) -> bool:
    import psycopg

    return isinstance(error, psycopg.OperationalError)


def _Retry() -> Any:
    """procrastinate's retry strategy for rounds: a round given back (SIGTERM)
    always goes back to the queue; one that raised while it has had fewer than
    MAX_TRIES tries; a refused one never."""
    from procrastinate import retry

    class RoundRetry(retry.BaseRetryStrategy):
        def get_retry_decision(self, *, exception: BaseException, job: Any) -> retry.RetryDecision | None:
            if isinstance(exception, Refused):
                return None
            if isinstance(exception, GiveBack) or job.attempts + 1 < MAX_TRIES:
                return retry.RetryDecision(retry_in={"seconds": 0})
            return None

    return RoundRetry()
