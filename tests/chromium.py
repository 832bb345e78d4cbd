"""A real headless Chromium for the HTML report tests.

`load(path)` opens a file in a fresh profile and returns the DOM after the
page ran (``--dump-dom``) and the URLs the page itself asked the network for,
read from Chromium's NetLog: requests whose network isolation key is the
file:// page. The browser's own background requests (component updates,
accounts) have no such key; they are also sent nowhere (every host name
resolves to nothing).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND"]


@dataclass(frozen=True)
class Loaded:
    dom: str
    page_requests: list[str]  # URLs the page requested (not file:)


def binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        pytest.skip("Chromium is not installed (Debian package chromium; scripts/setup installs it)")
    return found


def _page_requests(netlog: Path) -> list[str]:
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "file://" in params.get("network_isolation_key", ""):
            if not params.get("url", "").startswith("file:"):
                urls.append(params["url"])
    return urls


def load(page: Path, timeout: float = 120, width: int = 0) -> Loaded:
    """``width``: the window's width in CSS pixels (Chromium's default when 0)."""
    size = [f"--window-size={width},2000"] if width else []
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        netlog = Path(profile, "netlog.json")
        done = subprocess.run([binary(), *FLAGS, *size, f"--user-data-dir={profile}/p", f"--log-net-log={netlog}",
                               "--dump-dom", page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return Loaded(done.stdout, _page_requests(netlog))
