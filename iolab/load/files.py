"""The files an experiment names, read as text: the experiment file itself,
job files, and a workload's fio job (following '@other' references)."""

from __future__ import annotations

from pathlib import Path

from iolab.spec import Experiment, SpecError, Workload

MAX_FILE = 1 << 20  # bytes of an experiment (or job) file


def read_bytes(path: Path, what: str, limit: int = MAX_FILE) -> bytes:
    """A user's file: at most ``limit`` bytes (SpecError naming the file otherwise)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise SpecError(f"{path}: cannot read the {what}: {error.strerror}") from None
    if len(data) > limit:
        raise SpecError(f"{path}: the {what} is larger than "
                        + (f"{limit >> 10} KiB" if limit >= 1024 else f"{limit} bytes"))
    return data


def read_text(path: Path, what: str) -> str:
    """A user's file as text: at most MAX_FILE bytes of UTF-8 (SpecError otherwise)."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SpecError(f"{path}: the {what} is not UTF-8 text (byte {error.start}, line {line})") from None


def job_text(experiment: Experiment, workload: Workload) -> str:
    """The fio job text of a workload, following '@other' references and job files."""
    if workload.job_file is not None:
        return read_text(experiment.file(workload.job_file), "job file")
    assert workload.job is not None
    if workload.job.startswith("@"):
        return job_text(experiment, experiment.workload_named(workload.job[1:].strip()))
    return workload.job
