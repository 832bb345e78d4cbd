"""[kernel] and [series]: kernels built from source, and a patch series
whose steps become the variants (before validation: with_series_steps,
with_default_kernel)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from iolab.spec.base import Strict


class Build(Strict):
    """A kernel built from source (iolab.kernels.build): the file's [kernel]
    table (every variant's kernel) or a variant's ``kernel = { ... }``."""

    source: str = Field(min_length=1)  # debian:linux-source-7.2[=version] | a tarball | a git tree
    commit: str | None = None  # with a git tree
    patches: list[str] = []  # patch files (-p1), applied in order
    reverse: list[str] = []  # patch files applied reversed (patch -R), before `patches`
    config: str = ""  # .config lines over iolab's base fragment
    config_file: str | None = None  # a fragment file, merged before `config`


class Series(Strict):
    """A patch series dissected: each step is the base ([kernel], and the one
    [[variant]] if given) with patches 1..k on it (iolab.run.series)."""

    patches: list[str] = Field(min_length=1)  # patch files (-p1), in order
    # every: run every step (exact with instructions timing); bisect: compare
    # the ends, then midpoints where they differ (wall timing); auto: by the timing mode
    strategy: Literal["auto", "every", "bisect"] = "auto"
    # Which workloads a step runs when every step runs: "paths", only those its patch can reach (a patch
    # whose files all lie in another filesystem's fs/<name>/ than the workload's cannot: iolab.run.series);
    # "all", every workload at every step
    reach: Literal["paths", "all"] = "paths"
    # Set by iolab when the run starts (from the patches, with reach = "paths"), stored with the run: each
    # step's workloads that the step's patch cannot reach, so not run there (step name -> workload names)
    unreached: dict[str, list[str]] = {}


def step_name(step: int, patch: str) -> str:
    """A series step's variant name: its number and its patch's name, at most 24 characters."""
    stem = Path(patch).name.removesuffix(".patch").removesuffix(".diff")
    stem = re.sub(r"^\d{4}-", "", stem)  # git format-patch's numbering
    return f"{step} {stem}"[:24].rstrip()


def with_series_steps(data: Any) -> Any:
    """A [series] becomes its steps as variants: step 0 is the base (the one
    [[variant]], or "base"), step k the base with patches 1..k added to its
    kernel. Stored experiments already have their steps (``step`` is set)."""
    if not isinstance(data, dict) or not isinstance(data.get("series"), dict):
        return data
    patches = data["series"].get("patches")
    variants = data.get("variant") or []
    if not isinstance(patches, list) or not patches or len(variants) > 1 or not isinstance(variants, list):
        return data
    if any(isinstance(v, dict) and "step" in v for v in variants):
        return data
    base = dict(variants[0]) if variants and isinstance(variants[0], dict) else {"name": "base"}
    own = base.get("kernel")
    if own is not None and not isinstance(own, dict):
        return data
    steps = [{**base, "step": 0}]
    for k in range(1, len(patches) + 1):
        kernel = dict(own or {})
        kernel["patches"] = [*(kernel.get("patches") or []), *patches[:k]]
        steps.append({**base, "name": step_name(k, str(patches[k - 1])), "kernel": kernel, "step": k})
    return {**data, "variant": steps}


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


# A kernel's name (a string) or a build (a table): one or the other, so an
# error speaks of the one that was given
KernelField = Annotated[
    Annotated[str, Tag("name")] | Annotated[Build, Tag("build")],
    Discriminator(lambda value: "name" if isinstance(value, str) else "build"),
] | None
