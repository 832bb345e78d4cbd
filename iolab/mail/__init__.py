"""A patch mail in: read once into a typed value (message), its diff
repaired against the kernel source where a web archive mangled it.

    message      the mail's patches (b4 for real mails; web copies read leniently)
    copies       each patch's diff as the diff model's hunks, each as its words
    placement    where a hunk's words go in the source file
    indentation  the indentation of the lines the source cannot give
    repair       the repaired diff, and the patches' files as iolab-mail/ writes them (files)
    benchmark    the benchmark it describes (fio_text: fio's forms; environment: the machine)
    claimed      the before/after claims; reading: all of it, once

This file only re-exports."""

from iolab.mail.message import Mail, MailError, Patch, read

__all__ = ["Mail", "MailError", "Patch", "read"]
