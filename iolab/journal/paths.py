"""Where this machine's run state lives: $XDG_STATE_HOME/iolab (the run
journal, the machine lock)."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state, "iolab")


def default_journal() -> Path:
    """Where a run journals what it changes and creates until it is undone
    (iolab.journal; iolab.run.recovery reclaims it)."""
    return state_dir() / "run.journal"


def legacy_journal() -> Path:
    """The knob journal of iolab before the run journal (knobs only)."""
    return state_dir() / "knobs.journal"
