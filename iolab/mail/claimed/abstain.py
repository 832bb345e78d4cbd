"""Rows the reader abstains from on weak evidence, whatever form read them and however well their
sides are named: the last step of iolab.mail.claimed.reader.

A row is a measure when its figures say so. Two whole numbers no larger than ``SMALL`` with no unit
(``jobs 4 -> 8``, ``4 entries per page instead of 3``, a histogram's bin ``64K... 128K-  1  1``) whose
change the mail does not state are more often a setting, a count of things or a bin than a result
(the trade, measured on the corpus, is in docs/claims.md).
"""

from __future__ import annotations

from iolab.mail.claimed.evidence import delta_agrees
from iolab.mail.claimed.model import Claim

SMALL = 8  # the largest whole figure a unitless row may have on both sides and still be abstained from


def abstained(found: list[Claim]) -> list[Claim]:
    """The rows with evidence enough to return, in their order."""
    return [claim for claim in found if not small_count(claim)]


def small_count(claim: Claim) -> bool:
    """A row of no unit whose two figures are whole numbers of at most ``SMALL`` (a setting, a count
    of things, a bin): no measure by its figures, unless the mail states its change (``4.0  5.0  +25.00%``)."""
    return claim.kind in ("count", "") and not claim.unit and \
        all(float(x).is_integer() and abs(x) <= SMALL for x in (claim.before, claim.after)) and not delta_agrees(claim)
