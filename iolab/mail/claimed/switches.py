"""Two columns of a pipe table that are one option switched off and on, where the patches' subjects
bring it: ``| polling=off | polling=on |`` under "nvme: add polling option", ``| nocsum_offload |
csum_offload |`` under "btrfs: add csum_offload mount option", ``| send | send-zc |`` under
"io_uring/net: add send-zc support".
The off one (or the one without the suffix) is before, the one the change brings after. With no
subject naming the option, they are modes of one kernel: no sides.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.naming import Side, switched


def _sides(first: str, second: str) -> tuple[Side, Side] | None:
    """Which of two names is off and which on: by naming.switched, a "no" glued to the name
    (``nocsum_offload`` / ``csum_offload``), or the name and the name with a suffix (``send`` / ``send-zc``)."""
    said = switched(first, second)
    if said:
        return said
    a, b = first.strip().lower(), second.strip().lower()
    for k, (short, long) in enumerate(((a, b), (b, a))):
        if long == "no" + short or long.startswith(short) and re.fullmatch(r"[-_+]\w+", long[len(short):]):
            off_is_long = long == "no" + short
            first_is_off = (k == 0) != off_is_long
            return ("before", "after") if first_is_off else ("after", "before")
    return None


def switch_names(names: list[str], about: list[str]) -> list[str] | None:
    """The two names with the side each says (``polling=on (patched)``), when they are one option switched
    and the subjects (``about``) name that option; None otherwise."""
    if len(names) != 2:
        return None
    said = _sides(*names)
    subjects = " ".join(line.lower() for line in about)
    longer = max(names, key=len).strip().lower()
    option = re.sub(r"^no[-_]?|[-_=:.]?(?:off|on|0|1|enabled?|disabled?|yes|no)$", "", longer)
    if said is None or len(option) < 3 or option not in subjects:
        return None
    return [f"{n} ({'base' if side == 'before' else 'patched'})" for n, side in zip(names, said)]



def switch_order(names: list[str], about: list[str]) -> tuple[int, int] | None:
    """(before, after) of two rows that are one option switched off and on, where the subjects
    (``about``) bring it (``poll=0`` / ``poll=1`` under "nvme: add poll knob"); None otherwise."""
    said = switch_names([n.strip().rstrip(":") for n in names], about)
    return None if said is None else (0, 1) if said[0].endswith("(base)") else (1, 0)
