#!/usr/bin/env python3
"""Kernels built from source: build, rebuild and boot times (iolab.kernels.build).

    full        a fresh object tree: make tinyconfig, iolab's base.config and
                this bench's fragment, olddefconfig, make bzImage (the source
                is unpacked once beforehand and not timed)
    rebuild     then, in that object tree, each revert patch of the seed
                scenarios (scenarios/patches/*.patch, applied reversed) as a
                kernel of its own: what the second kernel of an experiment costs
    boot        each kernel booted --boots times under QEMU (VMHost.run_command
                with `true`): guest uptime at /init (kernel boot), and QEMU's
                start to its exit

The bench's fragment sets CONFIG_LOCALVERSION="-bench", so its object tree
is its own (the scenarios' kernels stay cached); it is removed first, so
"full" is a full build every time.

    python3 bench/kernel_build.py [--source debian:linux-source-7.2] [--boots 3] [--skip-full] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import spec  # noqa: E402
from iolab.kernels import build, cache, sources  # noqa: E402
from iolab.hosts.vm import host as vm  # noqa: E402
from iolab.kernels.patches import Patch  # noqa: E402

FRAGMENT = (("bench", 'CONFIG_LOCALVERSION="-bench"\n'),)


def say(text: str) -> None:
    print(f"kernel_build: {text}", file=sys.stderr)


def timed_build(request: build.BuildRequest) -> tuple[float, dict]:
    started = time.monotonic()
    kernel = build.ensure(request, say)
    return time.monotonic() - started, kernel


def fresh(request: build.BuildRequest) -> None:
    """Remove the bench's object tree and kernels: the next build is a full one."""
    resolved = build.plan(request, say)
    shutil.rmtree(build.builds_root() / resolved.tree_key, ignore_errors=True)
    for kernel_dir in cache.cache_root().glob("build-*"):
        manifest = kernel_dir / "manifest.json"
        if manifest.exists() and json.loads(manifest.read_text()).get("tree_key") == resolved.tree_key:
            shutil.rmtree(kernel_dir)


def boot_times(kernel: build.Kernel, boots: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"to_init": [], "qemu_total": []}
    settings = spec.VM(cpus=1, memory=512 << 20)
    with tempfile.TemporaryDirectory(prefix="iolab-buildbench-") as scratch:
        host = vm.VMHost(kernel, settings, scratch=Path(scratch))
        for _ in range(boots):
            boot = host.run_command("true", timeout=120)
            init = boot.xchg / "init.json"
            if boot.guest_rc != 0 or not init.exists():
                sys.exit(f"kernel_build: the boot failed: {boot.outcome()}: {' | '.join(boot.console_tail()[-5:])}")
            found["to_init"].append(json.loads(init.read_text())["init_uptime"])
            found["qemu_total"].append(boot.exited_s or float("nan"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="debian:linux-source-7.2")
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--skip-full", action="store_true",
                        help="no full build: rebuild in the scenarios' own object tree (built before, by a "
                        "scenario or iolab kernel build), each patch's kernel removed first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    source = sources.parse(args.source)
    fragment = () if args.skip_full else FRAGMENT
    base = build.BuildRequest(source, (), fragment)
    sources.unpack(build.plan(base, say).source, say)
    results: dict = {"source": args.source, "toolchain": sources.toolchain(), "rebuild": {}, "boot": {}}
    if not args.skip_full:
        fresh(base)
    seconds, kernel = timed_build(base)
    if not args.skip_full:
        results["full"] = {"seconds": round(seconds, 1), "files": kernel.manifest["compiled_files"]}
        say(f"full build: {seconds:.0f} s, {kernel.manifest['compiled_files']} files")
    kernels = {"7.2": kernel}
    for patch in sorted((REPO / "scenarios" / "patches").glob("*.patch")):
        request = build.BuildRequest(source, (Patch(patch, reverse=True),), fragment)
        if args.skip_full:
            shutil.rmtree(build.kernel_dir(build.plan(request, say).key), ignore_errors=True)
        seconds, rebuilt = timed_build(request)
        results["rebuild"][patch.name] = {"seconds": round(seconds, 1), "files": rebuilt.manifest["compiled_files"]}
        say(f"rebuild -R {patch.name}: {seconds:.1f} s, {rebuilt.manifest['compiled_files']} files")
        kernels[f"-R {patch.name}"] = rebuilt
    vm.compile_iolab()
    for name, built in kernels.items():
        times = boot_times(built, args.boots)
        results["boot"][name] = {key: [round(v, 2) for v in values] for key, values in times.items()}
        say(f"boot {name}: to init {statistics.median(times['to_init']):.2f} s, "
            f"QEMU total {statistics.median(times['qemu_total']):.2f} s (medians of {args.boots})")
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        if "full" in results:
            print(f"full build      {results['full']['seconds']:7.1f} s  {results['full']['files']} files")
        for name, row in results["rebuild"].items():
            print(f"rebuild -R {name:<36} {row['seconds']:7.1f} s  {row['files']} files")
        for name, row in results["boot"].items():
            print(f"boot {name:<40} to init {statistics.median(row['to_init']):.2f} s  "
                  f"QEMU {statistics.median(row['qemu_total']):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
