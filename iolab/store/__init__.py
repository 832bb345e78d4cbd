"""The store: every sample, run and attempt, in SQLite or PostgreSQL.

    runs    the queries (Store, RunInfo, Attempt); a Sample itself is iolab.cell.sample's
    schema  the schema, its version and the migrations of older stores
    db      the SQLite and PostgreSQL backends (one dialect of SQL for both)

This file only re-exports.
"""

from iolab.store.runs import (Agent, Attempt, AttemptStatus, Baseline, RunInfo, RunStatus, Sample, Store, StoreError,
                              default_path)

__all__ = ["Agent", "Attempt", "AttemptStatus", "Baseline", "RunInfo", "RunStatus", "Sample", "Store", "StoreError",
           "default_path"]
