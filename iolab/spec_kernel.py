"""The experiment file's kernel built from source: ``[kernel]`` and a
variant's ``kernel = { ... }`` (schema only: iolab.load checks the source
name, the fragment and the files; iolab.hosts.vm.build builds it).

    [kernel]                              # every variant's kernel
    source = "debian:linux-source-7.2"    # or a tarball, or a git tree with commit = "..."
    config = "CONFIG_TRANSPARENT_HUGEPAGE=y"   # .config lines over iolab's base

    [[variant]]
    name = "nofix"
    kernel = { reverse = ["patches/fix.patch"] }   # laid over [kernel]
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Build(BaseModel):
    """A kernel built from source (iolab.hosts.vm.build): the file's [kernel]
    table (every variant's kernel) or a variant's ``kernel = { ... }``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1)  # debian:linux-source-7.2[=version] | a tarball | a git tree
    commit: str | None = None  # with a git tree
    patches: list[str] = []  # patch files (-p1), applied in order
    reverse: list[str] = []  # patch files applied reversed (patch -R), before `patches`
    config: str = ""  # .config lines over iolab's base fragment
    config_file: str | None = None  # a fragment file, merged before `config`


def with_default_kernel(data: Any) -> Any:
    """Give each variant the file's [kernel] table: a variant without a
    kernel gets it whole; a variant's kernel table is laid over it (its
    patches and reverse lists added to the table's)."""
    if not isinstance(data, dict) or not isinstance(data.get("kernel"), dict):
        return data
    default = data["kernel"]
    variants = []
    for variant in data.get("variant") or []:
        if isinstance(variant, dict):
            own = variant.get("kernel")
            if own is None:
                variant = {**variant, "kernel": dict(default)}
            elif isinstance(own, dict):
                merged = {**default, **own}
                for key in ("patches", "reverse"):
                    if key in default and key in own and own[key] != default[key]:
                        merged[key] = [*default[key], *[p for p in own[key] if p not in default[key]]]
                variant = {**variant, "kernel": merged}
        variants.append(variant)
    return {**data, "variant": variants}
