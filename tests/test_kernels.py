"""Kernel names, the kernel cache and its manifest, kernel images, the initramfs.

No network and no real kernel: apt is scripted (iolab.kernels.apt.run), the Debian
package is a tiny .deb built here with dpkg-deb, and the kernel image a
fake bzImage around a 64-bit ELF with a PVH note.
"""

import gzip
import json
import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from iolab import kernels
from iolab.kernels import apt, cache as kcache, fetch, images, initramfs
from iolab.kernels.kernel_ref import KernelError, KernelRef
from tests.fakes import bzimage, elf64


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test gets its own kernel cache ($XDG_CACHE_HOME honoured)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "iolab" / "kernels"


# -- names ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ["debian:6.1.0-56-amd64", "6.1.0-56-amd64", "linux-image-6.1.0-56-amd64",
                                  "debian:linux-image-6.1.0-56-amd64"])
def test_debian_names(text):
    ref = kernels.parse(text)
    assert ref == KernelRef("debian", "6.1.0-56-amd64")
    assert ref.package == "linux-image-6.1.0-56-amd64"
    assert str(ref) == "debian:6.1.0-56-amd64"


def test_other_debian_flavours():
    assert kernels.parse("6.12.117+deb12-amd64").name == "6.12.117+deb12-amd64"
    assert kernels.parse("debian:6.1.0-47-cloud-amd64").package == "linux-image-6.1.0-47-cloud-amd64"


def test_paths_are_builds_of_your_own():
    ref = kernels.parse("/src/linux/arch/x86/boot/bzImage", "/src/mods")
    assert (ref.kind, ref.name, ref.modules) == ("local", "/src/linux/arch/x86/boot/bzImage", "/src/mods")
    assert kernels.parse("./bzImage").kind == "local"


@pytest.mark.parametrize("text, words", [
    ("linux-image-amd64", "metapackages"),
    ("debian:amd64", "not a versioned Debian kernel"),
    ("6.1.0-56-amd64-dbg", "debug-symbols"),
    ("", "empty"),
    ("6.1.0 56", "not a versioned"),
])
def test_bad_names(text, words):
    with pytest.raises(KernelError, match=words):
        kernels.parse(text)


def test_modules_only_with_a_path():
    with pytest.raises(KernelError, match="kernel of your own"):
        kernels.parse("debian:6.1.0-56-amd64", "/lib/modules/x")


def test_cache_root_honours_xdg(cache, monkeypatch):
    assert kcache.cache_root() == cache
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert kcache.cache_root() == Path.home() / ".cache" / "iolab" / "kernels"


# -- apt ---------------------------------------------------------------------------


def scripted_apt(monkeypatch, policy: str, pkgnames: str):
    calls = []

    def run(argv, what, cwd=None, timeout=900):
        calls.append(argv)
        if argv[:2] == ["apt-cache", "policy"]:
            return policy
        if argv[:2] == ["apt-cache", "pkgnames"]:
            return pkgnames
        raise AssertionError(argv)

    monkeypatch.setattr(apt, "run", run)
    return calls


def test_candidate_version(monkeypatch):
    scripted_apt(monkeypatch, "linux-image-6.1.0-56-amd64:\n  Installed: (none)\n  Candidate: 6.1.192-2\n", "")
    assert apt.candidate("linux-image-6.1.0-56-amd64") == "6.1.192-2"


def test_unknown_package_lists_close_names(monkeypatch):
    names = "\n".join(f"linux-image-6.1.0-{n}-amd64" for n in (47, 48, 55, 56)) + "\nlinux-image-6.1.0-56-amd64-dbg\n"
    scripted_apt(monkeypatch, "", names)
    with pytest.raises(KernelError) as error:
        apt.candidate("linux-image-6.1.0-57-amd64")
    message = str(error.value)
    assert "no package linux-image-6.1.0-57-amd64" in message
    assert "close names: 6.1.0-56-amd64" in message and "-dbg" not in message


def test_missing_apt_index_says_apt_get_update(monkeypatch):
    scripted_apt(monkeypatch, "", "")
    with pytest.raises(KernelError, match="run apt-get update"):
        apt.candidate("linux-image-6.1.0-56-amd64")


# -- kernel images --------------------------------------------------------------------


@pytest.mark.parametrize("compress", [lzma.compress, gzip.compress])
def test_vmlinux_extracted_from_a_bzimage(compress):
    elf = elf64(pvh=True)
    assert images.extract_vmlinux(bzimage(elf, compress)) == elf
    assert images.has_pvh_note(elf)
    assert not images.has_pvh_note(elf64(pvh=False))


