"""The function a hunk changes, from the source where its ``@@`` line does not name it.

``git diff`` names the function before each hunk (git's cpp rule, which skips
goto labels); plain ``diff -u`` names nothing (``@@ -1053,6 +1053,13 @@``), and
``diff -up`` names the last line that starts with a letter, often a label
(``write_retry:``). The source has the answer: universal ctags lists each
function of a file with its first and last line (``--fields=+ne``), and the
function whose lines hold the hunk's first changed line is the one it changes.
unidiff reads the hunks (their old-side lines).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from unidiff.patch import Hunk, PatchSet
from unidiff.errors import UnidiffParseError

from iolab import process

# a header that names a function: an identifier followed by "(" (a label, a
# struct or a variable does not)
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def named(header: str) -> str:
    """The function an ``@@`` line's text names (``int f(struct x *y,`` -> ``f``), or ''."""
    found = _CALLED.findall(header)
    return found[0] if found else ""


def spans(source: Path) -> list[tuple[str, int, int]]:
    """Each function of a C file: (name, first line, last line), from universal
    ctags; [] when ctags is missing, fails or finds none."""
    argv = ["ctags", "--languages=C", "--language-force=C", "--kinds-C=f", "--fields=+ne", "--sort=no",
            "--output-format=json", "-o", "-", str(source)]
    try:
        done = process.run(argv, timeout=60, journalled=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    found = []
    for line in done.stdout.splitlines():
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if tag.get("kind") == "function" and isinstance(tag.get("line"), int) and isinstance(tag.get("end"), int):
            found.append((str(tag["name"]), tag["line"], tag["end"]))
    return found


def enclosing(functions: list[tuple[str, int, int]], line: int) -> str:
    """The innermost function whose lines hold `line` ('' when none does)."""
    holding = [(end - start, name) for name, start, end in functions if start <= line <= end]
    return min(holding)[1] if holding else ""


def hunk_functions(text: str, root: Path) -> dict[str, tuple[str, ...]]:
    """Per file a patch changes (-p1 path): the function of each hunk, from its
    ``@@`` line where that names one, else from the source under `root` at the
    hunk's first changed line ('' where neither gives one). {} when unidiff
    cannot read the patch (the caller keeps the ``@@`` lines' names)."""
    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for changed in patch:
        name = _strip(changed.source_file) or _strip(changed.target_file)
        if name is None:
            continue
        source = root / name
        table: list[tuple[str, int, int]] | None = None
        names = []
        for hunk in changed:
            function = named(hunk.section_header)
            if not function and source.suffix in (".c", ".h") and source.is_file() and hunk.source_start > 0:
                table = spans(source) if table is None else table
                function = enclosing(table, _first_changed(hunk))
            names.append(function)
        found[name] = found.get(name, ()) + tuple(names)
    return found


def _first_changed(hunk: Hunk) -> int:
    """The old-side line of a hunk's first change: the removed line, or for an
    added line the context line it follows (the hunk's start when none)."""
    before = int(hunk.source_start)
    for line in hunk:
        if line.is_removed and line.source_line_no is not None:
            return int(line.source_line_no)
        if line.is_added:
            return before
        if line.source_line_no is not None:
            before = int(line.source_line_no)
    return before


def _strip(path: str) -> str | None:
    """``a/fs/ext4/inode.c`` -> ``fs/ext4/inode.c``; /dev/null -> None."""
    if path in ("/dev/null", ""):
        return None
    return path.split("/", 1)[1] if "/" in path else path
