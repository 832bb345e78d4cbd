"""[target]: where the I/O goes (a loop image, a device, a directory), its
filesystem, and what a variant or a workload may change of it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from iolab.spec.base import Size, Strict, Words
from iolab.units import format_size, parse_size

FILESYSTEMS = ("ext4", "xfs", "btrfs", "erofs", "f2fs", "none")
# The smallest filesystem each mkfs accepts (mkfs.xfs refuses under 300MB).
MIN_SIZE = {"ext4": 16 << 20, "xfs": 300 << 20, "btrfs": 128 << 20, "f2fs": 64 << 20, "none": 1 << 20, "erofs": 0}


class ErofsFiles(Strict):
    """Files generated into the tree that mkfs.erofs packs into the image."""

    name: str = Field(description="file name; {n} is replaced by 0..count-1")
    count: int = Field(default=1, ge=1, le=100_000)
    size: Size
    content: Literal["random", "compressible"] = "random"

    @field_validator("name")
    @classmethod
    def _inside_the_tree(cls, name: str) -> str:
        """A relative name inside the packed tree: written as root, it must not escape it."""
        plain = name.replace("{n}", "0")
        if "{" in plain or "}" in plain:
            raise ValueError("only {n} may be in braces")
        parts = plain.split("/")
        if not plain or plain.startswith("/") or ".." in parts or "" in parts or not plain.isprintable() \
                or len(name) > 200:
            raise ValueError("must be a relative file name inside the image (no '..', not absolute, "
                             "at most 200 characters)")
        return name


class Loop(Strict):
    """How the loop device over the image is set up (losetup)."""

    direct_io: bool = False
    sector_size: Literal[512, 1024, 2048, 4096] | None = None
    # A reused image (erofs) is evicted from the host's page cache before each
    # cell ("drop": the loop device reads the disk) or left there ("keep": a
    # RAM-speed lower layer, so the disk's noise stays out of the figures).
    image_cache: Literal["drop", "keep"] = "drop"


class Target(Strict):
    kind: Literal["loop", "device", "dir"] = "loop"
    fs: Literal["ext4", "xfs", "btrfs", "erofs", "f2fs", "none"] = "ext4"
    size: Size = parse_size("1GiB")
    device: str | None = None
    path: str | None = None
    image_dir: str | None = None
    allow_destroy: bool = False
    mkfs_options: Words = []
    mount_options: str = ""
    loop: Loop = Loop()
    files: list[ErofsFiles] = []

    @model_validator(mode="after")
    def _consistent(self) -> Target:
        if self.kind == "device" and not self.device:
            raise ValueError("kind = 'device' needs device = '/dev/...'")
        if self.kind == "device" and not self.allow_destroy:
            raise ValueError(
                f"kind = 'device' reformats {self.device} on every cell; "
                "set allow_destroy = true to confirm its data may be destroyed"
            )
        if self.kind == "dir" and not self.path:
            raise ValueError("kind = 'dir' needs path = '/some/dir'")
        if self.kind == "dir" and self.fs not in ("none",):
            raise ValueError("kind = 'dir' uses an existing filesystem: set fs = 'none'")
        if self.fs == "erofs" and not self.files:
            raise ValueError("fs = 'erofs' is read-only: give [[target.files]] to pack into the image")
        if self.fs != "erofs" and self.files:
            raise ValueError("[[target.files]] is only for fs = 'erofs'")
        if self.kind == "loop" and self.size < MIN_SIZE[self.fs]:
            raise ValueError(
                f"size {format_size(self.size)} is too small for {self.fs} "
                f"(mkfs.{self.fs} needs at least {format_size(MIN_SIZE[self.fs])})"
            )
        return self


TARGET_OVERRIDES = ("fs", "mkfs_options", "mount_options", "loop")


class TargetOverrides(Strict):
    """Target settings a variant (or a workload, for its data set) may change."""

    fs: Literal["ext4", "xfs", "btrfs", "erofs", "f2fs", "none"] | None = None
    mkfs_options: Words | None = None
    mount_options: str | None = None
    loop: Loop | None = None

    def overrides(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in TARGET_OVERRIDES if getattr(self, name) is not None}

    def target_of(self, base: Target) -> Target:
        """`base` with these overrides applied."""
        overrides = self.overrides()
        if not overrides:
            return base
        return Target.model_validate({**base.model_dump(), **overrides})
