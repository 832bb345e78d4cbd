import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def attached_loops() -> set[str]:
    out = subprocess.run(["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"],
                         capture_output=True, text=True, check=False).stdout
    return {line.strip() for line in out.splitlines() if "iolab-" in line}


def iolab_mounts() -> list[str]:
    return [line for line in Path("/proc/self/mounts").read_text().splitlines() if "iolab-" in line]


@pytest.fixture
def needs_root_tools():
    """Skip (with the reason) where this machine cannot run real loop/fio tests."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices, mkfs and mount")
    for tool in ("fio", "losetup", "mkfs.ext4"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


@pytest.fixture
def clean_system():
    """Assert a test leaves no iolab loop device, mount or image behind."""
    loops_before, mounts_before = attached_loops(), iolab_mounts()
    yield
    assert attached_loops() == loops_before, "loop device left attached"
    assert iolab_mounts() == mounts_before, "mount left behind"