def test_no_elf_inside():
    with pytest.raises(KernelError, match="no ELF vmlinux"):
        images.extract_vmlinux(b"MZ" + bytes(4096))


def test_image_version():
    assert images.image_version(bzimage(elf64(True), version="6.18.0-rc1+")) == "6.18.0-rc1+"
    assert images.image_version(elf64(True)) == "6.1.0-test"


# -- the initramfs ----------------------------------------------------------------------


def read_cpio(data: bytes) -> dict[str, tuple[int, bytes]]:
    """name -> (mode, content) of a newc archive."""
    entries, position = {}, 0
    while True:
        assert data[position:position + 6] == b"070701"
        fields = [int(data[position + 6 + 8 * i:position + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name_start = position + 110
        name = data[name_start:name_start + namesize - 1].decode()
        content_start = name_start + namesize + (-(110 + namesize) % 4)
        content = data[content_start:content_start + size]
        position = content_start + size + (-size % 4)
        if name == "TRAILER!!!":
            return entries
        entries[name] = (mode, content)


def fake_module_tree(root: Path, builtin: list[str], modules: dict[str, list[str]]) -> Path:
    """lib/modules/KVER with modules.dep (path: deps) and modules.builtin."""
    moddir = root / "lib" / "modules" / "6.1.0-test"
    moddir.mkdir(parents=True)
    lines = []
    for path, deps in modules.items():
        (moddir / path).parent.mkdir(parents=True, exist_ok=True)
        data = b"\x7fELF module " + path.encode()
        (moddir / path).write_bytes(lzma.compress(data) if path.endswith(".xz") else data)
        lines.append(f"{path}: {' '.join(deps)}")
    (moddir / "modules.dep").write_text("\n".join(lines) + "\n")
    (moddir / "modules.builtin").write_text("".join(f"kernel/{name}.ko\n" for name in builtin))
    return moddir


TREE = {
    "kernel/drivers/virtio/virtio_ring.ko": [],
    "kernel/drivers/virtio/virtio.ko": ["kernel/drivers/virtio/virtio_ring.ko"],
    "kernel/drivers/virtio/virtio_mmio.ko": ["kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko"],
    "kernel/drivers/virtio/virtio_pci.ko": ["kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko"],
    "kernel/net/9p/9pnet.ko": [],
    "kernel/net/9p/9pnet_virtio.ko.xz": ["kernel/net/9p/9pnet.ko", "kernel/drivers/virtio/virtio_ring.ko"],
    "kernel/fs/9p/9p.ko": ["kernel/net/9p/9pnet.ko"],
    "kernel/drivers/block/virtio_blk.ko": ["kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko"],
}


def test_closure_loads_dependencies_first_and_skips_builtins(tmp_path):
    moddir = fake_module_tree(tmp_path, ["overlay"], TREE)
    order = initramfs.closure(moddir, initramfs.BOOT_MODULES["mmio"])
    assert order == [
        "kernel/drivers/virtio/virtio_ring.ko", "kernel/drivers/virtio/virtio.ko",
        "kernel/drivers/virtio/virtio_mmio.ko", "kernel/net/9p/9pnet.ko", "kernel/net/9p/9pnet_virtio.ko.xz",
        "kernel/fs/9p/9p.ko", "kernel/drivers/block/virtio_blk.ko",
    ]


def test_closure_names_a_missing_module(tmp_path):
    moddir = fake_module_tree(tmp_path, [], TREE)
    with pytest.raises(initramfs.InitramfsError, match="module overlay is neither built into the kernel nor in"):
        initramfs.closure(moddir, initramfs.BOOT_MODULES["mmio"])


def test_initramfs_contents(tmp_path):
    moddir = fake_module_tree(tmp_path, ["overlay"], TREE)
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF busybox")
    out = tmp_path / "initramfs.cpio"
    packed = initramfs.build(moddir, busybox, out)
    entries = read_cpio(out.read_bytes())
    assert entries["init"][1].decode() == initramfs.INIT
    assert entries["init"][0] & 0o777 == 0o755
    assert entries["bin/busybox"][1] == b"\x7fELF busybox"
    assert entries["bin/sh"][1] == b"busybox"  # a symlink's content is its target
    # xz modules are packed decompressed (busybox insmod takes plain ELF)
    assert entries["kernel/net/9p/9pnet_virtio.ko"][1] == b"\x7fELF module kernel/net/9p/9pnet_virtio.ko.xz"
    assert entries["modules.mmio"][1].decode().split() == packed["mmio"]
    assert "kernel/drivers/virtio/virtio_pci.ko" in packed["pci"]
    assert "kernel/drivers/virtio/virtio_pci.ko" not in packed["mmio"]
    assert b"/bin/busybox chroot /cmdroot /sbin/modprobe" in entries["bin/modprobe-chroot"][1]


def test_init_keeps_the_exit_status_apart():
    """rc goes to the exchange dir through a rename, before the reset that ends the VM."""
    init = initramfs.INIT
    assert "echo $1 > $2/rc.tmp && mv $2/rc.tmp $2/rc" in init and "finish $? $R$X" in init
    assert init.index("mv $2/rc.tmp") < init.index("reboot -f\n", init.index("finish() {"))
    assert "cache=loose hostroot" in init and "cache=none xchg" in init


def test_init_gives_each_module_its_parameters_from_the_kernel_command_line(tmp_path):
    """As modprobe would: virtio_mmio.device=... reaches virtio_mmio's insmod
    (a VM without ACPI has its virtio-mmio devices only there); the init's own
    loop, run by a real shell with insmod standing in."""
    init = initramfs.INIT
    loop = init[init.index("while read m; do"): init.index("done < /modules.$BUS")] + "done < modules\n"
    (tmp_path / "modules").write_text("kernel/drivers/virtio/virtio_mmio.ko\n\nkernel/fs/9p/9p.ko\n")
    script = ('insmod() { echo "insmod $*"; }\nlog() { echo "log $*"; }\n'
              'CMDLINE="console=ttyS0 virtio_mmio.device=512@0xfeb00e00:12 9p.x=1 virtio_mmio.device=512@0xfeb00c00:11 '
              'virtio_mmiox.y=2"\n' + loop)
    out = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "insmod /kernel/drivers/virtio/virtio_mmio.ko device=512@0xfeb00e00:12 device=512@0xfeb00c00:11",
        "insmod /kernel/fs/9p/9p.ko x=1"]


# -- fetch and the cache (scripted apt, a real dpkg-deb and depmod) --------------------------


def fake_deb(tmp_path: Path, package: str, version: str, kver: str) -> Path:
    tree = tmp_path / "debtree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: test\n")
    (tree / "boot").mkdir()
    (tree / "boot" / f"vmlinuz-{kver}").write_bytes(bzimage(elf64(pvh=True), version=kver))
    moddir = tree / "lib" / "modules" / kver
    moddir.mkdir(parents=True)
    (moddir / "modules.order").write_text("")
    builtin = sorted({m for wanted in initramfs.BOOT_MODULES.values() for m in wanted})
    (moddir / "modules.builtin").write_text("".join(f"kernel/{m}.ko\n" for m in builtin))
    out = tmp_path / f"{package}_{version}_amd64.deb"
    subprocess.run(["dpkg-deb", "--build", "-Znone", str(tree), str(out)], check=True, capture_output=True)
    return out


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    if shutil.which("dpkg-deb") is None or shutil.which("depmod") is None:
        pytest.skip("needs dpkg-deb and depmod (a Debian host)")
    deb = fake_deb(tmp_path, "linux-image-6.1.0-test-amd64", "6.1.1-1", "6.1.0-test-amd64")
    busybox_dir = kcache.cache_root() / "tools" / "busybox-1_1.35"
    busybox_dir.mkdir(parents=True)
    (busybox_dir / "busybox").write_bytes(b"\x7fELF busybox")
    monkeypatch.setattr(apt, "candidate", lambda package: "6.1.1-1")

    def download(package, version, into):
        into.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(deb, into))

    monkeypatch.setattr(apt, "apt_download", download)
    return deb


