"""``iolab kernel``: fetch, build, list the kernels variants boot, and show
the build log a run stored."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from iolab import load, spec
from iolab.cli import progress
from iolab.store import Store, StoreError

DESCRIPTION = """\
Kernels that variants boot in VMs, cached in $XDG_CACHE_HOME/iolab/kernels:
Debian kernel packages (kernel = "debian:NAME"), and kernels built from
source ([kernel] source = "debian:linux-source-7.2", patches, reverse,
config). A run fetches or builds what is missing; these commands do it
ahead and show what is cached."""


def add_parser(commands: Any) -> None:
    kernel = commands.add_parser("kernel", help="fetch, build and list kernels that variants boot in VMs",
                                 description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = kernel.add_subparsers(dest="kernel_command", metavar="ACTION", required=True)
    fetch = actions.add_parser("fetch", help="download and prepare a Debian kernel",
                               description="apt-get download, unpack, depmod, vmlinux, initramfs, cache.")
    fetch.add_argument("name", help="e.g. debian:6.1.0-56-amd64 (or 6.1.0-56-amd64, linux-image-6.1.0-56-amd64)")
    build = actions.add_parser("build", help="build (or fetch) the kernels of an experiment's variants",
                               description="Build every kernel the experiment's variants boot that is "
                               "not cached yet (source, patches, config), and fetch Debian ones.")
    build.add_argument("experiment", help="experiment file (TOML)")
    build.add_argument("--quiet", action="store_true", help="log lines instead of a progress display")
    actions.add_parser("list", help="list cached kernels", description="List the cached kernels.")
    log = actions.add_parser("log", help="print the build log a run stored for a variant's kernel",
                             description="The log of the build of a variant's kernel (built from source), "
                             "as stored with the run.")
    log.add_argument("run", type=int, help="run id")
    log.add_argument("variant", help="variant name")


def _say(text: str) -> None:
    print(f"iolab: {text}", file=sys.stderr)


def cmd_kernel(args: argparse.Namespace, store: Callable[[], Store]) -> int:
    from iolab import kernels
    from iolab.kernels import fetch
    from iolab.kernels.cache import cache_root

    if args.kernel_command == "fetch":
        kernel = fetch.ensure(kernels.parse(args.name), _say)
        print(f"{kernel.name}: {kernel.kver} ({kernel.manifest.get('version') or 'local build'}) "
              f"in {kernel.directory}")
        return 0
    if args.kernel_command == "build":
        return _build(args)
    if args.kernel_command == "log":
        return _log(args, store())
    return _list(kernels.listing(), cache_root())


def _build(args: argparse.Namespace) -> int:
    from iolab import kernels

    experiment = load.load(args.experiment)
    if not any(variant.kernel is not None for variant in experiment.variant):
        raise spec.SpecError(f"{args.experiment}: no variant names a kernel: nothing to build")
    reporter = progress.build_reporter(args.quiet)
    built = kernels.ready(experiment, _say, reporter)
    failed = 0
    if experiment.series is not None:  # every step, ahead of a run that may need only some
        steps = kernels.Steps(experiment, _say, reporter)
        for variant in experiment.variant:
            kernel = steps.get(variant.name)
            if kernel is None:
                failed += 1
                print(f"{variant.name:<24}  FAILED: {steps.errors[variant.name].splitlines()[0]}")
            else:
                built[variant.name] = kernel
    for name, kernel in built.items():
        print(f"{name:<24}  {kernels.label(kernel):<40}  {kernel.directory}")
    return 1 if failed else 0


def _list(found: list[dict[str, Any]], root: Any) -> int:
    if not found:
        print(f"no kernels cached in {root} (iolab kernel fetch debian:NAME, or iolab kernel build EXPERIMENT)")
        return 0
    print(f"{'name':<24}  {'version':<12}  {'boot':<7}  {'when':<25}  what")
    for item in found:
        boot = ("vmlinux" if item.get("pvh") else "bzImage") if item.get("current") else "outdated"
        if item.get("kind") == "build":
            patches = " ".join(("-R " if p.endswith(" (reversed)") else "+ ") + p.removesuffix(" (reversed)")
                               .rsplit("/", 1)[-1] for p in item.get("patches", []))
            what = f"{item.get('source')} {patches}".strip() + f" ({item.get('build_seconds', '?')} s)"
        else:
            what = item.get("package") or item.get("source", "")
        print(f"{item.get('name', '?'):<24}  {item.get('version') or item.get('kver', '?'):<12}  "
              f"{boot:<7}  {item.get('fetched_at', '?'):<25}  {what}")
    return 0


def _log(args: argparse.Namespace, store: Store) -> int:
    from iolab.kernels.build import BUILD_LOG

    for sample in sorted(store.samples(args.run, with_histograms=False), key=lambda s: s.seq):
        if sample.variant == args.variant:
            try:
                sys.stdout.write(store.artefact(args.run, sample.seq, BUILD_LOG))
            except StoreError:
                continue
            return 0
    raise StoreError(f"run {args.run} has no kernel build log for variant {args.variant!r} "
                     "(its kernel was not built from source, or the variant has no sample)")
