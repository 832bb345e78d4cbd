import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.helpers import attached_loops, iolab_mounts

@pytest.fixture
def loopdev(tmp_path):
    """A 64 MiB loop device, attached for the test only; its name (loopN)."""
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True)
    name = os.path.basename(dev.stdout.strip())
    yield name
    subprocess.run(["losetup", "-d", f"/dev/{name}"], check=False)


@pytest.fixture
def needs_root_tools():
    """Skip (with the reason) where this machine cannot run real loop/fio tests."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices, mkfs and mount")
    for tool in ("fio", "losetup", "mkfs.ext4"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


@pytest.fixture
def clean_system(tmp_path, monkeypatch):
    """Give the test its own temp dir, and assert it leaves no loop device,
    mount or image there (other iolab runs on the machine are not ours)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    yield
    assert attached_loops(str(tmp_path)) == set(), "loop device left attached"
    assert iolab_mounts(str(tmp_path)) == [], "mount left behind"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith("iolab-")]
    assert leftovers == [], f"temporary files left behind: {leftovers}"


@pytest.fixture(autouse=True)
def own_state_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own $XDG_STATE_HOME: its own run journal and machine
    lock, so tests (and other iolab runs on the machine) never reclaim or
    wait for each other's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


# Held by every test marked machine_wide, across pytest-xdist's workers and
# the suites of other checkouts on this machine (each has its own iolab state
# dir, so its own iolab machine lock): such tests change what every process
# sees, and would read each other's values as the originals.
MACHINE_WIDE_LOCK = Path("/tmp/iolab-tests-machine-wide.lock")


@pytest.fixture(autouse=True)
def machine_wide_alone(request):
    """A test marked machine_wide runs alone among such tests on this machine
    (autouse: taken before the test's other fixtures change anything)."""
    if request.node.get_closest_marker("machine_wide") is None:
        yield
        return
    with open(MACHINE_WIDE_LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes, or the worker dies
        yield
