"""Hostile mails: real list mails mutated from a fixed seed, and the harness
that feeds them to the mail reader and to `iolab watch --dry-run`.

`mutants(seed, count)` yields (kind, bytes): a real mail (tests/corpus/mails,
the seeds, tests/fixtures/mail) changed by one or more of

- byte flips, truncation, NUL and control bytes, bytes that are not UTF-8;
- header duplication (two Subjects, Message-Ids, In-Reply-Tos), folded and
  endless headers, a huge line (up to 1 MiB);
- MIME oddities: multipart without its closing boundary, nested deeply, an
  unknown charset, broken base64 and quoted-printable, a patch attached;
- diff names that leave the tree (../../etc/passwd, /dev/sda, absolute
  paths) and benchmark lines that name programs (fio exec_prerun, ioengine=
  exec, a shell recipe) whose only effect would be a canary file;
- subjects with odd counters ([PATCH 999/1], [PATCH v0 0/0]).

`check_watch(...)` runs `iolab watch --once --dry-run` over an inbox of the
mutants with HOME, XDG dirs and TMPDIR in a scratch root and lists every
file there before and after: what changed may only be iolab's cache.
"""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CANARY = "IOLAB_CANARY_DIR/pwned"  # replaced by the harness with a path of its scratch root


def seeds() -> list[bytes]:
    """The real mails the mutants start from."""
    found = sorted((REPO / "tests" / "corpus" / "mails").glob("*.eml"))
    found += sorted((REPO / "tests" / "fixtures" / "mail").glob("*.mbox"))
    found += sorted(Path("/work/shared/seeds").glob("*.txt")) + sorted(Path("/work/shared/seeds/code").glob("*"))
    mails = [path.read_bytes() for path in found if path.is_file()]
    return [m for m in mails if b"Subject:" in m[:20000]]


def applicable() -> list[bytes]:
    """Mails that apply to the stand-in source the harness unpacks (tests/inboxes.py),
    so that mutants also reach the workload choice and the "would queue" way."""
    from tests import inboxes

    return [inboxes.patch_mail(f"[PATCH] {area}: change line {line}", f"Change it.\n\nbefore: 100 MB/s\nafter: "
                               f"{100 + line} MB/s\n", inboxes.diff(name, line, f"int changed_{line};"),
                               msgid=f"applies-{line}@example.org")
            for line, (area, name) in enumerate([("block", "block/blk-mq.c"), ("ext4", "fs/ext4/inode.c"),
                                                 ("block", "block/blk-mq.c")], start=3)]


def _flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def _header_lines(data: bytes) -> tuple[list[bytes], bytes]:
    head, _, body = data.partition(b"\n\n")
    return head.split(b"\n"), body


def _duplicate_headers(rng: random.Random, data: bytes) -> bytes:
    lines, body = _header_lines(data)
    wanted = [line for line in lines if re.match(rb"(?i)^(subject|message-id|in-reply-to|from|references):", line)]
    for line in rng.sample(wanted, min(len(wanted), rng.randint(1, 3))):
        name = line.split(b":", 1)[0]
        value = rng.choice([line.split(b":", 1)[1], b" <dup-%d@x>" % rng.randrange(1000), b" [PATCH 2/1] other",
                            b" =?utf-8?q?=FF=FE?=", b""])
        lines.insert(rng.randrange(len(lines) + 1), name + b":" + value)
    return b"\n".join(lines) + b"\n\n" + body


