"""A stand-in kernel tree for the build pipeline's tests (tests/test_kernel_build.py,
tests/test_series.py): a tarball whose Makefile stands in for the kernel's (tinyconfig,
olddefconfig, vmlinux and bzImage; they print kbuild's "  CC  file.o" lines and copy an ELF
with a PVH note, or a fake bzImage around it), patches made by diff -u, and the cache it builds into."""

import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.fakes import bzimage, elf64


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "iolab"


LINES = "".join(f"line {n}\n" for n in range(1, 31))


def diff(tmp_path: Path, name: str, before: str, after: str, path: str = "fs/x.c") -> Path:
    """A -p1 patch made by diff -u from two versions of a file."""
    work = tmp_path / f"diff-{name}"
    for side, text in (("a", before), ("b", after)):
        (work / side / path).parent.mkdir(parents=True, exist_ok=True)
        (work / side / path).write_text(text)
    out = subprocess.run(["diff", "-up", f"a/{path}", f"b/{path}"], cwd=work, capture_output=True, text=True).stdout
    patch = tmp_path / f"{name}.patch"
    patch.write_text(f"{name}: a description above the diff\n\n{out}")
    return patch


FAKE_MAKEFILE = """\
VERSION = 7
PATCHLEVEL = 2
SUBLEVEL = 99
O ?= .
tinyconfig:
\tmkdir -p $(O) && printf 'CONFIG_64BIT=y\\n# CONFIG_PRINTK is not set\\nCONFIG_DROPPED_BY_KCONFIG=y\\n' > $(O)/.config
olddefconfig:
\tgrep -v '^CONFIG_IMPOSSIBLE=' $(O)/.config > $(O)/.config.new; mv $(O)/.config.new $(O)/.config
vmlinux:
\t@for f in $(notdir $(wildcard $(CURDIR)/src/*.c)); do echo "  CC      src/$${f%.c}.o"; done
\t@if grep -q BROKEN $(CURDIR)/src/*.c; then echo "src/a.c:2:1: error: expected ';' before '}' token"; \\
\t  for n in $$(seq 1 30); do echo "  make noise $$n"; done; exit 2; fi
\t@mkdir -p $(O)/src; for f in $(notdir $(wildcard $(CURDIR)/src/*.c)); do \\
\t  printf 'savedcmd_src/%s.o := gcc -D__KERNEL__ -c\\nsource_src/%s.o := %s\\n' $${f%.c} $${f%.c} $(CURDIR)/src/$$f \\
\t  > $(O)/src/.$${f%.c}.o.cmd; done; touch $(O)/built-in.a
\t@echo "  LD      vmlinux"
\tcp $(CURDIR)/vmlinux.elf $(O)/vmlinux
\tcat $(CURDIR)/src/*.c > $(O)/built-from.txt
src/%.o:
\t@echo "  CC      $@"
bzImage:
\t@for f in $(notdir $(wildcard $(CURDIR)/src/*.c)); do echo "  CC      src/$${f%.c}.o"; done
\t@if grep -q BROKEN $(CURDIR)/src/*.c; then echo "src/a.c:2:1: error: expected ';' before '}' token"; \\
\t  for n in $$(seq 1 30); do echo "  make noise $$n"; done; exit 2; fi
\t@echo "  LD      vmlinux"
\tmkdir -p $(O)/arch/x86/boot && cp $(CURDIR)/image.bin $(O)/arch/x86/boot/bzImage
\tcat $(CURDIR)/src/*.c > $(O)/built-from.txt
"""


@pytest.fixture
def fake_source(tmp_path, cache):
    """A tarball of a stand-in kernel tree, and a busybox in the cache."""
    top = tmp_path / "fake" / "linux-7.2.99"
    (top / "src").mkdir(parents=True)
    (top / "Makefile").write_text(FAKE_MAKEFILE)
    (top / "Kconfig").write_text("# stand-in\n")
    (top / "src" / "a.c").write_text(LINES)
    (top / "src" / "b.c").write_text("int b;\n")
    (top / "image.bin").write_bytes(bzimage(elf64(pvh=True), version="7.2.99"))
    (top / "vmlinux.elf").write_bytes(elf64(pvh=True, banner=b"Linux version 7.2.99 (me@here) #1 SMP\0"))
    tarball = tmp_path / "linux-7.2.99.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    busybox_dir = cache / "kernels" / "tools" / "busybox-1"
    busybox_dir.mkdir(parents=True)
    (busybox_dir / "busybox").write_bytes(b"\x7fELF busybox")
    return tarball
