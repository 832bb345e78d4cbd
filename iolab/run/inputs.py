"""The files an experiment names, stored with its run.

An experiment file names other files by path: a workload's ``job_file``, a
built kernel's ``patches``, ``reverse`` patches and ``config_file``, a
``[series]``' patches. A run stores each one's bytes beside the experiment
(Store.begin_run, table ``run_files``), so that what a run measured stays
what it ran:

- ``iolab submit``: an agent on another machine runs the submitted patch, not
  whatever its own disk holds at that path (or nothing);
- ``iolab resume`` and ``--recheck``: a patch or job file edited since the run
  began does not change the kernel or the job of the cells still to run.

Reading a stored run back, each file is written once into the cache, by its
digest (``$XDG_CACHE_HOME/iolab/inputs/<sha256>/<its name>``), and
``Experiment.inputs`` points the experiment's names there; the names the
experiment shows stay as written. What is too large to store (a kernel
source tree or tarball, a kernel image of your own and its modules) stays a
path each machine must have; the experiment's check names the field.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from iolab.kernels import cache
from iolab.load.files import read_bytes
from iolab.spec import Build, Experiment, SpecError
from iolab.store import Store

MAX_INPUT = 16 << 20  # bytes of one stored file (a patch series' largest patch is far below)


def names(experiment: Experiment) -> dict[str, str]:
    """Each file the experiment names, by name as written, with the field that names it first."""
    found: dict[str, str] = {}
    for workload in experiment.workload:
        if workload.job_file is not None:
            found.setdefault(workload.job_file, f'workload["{workload.name}"].job_file')
    for index, name in enumerate(experiment.series.patches if experiment.series else []):
        found.setdefault(name, f"series.patches[{index}]")  # not the steps' variants: the file wrote them here
    builds = [("kernel", experiment.kernel)] + [(f'variant["{v.name}"].kernel', v.kernel) for v in experiment.variant]
    for where, build in builds:
        if not isinstance(build, Build):
            continue
        if build.config_file:
            found.setdefault(build.config_file, f"{where}.config_file")
        for field in ("reverse", "patches"):
            for index, name in enumerate(getattr(build, field)):
                found.setdefault(name, f"{where}.{field}[{index}]")
    return found


def read(experiment: Experiment) -> dict[str, bytes]:
    """The bytes of each file the experiment names (SpecError names the field
    of one that cannot be read or is larger than MAX_INPUT)."""
    files = {}
    for name, where in names(experiment).items():
        try:
            files[name] = read_bytes(experiment.file(name), "file to store with the run", MAX_INPUT)
        except SpecError as error:
            raise SpecError(f"{where}: {error}") from None
    return files


def root() -> Path:
    return cache.cache_root().parent / "inputs"


def placed(files: dict[str, bytes]) -> dict[str, str]:
    """Each stored file written into the cache by its digest (once; a copy
    there is whole or absent); name as written -> its path there."""
    paths = {}
    for name, data in files.items():
        directory = root() / hashlib.sha256(data).hexdigest()
        base = Path(name).name
        path = directory / (base if base not in ("", ".", "..") else "file")  # never a path out of it
        if not (path.is_file() and path.read_bytes() == data):
            directory.mkdir(parents=True, exist_ok=True)
            handle, staged = tempfile.mkstemp(dir=directory, prefix=".staged-")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(staged, path)
        paths[name] = str(path)
    return paths


def of_run(store: Store, run_id: int) -> dict[str, str]:
    """The stored files of a run, placed in the cache (Experiment.inputs);
    empty for a run stored without them (by an iolab before store schema 5)."""
    return placed(store.run_files(run_id))


def stored(experiment: Experiment, store: Store, run_id: int) -> Experiment:
    """A stored run's experiment, reading the files it names from the copies stored with it."""
    inputs = of_run(store, run_id)
    return experiment.model_copy(update={"inputs": inputs}) if inputs else experiment

