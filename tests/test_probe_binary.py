"""iolab-probe, the native engine: the real binary on real files.

The binary is built from the current sources of probe/ into a temporary
directory (so a concurrent `make -C probe` cannot race with the tests), once
per session, plus an ASan/UBSan build for the sanitizer tests. Every run
checks the output contract: exit status 0 and exactly one JSON object on
stdout, or a non-zero status, nothing on stdout and the reason on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROBE_SRC = REPO / "probe"
MODES = ("lat", "batch", "uring", "churn")
RUSAGE_KEYS = {"nvcsw", "nivcsw", "utime_us", "stime_us", "minflt", "majflt"}
LAT_KEYS = {"min", "mean", "p50", "p99", "p99.9", "max", "bins"}


# ---------------------------------------------------------------- building

def _toolchain_missing() -> str | None:
    """Why this machine cannot build the probe, or None."""
    for tool in ("make", "cc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not PROBE_SRC.joinpath("Makefile").exists():
        return "probe/Makefile is missing"
    check = subprocess.run(
        ["cc", "-x", "c", "-o", os.devnull, "-", "-luring"],
        input="#include <liburing.h>\nint main(void){struct io_uring r;"
              "return io_uring_queue_init(1,&r,0)<-1000;}\n",
        capture_output=True, text=True, check=False)
    if check.returncode != 0:
        return "liburing (liburing-dev) is not installed: " + check.stderr.strip()[:200]
    return None


def _build(tmp_path_factory, target: str, binary: str) -> Path:
    reason = _toolchain_missing()
    if reason:
        pytest.skip(f"cannot build iolab-probe: {reason}")
    build = tmp_path_factory.mktemp(f"probe-build-{target}")
    for src in PROBE_SRC.iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy2(src, build / src.name)
    res = subprocess.run(["make", "-s", "-C", str(build), target],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.fail(f"make {target} failed:\n{res.stdout}\n{res.stderr}")
    return build / binary


@pytest.fixture(scope="session")
def probe(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, "all", "iolab-probe")


@pytest.fixture(scope="session")
def probe_san(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, "san", "iolab-probe-san")


# ---------------------------------------------------------------- running

class Result:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def json(self) -> dict:
        assert self.rc == 0, f"exit {self.rc}: {self.err}"
        doc = json.loads(self.out)  # the whole stdout is one JSON value
        assert isinstance(doc, dict)
        return doc


def run(binary: Path, *args: str, env: dict | None = None) -> Result:
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    res = Result(proc)
    if res.rc != 0:
        assert res.out == "", "a failed run must print nothing on stdout"
        assert res.err.startswith("iolab-probe: "), res.err
    return res


def ok(binary: Path, *args: str, env: dict | None = None) -> dict:
    res = run(binary, *args, env=env)
    assert res.rc == 0, f"exit {res.rc}: {res.err}"
    doc = res.json
    assert doc["probe_version"] == 1
    assert doc["mode"] == args[0]
    assert isinstance(doc["params"], dict)
    return doc


def check_lat_hist(lat: dict, ops: int) -> None:
    assert LAT_KEYS <= lat.keys()
    bins = lat["bins"]
    assert all(k.isdigit() for k in bins), "bin keys are integer ns, as in fio json+"
    assert all(isinstance(v, int) and v > 0 for v in bins.values()), "only non-zero buckets"
    assert sum(bins.values()) == ops
    assert lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
    assert lat["min"] <= lat["mean"] <= lat["max"]
    # every bucket value lies within 0.4% of a value that could fall in it
    assert min(int(k) for k in bins) <= lat["min"] * 1.004 + 1
    assert max(int(k) for k in bins) >= lat["max"] / 1.004 - 1


def direct_io_works(probe: Path, path: Path) -> bool:
    return run(probe, "lat", f"--file={path}", "--file-size=1M", "--direct",
               "--ops=4").rc == 0


# ---------------------------------------------------------------- CLI

def test_help_lists_modes_and_parameters(probe):
    res = run(probe, "--help")
    assert res.rc == 0
    for mode in MODES:
        assert f"\n  {mode} " in res.out
    for param in ("--bs=SIZE", "--rwf=FLAGS", "--iodepth=N", "--delete-every=N",
                  "--case=write_u1k", "--cpu=N"):
        assert param in res.out


def test_mode_help_and_describe(probe):
    res = run(probe, "uring", "--help")
    assert res.rc == 0 and "--submit-batch=N" in res.out and "--case=" not in res.out
    doc = json.loads(run(probe, "--describe").out)
    assert [m["name"] for m in doc["modes"]] == list(MODES)


def test_no_arguments_is_a_usage_error(probe):
    res = run(probe)
    assert res.rc == 2 and "usage:" in res.err


def test_unknown_mode_is_named(probe):
    res = run(probe, "frobnicate", "--bs=4k")
    assert res.rc == 2
    assert "unknown mode 'frobnicate'" in res.err


@pytest.mark.parametrize("args, named", [
    (("lat", "--file=x", "--nosuch=1"), "unknown parameter --nosuch"),
    (("lat", "--file=x", "--bs=abc"), "--bs: 'abc'"),
    (("lat", "--file=x", "--bs=0"), "--bs must be at least 1"),
    (("lat", "--file=x", "--ops=-5"), "--ops: '-5'"),
    (("lat", "--file=x", "--ops=0"), "--ops must be at least 1"),
    (("lat", "--file=x", "--op=mmap"), "--op: 'mmap'"),
    (("lat", "--file=x", "--rwf=dontcache"), "--rwf needs --op=preadv2 or --op=pwritev2"),
    (("lat", "--file=x", "--op=preadv2", "--rwf=sometimes"), "--rwf: 'sometimes'"),
    (("lat", "bs=4096"), "expected --key=value"),
    (("lat",), "--file=PATH is required"),
    (("batch", "--file=x"), "--case is required"),
    (("batch", "--file=x", "--case=write_u1k", "--bs=10"), "--case=custom only"),
    (("uring", "--file=x", "--iodepth=0"), "--iodepth must be at least 1"),
    (("churn", "--dir=x", "--phases=create,explode"), "unknown phase 'explode'"),
    (("churn", "--dir=x", "--phases=create", "--report-phase=sync"), "not in --phases"),
    (("lat", "--file=x", "--cpu=99999"), "--cpu=99999"),
])
def test_usage_errors_exit_2_and_name_the_parameter(probe, args, named):
    res = run(probe, *args)
    assert res.rc == 2, res.err
    assert named in res.err


# ---------------------------------------------------------------- lat

@pytest.mark.parametrize("op, pattern", [
    ("pread", "seq"), ("pwrite", "rand"), ("preadv2", "rand"), ("pwritev2", "seq"),
])
def test_lat_emits_documented_json(probe, tmp_path, op, pattern):
    f = tmp_path / "data"
    doc = ok(probe, "lat", f"--op={op}", f"--file={f}", "--file-size=2M",
             f"--pattern={pattern}", "--ops=2000", "--warmup-ops=50", "--cpu=0")
    assert doc["params"]["op"] == op and doc["params"]["cpu"] == 0
    assert doc["params"]["bs"] == 4096 and doc["params"]["file-size"] == 2 << 20
    assert doc["ops"] == 2000 and doc["bytes"] == 2000 * 4096
    assert doc["elapsed_ns"] > 0
    check_lat_hist(doc["lat_ns"], 2000)
    assert doc["elapsed_ns"] >= doc["lat_ns"]["sum"]
    assert 0 < doc["timer_overhead_ns"] < 100_000
    assert RUSAGE_KEYS <= doc["rusage"].keys()
    assert doc["target"]["created"] is True
    assert f.stat().st_size == 2 << 20


def test_lat_prefills_nonzero_data_and_keeps_an_existing_file(probe, tmp_path):
    f = tmp_path / "data"
    ok(probe, "lat", f"--file={f}", "--file-size=256k", "--ops=10")
    data = f.read_bytes()
    assert len(data) == 256 << 10 and b"\0" not in data
    doc = ok(probe, "lat", f"--file={f}", "--file-size=128k", "--ops=10")
    assert doc["target"]["created"] is False and doc["target"]["prefill_bytes"] == 0
    assert f.read_bytes() == data


def test_lat_runtime_bounds_the_run(probe, tmp_path):
    doc = ok(probe, "lat", f"--file={tmp_path / 'd'}", "--file-size=1M",
             "--runtime=200ms")
    assert doc["params"]["runtime_ns"] == 200_000_000
    assert doc["ops"] > 0
    assert 200_000_000 <= doc["elapsed_ns"] < 2_000_000_000
    check_lat_hist(doc["lat_ns"], doc["ops"])


def test_lat_percentiles_match_iolab_histogram(probe, tmp_path):
    hist = pytest.importorskip("iolab.histogram")
    doc = ok(probe, "lat", f"--file={tmp_path / 'd'}", "--file-size=1M", "--ops=3000",
             "--pattern=rand")
    lat = doc["lat_ns"]
    h = hist.from_fio_bins(lat["bins"])
    for q, key in ((50, "p50"), (99, "p99"), (99.9, "p99.9")):
        # the probe clamps to the exact [min, max]; otherwise the same rule
        expect = min(max(hist.percentile(h, q), lat["min"]), lat["max"])
        assert lat[key] == expect


def test_direct_io_unaligned_block_size_is_explained(probe, tmp_path):
    f = tmp_path / "dio"
    if not direct_io_works(probe, f):
        pytest.skip(f"the filesystem of {tmp_path} refuses O_DIRECT")
    for op in ("pwrite", "pread"):
        res = run(probe, "lat", f"--op={op}", f"--file={f}", "--file-size=1M",
                  "--direct", "--bs=100", "--ops=10")
        assert res.rc == 1
        first = res.err.splitlines()[0]
        assert first.startswith(f"iolab-probe: {op}: Invalid argument [EINVAL]")
        assert "offset 0, len 100" in first and "O_DIRECT" in first
        assert "hint: O_DIRECT needs offset and length aligned" in res.err


def test_direct_io_misalignment_is_blamed_before_other_flags(probe, tmp_path):
    f = tmp_path / "dio"
    if not direct_io_works(probe, f):
        pytest.skip(f"the filesystem of {tmp_path} refuses O_DIRECT")
    res = run(probe, "lat", "--op=pwritev2", "--rwf=dontcache", f"--file={f}",
              "--file-size=1M", "--direct", "--bs=100", "--ops=1")
    assert res.rc == 1
    assert "flags O_DIRECT|RWF_DONTCACHE" in res.err
    assert "hint: O_DIRECT needs offset and length aligned" in res.err


def test_direct_io_aligned_runs(probe, tmp_path):
    f = tmp_path / "dio"
    if not direct_io_works(probe, f):
        pytest.skip(f"the filesystem of {tmp_path} refuses O_DIRECT")
    doc = ok(probe, "lat", "--op=pwrite", f"--file={f}", "--file-size=1M",
             "--direct", "--ops=200")
    assert doc["target"]["open_flags"] == "O_DIRECT"
    assert doc["target"]["dio_offset_align"] > 0
    check_lat_hist(doc["lat_ns"], 200)


def _dontcache_ok_or_explained(res: Result, call: str) -> None:
    if res.rc == 0:
        assert res.json["io_flags"] == "RWF_DONTCACHE"
        return
    assert res.rc == 1
    first = res.err.splitlines()[0]
    assert first.startswith(f"iolab-probe: {call}: ")
    assert "EOPNOTSUPP" in first or "EINVAL" in first
    assert "RWF_DONTCACHE" in res.err


@pytest.mark.parametrize("op", ["pwritev2", "preadv2"])
def test_lat_dontcache_works_or_says_why(probe, tmp_path, op):
    res = run(probe, "lat", f"--op={op}", "--rwf=dontcache", f"--file={tmp_path / 'd'}",
              "--file-size=1M", "--ops=500")
    _dontcache_ok_or_explained(res, op)
    if res.rc == 0:
        check_lat_hist(res.json["lat_ns"], 500)


def test_dontcache_refusal_names_the_flag(probe):
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm")
    f = shm / f"iolab-probe-test-{os.getpid()}"
    try:
        res = run(probe, "lat", "--op=pwritev2", "--rwf=dontcache", f"--file={f}",
                  "--file-size=64k", "--ops=4")
        _dontcache_ok_or_explained(res, "pwritev2")
    finally:
        f.unlink(missing_ok=True)


# ---------------------------------------------------------------- batch

@pytest.mark.parametrize("case, op, bs, batch", [
    ("write_u1k", "write", 1024, 50),
    ("write_u10k", "write", 10240, 25),
    ("pwrite_u1k", "pwrite", 1024, 1000),
    ("pwrite_u10k", "pwrite", 10240, 1000),
])
def test_batch_libmicro_cases(probe, tmp_path, case, op, bs, batch):
    f = tmp_path / "data"
    doc = ok(probe, "batch", f"--case={case}", f"--file={f}", "--batches=30")
    assert (doc["case"], doc["op"], doc["bs"], doc["batch"]) == (case, op, bs, batch)
    assert doc["calls"] == 30 * batch
    per = doc["per_batch_us_per_call"]
    assert len(per) == 30 and len(doc["per_batch_ns"]) == 30
    for key in ("us_per_call", "us_per_call_raw"):
        st = doc[key]
        assert {"median", "min", "max", "mean", "stddev"} <= st.keys()
        assert 0 < st["min"] <= st["median"] <= st["max"]
        assert st["stddev"] >= 0
    assert doc["us_per_call_raw"]["median"] == sorted(per)[len(per) // 2]
    assert doc["us_per_call"]["batches"] + doc["outliers_removed"] == 30
    assert RUSAGE_KEYS <= doc["rusage"].keys()
    # the cases overwrite a 10 MiB file of zeros and never extend it
    assert f.stat().st_size == 10 << 20


def test_batch_custom_and_refusal_to_extend(probe, tmp_path):
    f = tmp_path / "data"
    doc = ok(probe, "batch", "--case=custom", "--op=pwrite", "--bs=512",
             "--offset=4096", "--batch=100", "--batches=5", f"--file={f}",
             "--file-size=1M")
    assert (doc["op"], doc["bs"], doc["batch"]) == ("pwrite", 512, 100)
    res = run(probe, "batch", "--case=custom", "--op=write", "--bs=1M",
              "--batch=20", f"--file={f}")
    assert res.rc == 2 and "never extend" in res.err


# ---------------------------------------------------------------- uring

@pytest.mark.parametrize("args", [
    ("--op=read",),
    ("--op=write", "--iodepth=8", "--submit-batch=4", "--complete-batch=2",
     "--pattern=rand"),
    ("--op=read", "--iodepth=5", "--submit-batch=2", "--complete-batch=3"),
])
def test_uring_emits_documented_json(probe, tmp_path, args):
    doc = ok(probe, "uring", f"--file={tmp_path / 'd'}", "--file-size=2M",
             "--ops=2001", *args)
    assert doc["ops"] == 2001 and doc["bytes"] == 2001 * 4096
    check_lat_hist(doc["lat_ns"], 2001)
    assert doc["iops"] > 0
    assert doc["bw_bytes"] == pytest.approx(doc["iops"] * 4096, rel=1e-6)
    assert doc["submit_calls"] >= 2001 / doc["params"]["submit-batch"]
    assert RUSAGE_KEYS <= doc["rusage"].keys()


def test_uring_dontcache_works_or_says_why(probe, tmp_path):
    res = run(probe, "uring", "--op=write", "--rwf=dontcache", "--iodepth=4",
              f"--file={tmp_path / 'd'}", "--file-size=1M", "--ops=500")
    _dontcache_ok_or_explained(res, "io_uring write")


def test_uring_direct_unaligned_is_explained(probe, tmp_path):
    f = tmp_path / "dio"
    if not direct_io_works(probe, f):
        pytest.skip(f"the filesystem of {tmp_path} refuses O_DIRECT")
    res = run(probe, "uring", "--op=read", "--direct", "--bs=100", f"--file={f}",
              "--file-size=1M", "--ops=10")
    assert res.rc == 1
    assert "io_uring read: Invalid argument [EINVAL] (offset 0, len 100" in res.err


# ---------------------------------------------------------------- churn

def test_churn_phases(probe, tmp_path):
    d = tmp_path / "churn"
    doc = ok(probe, "churn", f"--dir={d}", "--files=300", "--workers=4",
             "--delete-every=7", "--phases=create,sync,delete,sync",
             "--sync=syncfs", "--report-phase=sync", "--file-bytes=10")
    assert [p["name"] for p in doc["phases"]] == ["create", "sync", "delete", "sync"]
    assert all(p["ns"] > 0 for p in doc["phases"])
    assert doc["files"] == 300 and doc["created"] == 300 and doc["deleted"] == 42
    assert doc["params"]["report-phase"] == "sync"
    assert doc["report_phase"] == {"name": "sync", "index": 3,
                                   "ns": doc["phases"][3]["ns"]}
    assert doc["total_ns"] == sum(p["ns"] for p in doc["phases"])
    left = sorted(int(p.name) for p in d.iterdir())
    assert left == [i for i in range(1, 301) if i % 7]
    assert (d / "1").stat().st_size == 10
    # a second run refuses the now non-empty directory
    res = run(probe, "churn", f"--dir={d}", "--files=3", "--phases=create")
    assert res.rc == 1 and "not empty" in res.err


def test_churn_drop_caches_runs_or_says_why(probe, tmp_path):
    res = run(probe, "churn", f"--dir={tmp_path / 'c'}", "--files=50", "--workers=2",
              "--delete-every=5", "--sync=syncfs", "--report-phase=sync#2")
    if res.rc == 0:
        doc = res.json
        names = [p["name"] for p in doc["phases"]]
        assert names == ["create", "sync", "delete", "drop_caches", "sync"]
        assert doc["report_phase"]["index"] == 4
    else:
        assert res.rc == 1
        assert "/proc/sys/vm/drop_caches" in res.err
        assert "hint: drop_caches needs root" in res.err


# ---------------------------------------------------------------- block device

@pytest.mark.integration
@pytest.mark.root
def test_lat_on_a_loop_block_device(probe, tmp_path, clean_system):
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup for a loop device")
    img = tmp_path / "probe-test.img"
    with open(img, "wb") as fh:
        fh.truncate(8 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(img)],
                         capture_output=True, text=True, check=False)
    if dev.returncode != 0:
        pytest.skip(f"losetup failed: {dev.stderr.strip()}")
    loop = dev.stdout.strip()
    try:
        doc = ok(probe, "lat", f"--file={loop}", "--file-size=64M", "--direct",
                 "--op=pwrite", "--ops=300")
        assert doc["target"]["kind"] == "blockdev"
        assert doc["target"]["size"] == 8 << 20  # clamped to the device
        check_lat_hist(doc["lat_ns"], 300)
        doc = ok(probe, "uring", f"--file={loop}", "--direct", "--iodepth=4",
                 "--ops=300", "--pattern=rand")
        check_lat_hist(doc["lat_ns"], 300)
    finally:
        subprocess.run(["losetup", "-d", loop], check=False)


@pytest.mark.integration
@pytest.mark.root
def test_lat_reads_a_file_on_a_read_only_filesystem(probe, tmp_path, clean_system):
    """erofs carries its files in the image: the probe reads probe.dat where
    it is long enough, opened read-only (it used to open it O_RDWR|O_CREAT to
    prefill, and every erofs workload of the library failed with EROFS)."""
    if os.geteuid() != 0 or shutil.which("mkfs.erofs") is None:
        pytest.skip("needs root and mkfs.erofs")
    tree, img, mnt = tmp_path / "tree", tmp_path / "ro.img", tmp_path / "mnt"
    tree.mkdir()
    mnt.mkdir()
    (tree / "probe.dat").write_bytes(os.urandom(1 << 20))
    subprocess.run(["mkfs.erofs", str(img), str(tree)], check=True, capture_output=True)
    mounted = subprocess.run(["mount", "-t", "erofs", "-o", "loop,ro", str(img), str(mnt)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount erofs here: {mounted.stderr.strip()}")
    try:
        doc = ok(probe, "lat", f"--file={mnt / 'probe.dat'}", "--file-size=1M", "--ops=64", "--evict")
        assert doc["target"]["created"] is False and doc["target"]["prefill_bytes"] == 0
        check_lat_hist(doc["lat_ns"], 64)
        res = run(probe, "lat", f"--file={mnt / 'probe.dat'}", "--file-size=2M", "--ops=8")
        assert res.rc != 0 and "Read-only file system" in res.err  # too short: growing it is refused, said
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


# ---------------------------------------------------------------- sanitizers

SAN_RUNS = {
    "lat": ("--op=pwritev2", "--rwf=dontcache", "--file-size=1M", "--ops=300",
            "--pattern=rand", "--warmup-ops=10"),
    "batch": ("--case=write_u10k", "--batches=41"),
    "uring": ("--op=read", "--iodepth=6", "--submit-batch=4", "--complete-batch=2",
              "--file-size=1M", "--ops=301"),
    "churn": ("--files=200", "--workers=3", "--delete-every=3", "--file-bytes=5",
              "--phases=create,sync,delete,sync", "--sync=syncfs",
              "--report-phase=sync#1"),
}


@pytest.mark.parametrize("mode", MODES)
def test_sanitized_build_runs_clean(probe_san, tmp_path, mode):
    env = dict(os.environ,
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87")
    target = f"--dir={tmp_path / 'c'}" if mode == "churn" else f"--file={tmp_path / 'f'}"
    args = SAN_RUNS[mode]
    if mode == "lat" and run(probe_san, "lat", "--op=pwritev2", "--rwf=dontcache",
                             target, "--file-size=64k", "--ops=1", env=env).rc != 0:
        args = tuple(a for a in args if a not in ("--op=pwritev2", "--rwf=dontcache"))
    res = run(probe_san, mode, target, *args, env=env)
    for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        assert marker not in res.err, res.err
    assert res.rc == 0, res.err
    res.json  # still exactly one JSON object
    # an error path under the sanitizers too
    res = run(probe_san, mode, target, "--nosuch=1", env=env)
    assert res.rc == 2 and "Sanitizer" not in res.err
