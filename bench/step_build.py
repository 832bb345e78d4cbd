#!/usr/bin/env python3
"""One step's incremental build, from patch applied to bootable kernel: where the time goes, and
that the kernel is the one the whole make would give.

Each patch given is built as a kernel of Linux 7.2 (iolab.kernels.build.ensure, in the shared 7.2
object tree; its base must be built before: `iolab kernel build scenarios/ext4-write-begin-7.2.toml`),
with bench/series-patches/bench-marker.patch (a comment in README, read by no build) before it, so
its key is this bench's own and its cached kernel can be removed first: each is built now. Printed per
build: the seconds of its phases (iolab's manifest: patch, configure, compile, link, install), make's
CPU seconds (user + system of make and all it ran, which a loaded host stretches little), the
objects made (kbuild's single-object goals; "all": the walk of the whole tree), kbuild's landmarks (seconds
from make's start) and the load average.

With --check, after each build the whole make (make vmlinux, the walk of every directory) runs again
in the object tree under its lock: it must compile no kernel object (the link's own, the version's and
kallsyms', aside: it links again where a step's make left the directories' parents' archives older
than their children's), and vmlinux's .text must be the same bytes before and after it.

    sudo .venv/bin/python bench/step_build.py [--check] [--out FILE] PATCH...
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab.kernels import build, cache, make, sources  # noqa: E402
from iolab.kernels.patches import Patch  # noqa: E402

MARKER = REPO / "bench" / "series-patches" / "bench-marker.patch"
SOURCE = "debian:linux-source-7.2"


def say(text: str) -> None:
    print(f"step_build: {text}", file=sys.stderr, flush=True)


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def text_digest(vmlinux: Path) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "text.bin"
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", str(vmlinux), str(out)], check=True)
        return hashlib.sha256(out.read_bytes()).hexdigest()[:16]


def whole_make(request: build.BuildRequest) -> str:
    """The whole make again in the request's object tree: what it compiled, and whether .text changed."""
    resolved = build.plan(request)
    root = sources.tree(resolved.source)
    obj = build.builds_root() / resolved.tree_key / "obj"
    with cache.locked(sources.cache_root(), resolved.source.slug + "-tree"):
        before = text_digest(obj / "vmlinux")
        done = subprocess.run(["make", "-C", str(root), f"O={obj}", f"-j{os.cpu_count() or 1}", "vmlinux",
                               "KBUILD_BUILD_USER=iolab", "KBUILD_BUILD_HOST=iolab"],
                              capture_output=True, text=True)
        after = text_digest(obj / "vmlinux")
        record = obj / make.SOURCES_RECORD
        if done.returncode == 0 and record.exists():
            os.utime(record)  # the whole make ran on the sources it records: its version's object is no other make's
    if done.returncode != 0:
        return f"the whole make failed: {done.stdout[-400:]}"
    compiled = [m.group(2) for m in re.finditer(r"^\s+(CC|AS)\s+(\S+)", done.stdout, re.M)
                if not m.group(2).startswith(("init/version", ".tmp_vmlinux"))]  # the link's own
    return (f"whole make after it: {len(compiled)} kernel objects compiled{': ' + ' '.join(compiled) if compiled else ''}; "
            f".text {'the same' if before == after else 'DIFFERS'} ({before} / {after})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("patches", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="the whole make after each build must compile nothing")
    parser.add_argument("--reverse", action="store_true", help="apply the patches reversed (patch -R)")
    parser.add_argument("--out", type=Path, help="also append the figures to this file")
    args = parser.parse_args()
    source = sources.parse(SOURCE)
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, nproc {os.cpu_count()}: "
             + " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])]
    status = 0
    for path in args.patches:
        request = build.BuildRequest(source, (Patch(MARKER), Patch(path.resolve(), args.reverse)))
        shutil.rmtree(build.kernel_dir(build.plan(request).key), ignore_errors=True)
        load_before = load_average()
        began = time.monotonic()
        kernel = build.ensure(request, say)
        wall = time.monotonic() - began
        m = kernel.manifest
        phases = " ".join(f"{name} {value:.1f}" for name, value in m["phases_s"].items())
        marks = " ".join(f"{name} {value:.1f}" for name, value in m.get("make_marks_s", {}).items())
        made = m.get("make_objects", m.get("make_dirs"))
        lines.append(f"{path.name}{' -R' if args.reverse else ''}: ensure {wall:.1f} s (build {m['build_seconds']} s: "
                     f"{phases}); make CPU {m.get('make_cpu_s')} s; {m['compiled_files']} files; made "
                     f"{'all' if made == 'all' else ' '.join(made or []) or 'nothing'}; landmarks {marks}; "
                     f"load {load_before} -> {load_average()}")
        if args.check:
            checked = whole_make(request)
            lines.append("  " + checked)
            status = status or (0 if "0 kernel objects" in checked and "the same" in checked else 1)
        print(lines[-1] if not args.check else "\n".join(lines[-2:]), flush=True)
    if args.out:
        with open(args.out, "a") as handle:
            handle.write("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
