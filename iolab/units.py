"""Units as people write and read them: sizes ("4GiB", "512M", "64k"),
durations ("90s", "20m", "1h30m") and relative changes ("+38.7%")."""

import math
import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_DURATION = re.compile(r"\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*")


def parse_size(text: str | int) -> int:
    """Bytes in a size such as 4GiB, 512M, 64k or 4096.

    Like fio and the kernel's command line, a bare suffix (k, M, G) is
    binary: 1k = 1024. "kB"/"MB" without the "i" are binary too, as in
    fio's default (kb_base=1024); iolab has no decimal sizes.
    """
    if isinstance(text, int):
        if text < 0 or text >= 2**63:
            raise ValueError(f"size must be between 0 and 2**63 bytes: {str(text)[:40]}")
        return text
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 4096, 64k, 512MiB, 4GiB)")
    number, prefix, _ = match.groups()
    value = float(number) * 1024 ** _POWERS[prefix.lower()]
    if not value < 2**63:  # also inf, from a number of a thousand digits
        raise ValueError(f"size too large: {str(text)[:40]!r}")
    if value != int(value):
        raise ValueError(f"size is not a whole number of bytes: {text!r}")
    return int(value)


def format_size(nbytes: int) -> str:
    """The shortest exact binary form: 4GiB, 512MiB, 1536KiB, 100B."""
    for suffix, power in (("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)):
        unit = 1024**power
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit}{suffix}"
    return f"{nbytes}B"


def parse_duration(text: str) -> float:
    """Seconds in a duration such as "90s", "20m" or "1h30m"; ValueError otherwise."""
    match = _DURATION.fullmatch(text)
    if not text.strip() or not match or not any(match.groups()):
        raise ValueError(f"not a duration: {text!r} (examples: \"90s\", \"20m\", \"1h30m\")")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def format_duration(seconds: float) -> str:
    """1h30m, 20m, 1m30s, 1h0m32s, 0s: whole seconds (the minutes shown
    between hours and seconds, so that 1h0m32s never reads as 1h32m)."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes or (hours and secs) else "",
             f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"


def percent(value: float, signed: bool = True) -> str:
    """A ratio as a percentage with one decimal (``+38.7%``; ``-`` when not finite)."""
    if not math.isfinite(value):
        return "-"
    return f"{value * 100:+.1f}%" if signed else f"{value * 100:.1f}%"


def fine_percent(value: float, signed: bool = True) -> str:
    """Like :func:`percent`, with two significant digits below 0.1% (``+0.043%``),
    where one decimal would print a change as ``+0.0%``: an exact delta or resolution."""
    if not math.isfinite(value) or value == 0 or abs(value) >= 0.001:
        return percent(value, signed)
    digits = f"{abs(value) * 100:.2g}"
    return f"{'+' if value > 0 else '-'}{digits}%" if signed else f"{digits}%"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 patch``, ``3 patches``, ``1 vCPU``: a count with its noun in the number it takes."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
