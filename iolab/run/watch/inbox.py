"""A public-inbox git mirror, read with git itself.

A list's public mirror keeps one message per commit, in the file ``m`` of
that commit's tree (a commit that removes a message has a ``d`` instead).
A large list is split over epochs: ``INBOX/git/0.git``, ``1.git``, ... (a
public-inbox v2 inbox); a mirror of one epoch, or a v1 inbox, is a single
repository. The new messages of an epoch are the commits after the last one
read (``git rev-list --reverse LAST..HEAD``); their texts come from one
``git cat-file --batch`` per epoch. Nothing here writes: git is asked only
to read.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from iolab import process

MAX_MESSAGE = 1 << 20  # a larger message is skipped as too large, unparsed (a list's patch mail: some KiB)
_EPOCH = re.compile(r"^(\d+)\.git$")
_SHA = re.compile(r"^[0-9a-f]{40}$")


class InboxError(Exception):
    """Not an inbox, or git could not read it; the message names it."""


@dataclass(frozen=True)
class Message:
    inbox: str
    epoch: str
    commit: str
    data: bytes  # the message as stored (b"" when it is over MAX_MESSAGE: ``size`` says how large)
    size: int


def _is_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() or (path / ".git").exists()


def epochs(inbox: Path) -> dict[str, Path]:
    """The epoch repositories of an inbox, by name (in order: 0, 1, ...; ``.``
    for an inbox that is one repository)."""
    for where in (inbox / "git", inbox):
        found = {m.group(1): p for p in where.iterdir() if (m := _EPOCH.match(p.name)) and _is_repository(p)} \
            if where.is_dir() else {}
        if found:
            return {name: found[name] for name in sorted(found, key=int)}
    if inbox.is_dir() and _is_repository(inbox):
        return {".": inbox}
    raise InboxError(f"{inbox}: not a public-inbox mirror (no git/N.git epochs, no N.git, not a git repository)")


def _git(repo: Path, *args: str) -> str:
    done = process.run(["git", "--git-dir", str(_git_dir(repo)), *args], timeout=600, journalled=False)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise InboxError(f"{repo}: git {args[0]} failed: {first[:200]}")
    return done.stdout


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def head(repo: Path) -> str | None:
    """The newest commit of an epoch (None: no commit yet)."""
    done = process.run(["git", "--git-dir", str(_git_dir(repo)), "rev-parse", "--verify", "-q", "HEAD^{commit}"],
                       timeout=60, journalled=False)
    return done.stdout.strip() if done.returncode == 0 and _SHA.match(done.stdout.strip()) else None


def new_commits(repo: Path, last: str | None, backlog: int) -> list[str]:
    """The commits after ``last``, oldest first; with no ``last`` (or one this
    epoch no longer has: a rewritten mirror) its newest ``backlog`` commits."""
    if head(repo) is None:
        return []
    if last and _SHA.match(last):
        known = process.run(["git", "--git-dir", str(_git_dir(repo)), "merge-base", "--is-ancestor", last, "HEAD"],
                            timeout=60, journalled=False)
        if known.returncode == 0:
            return _git(repo, "rev-list", "--reverse", f"{last}..HEAD").split()
    if backlog <= 0:
        return []
    return _git(repo, "rev-list", "--reverse", f"--max-count={backlog}", "HEAD").split()


def blobs(repo: Path, commits: list[str]) -> Iterator[tuple[str, bytes | None, int]]:
    """(commit, its message ``m``, size) for each commit: None for a commit
    without ``m`` (a removal), b"" for one over MAX_MESSAGE."""
    if not commits:
        return
    argv = ["git", "--git-dir", str(_git_dir(repo)), "cat-file", "--batch"]
    with process.started(argv, journalled=False, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL) as child:
        assert child.stdin is not None and child.stdout is not None
        for commit in commits:
            child.stdin.write(f"{commit}:m\n".encode())
            child.stdin.flush()
            header = child.stdout.readline().decode(errors="replace").split()
            if len(header) != 3 or header[1] != "blob":
                yield commit, None, 0  # "<commit>:m missing"
                continue
            size = int(header[2])
            data = _read(child.stdout, size)
            child.stdout.read(1)  # the newline after the object
            yield commit, (data if size <= MAX_MESSAGE else b""), size
        child.stdin.close()


def _read(stream: object, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, 1 << 20))  # type: ignore[attr-defined]
        if not chunk:
            raise InboxError("git cat-file ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read(inbox: Path, last: dict[str, str], backlog: int,
         again: tuple[tuple[str, str], ...] = ()) -> tuple[list[Message], dict[str, str]]:
    """The messages after the last commits read (``last``: epoch -> commit),
    those of ``again`` (epoch, commit: kept from an earlier pass) first, and the
    new position (epoch -> its newest commit). An inbox read for the first
    time gives the newest ``backlog`` messages of its newest epoch; an epoch
    begun since the last pass, all of its messages."""
    name = str(inbox)
    found: list[Message] = []
    position: dict[str, str] = {}
    repos = epochs(inbox)
    for epoch, commits in _by_epoch(again).items():
        if epoch in repos:
            found += [Message(name, epoch, c, d, s) for c, d, s in blobs(repos[epoch], commits) if d is not None]
    newest_epoch = list(repos)[-1]
    for epoch, repo in repos.items():
        if epoch in last:
            commits = new_commits(repo, last[epoch], backlog)
        elif last:
            commits = new_commits(repo, None, 1 << 30)
        else:
            commits = new_commits(repo, None, backlog if epoch == newest_epoch else 0)
        found += [Message(name, epoch, c, d, s) for c, d, s in blobs(repo, commits) if d is not None]
        newest = head(repo)
        if newest:
            position[epoch] = newest
    return found, position


def _by_epoch(pairs: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for epoch, commit in pairs:
        if _SHA.match(commit):
            grouped.setdefault(epoch, []).append(commit)
    return grouped


def resolved(path: str) -> Path:
    """An inbox as given on the command line, absolute (its key in the store)."""
    return Path(os.path.abspath(os.path.expanduser(path)))
