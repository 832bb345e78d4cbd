"""The function a hunk changes, from the source where its ``@@`` line does not name it.

``git diff`` names the function before each hunk (git's cpp rule, which skips
goto labels); plain ``diff -u`` names nothing (``@@ -1053,6 +1053,13 @@``), and
``diff -up`` names the last line that starts with a letter, often a label
(``write_retry:``). The source has the answer: universal ctags lists each
function of a file with its first and last line (``--fields=+ne``), and the
function whose lines hold the hunk's first changed line is the one it changes.
The hunks come from the diff model (iolab.kernels.diff).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from iolab import process
from iolab.kernels import diff


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


def hunk_functions(patch: diff.Diff, root: Path) -> dict[str, tuple[str, ...]]:
    """Per file a patch changes (-p1 path): the function of each hunk, from its
    ``@@`` line where that names one, else from the source under `root` at the
    hunk's first changed line ('' where neither gives one)."""
    found: dict[str, tuple[str, ...]] = {}
    for changed in patch.files:
        name = changed.old or changed.new
        if name is None:
            continue
        source = root / name
        table: list[tuple[str, int, int]] | None = None
        names = []
        for hunk in changed.hunks:
            function, called = diff.named(hunk.section)
            if not called:
                function = ""
                if source.suffix in (".c", ".h") and source.is_file() and hunk.old_start > 0:
                    table = spans(source) if table is None else table
                    function = enclosing(table, hunk.first_changed())
            names.append(function)
        found[name] = found.get(name, ()) + tuple(names)
    return found
