"""Collectors: kernel-side metrics measured around the workload.

One module per collector, one interface (base.Collector: start, stop ->
{metric: value}, close). An experiment chooses them with a table whose
keys are the names in COLLECTORS:

    {
      "proc_stat": true,                       # sys_ctx, sys_intr, sys_forks, sys_cpu.*_s
      "rusage": true,                          # rusage.* of the workload's processes
      "vmstat": true,                          # default keys, or a list: ["pgscan_*", "nr_dirty"]
      "diskstats": true,                       # the target's device, or a name: "vda"
      "perf": ["block:block_rq_complete"],     # perf.<event> (perf stat -a)
      "phase": {"name": "cp",                  # phase.cp_ns / _count / _unmatched (tracefs)
                "start": "f2fs:f2fs_write_checkpoint", "start_filter": "phase == 0",
                "end": "f2fs:f2fs_write_checkpoint", "end_filter": "phase == 2",
                "pair": "global", "buffer_size_kb": 4096},   # or a list of such tables
    }

A key set to false (or absent) means no such collector. Each module's
docstring lists the metrics it emits and what they mean.
`build_collectors(config, device)` (registry.py) makes the collectors, in the order of
COLLECTORS; `device` is the target's block device, if it has one.
"""

from iolab.collectors.base import Collector, CollectorError
from iolab.collectors.registry import COLLECTORS, build_collectors, collecting, metric_names, table_of

__all__ = ["COLLECTORS", "Collector", "CollectorError", "build_collectors", "collecting", "metric_names", "table_of"]
