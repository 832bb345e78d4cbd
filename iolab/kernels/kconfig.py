"""The configuration of a kernel built from source (iolab.kernels.build).

A build starts from ``make tinyconfig``; iolab's base fragment (base.config,
beside this file: what the guest needs to boot, reach the host over 9p and
run cells on ext4, xfs, f2fs and erofs) and then the experiment's own
fragment are merged into it the way the kernel's
scripts/kconfig/merge_config.sh merges fragments (a later line for an option
replaces an earlier one, and the replacement is reported), ``make
olddefconfig`` settles the dependencies, and every requested option is
checked in the final .config: one that did not survive (a dependency off, a
typo, an option that does not exist in this tree) is named, as
merge_config.sh warns, but here it is an error.

A fragment is .config text: ``CONFIG_X=y``, ``CONFIG_X=m``, ``CONFIG_X=123``,
``CONFIG_X="text"``, ``# CONFIG_X is not set`` (or ``CONFIG_X=n``); other
comments and blank lines are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from iolab.kernels.kernel_ref import KernelError

BASE = Path(__file__).with_name("base.config")

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^#\s*(CONFIG_[A-Za-z0-9_]+) is not set\s*$")


# Options a newer kernel renamed, old name -> new name. A tree that does not
# know the old name at all (no line for it in the final .config, not even "is
# not set") satisfies a request for it when the new name has the value asked:
# base.config keeps the old name, so the older trees' cache keys stay as they are.
RENAMED = {
    "CONFIG_PROC_SYSCTL": "CONFIG_SYSCTL",  # 7.3 folded PROC_SYSCTL into SYSCTL
}


class ConfigError(KernelError):
    """A fragment that cannot be read, or options that olddefconfig dropped."""


@dataclass(frozen=True)
class Option:
    """One requested option; value None means 'is not set'."""

    name: str
    value: str | None
    origin: str  # where it was asked for: "base.config:12", "experiment:3"

    def line(self) -> str:
        return f"# {self.name} is not set" if self.value is None else f"{self.name}={self.value}"


def parse_fragment(text: str, origin: str) -> list[Option]:
    """The options of a fragment, in order; a line that is not .config text
    is a ConfigError naming origin:line."""
    options = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        unset = _UNSET.match(line)
        if unset:
            options.append(Option(unset.group(1), None, f"{origin}:{number}"))
            continue
        if not line or line.startswith("#"):
            continue
        match = _SET.match(line)
        if match is None:
            shown = line if len(line) <= 60 else line[:57] + "..."
            raise ConfigError(f"{origin}:{number}: not a .config line: {shown!r} "
                              "(expected CONFIG_NAME=value or '# CONFIG_NAME is not set')")
        value = match.group(2)
        options.append(Option(match.group(1), None if value == "n" else value, f"{origin}:{number}"))
    return options


def merge(*fragments: list[Option]) -> tuple[dict[str, Option], list[str]]:
    """The fragments merged in order (later lines win), and one note per
    option whose value a later line changed (merge_config.sh's "Value of
    CONFIG_X is redefined by fragment")."""
    merged: dict[str, Option] = {}
    notes = []
    for fragment in fragments:
        for option in fragment:
            previous = merged.get(option.name)
            if previous is not None and previous.value != option.value:
                notes.append(f"{option.name}: {previous.line()} ({previous.origin}) "
                             f"redefined as {option.line()} ({option.origin})")
            merged[option.name] = option
    return merged, notes


def canonical(merged: dict[str, Option]) -> str:
    """The merged request as text, one line per option, sorted: what a
    build's cache key covers (comments and order do not change a build)."""
    return "".join(merged[name].line() + "\n" for name in sorted(merged))


def read_config(text: str) -> dict[str, str | None]:
    """A .config's options: name -> value (None: 'is not set')."""
    found: dict[str, str | None] = {}
    for line in text.splitlines():
        unset = _UNSET.match(line)
        if unset:
            found[unset.group(1)] = None
            continue
        match = _SET.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def apply(config_text: str, merged: dict[str, Option]) -> str:
    """A .config with the merged options written over it (their old lines
    removed, the requested lines appended), as merge_config.sh writes it."""
    kept = []
    for line in config_text.splitlines():
        match = _SET.match(line) or _UNSET.match(line)
        if match and match.group(1) in merged:
            continue
        kept.append(line)
    return "\n".join([*kept, *(merged[name].line() for name in merged)]) + "\n"


def dropped(merged: dict[str, Option], final: dict[str, str | None]) -> list[tuple[Option, str | None]]:
    """Requested options that the final .config does not have as asked:
    (the request, what the .config has; None when it is not set)."""
    out: list[tuple[Option, str | None]] = []
    for option in merged.values():
        renamed = RENAMED.get(option.name)
        if renamed is not None and option.name not in final and final.get(renamed) == option.value:
            continue
        actual = final.get(option.name)
        if option.value is None:
            if actual is not None:
                out.append((option, actual))
        elif actual != option.value:
            out.append((option, actual))
    return out


def check(merged: dict[str, Option], final_text: str, config_path: Path) -> None:
    """ConfigError naming every requested option that olddefconfig dropped
    or changed; nothing when all survived."""
    lost = dropped(merged, read_config(final_text))
    if not lost:
        return
    lines = []
    for option, actual in lost:
        got = "not set" if actual is None else f"={actual}"
        lines.append(f"  {option.line()} ({option.origin}): the .config has {option.name} {got}")
    raise ConfigError(
        f"{len(lost)} requested kernel option{'s' if len(lost) > 1 else ''} did not survive olddefconfig "
        "(a dependency is off, or the option does not exist in this tree; its 'depends on' and "
        "enclosing 'if' in the Kconfig files say what else to set):\n" + "\n".join(lines)
        + f"\n  final configuration: {config_path}")
