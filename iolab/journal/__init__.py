"""The crash journal: what a run changed or created, written before it exists,
and what a killed run left is replayed with (recover: the undo actions
are given to it; iolab.process.reclaim has those of paths, loops, mounts and
processes). Every stage that makes
resources writes to it (knobs, targets, collectors, hosts, the runner).

    journal   Journal (JSON lines, fsynced), the current cell's journal, recover()
    paths     where the journal and the machine lock live

This file only re-exports.
"""

from iolab.journal.journal import (Journal, Recovered, Undo, UndoError, as_journal, current, entry, owner_alive,
                                   process_start, recover, using)
from iolab.journal.paths import default_journal, legacy_journal, state_dir

__all__ = ["Journal", "Recovered", "Undo", "UndoError", "as_journal", "current", "default_journal", "entry",
           "legacy_journal", "owner_alive", "process_start", "recover", "state_dir", "using"]
