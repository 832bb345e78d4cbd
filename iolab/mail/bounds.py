"""What a list's mail never is, checked before Python's email or b4 reads it: both are slow, some
of their parsing worse than linear, over input no list would carry (found by tests/test_fuzz_mails.py).

- headers over MAX_HEADERS bytes: Python's email parses a 1 MiB header in minutes;
- a line of its text (each part decoded) over MAX_LINE bytes: b4's trailer search
  (``\\S+@\\S+\\.\\S+`` on a ``Name: value`` line) is quadratic in it, 0.05 s at 4 KiB and 10 s at
  64 KiB; the longest line of the corpus's 960 list mails is 487 bytes.
"""

from __future__ import annotations

import re
from email.message import EmailMessage

MAX_HEADERS = 64 << 10
MAX_LINE = 4 << 10


def headers_size(mail: bytes) -> int:
    """The bytes of a mail's headers (up to its first blank line)."""
    return len(re.split(rb"\r?\n\r?\n", mail.lstrip(), maxsplit=1)[0])


def longest_line(message: EmailMessage) -> int:
    """The longest line of a message's parts, each decoded (a part email cannot decode counts for none:
    the readers refuse it later)."""
    longest = 0
    for part in message.walk():
        if part.is_multipart():
            continue
        try:
            payload = part.get_payload(decode=True)
        except (AssertionError, LookupError, TypeError, ValueError):
            continue
        if isinstance(payload, bytes):
            longest = max(longest, *map(len, payload.split(b"\n")))
    return longest
