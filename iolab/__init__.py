"""iolab: an A/B performance lab for the Linux storage stack."""

__version__ = "0.1.0"
