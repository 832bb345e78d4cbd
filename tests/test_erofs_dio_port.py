"""Seed 002's port (scenarios/patches/erofs-compressed-dio-7.2.patch) in a
real VM: lz4-compressed erofs files read with O_DIRECT through the ported
code give the same bytes as the files written into the image and as a
buffered read, at several request sizes and from an offset inside a
pcluster, without filling the page cache; 7.2 as released refuses the same
open (EINVAL).

The kernels are the scenario's own, from the cache: build them first with
`iolab kernel build scenarios/erofs-compressed-dio-7.2.toml` (the test skips
otherwise: it never builds a kernel). About 1 minute a boot under TCG.
"""

import hashlib
import json
import os
import random
import shlex
import subprocess
from pathlib import Path

import pytest

from iolab.hosts.vm import host as vm
from iolab.hosts.vm.qemu import Disk
from iolab.kernels import build
from iolab.load.reader import load
from iolab.spec import Build

pytestmark = [pytest.mark.slow, pytest.mark.vm, pytest.mark.root]

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "erofs-compressed-dio-7.2.toml"
SERIAL = "erofscheck"
SIZES = {"a": 3 * 2**20 + 1234, "b": 2**20, "c": 100_000}  # all lz4-compressed (dump.erofs: layout 3); tails not page-aligned

# Runs in the guest with the host's python3 over the shared root: only the standard library.
CHECK = r'''
import errno, hashlib, json, mmap, os, subprocess, sys
from pathlib import Path
dev = next(f"/dev/{p.name}" for p in Path("/sys/block").iterdir()
           if (p / "serial").exists() and (p / "serial").read_text().strip() == sys.argv[1])
os.makedirs("/run/erofs", exist_ok=True)
subprocess.run(["mount", "-t", "erofs", "-o", "ro", dev, "/run/erofs"], check=True)
out = {}
for name in sorted(os.listdir("/run/erofs")):
    path = f"/run/erofs/{name}"
    row = out[name] = {}
    for bs, start in ((4096, 0), (65536, 0), (1 << 20, 0), (1 << 20, 8192)):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        except OSError as error:
            row["open"] = errno.errorcode[error.errno]
            break
        buf, data = mmap.mmap(-1, bs), bytearray()
        os.lseek(fd, start, os.SEEK_SET)
        while (n := os.readv(fd, [buf])) > 0:
            data += buf[:n]
        os.close(fd)
        row[f"{bs}@{start}"] = hashlib.sha256(data).hexdigest()
    cached = subprocess.run(["fincore", "-n", "-b", "-o", "RES", path], capture_output=True, text=True)
    row["cached_after_direct"] = int(cached.stdout.split()[0])
    row["buffered"] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
Path("/run/iolab/check.json").write_text(json.dumps(out))
'''


def scenario_kernel(variant_name: str):
    experiment = load(SCENARIO)
    variant = next(v for v in experiment.variant if v.name == variant_name)
    assert isinstance(variant.kernel, Build)
    kernel = build.cached(build.plan(build.request_for(variant.kernel, experiment)))
    if kernel is None:
        pytest.skip(f"{variant_name}'s kernel is not built: iolab kernel build {SCENARIO}")
    return kernel


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root (mount in the guest, the host root shared read-only)")
    root = tmp_path_factory.mktemp("erofs")
    tree = root / "tree"
    tree.mkdir()
    rng = random.Random(2)
    words = [bytes(rng.choices(range(97, 123), k=rng.randint(2, 9))) for _ in range(300)]
    digests = {}
    for name, size in SIZES.items():
        text = b" ".join(rng.choice(words) for _ in range(size // 3))[:size]  # compresses about 3:1
        (tree / name).write_bytes(text)
        digests[name] = hashlib.sha256(text).hexdigest()
    path = root / "lz4.img"
    subprocess.run(["mkfs.erofs", "-zlz4", str(path), str(tree)], check=True, capture_output=True)
    return path, digests


def read_in_guest(kernel, image_path: Path, tmp_path: Path) -> dict:
    script = tmp_path / "check.py"  # the guest sees the host's root, read-only
    script.write_text(CHECK)
    host = vm.VMHost(kernel, load(SCENARIO).vm, scratch=tmp_path)
    boot = host.run_command(f"python3 -S {shlex.quote(str(script))} {SERIAL}\n", timeout=300,
                            disks=[Disk(str(image_path), SERIAL)])
    report = boot.xchg / "check.json"
    assert boot.guest_rc == 0 and report.exists(), boot.console_tail()
    return json.loads(report.read_text())


def test_direct_reads_through_the_port_give_the_files_bytes(image, tmp_path):
    path, digests = image
    got = read_in_guest(scenario_kernel("direct"), path, tmp_path)
    assert sorted(got) == sorted(digests)
    for name, want in digests.items():
        row = got[name]
        assert "open" not in row, f"{name}: O_DIRECT refused ({row.get('open')})"
        for key in ("4096@0", "65536@0", "1048576@0", "buffered"):
            assert row[key] == want, f"{name} {key}"
        tail = Path(path).parent / "tree" / name
        assert row["1048576@8192"] == hashlib.sha256(tail.read_bytes()[8192:]).hexdigest(), name
        assert row["cached_after_direct"] == 0, f"{name}: direct reads left pages in the page cache (a fallback)"


def test_7_2_as_released_refuses_o_direct_on_compressed_files(image, tmp_path):
    path, digests = image
    got = read_in_guest(scenario_kernel("direct on 7.2"), path, tmp_path)
    for name, want in digests.items():
        assert got[name]["open"] == "EINVAL", name
        assert got[name]["buffered"] == want, name
