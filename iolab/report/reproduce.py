"""How a reader of the list runs a report's experiment again: the mail by
its Message-Id (``b4 am``), the command with no path of this machine in it,
and the experiment's content digest to check that theirs is the same.

The digest is the sha256 of the experiment as it ran (its stored JSON,
keys sorted, fields at their defaults left out), each path in it reduced
to the file's name: a path differs
from machine to machine, a patch's content does not, and the [mail]
table carries each patch's own sha256. The JSON report gives it as
``experiment_sha256``, so a rerun is checked by comparing two lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

from iolab.spec import Experiment

KERNEL_PATHS = ("/sys/", "/proc/", "/dev/")  # the same on every machine: a knob's or a device's path
DEFAULT_SOURCE = "debian:linux-source-7.2"  # iolab patch's --source when none is given (iolab.cli.patch)
MBOX = "mail.mbx"  # the file `b4 am -o - ID >` writes, as the reproduce lines name it


def _named(value: Any) -> Any:
    """The value with every path in it reduced to its last part."""
    if isinstance(value, dict):
        return {key: _named(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_named(item) for item in value]
    if not isinstance(value, str) or "\n" in value or "://" in value or value.startswith(KERNEL_PATHS):
        return value
    if value.startswith("/") or "/" in value and not any(c.isspace() for c in value):
        return PurePosixPath(value).name
    return value


def digest(experiment: Experiment) -> str:
    """The experiment's content digest (sha256, hex), the same on every machine that writes it alike."""
    # where its file was is no content; a field a later iolab adds with its default changes nothing
    data = _named(json.loads(experiment.model_dump_json(exclude={"base_dir"}, exclude_defaults=True)))
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


VALUED = ("--source", "--commit", "--write", "--timing", "--allow", "--store", "--seed", "--iterations")


TREE = Path(__file__).resolve().parents[2]  # iolab's own tree: its scenarios/ are every reader's too


def name(value: str) -> str:
    """A path as its file's name (a URL stays whole: the reader can fetch it; a file of iolab's
    own tree, its path there)."""
    if "://" in value or not ("/" in value or value.startswith("~")):
        return value
    path = Path(value).resolve()
    if path.is_relative_to(TREE) and ".." not in value and path.exists():
        return str(path.relative_to(TREE))
    return PurePosixPath(value).name


def public(command: str, mailbox: bool = True) -> str:
    """The command with no path of this machine: `iolab patch`'s mails become the one mailbox
    ``b4 am`` writes (MBOX; ``mailbox``: the mail has a Message-Id to fetch it by, else each
    file's name), any other path the file's name, and --write (a file here) is left out."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    patch = words[:2] == ["iolab", "patch"] and mailbox
    out: list[str] = []
    pending = ""  # an option whose value is the next word
    for word in words:
        if pending:
            if pending != "--write":
                out += [pending, name(word)]
            pending = ""
        elif word.startswith("--"):
            option, equals, value = word.partition("=")
            if equals and option != "--write":
                out.append(f"{option}={name(value)}")
            elif not equals and option in VALUED:
                pending = option
            elif not equals:
                out.append(word)
        elif patch and len(out) >= 2:
            if MBOX not in out:
                out.append(MBOX)
        else:
            out.append(name(word))
    return shlex.join(out)
