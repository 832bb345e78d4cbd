"""The workload library: an area file per part of the kernel, and the
experiment `iolab patch` writes from the areas a patch touches."""

from iolab.workloads.library import Area, PatchInfo, Selection, load_areas, read_patch, select

__all__ = ["Area", "PatchInfo", "Selection", "load_areas", "read_patch", "select"]
