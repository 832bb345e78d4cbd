"""Public-inbox mirrors built in the tests: a git repository whose every
commit holds one message in the file ``m`` (as the lists' mirrors keep them),
written by git fast-import; an inbox of several epochs is INBOX/git/N.git.
And the mails themselves: patch mails made by diff -u against a stand-in
kernel tree whose files iolab's workload library knows (block/, fs/ext4/)."""

from __future__ import annotations

import email.utils
import subprocess
import tarfile
from email.message import EmailMessage
from pathlib import Path

from tests.stand_in_kernel import FAKE_MAKEFILE

BLK = "".join(f"int blk_line_{n};\n" for n in range(1, 31))
EXT4 = "".join(f"int ext4_line_{n};\n" for n in range(1, 31))
MISC = "".join(f"int misc_line_{n};\n" for n in range(1, 31))
FILES = {"block/blk-mq.c": BLK, "fs/ext4/inode.c": EXT4, "drivers/misc/misc.c": MISC}


def source_tarball(tmp_path: Path) -> Path:
    """A stand-in kernel tree (its Makefile the build tests' one) as a tarball."""
    from tests.fakes import bzimage, elf64

    top = tmp_path / "tree" / "linux-7.2.99"
    for name, text in FILES.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text)
    (top / "src").mkdir()
    (top / "src" / "a.c").write_text("int a;\n")
    (top / "Makefile").write_text(FAKE_MAKEFILE)
    (top / "Kconfig").write_text("# stand-in\n")
    (top / "image.bin").write_bytes(bzimage(elf64(pvh=True), version="7.2.99"))
    (top / "vmlinux.elf").write_bytes(elf64(pvh=True, banner=b"Linux version 7.2.99 (me@here) #1 SMP\0"))
    tarball = tmp_path / "linux-7.2.99.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(top, arcname="linux-7.2.99")
    return tarball


def unpacked(tarball: Path) -> Path:
    """The tarball unpacked in iolab's cache (as iolab patch leaves a source it used)."""
    from iolab.kernels import sources

    return sources.unpack(sources.resolve(sources.parse(str(tarball))))


def diff(name: str, line: int, new: str, before: str | None = None) -> str:
    """A -p1 diff (diff -u) that changes line `line` of file `name` to `new`."""
    old = (before or FILES[name]).splitlines(keepends=True)
    changed = old.copy()
    changed[line - 1] = new + "\n"
    import difflib

    return "".join(difflib.unified_diff(old, changed, f"a/{name}", f"b/{name}"))


def mail(subject: str, body: str, *, msgid: str, reply_to: str | None = None, author: str = "Dev <dev@example.org>",
         date: int = 0) -> bytes:
    message = EmailMessage()
    message["From"] = author
    message["To"] = "linux-block@vger.kernel.org"
    message["Cc"] = "Maintainer <maint@example.org>"
    message["Subject"] = subject
    message["Date"] = email.utils.formatdate(1767225600 + date * 60)
    message["Message-Id"] = f"<{msgid}>"
    if reply_to:
        message["In-Reply-To"] = f"<{reply_to}>"
        message["References"] = f"<{reply_to}>"
    message.set_content(body)
    return bytes(message)


def patch_mail(subject: str, text: str, patch: str, **headers: object) -> bytes:
    return mail(subject, f"{text}\n\nSigned-off-by: Dev <dev@example.org>\n---\n{patch}-- \n2.47.0\n",
                **headers)  # type: ignore[arg-type]


def append(repo: Path, messages: list[bytes]) -> None:
    """Add one commit per message (file `m`) to the inbox repository, made if new."""
    if not (repo / "HEAD").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    head = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "-q", "--verify", "refs/heads/master"],
                          capture_output=True, text=True).stdout.strip()
    stream = bytearray()
    for n, data in enumerate(messages):
        stream += b"commit refs/heads/master\ncommitter list <list@example.org> 1767225600 +0000\n"
        stream += b"data 8\nmessage\n"
        if n == 0 and head:
            stream += f"from {head}\n".encode()
        stream += b"deleteall\n"  # each commit's tree holds one message, as public-inbox's do
        stream += f"M 100644 inline m\ndata {len(data)}\n".encode() + data + b"\n"
    subprocess.run(["git", "--git-dir", str(repo), "fast-import", "--quiet"], input=bytes(stream), check=True)
