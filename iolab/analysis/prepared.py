"""What the cells' samples say of the target as it was made: where the loop
images lived, the block size mkfs chose, and a note where that size is not
the one a reader assumes."""

from __future__ import annotations

from collections import defaultdict

from iolab.cell.sample import Sample


def place(samples: list[Sample]) -> str:
    places = sorted({str(s.env.get("image_place")) for s in samples if s.env.get("image_place")})
    return " and ".join(places)


def block_sizes(samples: list[Sample]) -> dict[str, list[int]]:
    """The block size each filesystem had in the cells (as mkfs chose it:
    mke2fs takes 1 KiB below 512 MiB), from the samples' prepared target."""
    found: dict[str, set[int]] = defaultdict(set)
    for sample in samples:
        prepared = sample.env.get("prepared")
        if isinstance(prepared, dict) and prepared.get("block_size") and prepared.get("fs") not in (None, "none"):
            found[str(prepared["fs"])].add(int(prepared["block_size"]))
    return {fs: sorted(sizes) for fs, sizes in sorted(found.items())}


def small_ext4(samples: list[Sample]) -> list[str]:
    """A note where mke2fs chose 1 KiB blocks by itself (its "small" type,
    below 512 MiB): per-block costs then weigh four times what they do on
    the usual 4 KiB."""
    for sample in samples:
        prepared = sample.env.get("prepared")
        if (isinstance(prepared, dict) and prepared.get("fs") == "ext4" and prepared.get("block_size") == 1024
                and not {"-b", "-T"} & set(prepared.get("mkfs_options") or [])):
            return ["ext4 had 1 KiB blocks: mke2fs chooses them for a filesystem under 512 MiB (its \"small\" "
                    "type); mkfs_options = [\"-b\", \"4096\"] gives the usual 4 KiB"]
    return []
