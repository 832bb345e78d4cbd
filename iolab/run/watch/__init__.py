"""The list robot (``iolab watch``): public-inbox mirrors read with git
(inbox), their messages grouped into series as b4 groups them (series),
each series checked against the sources iolab has (checks), and one pass
that queues what can be tested and remembers where it stopped (robot).

This file only re-exports.
"""

from iolab.run.watch.inbox import InboxError
from iolab.run.watch.robot import Tally, one_pass

__all__ = ["InboxError", "Tally", "one_pass"]
