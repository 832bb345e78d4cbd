"""The claim a patch mail makes, read from its text: model (a row, its
figures and units), the forms (tables, pipes, sides, prose) and reader
(every claim of a text). This file only re-exports."""

from iolab.mail.claimed.model import Better, Claim, Kind, number, unit_of
from iolab.mail.claimed.reader import claims, description

__all__ = ["Better", "Claim", "Kind", "claims", "description", "number", "unit_of"]
