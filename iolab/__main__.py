"""`python -m iolab`: the same command line as the `iolab` script (iolab.cli.commands.main)."""

import sys

from iolab.cli.commands import main

sys.exit(main())
