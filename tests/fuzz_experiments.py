"""Hostile and broken experiment files, generated from a fixed seed.

`cases(seed, count)` yields `Case(name, data, expect)`: the file's bytes and
what iolab must do with it: "ok" (accepted), "bad" (refused: exit 2) or
"any" (either, as long as it is one of them, without a traceback and with
a short message). Kinds:

- a valid file, varied (sizes, orders, fio options, metrics);
- hostile fio job lines and variant fio options (programs, engines, paths
  out of the target, includes, injected newlines, keys with blanks);
- `dir` targets at system directories;
- parser bombs: deep TOML nesting, huge or deep derived expressions;
- bytes that are not UTF-8; wrong types (a table where a string belongs);
- huge values (a 200 kB name);
- random byte mutations of a valid file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

JOB = "[global]\nrw=randread\nbs=4k\nsize=16M\nruntime=1\ntime_based=1\n[read]\n"

HOSTILE_JOB_LINES = [
    "exec_prerun=/bin/sh -c 'touch /tmp/pwned'", "exec_postrun=id", "ioengine=exec",
    "ioengine=external:/tmp/evil.so", "ioengine=/tmp/evil.so", "ioengine=net", "include /etc/passwd",
    "include=/etc/passwd", "filename=/dev/vda", "filename=../../dev/vda", "filename=ok:../../../etc/x",
    "filename_format=../../$jobname", "directory=/", "opendir=/etc", "write_bw_log=/tmp/bw",
    "write_lat_log=../../../lat", "write_iolog=/tmp/iolog", "read_iolog=/tmp/trace", "replay_redirect=/dev/sda",
    "mem=mmapshared:/etc/passwd", "buffer_pattern='/etc/shadow'", "ioscheduler=none", "cgroup=evil",
    "filename=${HOME}/x", "filename =/dev/vda", "profile=act", "description=" + "x" * 5000 + "filename=/dev/sda",
]
HOSTILE_OPTIONS = [
    {"filename ": "/dev/vda"}, {"direct": "1\nfilename=/dev/vda"}, {"exec_prerun": "id"},
    {"filename_format": "../x"}, {"ioengine": "external:/x.so"}, {"write_bw_log": "/tmp/bw"},
    {"direct\n[evil]\nfilename": "/dev/sda"}, {"direct": "1\r\nexec_prerun=id"},
]
SYSTEM_DIRS = ["/", "/etc", "/usr", "/boot", "/dev", "/proc", "/sys", "/var", "/root", "/home", "/bin", "/lib"]


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    expect: str  # "ok" | "bad" | "any"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string here
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"


def render(doc: dict[str, object]) -> str:
    """A small TOML writer for the shapes below: top-level keys, tables and arrays of tables."""
    out = [f"{k} = {_toml(v)}" for k, v in doc.items() if not isinstance(v, (dict, list)) or
           (isinstance(v, list) and not all(isinstance(x, dict) for x in v))]
    for key, value in doc.items():
        if isinstance(value, dict):
            out.append(f"[{key}]")
            out += [f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for item in value:
                out.append(f"[[{key}]]")
                out += [f"{json.dumps(k)} = {_toml(v)}" for k, v in item.items()]
    return "\n".join(out) + "\n"


def valid(rng: random.Random) -> dict[str, object]:
    job = JOB.replace("randread", rng.choice(["read", "randread", "write", "randwrite"]))
    return {
        "name": f"fuzz {rng.randrange(1000)}",
        "target": {"kind": "loop", "fs": rng.choice(["ext4", "ext4", "btrfs", "none"]),
                   "size": rng.choice(["256MiB", "1GiB", "512M"])},
        "variant": [{"name": "base", "fio": {"direct": 0}},
                    {"name": "cand", "fio": {"direct": 1, "iodepth": rng.choice([1, 4, 32])}}],
        "workload": [{"name": "w", "job": job}],
        "run": {"iterations": rng.randrange(1, 9), "order": rng.choice(["interleaved", "sequential"])},
    }


def _hostile_job(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    doc["workload"][0]["job"] = JOB + rng.choice(HOSTILE_JOB_LINES) + "\n"  # type: ignore[index]
    return render(doc), "bad"


def _hostile_option(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    doc["variant"][1]["fio"] = rng.choice(HOSTILE_OPTIONS)  # type: ignore[index]
    return render(doc), "bad"


def _system_dir(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    doc["target"] = {"kind": "dir", "fs": "none", "path": rng.choice(SYSTEM_DIRS) + rng.choice(["", "/", "/."])}
    return render(doc), "bad"


def _escaping_target(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    if rng.random() < 0.5:  # erofs files are written as root into a tree iolab packs
        name = rng.choice(["../../etc/x{n}", "/etc/cron.d/x", "a/../../b", "{n.__class__}", "{0}", "x\u0007"])
        doc["target"] = {"kind": "loop", "fs": "erofs", "files": [{"name": name, "size": "1M"}]}
    else:
        doc["target"] = {"kind": "loop", "fs": "ext4", "image_dir": rng.choice(SYSTEM_DIRS)}
    return render(doc), "bad"


def _probe(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    params = rng.choice([{"mode": "lat", "op": "x" * 100_000}, {"mode": "lat", "file": "/dev/sda"},
                         {"mode": "churn", "dir": "/etc"}, {"mode": {"a": 1}}, {"mode": "lat", "bs": [1, 2]},
                         {"mode": "batch", "case": "write_u1k", "offset": "9" * 5000}])
    doc["workload"] = [{"name": "p", "engine": "probe", "probe": params}]
    return render(doc), "bad"


def _deep_toml(rng: random.Random) -> tuple[str, str]:
    depth = rng.choice([200, 2000, 20000])
    if rng.random() < 0.5:
        return render(valid(rng)) + "x = " + "[" * depth + "]" * depth + "\n", "bad"
    return render(valid(rng)) + "x = " + "{a=" * depth + "1" + "}" * depth + "\n", "bad"


def _derived_bomb(rng: random.Random) -> tuple[str, str]:
    n = rng.choice([1000, 20000, 200000])
    expr = rng.choice(["(" * n + "ctx" + ")" * n, "ctx" + "+ctx" * n, "-" * n + "ctx", "1" * n + "/ios"])
    return render(valid(rng)) + f"[derived]\nbomb = {json.dumps(expr)}\n", "bad"


def _not_utf8(rng: random.Random) -> tuple[bytes, str]:
    text = render(valid(rng)).encode()
    at = rng.randrange(len(text))
    return text[:at] + bytes([rng.choice([0xff, 0xfe, 0xc3, 0x80])]) + text[at:], "bad"


def _wrong_type(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    where = rng.choice(["name", "target", "variant", "workload", "run", "job", "fio", "iterations"])
    bad = rng.choice([{"x": 1}, [1, 2], 3, "str", True, 1.5, [{"a": 1}]])
    if where in ("job", "fio"):
        item = doc["workload"][0] if where == "job" else doc["variant"][0]  # type: ignore[index]
        item[where] = bad if where == "job" or not isinstance(bad, dict) else {"direct": {"x": 1}}
    elif where == "iterations":
        doc["run"]["iterations"] = bad  # type: ignore[index]
    else:
        doc[where] = bad
    return render(doc), "any"


def _huge(rng: random.Random) -> tuple[str, str]:
    doc = valid(rng)
    field = rng.choice(["name", "variant"])
    if field == "name":
        doc["name"] = "N" * 200_000 + "\x07"
    else:
        doc["variant"][0]["name"] = "V" * 200_000  # type: ignore[index]
    return render(doc), "bad"


def _mutated(rng: random.Random) -> tuple[bytes, str]:
    data = bytearray(render(valid(rng)).encode())
    for _ in range(rng.randrange(1, 6)):
        at = rng.randrange(len(data))
        op = rng.random()
        if op < 0.4:
            data[at] = rng.randrange(32, 127)
        elif op < 0.7:
            del data[at]
        else:
            data[at:at] = rng.choice([b"[", b"]", b"=", b'"', b"\n", b"{", b"[[variant]]\n", b"\\"])
    return bytes(data), "any"


KINDS: list[tuple[str, Callable[[random.Random], tuple[str | bytes, str]]]] = [
    ("valid", lambda rng: (render(valid(rng)), "ok")),
    ("hostile-job", _hostile_job), ("hostile-option", _hostile_option), ("system-dir", _system_dir),
    ("deep-toml", _deep_toml), ("derived-bomb", _derived_bomb), ("not-utf8", _not_utf8),
    ("wrong-type", _wrong_type), ("huge", _huge), ("mutated", _mutated), ("mutated", _mutated),
    ("escaping-target", _escaping_target), ("probe", _probe),
]


def cases(seed: int = 12, count: int = 300) -> Iterator[Case]:
    rng = random.Random(seed)
    for index in range(count):
        kind, make = KINDS[index % len(KINDS)]
        data, expect = make(rng)
        yield Case(f"{index:03d}-{kind}", data if isinstance(data, bytes) else data.encode(), expect)
