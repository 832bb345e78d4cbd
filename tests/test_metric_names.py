"""The metric names an experiment gives are checked at parse time
(iolab.load.metric_names): no fio, nothing of this machine."""

import pytest

from iolab import collectors
from iolab.analysis import metrics
from iolab.engines import fio, fio_jobs, probe
from iolab.spec import SpecError
from tests.helpers import experiment, iolab

WRITE = [{"name": "seqw", "job": "[w]\nrw=write\nbs=64k\nsize=16M\n"}]
KERNEL = "debian:6.1.0-56-amd64"


def refused(**tables):
    with pytest.raises(SpecError) as error:
        experiment(**tables)
    return str(error.value)


# -- refused ------------------------------------------------------------------------


def test_a_misspelt_primary_metric_is_refused_with_the_closest_name():
    message = refused(workload=WRITE, report={"primary": ["write_bw", "wrte_p99"]})
    assert message.startswith("report.primary: unknown metric 'wrte_p99'; did you mean write_p99?")


def test_a_read_metric_of_a_job_that_only_writes_is_refused_with_the_reason():
    for field in ("primary", "metrics"):
        message = refused(workload=WRITE, report={field: ["read_bw"]})
        assert message == f'report.{field}: workload "seqw" writes only (rw=write): read_bw has no value'


def test_a_workloads_own_names_are_checked_against_that_workload():
    message = refused(workload=[{**WRITE[0], "primary": ["write_p99", "read_p99"]},
                                {"name": "seqr", "job": "[r]\nrw=read\nsize=16M\n"}], report=None)
    assert message == 'workload["seqw"].primary: workload "seqw" writes only (rw=write): read_p99 has no value'
    message = refused(workload=[{**WRITE[0], "metrics": ["write_bw", "disk.writs"]}], report=None)
    assert message.startswith('workload["seqw"].metrics: unknown metric \'disk.writs\'; did you mean disk.writes?')


def test_another_engines_or_modes_metric_is_refused():
    assert "runs fio, not the probe's lat/uring mode: lat_p50 has no value" in refused(
        workload=WRITE, report={"metrics": ["lat_p50"]})
    batch = [{"name": "w1k", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}]
    assert 'workload "w1k" runs the probe (batch mode), not fio: write_bw has no value' in refused(
        workload=batch, report={"metrics": ["write_bw"]})
    assert 'workload "w1k" runs the probe\'s batch mode, not lat/uring: lat_p99 has no value' in refused(
        workload=batch, report={"primary": ["lat_p99"]})


def test_derived_inputs_and_uncollected_names_are_refused():
    message = refused(workload=WRITE, report=None, derived={"per_io": "ctx / ioss"})
    assert message.startswith("derived.per_io: unknown metric 'ioss'; did you mean ios?")
    assert refused(workload=WRITE, report={"metrics": ["perf.cs"]}).startswith(
        "report.metrics: unknown metric 'perf.cs'")  # [collect] perf names no such event
    assert "unknown metric 'vmstat.pgfault'" in refused(workload=WRITE, report={"metrics": ["vmstat.pgfault"]},
                                                        collect={"vmstat": False})
    assert "unknown metric 'cgroup.oom_kill'" in refused(workload=WRITE, report={"metrics": ["cgroup.oom_kill"]})


