"""[claims]: what the patch mail claims, set beside what iolab measures.

`iolab patch` writes it from the mail (iolab.mail): each row of the mail's
table or before -> after pair, with the line it was read from, the workload
and metric of the experiment that measures it (none: not reproduced, and
why), and what of the mail's benchmark was scaled, refused or left out.
The report's claim table (iolab.analysis.claims) reads these rows, never
the mail again (a reading the user corrected here is what the run uses),
and compares directions and relative sizes only, never the mail's
absolute figures with this machine's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from iolab.spec.base import Strict

SOURCE_LINE = 200  # characters of a claim row's source line (iolab patch cuts a longer one, saying so: "...")


class ClaimRow(Strict):
    label: str = Field(min_length=1, max_length=120)  # the mail's row ("write_u1k", "Flush time (ms)")
    before: float
    after: float
    unit: str = Field(default="", max_length=20)  # the mail's unit ("us", "IOPS"), "" for a count
    better: Literal["higher", "lower"] | None = None  # which way the mail's unit is better
    stated: str = Field(default="", max_length=20)  # the mail's own delta column, as written
    source: str = Field(default="", max_length=SOURCE_LINE)  # the mail's line it was read from, as a reader checks it
    workload: str = ""  # the workload that measures it ("": not reproduced)
    metric: str = ""  # its metric
    reason: str = Field(default="", max_length=300)  # why it is not reproduced


class Claims(Strict):
    source: str = Field(default="", max_length=300)  # the mail: its subject, Message-Id
    row: list[ClaimRow] = []
    scaled: list[str] = []  # the mail's figures scaled to the VM ("files 650000 -> 20000")
    not_reproduced: list[str] = []  # "what: why"
    refused: list[str] = []  # the mail's options the experiment file's checks refused