def test_fetch_unpacks_indexes_extracts_and_writes_the_manifest(fake_apt, cache):
    logged = []
    kernel = fetch.ensure("debian:6.1.0-test-amd64", logged.append)
    assert kernel.directory == cache / "6.1.0-test-amd64"
    assert kernel.kver == "6.1.0-test-amd64" and kernel.pvh
    assert kernel.image.name == "vmlinux" and kernel.image.read_bytes() == elf64(pvh=True)
    assert (kernel.moddir / "modules.dep").exists()  # depmod -b ran
    manifest = json.loads((kernel.directory / "manifest.json").read_text())
    assert manifest["package"] == "linux-image-6.1.0-test-amd64" and manifest["version"] == "6.1.1-1"
    assert manifest["kind"] == "debian" and manifest["pvh"] is True
    assert manifest["format"] == kcache.MANIFEST_FORMAT and manifest["initramfs_format"] == initramfs.FORMAT
    assert len(manifest["deb_sha256"]) == 64
    assert not list(cache.glob(".fetch-*")), "the temporary directory was renamed into place"
    assert not (kernel.directory / "deb").exists()
    assert any("depmod" in line for line in logged)
    # cached: a second ensure does not fetch
    again = fetch.ensure("6.1.0-test-amd64", lambda text: pytest.fail(f"fetched again: {text}"))
    assert again.directory == kernel.directory
    assert [item["name"] for item in kernels.listing()] == ["debian:6.1.0-test-amd64"]


