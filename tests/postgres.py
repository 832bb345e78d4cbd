"""A real PostgreSQL server for the tests, started by the suite itself.

`postgres_server` (session): initdb into a fresh directory under /tmp and
start postgres on a unix socket only (no TCP), as an unprivileged user when
the tests run as root (postgres refuses to run as root); stopped and removed
at the end. `postgres_url` (per test): a fresh, empty database on it.

Skips with the reason where PostgreSQL (the Debian package ``postgresql``,
installed by scripts/setup) or psycopg is missing.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

_counter = itertools.count(1)


def _bindir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _as_user() -> list[str]:
    """The command prefix that drops root (postgres will not run as root)."""
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    pytest.skip("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")


class Server:
    """A PostgreSQL server of the tests' own, in a fresh directory under /tmp:
    started, stopped or restarted (a test of agents that reconnect) on demand."""

    def __init__(self) -> None:
        pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -c constraints.txt psycopg)")
        self.bindir = _bindir()
        if self.bindir is None:
            pytest.skip("PostgreSQL is not installed (Debian package postgresql; scripts/setup installs it)")
        self.prefix = _as_user()
        self.root = tempfile.mkdtemp(prefix="iolab-pg-", dir="/tmp")
        os.chmod(self.root, 0o755)
        if self.prefix:
            shutil.chown(self.root, self.prefix[2])
        self.data, self.socket = os.path.join(self.root, "data"), self.root
        subprocess.run([*self.prefix, f"{self.bindir}/initdb", "-D", self.data, "-U", "iolab", "--auth=trust",
                        "-E", "UTF8", "--no-sync"], check=True, capture_output=True)

    def _ctl(self, *args: str) -> subprocess.CompletedProcess:
        options = f"-k {self.socket} -c listen_addresses='' -c fsync=off -p 5432"
        return subprocess.run([*self.prefix, f"{self.bindir}/pg_ctl", "-D", self.data, "-w", "-t", "60", "-l",
                               os.path.join(self.root, "log"), "-o", options, *args], capture_output=True, text=True)

    def start(self, action: str = "start") -> None:
        started = self._ctl(action)
        if started.returncode != 0:
            log = Path(self.root, "log").read_text() if Path(self.root, "log").exists() else ""
            pytest.fail(f"postgres did not {action}: {started.stderr}{log[-2000:]}")

    def restart(self) -> None:
        self.start("restart")

    def remove(self) -> None:
        subprocess.run([*self.prefix, f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                       capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def address(self) -> tuple[str, str]:
        return self.socket, "iolab"


@pytest.fixture(scope="session")
def postgres_server():
    """(socket directory, superuser) of a PostgreSQL server started for this session."""
    server = Server()
    try:
        server.start()
        yield server.address
    finally:
        server.remove()


def url(server: tuple[str, str], database: str) -> str:
    socket, user = server
    return f"postgresql://{user}@/{database}?host={socket}&port=5432"


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh database on the session's server, as a postgresql:// URL."""
    import psycopg

    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(url(postgres_server, "postgres"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield url(postgres_server, name)
    with psycopg.connect(url(postgres_server, "postgres"), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