def test_the_dry_run_exits_2_with_the_message(tmp_path):
    path = tmp_path / "typo.toml"
    path.write_text('name = "x"\n[[variant]]\nname = "a"\n[[variant]]\nname = "b"\n[[workload]]\nname = "seqw"\n'
                    'job = "[w]\\nrw=write\\nsize=16M\\n"\n[report]\nprimary = ["write_bw", "wrte_p99"]\n')
    done = iolab("run", str(path), "--dry-run", store=tmp_path / "s.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "report.primary: unknown metric 'wrte_p99'; did you mean write_p99?" in done.stderr


# -- accepted -----------------------------------------------------------------------


def test_names_the_experiment_produces_pass():
    exp = experiment(
        workload=[{**WRITE[0], "metrics": ["write_bw", "cpl_per_io", "perf.rq_complete", "perf.cs_total",
                                           "perf.sched:sched_switch", "phase.cp_last_ns", "vmstat.allocstall_dma",
                                           "disk.ios", "sys_cpu.iowait_s", "host.steal_s", "cgroup.memory_peak_bytes",
                                           "rusage.ctx"],
                   "memory_max": "256MiB"}],
        collect={"rusage": True, "perf": [{"event": "block:block_rq_complete", "name": "rq_complete"},
                                          "sched:sched_switch", "cs_total"],
                 "phase": [{"name": "cp", "start": "f2fs:a", "end": "f2fs:b"}]},
        derived={"cpl_per_io": "`perf.rq_complete` / ios", "twice": "2 * cpl_per_io"},
        report={"primary": ["write_bw", "twice"]})
    assert exp.report.primary == ["write_bw", "twice"]


def test_a_job_that_may_read_passes_read_metrics():
    for job in ("[m]\nrw=randrw\n", "[w]\nrw=write\nverify=crc32c\n", "[w]\nrw=write\n[r]\nrw=read\n",
                "[w]\nreadwrite=rw\n"):
        experiment(workload=[{"name": "w", "job": job}], report={"primary": ["read_bw", "write_bw"]})
    # a variant that reads
    experiment(["base", {"name": "reads", "fio": {"rw": "read"}}], workload=WRITE, report={"metrics": ["read_bw"]})


def test_a_report_name_one_workload_of_two_gives_goes_in_that_workloads_table():
    """[report] names are rows of every workload: one the writer can never fill would count in its family."""
    reader = {"name": "seqr", "job": "[r]\nrw=read\n"}
    message = refused(workload=[*WRITE, reader], report={"primary": ["read_bw"]})
    assert message == ('report.primary: workload "seqw" writes only (rw=write): read_bw has no value '
                       '(a name of some workloads goes in their [[workload]] primary)')
    exp = experiment(workload=[*WRITE, {**reader, "primary": ["read_bw"]}], report={"metrics": ["ctx"]})
    assert exp.workload[1].primary == ["read_bw"]
    # a workload's own names replace [report]'s
    experiment(workload=[{**WRITE[0], "metrics": ["write_bw"]}, reader], report={"metrics": ["read_bw"]})


def test_probe_modes_churn_phases_and_instructions_mode_pass():
    churn = {"name": "nat", "engine": "probe", "probe": {"mode": "churn", "phases": "create,sync,delete,sync"}}
    experiment(workload=[churn], report={"primary": ["phase.sync#2_ns", "phase_ns", "total_ns"]})
    assert "unknown metric 'phase.drop_ns'" in refused(workload=[churn], report={"metrics": ["phase.drop_ns"]})
    experiment(workload=[{**churn, "probe": {"mode": "churn"}}], report={"metrics": ["phase.drop_caches_ns"]})
    lat = {"name": "dio", "engine": "probe", "probe": {"mode": "lat", "op": "pread", "ops": 100}}
    experiment(workload=[lat], report={"metrics": ["lat_p50", "lat_p99.9", "cs_per_io", "bw"]})
    experiment([{"name": "nofix", "kernel": KERNEL}, {"name": "fix", "kernel": KERNEL}], vm={"timing": "instructions"},
               workload=[{"name": "w1k", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}],
               report={"metrics": ["per_call", "vm.boot_s"], "primary": ["per_call"]})


def test_a_file_written_for_an_older_iolab_reads_its_old_metric_names_as_todays():
    batch = {"name": "w1k", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}
    old = experiment(workload=[{**batch, "metrics": ["us_per_call_min"]}],
                     report={"metrics": ["us_per_call"], "primary": ["us_per_call"]})
    assert old.report.metrics == old.report.primary == ["per_call"] and old.workload[0].metrics == ["per_call_min"]


# -- the tables agree with what the engines and collectors give ----------------------


def test_the_engines_names_are_the_catalogues_and_what_they_parse():
    every = fio.metric_names(("read", "write")) | set().union(*(probe.metric_names(m) for m in probe.METRICS))
    every |= collectors.metric_names({})  # the collectors' by default: the I/O rows' counters
    assert set(metrics.KNOWN) <= every
    assert fio_jobs.jobs("[w]\nrw=trimwrite:8\n")[0].directions == {"write"}
    assert collectors.metric_names({"vmstat": ["nr_dirty"], "diskstats": False, "proc_stat": False}) == {
        "vmstat.nr_dirty", *collectors.registry.HOST_NOISE}