def test_a_failed_fetch_leaves_nothing(fake_apt, cache, monkeypatch):
    def broken(moddir, busybox, out):
        raise initramfs.InitramfsError("module overlay is neither built into the kernel nor in ...")

    monkeypatch.setattr(initramfs, "build", broken)
    with pytest.raises(initramfs.InitramfsError):
        fetch.ensure("debian:6.1.0-test-amd64")
    assert not (cache / "6.1.0-test-amd64").exists()
    assert not list(cache.glob(".fetch-*"))


def test_an_initramfs_of_another_format_is_left_and_one_of_this_format_built_beside_it(fake_apt, cache):
    """The cache is shared by checkouts of iolab with other formats: each
    boots its own init, and neither rewrites the other's."""
    kernel = fetch.ensure("debian:6.1.0-test-amd64")
    manifest = json.loads((kernel.directory / "manifest.json").read_text())
    manifest["initramfs_format"] = initramfs.FORMAT - 1
    (kernel.directory / "manifest.json").write_text(json.dumps(manifest))
    (kernel.directory / "initramfs.cpio").write_bytes(b"old")
    assert not kernels.listing()[0]["current"]
    again = fetch.ensure("debian:6.1.0-test-amd64", lambda text: pytest.fail(f"fetched again: {text}"))
    assert again.initramfs == kernel.directory / f"initramfs-v{initramfs.FORMAT}.cpio"
    assert read_cpio(again.initramfs.read_bytes())["init"][1].decode() == initramfs.INIT
    assert (kernel.directory / "initramfs.cpio").read_bytes() == b"old"
    assert json.loads((kernel.directory / "manifest.json").read_text()) == manifest
    assert kernels.listing()[0]["current"]


def test_a_build_of_your_own(tmp_path, cache):
    busybox_dir = kcache.cache_root() / "tools" / "busybox-1_1.35"
    busybox_dir.mkdir(parents=True)
    (busybox_dir / "busybox").write_bytes(b"\x7fELF busybox")
    image = tmp_path / "bzImage"
    image.write_bytes(bzimage(elf64(pvh=True), version="6.18.0-mine"))
    moddir = fake_module_tree(tmp_path / "mods", ["overlay"], TREE)
    moddir = moddir.rename(moddir.with_name("6.18.0-mine"))
    kernel = fetch.ensure(KernelRef("local", str(image), str(tmp_path / "mods")))
    assert kernel.kver == "6.18.0-mine" and kernel.pvh and kernel.moddir == moddir
    assert kernel.directory.name.startswith("local-")
    # a rebuilt image is another cache entry
    image.write_bytes(bzimage(elf64(pvh=True, banner=b"x"), version="6.18.0-mine"))
    other = fetch.ensure(KernelRef("local", str(image), str(tmp_path / "mods")))
    assert other.directory != kernel.directory


def test_a_build_of_your_own_without_modules_dep(tmp_path):
    image = tmp_path / "bzImage"
    image.write_bytes(bzimage(elf64(pvh=True), version="6.18.0-mine"))
    (tmp_path / "mods" / "lib" / "modules" / "6.18.0-mine").mkdir(parents=True)
    busybox_dir = kcache.cache_root() / "tools" / "busybox-1"
    busybox_dir.mkdir(parents=True)
    (busybox_dir / "busybox").write_bytes(b"x")
    with pytest.raises(KernelError, match="run depmod"):
        fetch.ensure(KernelRef("local", str(image), str(tmp_path / "mods")))


# -- the command line -------------------------------------------------------------------


def test_cli_kernel_list_and_bad_names(fake_apt, capsys):
    from iolab import cli

    assert cli.main(["kernel", "list"]) == 0
    assert "no kernels cached" in capsys.readouterr().out
    assert cli.main(["kernel", "fetch", "linux-image-amd64"]) == 2
    assert "is not a versioned Debian kernel" in capsys.readouterr().err
    assert cli.main(["kernel", "fetch", "debian:6.1.0-test-amd64"]) == 0
    assert "debian:6.1.0-test-amd64: 6.1.0-test-amd64 (6.1.1-1) in " in capsys.readouterr().out
    assert cli.main(["kernel", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].split()[:3] == ["debian:6.1.0-test-amd64", "6.1.1-1", "vmlinux"]
