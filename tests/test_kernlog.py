"""The kernel log lines a failed mount's error gets (iolab.cell.kernlog): lines
as dmesg showed them on this machine, with another run's mounts between."""

import os

import pytest

from iolab.cell import kernlog

LOG = [
    "loop1: detected capacity change from 0 to 1048576",
    "EXT4-fs (loop0): mounted filesystem ff51ce30 r/w with ordered data mode. Quota mode: none.",
    "xfs: Unknown parameter 'noatimee'",
    "XFS (loop3): Mounting V5 Filesystem 0b6b2d36",
    "operation not supported error, dev loop0, sector 524160 op 0x9:(WRITE_ZEROES)",
    "XFS (loop1): Invalid superblock magic number",
    "xfs: Unknown parameter 'noatimee'",
]


def test_only_the_lines_of_this_device_or_filesystem_each_once():
    assert kernlog.about(LOG, "/dev/loop1", "xfs") == [
        "loop1: detected capacity change from 0 to 1048576",
        "xfs: Unknown parameter 'noatimee'",
        "XFS (loop1): Invalid superblock magic number",
    ]
    assert kernlog.about(LOG, "/dev/loop1", "ext4") == ["loop1: detected capacity change from 0 to 1048576",
                                                         "XFS (loop1): Invalid superblock magic number"]
    assert kernlog.about(LOG, "/dev/loop1", "xfs", most=1) == ["loop1: detected capacity change from 0 to 1048576"]


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to write to the kernel log")
def test_a_watch_reads_what_was_written_after_it_began():
    with open("/dev/kmsg", "w") as kmsg:
        kmsg.write("iolab-test: before the watch\n")
    with kernlog.watching() as kernel:
        with open("/dev/kmsg", "w") as kmsg:
            kmsg.write(f"iolab-test: during the watch {os.getpid()}\n")
        lines = kernel.lines()
    assert f"iolab-test: during the watch {os.getpid()}" in lines
    assert "iolab-test: before the watch" not in lines
