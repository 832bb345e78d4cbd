"""One build per fleet: kernels built from source, shared through the store's
PostgreSQL (iolab.kernels.build.Fleet).

A job carries the build key of each variant's kernel (iolab.run.submit). An
agent that does not have a key in its own cache claims it: a PostgreSQL
advisory lock on the key, held on a connection of its own while it fetches or
builds. The first agent gets the lock at once and, finding no published
kernel, builds it and publishes it; the others wait on the lock, then find
the kernel published and fetch it: the kernel's directory (its boot image,
initramfs, modules where it has them, config, build log and manifest) as one
tar archive in table ``fleet_kernels``, keyed by the build key. An agent that
dies while building drops its connection, and so its lock: the next waiter
builds. An agent whose toolchain or sources give another key asks for that
key, which no one else has: it builds its own, as before.

No server of iolab's own: the table sits in the store's database beside the
runs and procrastinate's queue.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOCK_CLASS = 0x101AB7  # the first key of the two-key advisory locks of kernel builds
SCHEMA = """
CREATE TABLE IF NOT EXISTS fleet_kernels (
    key TEXT PRIMARY KEY,
    archive BYTEA NOT NULL,
    archive_sha256 TEXT NOT NULL,
    built_by TEXT NOT NULL,
    published_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""


def _lock_id(key: str) -> int:
    """The advisory lock's second key: a 32-bit number from the build key."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big", signed=True)


def _archive(directory: Path) -> bytes:
    """The kernel's directory as a tar archive (its files at the top)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(directory.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(directory)), recursive=False)
    return buffer.getvalue()


def _unpack(data: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(into, filter="data")  # no paths outside `into`, no devices


class PostgresFleet:
    """The fleet's kernels in the store's PostgreSQL (``url``); ``name`` is
    this agent (recorded with what it publishes); ``log`` says when it waits."""

    def __init__(self, url: str, name: str, log: Callable[[str], None] = lambda _: None):
        self.url, self.name, self.log = url, name, log
        with self._connect() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_CLASS,))
            db.execute(SCHEMA)

    def _connect(self) -> Any:
        import psycopg

        return psycopg.connect(self.url, autocommit=False, connect_timeout=30)

    @contextmanager
    def claimed(self, key: str) -> Iterator[None]:
        import psycopg

        db = psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        try:
            got = db.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, _lock_id(key))).fetchone()
            if not (got and got[0]):
                self.log(f"kernel build-{key}: another agent is building it; waiting for it")
                db.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS, _lock_id(key)))
            yield
        finally:
            db.close()  # the session's lock goes with it

    def fetch(self, key: str, into: Path) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT archive, archive_sha256, built_by FROM fleet_kernels WHERE key = %s",
                             (key,)).fetchone()
        if row is None:
            return False
        data = bytes(row[0])
        if hashlib.sha256(data).hexdigest() != row[1]:
            from iolab.kernels import KernelError

            raise KernelError(f"the fleet's kernel build-{key} (built by {row[2]}) is damaged: its archive's "
                              "sha256 does not match")
        _unpack(data, into)
        manifest = into / "manifest.json"
        if manifest.exists():
            import json

            text = json.loads(manifest.read_text())
            text["built_by"] = row[2]
            manifest.write_text(json.dumps(text, indent=1, sort_keys=True) + "\n")
        return True

    def publish(self, key: str, directory: Path) -> None:
        data = _archive(directory)
        with self._connect() as db:
            db.execute("INSERT INTO fleet_kernels (key, archive, archive_sha256, built_by) VALUES (%s, %s, %s, %s)"
                       " ON CONFLICT (key) DO NOTHING", (key, data, hashlib.sha256(data).hexdigest(), self.name))
        self.log(f"kernel build-{key}: offered to the fleet ({len(data) >> 20} MiB)")


def published(url: str) -> dict[str, str]:
    """The fleet's kernels: build key -> the agent that built it."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=30) as db:
        table = db.execute("SELECT to_regclass('fleet_kernels')").fetchone()
        if table is None or table[0] is None:
            return {}
        return dict(db.execute("SELECT key, built_by FROM fleet_kernels").fetchall())
