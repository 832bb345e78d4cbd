"""What many test files share: where things are, the one experiment builder,
the one golden-file check, the one command-line runner, polling, and the
machine's loop devices and mounts. Not a test module: test files import it,
never each other."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from iolab import load, spec
from iolab.store import Store

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"


def experiment(variants: Sequence[str | dict[str, Any]] = ("base", "patched"), iterations: int | str = 8,
               **tables: Any) -> spec.Experiment:
    """An experiment for tests, parsed as a file would be (iolab.load.parse:
    no fio, nothing of this machine): variants by name (or as tables), one
    fio workload, seed 5, the scripted hosts' metrics; any other top-level
    table replaces the default one (``workload=[...]``, ``run={...}``), and
    ``None`` leaves a table out (``report=None``: the default metrics)."""
    raw: dict[str, Any] = {
        "name": "scripted comparison",
        "variant": [v if isinstance(v, dict) else {"name": v} for v in variants],
        "workload": [{"name": "randread", "job": "[j]\nrw=randread\n"}],
        "run": {"iterations": iterations, "seed": 5},
        "report": {"metrics": ["read_bw", "read_p50", "read_p99", "ctx"]},
    }
    base_dir = tables.pop("base_dir", ".")
    merged = {key: value for key, value in {**raw, **tables}.items() if value is not None}
    return load.parse(merged, base_dir=base_dir)


def check_golden(name: str, text: str) -> None:
    """`text` equals tests/golden/NAME (UPDATE_GOLDEN=1 writes it instead)."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def iolab(*args: str, store: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None,
          timeout: float = 300, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`iolab ARGS` as a user runs it (python -m iolab.cli from this tree), to completion."""
    argv = [sys.executable, "-m", "iolab.cli", *(["--store", str(store)] if store is not None else []), *args]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env, timeout=timeout, **kwargs)


def wait_for(predicate: Callable[[], Any], timeout: float = 120.0, what: str = "the condition") -> Any:
    """Poll until `predicate()` is true; its value (AssertionError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come within {timeout:.0f} s")
        time.sleep(0.02)


def wait_while_running(process: subprocess.Popen[str], predicate: Callable[[], Any], timeout: float = 240.0,
                       what: str = "the condition") -> Any:
    """wait_for `predicate` while `process` runs; if it ends first, or the time
    runs out (it is killed then), an AssertionError with its exit status and
    the tail of its stderr (a run refused or stuck says why)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        ended = process.poll() is not None
        if ended or time.monotonic() > deadline:
            if not ended:
                process.kill()
            _, err = process.communicate(timeout=60)
            why = f"the process ended (exit {process.returncode})" if ended else f"not within {timeout:.0f} s"
            raise AssertionError(f"{what}: {why}; its stderr ends: {(err or '')[-1500:]}")
        time.sleep(0.02)


def attached_loops(under: str = "iolab-") -> set[str]:
    """Loop devices whose backing file path contains `under`."""
    out = subprocess.run(["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"],
                         capture_output=True, text=True, check=False).stdout
    return {line.strip() for line in out.splitlines() if under in line}


def iolab_mounts(under: str = "iolab-") -> list[str]:
    return [line for line in Path("/proc/self/mounts").read_text().splitlines() if under in line]


def copy_run(source: Store, run_id: int, target: Store) -> int:
    """A stored run copied into another store (SQLite -> PostgreSQL); the new id."""
    run = source.run(run_id)
    new = target.begin_run(name=run.name, experiment_path=run.experiment_path,
                           experiment_json=run.experiment_json, seed=run.seed,
                           planned_cells=run.planned_cells, host=run.host, recheck_of=run.recheck_of)
    for sample in source.samples(run_id):
        target.add_sample(new, sample)
    target.end_run(new, run.status, run.stop_reason)
    return new


def source_tarball(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A kernel source tarball (made once per directory): Linux 7.2's excerpts
    (tests/fixtures/mail/linux-7.2), or the files given."""
    import shutil
    import tarfile

    tarball = tmp_path / "linux.tar.gz"
    if tarball.exists():
        return tarball
    top = tmp_path / "linux-7.2.99"
    if files is None:
        shutil.copytree(FIXTURES / "mail" / "linux-7.2", top)
    else:
        for name, text in files.items():
            (top / name).parent.mkdir(parents=True, exist_ok=True)
            (top / name).write_text(text)
    (top / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 99\n")
    (top / "Kconfig").write_text("# stand-in\n")
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(top, arcname=top.name)
    return tarball