def _huge_line(rng: random.Random, data: bytes) -> bytes:
    size = rng.choice([1000, 70_000, 1 << 20])
    line = rng.choice([b"A" * size, b"Subject: " + b"[PATCH] " * (size // 8), b"+" + b"x" * size,
                       b"diff --git a/" + b"d/" * (size // 2) + b"f b/f", b"X-Long: " + b" folded\n " * (size // 10)])
    lines = data.split(b"\n")
    lines.insert(rng.randrange(len(lines) + 1), line)
    return b"\n".join(lines)


def _mime(rng: random.Random, data: bytes) -> bytes:
    lines, body = _header_lines(data)
    kept = [line for line in lines if not re.match(rb"(?i)^(content-|mime-version)", line)]
    choice = rng.randrange(6)
    if choice == 0:  # multipart without its closing boundary
        head = [b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="zz"']
        body = b"--zz\nContent-Type: text/plain\n\n" + body
    elif choice == 1:  # deeply nested multiparts
        head = [b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="b0"']
        depth = rng.choice([5, 50, 200])
        text = body
        for level in reversed(range(depth)):
            inner = f'Content-Type: multipart/mixed; boundary="b{level + 1}"\n\n'.encode() if level < depth - 1 \
                else b"Content-Type: text/plain\n\n"
            text = f"--b{level}\n".encode() + inner + text + f"\n--b{level}--\n".encode()
        body = text
    elif choice == 2:  # an unknown charset
        head = [b"MIME-Version: 1.0", b"Content-Type: text/plain; charset=x-no-such-charset"]
    elif choice == 3:  # broken base64
        head = [b"MIME-Version: 1.0", b"Content-Type: text/plain; charset=utf-8",
                b"Content-Transfer-Encoding: base64"]
        body = base64.b64encode(body)[:-3] + b"!!*"
    elif choice == 4:  # broken quoted-printable
        head = [b"Content-Type: text/plain; charset=utf-8", b"Content-Transfer-Encoding: quoted-printable"]
        body = body.replace(b"\n", b"=\n=ZZ", 20)
    else:  # the patch attached, with a hostile file name
        head = [b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="att"']
        body = (b"--att\nContent-Type: text/plain\n\nsee attached\n--att\nContent-Type: text/x-patch; "
                b'name="../../etc/passwd"\nContent-Disposition: attachment; filename="../../etc/passwd"\n\n'
                + body + b"\n--att--\n")
    return b"\n".join(kept + head) + b"\n\n" + body


_DIFF_NAME = re.compile(rb"^(---|\+\+\+) (a|b)/(\S+)", re.M)
HOSTILE_NAMES = [b"../../etc/passwd", b"/dev/sda", b"../" * 12 + b"tmp/x", b"/etc/shadow", b"~/.ssh/authorized_keys",
                 b"a/../../../IOLAB_CANARY_DIR/pwned", b"dev/sda"]


def _hostile_names(rng: random.Random, data: bytes) -> bytes:
    name = rng.choice(HOSTILE_NAMES)
    absolute = name.startswith(b"/") and rng.random() < 0.5

    def renamed(match: re.Match[bytes]) -> bytes:
        return match.group(1) + b" " + (name if absolute else match.group(2) + b"/" + name)

    changed = _DIFF_NAME.sub(renamed, data, count=rng.randint(1, 4))
    return changed.replace(b"diff --git a/", b"diff --git a/" + name.lstrip(b"/") + b" a/", 1)


HOSTILE_BENCH = [
    f"fio --name=x --rw=read --exec_prerun='touch {CANARY}' --size=1M",
    f"fio --name=x --ioengine=exec --program='touch {CANARY}'",
    f"[job]\nrw=read\nexec_postrun=touch {CANARY}\n",
    f"```\n$ touch {CANARY}\n$ dd if=/dev/zero of={CANARY} bs=1M count=1\n```",
    f"  # echo 1 > /proc/sys/vm/drop_caches; touch {CANARY}",
    f"fio --filename=/dev/sda --rw=write --name=w --write_bw_log={CANARY}",
]


def _hostile_bench(rng: random.Random, data: bytes) -> bytes:
    lines, body = _header_lines(data)
    text = rng.choice(HOSTILE_BENCH).encode() + b"\n\nbefore: 100 MB/s\nafter: 120 MB/s\n\n"
    return b"\n".join(lines) + b"\n\n" + text + body


def _subject(rng: random.Random, data: bytes) -> bytes:
    odd = rng.choice([b"[PATCH 999/1]", b"[PATCH v0 0/0]", b"[PATCH v999999999 1/999]", b"[PATCH 0/999]",
                      b"[PATCH -1/-1]", b"Re: Re: Re: [PATCH 1/2]", b"[PATCH\x00 1/2]", b"[PATCH 1/2] " + b"[x]" * 500])
    return re.sub(rb"(?im)^Subject:[ \t]*(\[[^\]]*\])?", b"Subject: " + odd.replace(b"\\", b"\\\\"), data, count=1)


def _bytes(rng: random.Random, data: bytes) -> bytes:
    junk = rng.choice([b"\x00", b"\xff\xfe", b"\r", b"\x1b[2J", b"\xc3\x28", b"\r\n\r\n", b"\x0c"])
    out = bytearray(data)
    for _ in range(rng.randint(1, 10)):
        at = rng.randrange(len(out) + 1)
        out[at:at] = junk
    return bytes(out)


MUTATIONS = {"flip": _flip, "truncate": _truncate, "headers": _duplicate_headers, "huge-line": _huge_line,
             "mime": _mime, "diff-names": _hostile_names, "benchmark": _hostile_bench, "subject": _subject,
             "bytes": _bytes}


# the share of mutants made from a mail that applies: fixed, so that a growing corpus does not
# leave the "would queue" way untried (at 483 corpus mails, 3 of ~500 seeds gave none of 300)
APPLICABLE_SHARE = 0.1


def mutants(seed: int, count: int, canary: str) -> Iterator[tuple[str, bytes]]:
    """`count` mutated mails from a fixed seed: (the mutations applied, the bytes); a fixed share of
    them start from a mail that applies to the stand-in source."""
    rng = random.Random(seed)
    mails, fitting = seeds(), applicable()
    names = list(MUTATIONS)
    for _ in range(count):
        data = rng.choice(fitting if rng.random() < APPLICABLE_SHARE else mails)
        kinds = rng.sample(names, rng.choice([1, 1, 1, 2, 3]))
        for kind in kinds:
            data = MUTATIONS[kind](rng, data)
        yield "+".join(kinds), data.replace(CANARY.encode(), canary.encode())


# -- the harness ------------------------------------------------------------------------


def read_all(mails: list[tuple[str, bytes]], directory: Path) -> tuple[dict[str, int], list[str]]:
    """Each mutant through the mail reader (iolab.mail.read, then the one
    reading iolab mail and iolab patch take: patches, benchmark, claims):
    counts by outcome, and each failure that is not a MailError (a traceback)."""
    import traceback

    from iolab import mail
    from iolab.mail import reading

    counts = {"read": 0, "refused": 0, "traceback": 0}
    failures = []
    for number, (kind, data) in enumerate(mails):
        path = directory / f"mutant-{number}.eml"
        path.write_bytes(data)
        try:
            reading.reading(mail.read([path]))
            counts["read"] += 1
        except mail.MailError:
            counts["refused"] += 1
        except Exception:  # noqa: BLE001 -- what the fuzz looks for
            counts["traceback"] += 1
            failures.append(f"mutant {number} ({kind}): {traceback.format_exc(limit=-3)}")
        finally:
            path.unlink()
    return counts, failures


def _listing(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for path in root.rglob("*"):
        if skip in path.parents or path == skip:
            continue
        try:
            stat = path.lstat()
        except FileNotFoundError:
            continue
        is_dir = path.is_dir() and not path.is_symlink()  # a directory's time changes with a temp file made and gone
        found[str(path.relative_to(root))] = (0, 0) if is_dir else (stat.st_size, stat.st_mtime_ns)
    return found


def environment(root: Path) -> dict[str, str]:
    """HOME, the XDG dirs and TMPDIR in a scratch root (iolab's store and cache go there)."""
    import os

    places = {"HOME": "home", "XDG_DATA_HOME": "xdg-data", "XDG_CACHE_HOME": "xdg-cache",
              "XDG_STATE_HOME": "xdg-state", "XDG_CONFIG_HOME": "xdg-config", "TMPDIR": "tmp"}
    for name in places.values():
        (root / name).mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "IOLAB_STORE"}
    return {**env, **{key: str(root / name) for key, name in places.items()}, "PYTHONPATH": str(REPO)}


def check_watch(mails: list[tuple[str, bytes]], root: Path, *, source: bool = True) -> dict[str, object]:
    """`iolab watch --once --dry-run` over an inbox of the mutants (a kernel
    source unpacked in the scratch cache first, so GNU patch sees the diffs):
    its exit status, time, tally line, any traceback, the canary, and every
    file that changed in the scratch root outside iolab's cache."""
    import subprocess
    import sys
    import time

    from tests import inboxes

    env = environment(root)
    if source:
        tarball = inboxes.source_tarball(root / "src")
        subprocess.run([sys.executable, "-c", "import sys; from tests.inboxes import unpacked; "
                        "unpacked(__import__('pathlib').Path(sys.argv[1]))", str(tarball)], env=env, check=True,
                       cwd=REPO)
    (root / "canary").mkdir(exist_ok=True)
    inbox = root / "inbox.git"
    inboxes.append(inbox, [data for _, data in mails])
    before = _listing(root, inbox)
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "iolab.cli", "watch", str(inbox), "--once", "--dry-run",
                           "--backlog", str(len(mails) + 10)], env=env, capture_output=True, cwd=root / "home")
    took = time.monotonic() - began
    after = _listing(root, inbox)
    cache = "xdg-cache/iolab"
    changed = sorted(name for name in set(before) | set(after)
                     if before.get(name) != after.get(name) and not (name == cache or name.startswith(cache + "/")))
    stdout, stderr = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    tally = next((line for line in stdout.splitlines() if line.startswith("iolab watch:")), "")
    return {"exit": done.returncode, "seconds": took, "tally": tally, "traceback": "Traceback" in stderr,
            "stderr": stderr[-3000:], "canary": (root / "canary" / "pwned").exists(), "changed": changed,
            "skipped": stdout.count("\n  skip"), "would": stdout.count("\n  would")}
