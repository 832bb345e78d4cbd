"""A kernel as an experiment file names it, and the kernel stage's error.

A variant names its kernel (``kernel = "..."`` in the experiment file):

    debian:6.1.0-56-amd64            the Debian package linux-image-6.1.0-56-amd64
    6.1.0-56-amd64                   the same (a bare ABI name)
    linux-image-6.1.0-56-amd64       the same (the package name)
    /src/linux/arch/x86/boot/bzImage a build of your own (a path: it has a '/'),
                                     with ``modules = "/lib/modules/KVER dir"``
                                     or an INSTALL_MOD_PATH root, when the
                                     kernel has modules

or a build from source (``[kernel]``, iolab.kernels.build).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iolab.sysutil import ToolError

_DEBIAN_NAME = re.compile(r"^[0-9][a-z0-9.+~-]*$")

Log = Callable[[str], None]


class KernelError(ToolError):
    """A kernel that cannot be named, fetched, built or prepared; the message says what to do."""


@dataclass(frozen=True)
class KernelRef:
    """A parsed kernel name."""

    kind: str  # "debian" | "local"
    name: str  # debian: the ABI name (6.1.0-56-amd64); local: the image's path
    modules: str | None = None  # local: the module tree (or INSTALL_MOD_PATH)

    @property
    def package(self) -> str:
        return f"linux-image-{self.name}"

    def __str__(self) -> str:
        return f"debian:{self.name}" if self.kind == "debian" else self.name


def parse(text: str, modules: str | None = None) -> KernelRef:
    """A kernel name from an experiment file or the command line."""
    text = text.strip()
    if not text:
        raise KernelError("empty kernel name")
    if "/" in text and not text.startswith("debian:"):
        return KernelRef("local", text, modules)
    if modules is not None:
        raise KernelError("modules = '...' is for a kernel of your own (a path); a Debian package has its modules")
    name = text.removeprefix("debian:").removeprefix("linux-image-")
    if not _DEBIAN_NAME.match(name):
        raise KernelError(
            f"{text!r} is not a versioned Debian kernel: name one like debian:6.1.0-56-amd64 "
            "(metapackages such as linux-image-amd64 change over time, so runs would not repeat), "
            "or give a path to a bzImage"
        )
    if name.endswith(("-dbg", "-dbgsym")):
        raise KernelError(f"{text!r} is a debug-symbols package; name the kernel itself ({name.rsplit('-', 1)[0]})")
    return KernelRef("debian", name)


def for_variant(name: str, modules: str | None, base_dir: str) -> KernelRef:
    """A variant's kernel, its paths taken relative to the experiment file."""
    ref = parse(name, modules)
    if ref.kind == "local":
        image = Path(base_dir, ref.name).resolve()
        mods = str(Path(base_dir, modules).resolve()) if modules else None
        return KernelRef("local", str(image), mods)
    return ref
