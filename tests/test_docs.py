"""Docs that run: every TOML block of the README loads, and every experiment
file in scenarios/ (and every README block that is a whole experiment)
goes through `iolab run --dry-run` as a user would run it: read, parsed,
checked against this machine (fio parses every job), planned."""

import re
import tomllib

import pytest

from iolab import cli, load, spec
from tests.helpers import REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"^```toml\n(.*?)^```$", README, re.M | re.S)
SCENARIOS = sorted((REPO / "scenarios").glob("*.toml"))

# What a README fragment (a [kernel] table, two variants and a [vm] table)
# needs around it to be a whole experiment.
AROUND = {"name": "readme fragment", "variant": [{"name": "a"}, {"name": "b"}],
          "workload": [{"name": "w", "job": "[j]\nrw=read\nsize=1M\n"}]}


def dry_run(path, tmp_path, capsys) -> str:
    status = cli.main(["--store", str(tmp_path / "docs.db"), "run", str(path), "--dry-run", "--seed", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    return out


def test_the_readme_has_toml_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_readme_toml_block_loads(index):
    """Each block is TOML the schema takes; a fragment is checked inside a
    minimal experiment (its kernel paths and patch files are examples, not
    files of this tree: the schema is what it documents)."""
    raw = tomllib.loads(BLOCKS[index])
    whole = "name" in raw and "workload" in raw
    data = raw if whole else {**AROUND, **raw}
    if "series" in raw:  # its variants are the steps made of [series] and at most one [[variant]]
        data = {**data, "variant": data.get("variant", [])[:1]}
        steps = spec.Experiment.model_validate({**data, "base_dir": str(REPO / "scenarios")}).variant
        assert len(steps) == len(raw["series"]["patches"]) + 1
        return
    experiment = spec.Experiment.model_validate({**data, "base_dir": str(REPO / "scenarios")})
    assert [v.name for v in experiment.variant] == [v["name"] for v in data["variant"]]
    if whole:
        load.parse(raw, base_dir=str(REPO / "scenarios"))


@pytest.mark.parametrize("index", [i for i, block in enumerate(BLOCKS)
                                   if "workload" in tomllib.loads(block)])
def test_readme_experiments_dry_run(index, tmp_path, capsys):
    path = tmp_path / "readme.toml"
    path.write_text(BLOCKS[index])
    out = dry_run(path, tmp_path, capsys)
    assert f"{tomllib.loads(BLOCKS[index])['name']}: " in out


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_every_scenario_dry_runs(path, tmp_path, capsys):
    out = dry_run(path, tmp_path, capsys)
    cells = int(re.search(r": (\d+) cells", out).group(1))
    assert cells > 0 and len(re.findall(r"^\s+\d+\s+round", out, re.M)) == cells
