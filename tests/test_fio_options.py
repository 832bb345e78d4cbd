"""The fio option check: fio 3.33's own table, and what a job may not do."""

import shutil
import subprocess

import pytest

from iolab.engines import fio_options
from iolab.engines.fio_options import UnsafeJob, check, findings, judge
from tests.helpers import FIXTURES

TABLE = FIXTURES / "fio" / "options-3.33.txt"


def fixture_table():
    """(general options, engine options, aliases) as fio 3.33 printed them."""
    general, engine, aliases, current = [], set(), {}, None
    for line in TABLE.read_text().splitlines():
        if line.startswith("@option "):
            current = line.split()[1]
            general.append(current)
        elif line.startswith("@engine-option "):
            current = line.split()[2]
            engine.add(current)
        elif line.strip().startswith("alias:"):
            aliases[line.split(":", 1)[1].strip()] = current
    return general, engine, aliases


def test_table_is_fio_333s_own():
    general, engine, aliases = fixture_table()
    assert fio_options.GENERAL == general
    assert set(fio_options.ENGINE_OPTIONS) == engine
    # every alias fio prints resolves to an option of the table (rdma's "proto"
    # is "verb", net's is "protocol": both engine options, both plain)
    assert set(fio_options.ALIASES) == set(aliases)
    assert all(name in fio_options.KNOWN for name in fio_options.ALIASES.values())
    classified = set(fio_options.REFUSED) | set(fio_options.TARGET_PATH) | set(fio_options.WORK_PATH)
    assert classified <= fio_options.KNOWN


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_installed_fio_has_no_option_the_table_lacks():
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    if version != f"fio-{fio_options.FIO_VERSION}":
        pytest.skip(f"installed {version}, the table is fio {fio_options.FIO_VERSION}")
    listed = subprocess.run(["fio", "--cmdhelp=all"], capture_output=True, text=True).stdout
    names = {line.split(":")[0].strip() for line in listed.splitlines() if ":" in line}
    assert names == set(fio_options.GENERAL)


PLAIN_JOB = """\
; a comment
# another
[global]
rw=randread
bs = 4k
ioengine=io_uring
iodepth=32
size=$mb_memory/64
filename=data:sub/dir/file
filename_format=$jobname.$jobnum.$filenum
write_bw_log=bw
mem=mmap:buf
buffer_pattern=0xdeadbeef
[read-once]
readwrite=read
ioengine=libaio
"""


def test_a_plain_job_passes():
    assert findings(PLAIN_JOB) == []
    assert check(PLAIN_JOB, {"direct": 1, "invalidate": True}) == []


@pytest.mark.parametrize(
    "line, allow",
    [
        ("exec_prerun=/bin/sh -c 'rm -rf /'", "exec_prerun"),
        ("exec_postrun=touch x", "exec_postrun"),
        ("ioengine=exec", "ioengine=exec"),
        ("ioengine=external:/tmp/evil.so", "ioengine=external"),
        ("ioengine=/tmp/evil.so", "ioengine=/tmp/evil.so"),
        ("ioengine=net", "ioengine=net"),
        ("include /etc/fio.job", "include"),
        ("include=/etc/fio.job", "include"),
        ("includes=x", "include"),
        ("filename=/dev/vda", "filename"),
        ("filename=../../dev/vda", "filename"),
        ("filename=ok:../../escape", "filename"),
        ("filename=a/../../b", "filename"),
        ("filename=.", "filename"),
        ("filename_format=../$jobname", "filename_format"),
        ("filename_format=/tmp/$jobnum", "filename_format"),
        ("directory=/tmp", "directory"),
        ("opendir=/etc", "opendir"),
        ("write_bw_log=/abs/path", "write_bw_log"),
        ("write_lat_log=../../lat", "write_lat_log"),
        ("write_iolog=/tmp/log", "write_iolog"),
        ("read_iolog=trace.log", "read_iolog"),
        ("replay_redirect=/dev/sda", "replay_redirect"),
        ("mem=mmapshared:/etc/passwd", "mem"),
        ("iomem=mmap:../x", "mem"),
        ("buffer_pattern='/etc/shadow'", "buffer_pattern"),
        ("verify_pattern='/etc/shadow'", "verify_pattern"),
        ("ioscheduler=none", "ioscheduler"),
        ("cgroup=x", "cgroup"),
        ("profile=act", "profile"),
        ("filename =/dev/vda", "filename"),  # fio strips the name's blanks
        ("filenme=x", "filenme"),  # unknown to fio 3.33
    ],
)
def test_refused_unless_allowed_by_name(line, allow):
    job = f"[global]\nrw=read\n[j]\n{line}\n"
    found = findings(job)
    assert [f.allow for f in found] == [allow], found
    with pytest.raises(UnsafeJob) as refused:
        check(job)
    message = str(refused.value)
    assert f'allow = ["{allow}"]' in message and len(message) < 400
    assert check(job, allow=[allow]) == [allow]


@pytest.mark.parametrize(
    "job",
    [
        "[j]\nrw=read\n[../../escape]\nsize=4k\n",  # the job name is the file name
        "[j]\nname=../x\n",
        "[j]\nfilename=${HOME}/x\n",
        "[j]\nrw=read\x00\n",
        "[j]\nrw=read\x1b[2J\n",
        "[j]\ndescription=" + "a" * 4095 + "filename=/dev/sda\n",
        "rw=read\n[j]\n",
        "[j]bs=4k\n",
        "[ j ]\n",
    ],
)
def test_refused_always(job):
    found = findings(job)
    assert found and all(f.allow is None for f in found)
    with pytest.raises(UnsafeJob) as refused:
        check(job, allow=["filename", "name", "include"])
    assert len(str(refused.value)) < 400  # an excerpt, never the input


@pytest.mark.parametrize(
    "options, allow",
    [
        ({"filename ": "/dev/vda"}, None),  # a key with a blank is not one option line
        ({"direct": "1\nfilename=/dev/vda"}, None),  # a newline would inject a line
        ({"direct": "1\rx"}, None),
        ({"exec_prerun": "id"}, "exec_prerun"),
        ({"filename_format": "../x"}, "filename_format"),
        ({"ioengine": "external:/x.so"}, "ioengine=external"),
    ],
)
def test_variant_options(options, allow):
    found = findings("[j]\nrw=read\n", options)
    assert [f.allow for f in found] == [allow]


def test_raw_device_takes_no_file_names():
    assert judge("filename", "data", raw_device=True) is not None
    assert judge("filename", "data", raw_device=False) is None
    assert judge("write_bw_log", "bw", raw_device=True) is None


def test_many_findings_are_cut_short():
    job = "[j]\n" + "".join(f"exec_prerun=x{i}\n" for i in range(50))
    with pytest.raises(UnsafeJob, match=r"and 47 more") as refused:
        check(job)
    assert str(refused.value).count("exec_prerun") == 6  # three findings, each with its hint
