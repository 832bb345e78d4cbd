"""python -m iolab.cli: `iolab` from a source tree."""

import sys

from iolab.cli.commands import main

sys.exit(main())
