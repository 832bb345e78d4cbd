"""Programs iolab runs, and what a dead run's programs left behind.

    children  the one runner of programs: journalled, dies with iolab, killed with
              its children on Ctrl-C (run, run_tool, start/end, started, kill_tree)
    reclaim   undo actions of paths, loop devices, mounts, processes (ACTIONS), and
              finding the processes that use a path; above children, whose runner
              its umount and losetup use
    interrupts  Ctrl-C and SIGTERM held back while a child is made or a teardown
              runs (deferred), and SIGTERM as Ctrl-C (sigterm_interrupts)

This file only re-exports.
"""

from iolab.process.children import (Child, all_pids, descendants, end, kill, kill_tree, run, run_tool, start,
                                    started)

__all__ = ["Child", "all_pids", "descendants", "end", "kill", "kill_tree", "run", "run_tool", "start", "started"]
