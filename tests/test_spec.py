import textwrap

import pytest

from iolab import load, spec
from iolab.units import format_size, parse_size

MINIMAL = """
name = "t"
[[variant]]
name = "a"
[[variant]]
name = "b"
[[workload]]
name = "w"
job = "[j]\\nrw=read\\n"
"""


def load_text(tmp_path, text):
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(text))
    return load.load(path)


def error_of(tmp_path, text):
    with pytest.raises(spec.SpecError) as caught:
        load_text(tmp_path, text)
    return str(caught.value)


def test_minimal_experiment_gets_defaults(tmp_path):
    experiment = load_text(tmp_path, MINIMAL)
    assert experiment.target.kind == "loop"
    assert experiment.target.fs == "ext4"
    assert experiment.target.size == 2**30
    assert experiment.baseline.name == "a"
    assert experiment.run.order == "interleaved"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("4GiB", 4 * 2**30),
        ("512M", 512 * 2**20),
        ("64k", 65536),
        (4096, 4096),
        ("1.5k", 1536),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["4 furlongs", "-1", "", "1.3k"])
def test_parse_size_rejects(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_format_size():
    assert format_size(4 * 2**30) == "4GiB"
    assert format_size(1536 * 1024) == "1536KiB"
    assert format_size(100) == "100B"


def test_unknown_field_is_named(tmp_path):
    message = error_of(tmp_path, MINIMAL.replace('name = "b"', 'name = "b"\nfoi = { direct = 1 }'))
    assert 'variant["b"].foi: unknown field; did you mean fio?' in message
    assert "[reprot]: unknown" not in error_of(tmp_path, MINIMAL + "[reprot]\nalpha = 0.1\n")
    assert "reprot: unknown field; did you mean report?" in error_of(tmp_path, MINIMAL + "[reprot]\nalpha = 0.1\n")
    message = error_of(tmp_path, MINIMAL + '[target]\nmount_option = "noatime"\n')
    assert message.endswith("target.mount_option: unknown field; did you mean mount_options?")
    assert "(check its spelling" in error_of(tmp_path, MINIMAL + "zzz = 1\n")  # nothing close


def test_a_union_fields_errors_come_as_one_line_without_pydantics_member_names(tmp_path):
    message = error_of(tmp_path, MINIMAL.replace('name = "b"', 'name = "b"\nkernel = 5\n'
                                                 'sysfs = { "/sys/block/{dev}/queue/read_ahead_kb" = [1, 2] }'))
    assert 'variant["b"].sysfs./sys/block/{dev}/queue/read_ahead_kb: Input should be a valid string, or a valid ' \
        "integer" in message
    assert 'variant["b"].kernel: should be a table ({ ... } or [section]), got \'5\'' in message
    assert ".str:" not in message and ".int:" not in message and "Build" not in message
    iterations = error_of(tmp_path, MINIMAL + "[run]\niterations = 8.5\n")
    assert "literal" not in iterations and iterations.count("run.iterations") == 1


def test_unknown_filesystem_is_named(tmp_path):
    message = error_of(tmp_path, MINIMAL + '[target]\nfs = "zfs"\n')
    assert "target.fs" in message and "'zfs'" in message


def test_bad_size_is_named(tmp_path):
    message = error_of(tmp_path, MINIMAL + '[target]\nsize = "lots"\n')
    assert "target.size" in message and "not a size" in message


def test_one_variant_is_not_enough(tmp_path):
    text = MINIMAL.replace('[[variant]]\nname = "b"\n', "")
    assert "variant: List should have at least 2 items" in error_of(tmp_path, text)


def test_duplicate_variant_names(tmp_path):
    assert "two [[variant]] are named 'a'" in error_of(tmp_path, MINIMAL.replace('name = "b"', 'name = "a"'))


def test_missing_job_file_is_named(tmp_path):
    text = MINIMAL.replace('job = "[j]\\nrw=read\\n"', 'job_file = "nope.fio"')
    message = error_of(tmp_path, text)
    assert 'workload["w"].job_file: no such file' in message


def test_job_file_relative_to_experiment(tmp_path):
    (tmp_path / "mine.fio").write_text("[global]\nrw=read\n[one]\n[two]\n")
    experiment = load_text(tmp_path, MINIMAL.replace('job = "[j]\\nrw=read\\n"', 'job_file = "mine.fio"'))
    assert "[two]" in load.job_text(experiment, experiment.workload[0])


def test_job_reference_resolves_and_must_exist(tmp_path):
    text = MINIMAL + '[[workload]]\nname = "again"\njob = "@w"\n'
    experiment = load_text(tmp_path, text)
    assert load.job_text(experiment, experiment.workload[1]) == "[j]\nrw=read\n"
    message = error_of(tmp_path, MINIMAL + '[[workload]]\nname = "x"\njob = "@nope"\n')
    assert 'workload["x"].job' in message and "@nope" in message


def test_variant_may_not_place_files(tmp_path):
    message = error_of(tmp_path, MINIMAL.replace('name = "b"', 'name = "b"\nfio = { filename = "/dev/sda" }'))
    assert "filename" in message and "chosen by iolab" in message


def test_device_target_needs_consent(tmp_path):
    message = error_of(tmp_path, MINIMAL + '[target]\nkind = "device"\ndevice = "/dev/vdb"\n')
    assert "allow_destroy" in message


def test_not_toml(tmp_path):
    assert "not valid TOML" in error_of(tmp_path, "name = ")


def test_missing_file(tmp_path):
    with pytest.raises(spec.SpecError, match="cannot read"):
        load.load(tmp_path / "missing.toml")


def test_erofs_needs_files(tmp_path):
    assert "target.files" in error_of(tmp_path, MINIMAL + '[target]\nfs = "erofs"\n')


def test_shipped_scenarios_validate():
    from tests.helpers import REPO

    from iolab.run import dryrun

    for path in sorted((REPO / "scenarios").glob("*.toml")):
        experiment = load.load(path)
        assert dryrun.undecidable(experiment) == "", path.name  # each can decide as shipped


def test_too_small_for_xfs(tmp_path):
    message = error_of(tmp_path, MINIMAL + '[target]\nfs = "xfs"\nsize = "256MiB"\n')
    assert "target: size 256MiB is too small for xfs" in message and "300MiB" in message


def test_tool_error_skips_usage_text():
    from iolab.sysutil import error_lines

    assert error_lines("Filesystem must be larger than 300MB.\nUsage: mkfs.xfs\n[-b size]\n") == (
        "Filesystem must be larger than 300MB."
    )


def test_variant_may_change_the_filesystem(tmp_path):
    experiment = load_text(tmp_path, MINIMAL.replace('name = "b"', 'name = "b"\nfs = "xfs"') + '[target]\nsize = "512MiB"\n')
    assert experiment.variant[1].target_of(experiment.target).fs == "xfs"
    assert experiment.variant[0].target_of(experiment.target) is experiment.target


def test_variant_override_is_validated(tmp_path):
    message = error_of(tmp_path, MINIMAL.replace('name = "b"', 'name = "b"\nfs = "xfs"') + '[target]\nsize = "64MiB"\n')
    assert "variant 'b' with workload 'w' makes the target invalid" in message and "too small for xfs" in message


def test_workload_may_set_its_data_set_options(tmp_path):
    text = MINIMAL.replace('job = "[j]\\nrw=read\\n"', 'job = "[j]\\nrw=read\\n"\nmkfs_options = ["-O", "^has_journal"]')
    experiment = load_text(tmp_path, text)
    target = experiment.target_for(experiment.variant[0], experiment.workload[0])
    assert target.mkfs_options == ["-O", "^has_journal"]


def test_variant_and_workload_may_not_both_override(tmp_path):
    text = MINIMAL.replace('name = "b"', 'name = "b"\nmount_options = "noatime"').replace(
        'job = "[j]\\nrw=read\\n"', 'job = "[j]\\nrw=read\\n"\nmount_options = "sync"')
    assert "mount_options set by variant 'b' and by workload 'w'" in error_of(tmp_path, text)


# -- parse is pure; check_here is what needs this machine --------------------------

MACHINE_BOUND = {
    "name": "t",
    "variant": [{"name": "a", "cpus": [999], "sysctl": {"vm.no_such_knob_here": 1}},
                {"name": "b", "fio": {"rw": "no-such-pattern"}}],
    "workload": [{"name": "w", "job": "[j]\nrw=read\nsize=1M\n"}],
}


def test_parse_runs_no_program_and_reads_nothing_of_this_machine(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no fio, no tool at all
    experiment = load.parse(MACHINE_BOUND)
    assert experiment.variant[0].cpus == [999] and experiment.variant[1].fio == {"rw": "no-such-pattern"}


def test_check_here_names_what_this_machine_lacks():
    experiment = load.parse(MACHINE_BOUND)
    with pytest.raises(spec.SpecError, match=r'variant\["a"\].cpus: must name CPUs between 0 and'):
        load.check_here(experiment)
    cpus_ok = load.parse({**MACHINE_BOUND, "variant": [{"name": "a", "sysctl": {"vm.no_such_knob_here": 1}},
                                                       MACHINE_BOUND["variant"][1]]})
    with pytest.raises(spec.SpecError, match=r"vm.no_such_knob_here'?: no such sysctl on this kernel"):
        load.check_here(cpus_ok)


LOOPS = [name for name in __import__("os").listdir("/sys/block") if name.startswith("loop")]
needs_loops = pytest.mark.skipif(not LOOPS, reason="no loop device in /sys/block on this machine")


def _with_sysfs(knobs, kernel=None):
    variant = {"name": "b", "sysfs": knobs, **({"kernel": kernel} if kernel else {})}
    return load.parse({**MACHINE_BOUND, "variant": [{"name": "a", **({"kernel": kernel} if kernel else {})},
                                                    variant]})


@needs_loops
@pytest.mark.parametrize("knobs, refusal", [
    ({"/sys/block/{dev}/queue/read_ahead_kbb": 128},
     r"""variant\["b"\].sysfs: '/sys/block/\{dev\}/queue/read_ahead_kbb': """
     r"no such file on this host \(checked on "
     r"loop\d+\): /sys/block/loop\d+/queue has no 'read_ahead_kbb'; did you mean 'read_ahead_kb'\?"),
    ({"/sys/block/{dev}/quee/nr_requests": 1}, r"/sys/block/loop\d+ has no 'quee'; did you mean 'queue'\?"),
    ({"/sys/block/{dev}/queue/read_ahead_kb": "lots"}, r"'lots' is not a number; the file holds one \(now '\d+' on"),
    ({"/sys/block/{dev}/queue/scheduler": "deadline"}, r"'deadline' is not one of its choices on loop\d+: .*none"),
    ({"/sys/kernel/mm/no_such_dir_here/x": 1}, r"no such file on this host: /sys/kernel/mm has no 'no_such_dir_here'"),
])
def test_check_here_refuses_a_sysfs_typo_on_a_loop_devices_files(knobs, refusal):
    """The files a `{dev}` path names are those of this machine's loop devices
    (attached or not): a name that is not there, or a value it cannot take."""
    with pytest.raises(spec.SpecError, match=refusal):
        _check_sysfs_only(_with_sysfs(knobs))


@needs_loops
def test_check_here_takes_what_a_loop_device_can_take():
    with open(f"/sys/block/{LOOPS[0]}/queue/scheduler") as handle:
        choices = handle.read().replace("[", "").replace("]", "").split()
    _check_sysfs_only(_with_sysfs({"/sys/block/{dev}/queue/read_ahead_kb": 0,
                                   "/sys/block/{dev}/queue/rq_affinity": True,
                                   "/sys/block/{dev}/queue/scheduler": choices[-1]}))
    # in a VM the guest's sysfs counts, which this machine cannot see
    _check_sysfs_only(_with_sysfs({"/sys/block/{dev}/queue/read_ahead_kbb": "lots"}, kernel="debian:6.1.0-56-amd64"))


def test_without_a_device_here_a_dev_path_is_not_refused():
    from iolab.load import here

    here._check_sysfs_file('variant["b"]', "/sys/block/{dev}/queue/read_ahead_kbb", "lots", None)


def test_a_scheduler_this_kernel_can_load_is_a_choice(tmp_path):
    """Not loaded, it is not among the choices; writing it loads "<name>-iosched"."""
    from iolab.load import here

    (tmp_path / "modules.alias").write_text("alias bfq-iosched bfq\nalias devname:loop-control loop\n")
    (tmp_path / "modules.dep").write_text("kernel/block/kyber-iosched.ko.xz:\nkernel/block/bfq.ko.xz:\n")
    loadable = [name for name in ("bfq", "kyber", "loop", "deadline")
                if here._loadable_scheduler("/sys/block/{dev}/queue/scheduler", name, str(tmp_path))]
    assert loadable == ["bfq", "kyber"]
    assert not here._loadable_scheduler("/sys/block/{dev}/queue/other", "bfq", str(tmp_path))


def _check_sysfs_only(experiment):
    from iolab.load import here

    here._check_machine(experiment)


def test_check_here_has_fio_parse_every_job():
    import shutil

    if shutil.which("fio") is None:
        pytest.skip("needs fio")
    experiment = load.parse({**MACHINE_BOUND, "variant": [{"name": "a"}, MACHINE_BOUND["variant"][1]]})
    with pytest.raises(spec.SpecError, match=r'workload\["w"\] with variant\["b"\]: fio refuses the job'):
        load.check_here(experiment)


def test_check_here_takes_a_kernel_image_of_your_own_and_refuses_any_other_file(tmp_path):
    from tests.fakes import bzimage, elf64

    (tmp_path / "bzImage").write_bytes(bzimage(elf64(pvh=True)))
    (tmp_path / "hostname").write_text("vm\n")
    jobs = [{"name": "w", "job": "[j]\nrw=read\n"}]
    variants = [{"name": "a", "kernel": "./bzImage"}, {"name": "b", "kernel": "./bzImage"}]
    mine = load.parse({"name": "k", "variant": variants, "workload": jobs}, base_dir=str(tmp_path))
    load.check_here(mine)
    variants[1]["kernel"] = "./hostname"
    other = load.parse({"name": "k", "variant": variants, "workload": jobs}, base_dir=str(tmp_path))
    with pytest.raises(spec.SpecError, match=r'variant\["b"\]\.kernel: .*hostname is not a kernel image'):
        load.check_here(other)


def test_the_schemas_choices_are_the_statistics_and_the_command_lines():
    """[report] view is the statistics' View (iolab.stats.kinds); the
    command line offers the same views and timing modes."""
    from typing import get_args

    from iolab import stats
    from iolab.cli import commands as cli

    assert get_args(spec.ReportSettings.model_fields["view"].annotation) == stats.VIEWS
    parser = cli._parser()
    run = parser._subparsers._group_actions[0].choices["run"]
    options = {a.dest: a.choices for a in run._actions}
    assert tuple(options["view"]) == stats.VIEWS and tuple(options["timing"]) == get_args(spec.Timing)
