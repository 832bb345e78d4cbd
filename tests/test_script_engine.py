"""The script engine: a shell script the user allowed by name, run for real
in a directory target; refused without allow = ["script"]."""

from pathlib import Path

import pytest

from iolab import load
from iolab.engines.base import EngineError, Prepared, WorkloadRun
from iolab.engines.script import ScriptEngine
from iolab.spec import SpecError


def _run(tmp_path: Path, script: str):
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    work = WorkloadRun(job=script, options={}, target=Prepared("ext4", "/dev/loop9", str(target)),
                       workdir=tmp_path)
    return ScriptEngine().run(work), target


def test_a_script_runs_in_the_target_and_is_timed(tmp_path):
    result, target = _run(tmp_path, 'for i in 1 2 3; do : > f$i; done\necho "$IOLAB_TARGET $IOLAB_DEVICE"\n')
    assert sorted(p.name for p in target.iterdir()) == ["f1", "f2", "f3"]
    assert result.artefacts["script.stdout"] == f"{target} /dev/loop9\n"
    assert set(result.metrics) == {"phase_ns"} and result.metrics["phase_ns"] > 0


def test_a_failing_script_fails_the_cell_with_its_own_error(tmp_path):
    with pytest.raises(EngineError, match=r"script exit 2: ls: .*no-such-dir"):
        _run(tmp_path, "ls no-such-dir\necho not reached\n")  # sh -e: the first failure ends it


def _experiment(tmp_path: Path, allow: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(f"""name = "s"
[target]
kind = "dir"
fs = "none"
path = "{tmp_path}"
[[variant]]
name = "a"
[[variant]]
name = "b"
[[workload]]
name = "recipe"
engine = "script"
{allow}
job = "sync\\n"
[report]
metrics = ["phase_ns"]
""")
    return path


def test_a_script_workload_needs_allow_script(tmp_path):
    with pytest.raises(SpecError, match=r"engine = 'script' runs a shell script, any program: say allow = "
                                        r"\[\"script\"\]"):
        load.load(_experiment(tmp_path, ""))
    experiment = load.load(_experiment(tmp_path, 'allow = ["script"]'))
    assert experiment.workload[0].engine == "script"
