"""[claims]: what the patch mail claims, set beside what iolab measures.

`iolab patch` writes it from the mail (iolab.mail): each row of the mail's
table or before -> after pair, with the workload and metric of the
experiment that measures it (none: not reproduced, and why), and what of
the mail's benchmark was scaled, refused or left out. The report's claim
table (iolab.analysis.claims) compares directions and relative sizes only,
never the mail's absolute figures with this machine's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from iolab.spec.base import Strict


class ClaimRow(Strict):
    label: str = Field(min_length=1, max_length=120)  # the mail's row ("write_u1k", "Flush time (ms)")
    before: float
    after: float
    unit: str = Field(default="", max_length=20)  # the mail's unit ("us", "IOPS"), "" for a count
    better: Literal["higher", "lower"] | None = None  # which way the mail's unit is better
    stated: str = Field(default="", max_length=20)  # the mail's own delta column, as written
    workload: str = ""  # the workload that measures it ("": not reproduced)
    metric: str = ""  # its metric
    reason: str = Field(default="", max_length=300)  # why it is not reproduced


class Claims(Strict):
    source: str = Field(default="", max_length=300)  # the mail: its subject, Message-Id
    row: list[ClaimRow] = []
    scaled: list[str] = []  # the mail's figures scaled to the VM ("files 650000 -> 20000")
    not_reproduced: list[str] = []  # "what: why"
    refused: list[str] = []  # the mail's options the experiment file's checks refused
