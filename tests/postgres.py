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


@pytest.fixture(scope="session")
def postgres_server():
    """(socket directory, superuser) of a PostgreSQL server started for this session."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -c constraints.txt psycopg)")
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian package postgresql; scripts/setup installs it)")
    prefix = _as_user()
    root = tempfile.mkdtemp(prefix="iolab-pg-", dir="/tmp")
    os.chmod(root, 0o755)
    if prefix:
        user = prefix[2]
        shutil.chown(root, user)
    data, socket = os.path.join(root, "data"), root
    subprocess.run([*prefix, f"{bindir}/initdb", "-D", data, "-U", "iolab", "--auth=trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True)
    options = f"-k {socket} -c listen_addresses='' -c fsync=off -p 5432"
    started = subprocess.run([*prefix, f"{bindir}/pg_ctl", "-D", data, "-w", "-t", "60", "-l",
                              os.path.join(root, "log"), "-o", options, "start"], capture_output=True, text=True)
    if started.returncode != 0:
        log = open(os.path.join(root, "log")).read() if os.path.exists(os.path.join(root, "log")) else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"postgres did not start: {started.stderr}{log[-2000:]}")
    try:
        yield socket, "iolab"
    finally:
        subprocess.run([*prefix, f"{bindir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"],
                       capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


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
