"""fio's forms in a patch mail's text: command lines, job files quoted, option lines.

Pure readers of the text: each gives job sections (name, options) as the
mail wrote them; iolab.mail.benchmark scales and judges them. command_lines
finds the command lines of any program (fio, t/io_uring, dd), joined where
the mail broke them.
"""

from __future__ import annotations

import re
import shlex

from iolab.engines import fio_options

# fio options that are the command line's, not a job's: the run's own output, a server, the terminal
_FIO_CLI_ONLY = {"output", "output-format", "eta", "eta-newline", "eta-interval", "minimal", "terse-version",
                 "append-terse", "status-interval", "parse-only", "section", "alloc-size", "warnings-fatal",
                 "max-jobs", "server", "daemonize", "client", "remote-config", "idle-prof", "inflate-log",
                 "trigger-file", "trigger-timeout", "trigger", "trigger-remote", "aux-path", "readonly",
                 "debug", "bandwidth-log", "showcmd", "crctest", "cpuclock-test", "version", "help", "cmdhelp",
                 "enghelp", "latency-log", "merge-blktrace-only", "json", "timeout"}

def slug(text: str, limit: int = 40) -> str:
    """A name fio and a table take: letters, digits, '-', '_' and '.'."""
    words = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")
    return words[:limit].rstrip("-") or "mail"


def command_lines(text: str, program: str, shape: str = r"\s--?[A-Za-z]") -> list[str]:
    """Each command line that runs `program` (after sudo or a taskset), joined across ``\\`` breaks
    and lines that carry on with an option (``--bs=4k``, ``-r4``; a list item's ``- `` is none)."""
    lines = text.splitlines()
    found = []
    start = re.compile(rf"^\s*(?:[$#>]\s*)?(?:sudo\s+)?(?:taskset\s+(?:-c\s+)?\S+\s+)?(?:\S*/)?{re.escape(program)}(\s|$)")
    i = 0
    while i < len(lines):
        if not start.match(lines[i]):
            i += 1
            continue
        command = lines[i].strip()
        while i + 1 < len(lines) and (command.endswith("\\") or re.match(r"-{1,2}[A-Za-z]", lines[i + 1].lstrip())):
            command = command.rstrip("\\").rstrip() + " " + lines[i + 1].strip()
            i += 1
        if re.search(shape, command):  # its arguments make it a command, not a sentence that names it
            found.append(re.sub(r"^(?:[$#>]\s*)?(?:sudo\s+)?(?:taskset\s+(?:-c\s+)?\S+\s+)?", "", command))
        i += 1
    if not found and program in text:  # a copy whose line breaks were lost: up to the end of the sentence
        for match in re.finditer(rf"(?:^|\s)((?:\S*/)?{re.escape(program)}(?:\s+--?[\w=./:,$-]+|\s+\$\{{?\w+\}}?|\s+/dev/\S+)+)",
                                 text):
            found.append(match.group(1))
    return found


def fio_command(command: str, name: str) -> tuple[list[tuple[str, dict[str, str]]], list[str]]:
    """A fio command line as job sections; and what it names that is not a job option."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        return [], [f"{command[:60]}: not a command line ({error})"]
    sections: list[tuple[str, dict[str, str]]] = [("global", {})]
    ignored = []
    for word in words[1:]:
        # fio reads its long options with one dash too (getopt_long_only): -bs=4k, -group_reporting
        option = re.fullmatch(r"--?([A-Za-z][\w-]+)(=.*)?", word, re.S)
        if option is None:
            ignored.append(f"{word}: a job file the mail does not quote")
            continue
        key, has, value = option.group(1), option.group(2) is not None, (option.group(2) or "=")[1:]
        if key in _FIO_CLI_ONLY:
            continue
        if key == "name":
            sections.append((slug(value or name, 60), {}))
            continue
        sections[-1][1][key] = value if has else ""
    if len(sections) == 1:  # no --name: one job, named after the mail
        return [(slug(name, 60), sections[0][1])], ignored
    if not sections[0][1]:
        sections = sections[1:]
    return sections, ignored


def quoted_jobs(text: str) -> list[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """fio job files in the body: a [section] line and option lines under it, sections together."""
    out = []
    current: list[tuple[str, dict[str, str]]] = []
    source = ""
    for line in text.splitlines() + ["."]:  # a last line that ends any job
        stripped = line.strip()
        section = re.fullmatch(r"\[([A-Za-z0-9_.-]{1,64})\]", stripped)
        option = re.fullmatch(r"([a-z_][a-z0-9_]*)\s*(?:=\s*(.*))?", stripped)
        if section:
            current.append((section.group(1), {}))
            source = source or stripped
        elif current and option and (option.group(2) is not None or
                                     fio_options.ALIASES.get(option.group(1), option.group(1)) in fio_options.KNOWN):
            current[-1][1][option.group(1)] = (option.group(2) or "").strip()
        elif current and (not stripped or stripped.startswith((";", "#"))):
            continue
        else:
            if current and any(opts for _, opts in current):
                out.append((source, current))
            current, source = [], ""
    return out


def option_lines(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """Lines that list fio options inline (``A: rw=write bs=128k iodepth=1 ioengine=pvsync2``):
    (label, line, options); options the lines above name for all (``Workloads (all `uncached=1`)``) added."""
    out: list[tuple[str, str, dict[str, str]]] = []
    common: dict[str, str] = {}
    for line in text.splitlines():
        pairs = re.findall(r"(?<![\w.])([a-z_]+)=([\w.:/%-]+)", line.split("#")[0])
        known = {k: v for k, v in pairs if fio_options.ALIASES.get(k, k) in fio_options.KNOWN}
        if len(known) == 1 and re.search(r"\ball\b", line, re.I) and not out:
            common = known
        elif len(known) >= 2:
            label = re.match(r"\s*([\w-]{1,16})\s*[:)]\s", line)
            out.append((label.group(1) if label else "", line.strip(), {**common, **known}))
    return out
