"""Kernel sources a build starts from: a Debian linux-source package, a git
tree at a commit, or a tarball.

    debian:linux-source-7.2            the package's candidate version
    debian:linux-source-7.2=7.2.13-1   that version
    /src/linux  (with commit = "v7.2")  a git tree at a commit (git archive)
    /src/linux-7.2.tar.xz               a tarball (.tar, .tar.gz, .tar.xz, .tar.bz2, .tar.zst)

Debian's linux-source packages come from the suite named in iolab's private
apt configuration (``unstable`` unless IOLAB_APT_SUITE says otherwise). The
binary index also lists ``experimental``, pinned at -10 so that apt never
picks anything from it: a linux-source package named in an experiment file
that only experimental carries (debian:linux-source-7.3 while 7.3 is a
release candidate) is taken at its experimental version, and said so; no
other package (busybox, fio's source, a newer linux-source-7.2) ever comes
from there. The configuration is kept in the cache: its own sources, package lists, package cache and state, so
the system's apt sources and lists are never touched (the system's apt.conf.d
still applies: proxies and the like). The .deb is checked by apt against the
signed index (the system's Debian archive keyring).

Each source is unpacked once into ``$XDG_CACHE_HOME/iolab/sources/<id>/linux``
(about 1.5 GB for 7.2) and named by its identity: the package and version,
the commit's hash, or the tarball's sha256.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iolab import process
from iolab.kernels import cache
from iolab.kernels.apt import run as _run
from iolab.kernels.kernel_ref import KernelError, Log

SUITE = "unstable"
EXPERIMENTAL = "experimental"  # listed, pinned never to be chosen; see _experimental
ARCHIVE = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
_DEBIAN = re.compile(r"^debian:(linux-source-[0-9][0-9a-z.+~-]*)(?:=([0-9][0-9a-z.+~:-]*))?$")
_TARBALL = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tar.zst")


@dataclass(frozen=True)
class SourceRef:
    """A source as an experiment file names it (paths already absolute)."""

    kind: str  # "debian" | "git" | "tarball"
    name: str  # the package, or the path
    version: str | None = None  # debian: a version; git: the commit (any rev)


@dataclass(frozen=True)
class Source:
    """A resolved source: what exactly is built."""

    ref: SourceRef
    identity: str  # debian:linux-source-7.2=7.2.13-1 | git:<sha1> | tarball:<sha256>
    label: str  # for people: "linux-source-7.2 7.2.13-1", "linux v7.2 (3f1a...)"

    @property
    def slug(self) -> str:
        digest = hashlib.sha256(self.identity.encode()).hexdigest()[:12]
        return f"{self.ref.kind}-{digest}"


def parse(text: str, commit: str | None = None, base_dir: str = ".") -> SourceRef:
    """A source from an experiment file; KernelError says what is wrong."""
    text = text.strip()
    if text.startswith("debian:"):
        match = _DEBIAN.match(text)
        if match is None:
            raise KernelError(f"source {text!r}: name a Debian kernel source package, "
                              "like debian:linux-source-7.2 (or debian:linux-source-7.2=7.2.13-1)")
        if commit is not None:
            raise KernelError("commit goes with a git tree, not a Debian package")
        return SourceRef("debian", match.group(1), match.group(2))
    if not text:
        raise KernelError("source: empty")
    path = str(Path(base_dir, text).resolve())
    if text.endswith(_TARBALL):
        if commit is not None:
            raise KernelError("commit goes with a git tree, not a tarball")
        return SourceRef("tarball", path)
    if commit is None:
        if not os.path.exists(path):
            raise KernelError(f"source {text!r}: no such file or directory" + (f" ({path})" if path != text else ""))
        raise KernelError(f"source {text!r}: a git tree needs commit = \"...\" (a tag, branch or hash), "
                          "so that the build says what it built; or give a tarball or debian:linux-source-X")
    return SourceRef("git", path, commit)


def cache_root() -> Path:
    return cache.cache_root().parent / "sources"


# -- the private apt configuration -------------------------------------------------


def apt_dir(sources: bool = False) -> Path:
    """The private apt state: binary packages, or (``sources``) source packages
    (a tree of its own, so neither index update touches the other's lists)."""
    return cache.cache_root().parent / ("apt-src" if sources else "apt")


def apt_config(sources: bool = False) -> Path:
    """Write (if needed) and return the private apt configuration file."""
    root = apt_dir(sources)
    suite = os.environ.get("IOLAB_APT_SUITE", SUITE)
    suites = suite if sources or suite == EXPERIMENTAL else f"{suite} {EXPERIMENTAL}"
    for sub in ("etc/sources.list.d", "etc/preferences.d", "lists/partial", "cache/archives/partial", "state"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "state" / "status").touch()
    (root / "etc" / "sources.list").touch()
    (root / "etc" / "sources.list.d" / "iolab.sources").write_text(
        f"Types: {'deb-src' if sources else 'deb'}\nURIs: {ARCHIVE}\nSuites: {suites}\nComponents: main\n"
        f"Architectures: amd64\nSigned-By: {KEYRING}\n")
    # below 0: apt never chooses an experimental version by itself (no candidate, no
    # dependency); only an explicit package=version from _experimental downloads one
    (root / "etc" / "preferences.d" / "iolab-experimental.pref").write_text(
        f"Package: *\nPin: release a={EXPERIMENTAL}\nPin-Priority: -10\n")
    conf = root / "apt.conf"
    settings = {
        "Dir::Etc::sourcelist": root / "etc" / "sources.list",
        "Dir::Etc::sourceparts": root / "etc" / "sources.list.d",
        "Dir::Etc::preferences": root / "etc" / "preferences",
        "Dir::Etc::preferencesparts": root / "etc" / "preferences.d",
        "Dir::State": root / "state",
        "Dir::State::lists": root / "lists",
        "Dir::State::status": root / "state" / "status",
        "Dir::Cache": root / "cache",
        "Acquire::Languages": "none",
    }
    text = "".join(f'{key} "{value}";\n' for key, value in settings.items())
    if os.geteuid() == 0:  # root's downloads are otherwise "unsandboxed" with a warning
        text += 'APT::Sandbox::User "root";\n'
    if not conf.exists() or conf.read_text() != text:
        conf.write_text(text)
    return conf


# apt's extra index targets (appstream metadata) are not needed for downloads
_NO_EXTRAS = [f"-oAcquire::IndexTargets::deb::{target}::DefaultEnabled=false"
              for target in ("DEP-11", "DEP-11-icons", "DEP-11-icons-small", "DEP-11-icons-hidpi")]


def _apt(argv: list[str], what: str, cwd: Path | None = None, sources: bool = False) -> str:
    env_conf = str(apt_config(sources))
    command = ["env", f"APT_CONFIG={env_conf}", *argv]
    return _run(command, what, cwd=cwd)


def apt_update(log: Log) -> None:
    log(f"updating iolab's private apt index ({os.environ.get('IOLAB_APT_SUITE', SUITE)}) in {apt_dir()}")
    _apt(["apt-get", "update", "-q", *_NO_EXTRAS], "apt-get update (iolab's private index)")


def _has_lists() -> bool:
    return any(apt_dir().joinpath("lists").glob("*_Packages*"))


# package, index dir, index mtime -> candidate: one apt-cache call per package
# while the index stays the same (a dry run asks once per variant; 1 s each),
# and across runs: kept in the index's directory (CANDIDATES), by the lists'
# time, which apt-get update moves (apt-cache reads 24 MB of lists each time:
# 0.85 s of CPU, 7-8 s at a load of 9)
_candidates: dict[tuple[str, str, int], str] = {}
CANDIDATES = "candidates.json"


def _kept(key: tuple[str, str, int]) -> str | None:
    path = apt_dir() / CANDIDATES
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    value = kept.get(f"{key[0]} {key[2]}") if isinstance(kept, dict) else None
    return value if isinstance(value, str) else None


def _keep(key: tuple[str, str, int], version: str) -> str:
    _candidates[key] = version
    path = apt_dir() / CANDIDATES
    try:
        kept = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        kept = {}
    kept = {name: value for name, value in kept.items() if name.rsplit(" ", 1)[-1] == str(key[2])}
    kept[f"{key[0]} {key[2]}"] = version
    partial = path.with_name(f"{CANDIDATES}.{os.getpid()}")
    partial.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    partial.rename(path)
    return version


def _candidate(package: str, log: Log) -> str:
    if not _has_lists():
        apt_update(log)
    for attempt in (1, 2):
        lists = apt_dir() / "lists"
        key = (package, str(lists), lists.stat().st_mtime_ns)
        known = _candidates.get(key) or _kept(key)
        if known is not None:
            _candidates[key] = known
            return known
        out = _apt(["apt-cache", "policy", package], f"apt-cache policy {package}")
        match = re.search(r"^\s*Candidate:\s*(\S+)", out, re.M)
        if match and match.group(1) != "(none)":
            return _keep(key, match.group(1))
        version = _experimental(package, log)
        if version is not None:
            return _keep(key, version)
        if attempt == 1:
            apt_update(log)
    names = _apt(["apt-cache", "pkgnames", "linux-source-"], "apt-cache pkgnames").split()
    known_names = ", ".join(sorted(n.removeprefix("debian:") for n in names)) or "none"
    raise KernelError(f"no package {package} in iolab's private apt index ({apt_dir()}); "
                      f"linux-source packages there: {known_names}")


def _experimental(package: str, log: Log) -> str | None:
    """The newest version of a package the suite lacks but experimental carries
    (apt-cache madison lists the pinned-out versions too, newest first)."""
    out = _apt(["apt-cache", "madison", package], f"apt-cache madison {package}")
    for line in out.splitlines():
        fields = [field.strip() for field in line.split("|")]
        if len(fields) == 3 and fields[0] == package and f" {EXPERIMENTAL}/" in fields[2]:
            log(f"{package} is only in Debian's {EXPERIMENTAL} suite: using {fields[1]} "
                f"(named explicitly; nothing else comes from {EXPERIMENTAL})")
            return fields[1]
    return None


def resolve(ref: SourceRef, log: Log = lambda _: None) -> Source:
    """What exactly the ref names now (a version, a commit hash, a digest)."""
    if ref.kind == "debian":
        version = ref.version or _candidate(ref.name, log)
        return Source(ref, f"debian:{ref.name}={version}", f"{ref.name} {version}")
    path = Path(ref.name)
    if ref.kind == "tarball":
        if not path.is_file():
            raise KernelError(f"source: no such tarball: {path}")
        return Source(ref, f"tarball:{cache.sha256(path)}", path.name)
    if not path.exists():
        raise KernelError(f"source: no such file or directory: {path}")
    if not (path / ".git").exists() and not (path / "HEAD").exists():
        raise KernelError(f"source: {path} is not a git tree (give a tarball, a git tree with commit, "
                          "or debian:linux-source-X)")
    try:
        sha = _run(["git", "-C", str(path), "rev-parse", "--verify", "-q", f"{ref.version}^{{commit}}"],
                           f"git rev-parse {ref.version}").strip()
    except KernelError:
        raise KernelError(f"source: {path} has no commit {ref.version!r}") from None
    return Source(ref, f"git:{sha}", f"{path.name} {ref.version} ({sha[:12]})")


# -- unpacking ----------------------------------------------------------------------


def tree(source: Source) -> Path:
    """Where the source's tree is (or will be) unpacked."""
    return cache_root() / source.slug / "linux"


def _single_top(directory: Path) -> Path:
    """The tree inside an unpacked archive: its one top directory, or itself."""
    entries = [p for p in directory.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return directory


def _unpack_debian(source: Source, work: Path, log: Log) -> Path:
    package, version = source.ref.name, source.identity.rsplit("=", 1)[1]
    log(f"downloading {package} {version}")
    _apt(["apt-get", "download", "-q", f"{package}={version}"], f"apt-get download {package}", cwd=work)
    debs = sorted(work.glob(f"{package}_*.deb"))
    if len(debs) != 1:
        raise KernelError(f"apt-get download {package} left {len(debs)} .deb files in {work}")
    _run(["dpkg-deb", "-x", str(debs[0]), str(work / "pkg")], "dpkg-deb -x")
    debs[0].unlink()
    archives = sorted((work / "pkg" / "usr" / "src").glob("linux-source-*.tar*"))
    if len(archives) != 1:
        raise KernelError(f"{package} {version} holds {len(archives)} source tarballs in /usr/src, not one")
    log(f"unpacking {archives[0].name}")
    (work / "tree").mkdir()
    _run(["tar", "-xf", str(archives[0]), "-C", str(work / "tree")], f"tar -xf {archives[0].name}")
    shutil.rmtree(work / "pkg")
    return _single_top(work / "tree")


def _unpack_git(source: Source, work: Path, log: Log) -> Path:
    sha = source.identity.removeprefix("git:")
    log(f"exporting {source.label}")
    (work / "tree").mkdir()
    archive = work / "tree.tar"
    _run(["git", "-C", source.ref.name, "archive", "--format=tar", "-o", str(archive), sha],
                 "git archive")
    _run(["tar", "-xf", str(archive), "-C", str(work / "tree")], "tar -xf (git archive)")
    archive.unlink()
    return work / "tree"


def _unpack_tarball(source: Source, work: Path, log: Log) -> Path:
    log(f"unpacking {source.label}")
    (work / "tree").mkdir()
    _run(["tar", "-xf", source.ref.name, "-C", str(work / "tree")], f"tar -xf {source.label}")
    return _single_top(work / "tree")


def unpack(source: Source, log: Log = lambda _: None) -> Path:
    """The source's pristine tree in the cache, unpacked on first use."""
    final = tree(source)
    if is_unpacked(final):
        return final
    with cache.locked(cache_root(), source.slug):
        if is_unpacked(final):
            return final
        work = Path(tempfile.mkdtemp(prefix=f".unpack-{source.slug}-", dir=cache_root()))
        try:
            unpacker = {"debian": _unpack_debian, "git": _unpack_git, "tarball": _unpack_tarball}
            top = unpacker[source.ref.kind](source, work, log)
            if not (top / "Makefile").exists() or not (top / "Kconfig").exists():
                raise KernelError(f"{source.label}: no kernel tree in it (no top-level Makefile and Kconfig)")
            if final.parent.exists():
                shutil.rmtree(final.parent)
            final.parent.mkdir(parents=True)
            top.rename(final)
            info = {"identity": source.identity, "label": source.label, "ref": source.ref.name,
                    "unpacked_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
            (final.parent / "source.json").write_text(json.dumps(info, indent=1) + "\n")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final


def unpacked(ref: SourceRef, log: Log = lambda _: None) -> Path | None:
    """The source's tree when it is unpacked in the cache already, else None;
    nothing is downloaded or unpacked (and a Debian package with no version
    unpacked here is not even looked up)."""
    if ref.kind == "debian" and ref.version is None:
        known = [json.loads(info.read_text()).get("identity", "") for info in cache_root().glob("*/source.json")]
        if not any(identity.startswith(f"debian:{ref.name}=") for identity in known):
            return None
    final = tree(resolve(ref, log))
    return final if is_unpacked(final) else None


def is_unpacked(root: Path) -> bool:
    """Whether a source's tree (``tree``) is unpacked, whole."""
    return (root.parent / "source.json").exists()


def kernel_version(root: Path) -> str:
    """VERSION.PATCHLEVEL.SUBLEVEL from a tree's top Makefile."""
    fields = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\S*)", (root / "Makefile").read_text(), re.M))
    return ".".join(fields.get(key, "?") for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))


def toolchain() -> str:
    """The compiler and linker a build uses, as they name themselves."""
    lines = []
    for tool in ("gcc", "ld"):
        if shutil.which(tool) is None:
            raise KernelError(f"{tool} not found: a kernel build needs gcc and binutils "
                              "(scripts/setup installs them; iolab doctor lists what is missing)")
        out = process.run([tool, "--version"]).stdout
        lines.append(out.splitlines()[0] if out else tool)
    return " / ".join(lines)
