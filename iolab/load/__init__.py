"""Loading an experiment file: TOML -> checked `Experiment`, in two steps.

    load(path)          read the file and parse it
    parse(raw)          the same from a TOML table: the schema (iolab.spec)
                        and the experiment's structure; pure: it reads the
                        files the experiment names (job files, kernels,
                        patches) and nothing of this machine, and runs no
                        program (no fio on PATH needed)
    check_here(exp)     what needs this machine: the CPUs and sysctls the
                        knobs name, sysfs files, a `dir` target that is no
                        system directory, and fio's own parse of every job
                        (the command line calls it after load, the runner's
                        preflight before a run)

The structure is probe parameters (iolab.engines.probe), kernel names
(iolab.kernels), derived-metric expressions (iolab.cell.derived), job
files and '@workload' references, fio's option table
(iolab.engines.fio_options), and the metric names it gives (what its
engines, collectors and derived metrics produce). The machine is checked
only for cells that run on it (a variant with a kernel runs in a VM: its
CPUs are the VM's and its sysctls the guest kernel's). Every error is a SpecError whose message
names the field, as ``variant["direct"].fio`` or ``workload[1].probe``.

    reader        load, parse (and in_file): TOML -> Experiment, pure
    structure     the structure checks parse runs
    metric_names  the metric names it gives, against what it can produce
    here          check_here: the checks of this machine
    files         the files an experiment names, read as text (job_text)
    errors        messages naming the field (pydantic's errors, excerpts)

This file only re-exports.
"""

from iolab.load.files import MAX_FILE, job_text, read_text
from iolab.load.here import check_here
from iolab.load.reader import in_file, load, parse

__all__ = ["MAX_FILE", "check_here", "in_file", "job_text", "load", "parse", "read_text"]
