"""Loop devices and mounts by their system calls (iolab.cell.blockcalls), on real loop devices (needs root)."""

import os
import subprocess
from pathlib import Path

import pytest

from iolab.cell import blockcalls, targets
from iolab.cell.cellspec import Record

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.usefixtures("needs_root_tools", "clean_system")]


def image(tmp_path: Path, size: int = 64 << 20) -> Path:
    path = tmp_path / "disk.img"
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def sysfs(device: str, *parts: str) -> str:
    return Path("/sys/block", os.path.basename(device), *parts).read_text().strip()


def test_attach_as_losetup_would_then_detach(tmp_path):
    backing = image(tmp_path)
    device = blockcalls.attach_loop(str(backing), read_only=True, block_size=4096)
    try:
        assert sysfs(device, "loop", "backing_file") == str(backing)
        assert sysfs(device, "ro") == "1"
        assert sysfs(device, "queue", "logical_block_size") == "4096"
        assert sysfs(device, "loop", "dio") == "0"
    finally:
        blockcalls.detach_loop(device)
    assert not Path("/sys/block", os.path.basename(device), "loop").exists()


def test_a_cells_target_starts_no_losetup_mount_or_umount(tmp_path, monkeypatch):
    started: list[str] = []
    real = targets.run_tool

    def recording(argv, **kwargs):
        started.append(argv[0])
        return real(argv, **kwargs)

    monkeypatch.setattr(targets, "run_tool", recording)
    target = Record({"kind": "loop", "fs": "ext4", "size": 64 << 20, "image_dir": str(tmp_path), "mkfs_options": [],
                     "mount_options": "", "loop": {"direct_io": False, "sector_size": None, "image_cache": "keep"},
                     "files": [], "path": None, "device": None})
    with targets.prepared(target, tmp_path, tmp_path) as prepared:
        assert prepared.mountpoint is not None and os.path.ismount(prepared.mountpoint)
        found = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", prepared.mountpoint], capture_output=True,
                               text=True, check=True).stdout.split()
        assert found == [prepared.device, "ext4"]
    assert started == ["mkfs.ext4"]


def test_a_failed_mount_says_why(tmp_path):
    backing = image(tmp_path)
    device = blockcalls.attach_loop(str(backing))
    try:
        (tmp_path / "mnt").mkdir()
        with pytest.raises(OSError, match=r"mount\(2\) of /dev/loop\d+ at .*mnt \(ext4\): Invalid argument"):
            blockcalls.mount(device, str(tmp_path / "mnt"), "ext4")  # no filesystem on it
    finally:
        blockcalls.detach_loop(device)


def test_a_loop_over_a_missing_image_names_it(tmp_path):
    from iolab.sysutil import ToolError

    with pytest.raises(ToolError, match=r"loop device over .*/gone\.img: No such file or directory"):
        with targets.loop_device(tmp_path / "gone.img"):
            pass
