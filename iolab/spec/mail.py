"""[mail]: the patch mail an experiment was written from (``iolab patch``).

Set by ``iolab patch`` (a user may edit or remove it): stored with the run,
named in every report's header. Only words, never read as a command."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from iolab.spec.base import Strict


class MovedHunk(Strict):
    """A hunk of a patch placed on a tree it was not written for (iolab.kernels.port)."""

    file: str = Field(min_length=1)  # the file it changes (-p1)
    hunk: int = Field(ge=1)  # its number in that file
    header: str = ""  # the mail's @@ line
    offset: int = 0  # lines from where the mail's diff puts it (positive: lower)
    how: Literal["offset", "fuzz", "wiggle"] = "offset"  # GNU patch as given, GNU patch's fuzz, wiggle
    context: list[str] = []  # each context line that differs: the mail's and the tree's


class MailPatch(Strict):
    """One patch of the mail as the series applies it."""

    file: str = Field(min_length=1)  # the patch file (relative to the experiment)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of that file, as written
    subject: str = ""
    message_id: str | None = None
    repaired: bool = False  # its diff was repaired against the source (a web archive's copy, damaged whitespace)
    port: list[MovedHunk] = []  # placed on another base than the mail's: the hunks that moved or met other context


class MailRecord(Strict):
    title: str = Field(min_length=1, max_length=300)
    message_id: str | None = None
    author: str | None = None
    date: str | None = None
    patches: list[MailPatch] = []

    def header(self) -> str:
        """The report header's line: who, when, which Message-Id, and what was repaired."""
        parts = [f"from {self.author}" if self.author else "", self.date or "",
                 f"Message-Id <{self.message_id}>" if self.message_id else "no Message-Id"]
        line = "mail: " + ", ".join(p for p in parts if p)
        repaired = [p for p in self.patches if p.repaired]
        if repaired:
            line += "; diff repaired against the source: " + ", ".join(f"{p.file} (sha256 {p.sha256[:12]})"
                                                                    for p in repaired)
        ported = [p for p in self.patches if p.port]
        if ported:
            line += "; applied as a port (written on another base): " + "; ".join(
                f"{p.file}: " + ", ".join(f"{h.file} hunk #{h.hunk} {h.offset:+d} lines"
                                          + (f" ({len(h.context)} context line(s) differ)" if h.context else "")
                                          for h in p.port) for p in ported)
        return line
