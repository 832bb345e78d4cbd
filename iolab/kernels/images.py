"""Kernel images: the vmlinux inside a bzImage, its PVH entry, its version,
and what QEMU boots (an uncompressed vmlinux through its PVH entry: no
firmware and no decompression under emulation)."""

from __future__ import annotations

import lzma
import re
import shutil
import struct
import zlib
from pathlib import Path

from iolab.kernels.kernel_ref import KernelError
from iolab.process import run

_PVH_NOTE = 18  # XEN_ELFNOTE_PHYS32_ENTRY: the kernel has a PVH entry point
_MAGICS = ((b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b\x08", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))


def _decompress(data: bytes, kind: str) -> bytes:
    if kind == "xz":
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)
    if kind == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    if shutil.which("zstd") is None:
        raise KernelError("this kernel is zstd-compressed: install zstd")
    return run(["zstd", "-dcq"], input=data, text=False).stdout


def extract_vmlinux(bzimage: bytes) -> bytes:
    """The ELF vmlinux inside a bzImage (as scripts/extract-vmlinux finds it)."""
    if bzimage[:4] == b"\x7fELF":
        return bzimage
    for magic, kind in _MAGICS:
        position = bzimage.find(magic)
        while position != -1:
            try:
                out = _decompress(bzimage[position:], kind)
            except (lzma.LZMAError, zlib.error, EOFError):
                out = b""
            if out[:4] == b"\x7fELF":
                return out
            position = bzimage.find(magic, position + 1)
    raise KernelError("no ELF vmlinux found inside the kernel image (xz, gzip or zstd payload expected)")


def has_pvh_note(elf: bytes) -> bool:
    """Whether a 64-bit ELF vmlinux has the PVH entry note QEMU boots it by."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for index in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + index * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        position, end = p_offset, p_offset + p_filesz
        while position + 12 <= end:
            namesz, descsz, note_type = struct.unpack_from("<III", elf, position)
            name = elf[position + 12:position + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and note_type == _PVH_NOTE:
                return True
            position += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def image_version(data: bytes) -> str | None:
    """`uname -r` of a kernel image: from a bzImage's setup header, or the
    'Linux version' banner of a vmlinux."""
    if len(data) > 0x210 and data[0x202:0x206] == b"HdrS":
        offset, = struct.unpack_from("<H", data, 0x20E)
        text = data[offset + 0x200:offset + 0x200 + 256].split(b"\0", 1)[0].decode(errors="replace")
        return text.split()[0] if text else None
    match = re.search(rb"Linux version (\S+) \(", data)
    return match.group(1).decode() if match else None


def boot_image(source: Path, into: Path) -> tuple[Path, bool]:
    """Write what QEMU boots into `into`: vmlinux when it has a PVH entry,
    else the bzImage itself; (path, pvh)."""
    data = source.read_bytes()
    elf = extract_vmlinux(data)
    if has_pvh_note(elf):
        target = into / "vmlinux"
        target.write_bytes(elf)
        return target, True
    if data[:4] == b"\x7fELF":
        raise KernelError(f"{source}: a vmlinux without a PVH entry (CONFIG_PVH) cannot be booted: give the bzImage")
    target = into / "bzImage"
    shutil.copyfile(source, target)
    return target, False
