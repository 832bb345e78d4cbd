"""A patch mail in: read once into a typed value (message), its diff
repaired against the kernel source where a web archive mangled it (repair).
This file only re-exports."""

from iolab.mail.message import Mail, MailError, Patch, read

__all__ = ["Mail", "MailError", "Patch", "read"]
