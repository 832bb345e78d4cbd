"""Docs that run: every TOML block of the README and of docs/ (and
bench/RESULTS.md) loads, and every experiment file in scenarios/ (and
every block that is a whole experiment) goes through `iolab run --dry-run`
as a user would run it: read, parsed, checked against this machine (fio
parses every job), planned. Every command line the docs show parses with
iolab's own parser, every link between them leads somewhere, and the
generated pages (docs/architecture.md from the stages, docs/iolab.1 from
the parser) are what scripts/docs.py makes now."""

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from iolab import cli, load, spec
from iolab.cli import commands
from tests.helpers import REPO
from tests.test_layers import STAGES

README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "RESULTS.md"]
BLOCKS = [(path, block) for path in DOCS
          for block in re.findall(r"^```toml\n(.*?)^```$", path.read_text(), re.M | re.S)]
BLOCK_IDS = [f"{path.relative_to(REPO)}:{i}" for i, (path, _) in enumerate(BLOCKS)]
SCENARIOS = sorted((REPO / "scenarios").glob("*.toml"))

# What a fragment (a [kernel] table, two variants and a [vm] table) needs
# around it to be a whole experiment.
AROUND = {"name": "docs fragment", "variant": [{"name": "a"}, {"name": "b"}],
          "workload": [{"name": "w", "job": "[j]\nrw=read\nsize=1M\n"}]}


def _script():
    spec_ = importlib.util.spec_from_file_location("docs_script", REPO / "scripts" / "docs.py")
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    return module


def dry_run(path, tmp_path, capsys) -> str:
    status = cli.main(["--store", str(tmp_path / "docs.db"), "run", str(path), "--dry-run", "--seed", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    return out


def test_the_docs_have_toml_blocks():
    assert len(BLOCKS) >= 3
    assert [path for path, _ in BLOCKS].count(README) >= 1  # the demo


def test_the_readme_is_a_front_door():
    """The README is at most 300 lines and starts with the two set-up
    commands CI runs one of (.ci/run: make test)."""
    lines = README.read_text().splitlines()
    assert len(lines) <= 300
    assert lines[2].split()[:2] == ["make", "demo"]
    assert lines[3].split()[:2] == ["make", "test"]
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=BLOCK_IDS)
def test_every_toml_block_loads(index):
    """Each block is TOML the schema takes; a fragment is checked inside a
    minimal experiment (its kernel paths and patch files are examples, not
    files of this tree: the schema is what it documents)."""
    raw = tomllib.loads(BLOCKS[index][1])
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


@pytest.mark.parametrize("index", [i for i, (_, block) in enumerate(BLOCKS) if "workload" in tomllib.loads(block)],
                         ids=[BLOCK_IDS[i] for i, (_, block) in enumerate(BLOCKS)
                              if "workload" in tomllib.loads(block)])
def test_whole_experiments_in_the_docs_dry_run(index, tmp_path, capsys):
    path = tmp_path / "docs.toml"
    path.write_text(BLOCKS[index][1])
    out = dry_run(path, tmp_path, capsys)
    assert f"{tomllib.loads(BLOCKS[index][1])['name']}: " in out


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_every_scenario_dry_runs(path, tmp_path, capsys):
    out = dry_run(path, tmp_path, capsys)
    cells = int(re.search(r": (\d+) cells", out).group(1))
    assert cells > 0 and len(re.findall(r"^\s+\d+\s+round", out, re.M)) == cells


def _command_lines(text: str):
    """The command lines a page shows: an indented line that starts with
    `iolab`, `.venv/bin/iolab` or `$ iolab`, a `$ iolab` line in a fenced
    block (the rest of a fenced block is output), and a CI job's step that
    runs `.venv/bin/iolab` (a YAML block; `\\` continues a line)."""
    fence = None
    lines = iter(text.splitlines())
    for line in lines:
        if line.startswith("```"):
            fence = None if fence is not None else line[3:]
            continue
        if fence == "yaml":
            line = re.sub(r"^\s*(- |run: )?(sudo )?", "", line)
            while line.endswith("\\"):
                line = line[:-1] + next(lines).strip()
            found = line.startswith(".venv/bin/iolab ")
        else:
            found = (fence is None and re.match(r" {4}(\$ )?(\.venv/bin/)?iolab ", line)) or \
                (fence is not None and line.startswith("$ iolab "))
        if found:
            line = re.sub(r"^(\$ )?(\.venv/bin/)?", "", line.strip())
            yield re.split(r" (?:\||>>?|#|&&) ", line)[0].strip()


COMMANDS = [(path, line) for path in DOCS for line in _command_lines(path.read_text())]


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 10
    assert {line.split()[1] for _, line in COMMANDS} >= {"run", "patch", "kernel", "submit", "agent", "report"}
    assert any("--fail-on" in line for _, line in COMMANDS)  # the CI jobs' steps


@pytest.mark.parametrize("index", range(len(COMMANDS)),
                         ids=[f"{p.relative_to(REPO)}:{line}" for p, line in COMMANDS])
def test_every_command_line_in_the_docs_parses(index, capsys):
    """`iolab`'s own parser takes each command as written (the command and
    its options exist), and an experiment it names in this tree exists."""
    path, line = COMMANDS[index]
    argv = shlex.split(line)[1:]
    try:
        commands._parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"{path.relative_to(REPO)}: {line}: {capsys.readouterr().err.strip()}")
    for arg in argv:
        if re.match(r"(scenarios|bench)/.*\.toml$", arg):
            assert (REPO / arg).exists(), f"{path.relative_to(REPO)}: {line}: no {arg}"


def _options(parser) -> set[str]:
    """The options of a parser and of its commands' parsers, at any depth."""
    found = {o for action in parser._actions for o in action.option_strings}
    for action in parser._actions:
        if action.dest == "command" or type(action).__name__ == "_SubParsersAction":
            for child in action.choices.values():
                found |= _options(child)
    return found


SPANS = [(path, span) for path in DOCS for span in re.findall(r"`(iolab [a-z][^`]*)`", path.read_text())]


def test_every_iolab_command_named_in_the_text_exists():
    """An `iolab COMMAND --option` written in the text (not a whole command
    line) names a command of the parser and options that command has."""
    parser = commands._parser()
    names = next(a for a in parser._actions if a.dest == "command").choices
    assert len(SPANS) > 50
    wrong = []
    for path, span in SPANS:
        words = span.split()
        command = names.get(words[1])
        options = {w.split("=")[0] for w in words[2:] if re.fullmatch(r"--[a-z][\w-]*(=\S*)?", w)}
        if command is None or options - _options(command) - _options(parser):
            wrong.append(f"{path.relative_to(REPO)}: {span}")
    assert wrong == []


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


LINKS = [(path, target) for path in DOCS
         for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()) if "://" not in target]


@pytest.mark.parametrize("index", range(len(LINKS)), ids=[f"{p.relative_to(REPO)}->{t}" for p, t in LINKS])
def test_every_link_between_the_docs_leads_somewhere(index):
    path, target = LINKS[index]
    file, _, anchor = target.partition("#")
    dest = (path.parent / file).resolve() if file else path
    assert dest.exists(), f"{path.relative_to(REPO)}: no {file}"
    if anchor:
        assert anchor in _anchors(dest), f"{path.relative_to(REPO)}: no heading #{anchor} in {file or path.name}"


def test_every_doc_page_is_linked_from_the_readme():
    text = README.read_text()
    pages = sorted((REPO / "docs").glob("*.md")) + [REPO / "docs" / "iolab.1"]
    assert [p.name for p in pages if f"](docs/{p.name})" not in text] == []


def test_how_a_run_works_names_every_stage():
    """The README's picture of a run has every stage of tests/test_layers.py,
    the mail stage too, so a new stage cannot be left out of it."""
    section = README.read_text().split("## How a run works", 1)[1].split("\n## ", 1)[0]
    picture = section.split("```")[1]
    names = [name.removeprefix("iolab.") for stage in STAGES for name in stage]
    assert [n for n in names if not re.search(rf"\b{n}(/|\.py)", picture)] == []


def test_the_versions_the_docs_give_are_iolab_s():
    """The store's schema version and the JSON report's, as the docs say them."""
    from iolab.report.jsonout import JSON_VERSION
    from iolab.store.schema import SCHEMA_VERSION
    store = re.search(r"`PRAGMA user_version`, now (\d+)", (REPO / "docs" / "running.md").read_text())
    json = re.search(r'"iolab_json_version": (\d+)', (REPO / "docs" / "reports.md").read_text())
    assert store and int(store.group(1)) == SCHEMA_VERSION
    assert json and int(json.group(1)) == JSON_VERSION


def test_the_pages_iolab_points_to_exist():
    """A message or docstring of iolab/ that names a page of docs/ (and a
    section of it, `see docs/experiment.md, "Metrics"`) names one that is there."""
    named = {m for path in (REPO / "iolab").rglob("*.py")
             for m in re.findall(r'(docs/[\w-]+\.md)(?:, \\?"([^"\\]+)\\?")?', path.read_text())}
    assert named
    for page, section in named:
        assert (REPO / page).exists(), page
        if section:
            assert re.search(rf"^#+ {re.escape(section)}$", (REPO / page).read_text(), re.M), (page, section)


@pytest.mark.parametrize("name", ["architecture.md", "iolab.1"])
def test_the_generated_pages_are_current(name):
    """docs/architecture.md and docs/iolab.1 are what scripts/docs.py makes
    from the stages and the parser as they are: `make docs` after a change."""
    script = _script()
    path = REPO / "docs" / name
    made = {script.ARCHITECTURE: script.architecture, script.MANPAGE: script.manpage}[path]()
    assert path.read_text() == made, f"docs/{name} is stale: run make docs (python scripts/docs.py)"


def test_the_architecture_page_has_every_stage_in_order():
    text = (REPO / "docs" / "architecture.md").read_text()
    found = re.findall(r"^## (\d+)\. `([\w.]+)`", text, re.M)
    assert [(int(i), n) for i, n in found] == [(i, n) for i, stage in enumerate(STAGES, 1) for n in stage]


def test_the_readme_lists_every_command():
    """Each command of iolab's parser has a row in the README's table."""
    table = README.read_text().split("## Commands", 1)[1].split("\n## ", 1)[0]
    names = next(a for a in commands._parser()._actions if a.dest == "command").choices
    assert [n for n in names if not re.search(rf"^\| `(iolab )?{n}\b", table, re.M)] == []


def test_the_man_page_has_every_command():
    text = (REPO / "docs" / "iolab.1").read_text()
    parser = commands._parser()
    names = next(a for a in parser._actions if a.dest == "command").choices
    assert [n for n in names if f".SS \\fBiolab {n}\\fR" not in text] == []


@pytest.mark.skipif(not shutil.which("man"), reason="man (man-db) is not installed")
def test_man_renders_the_man_page():
    """`man -l docs/iolab.1` renders it, with no warning from groff."""
    env = {**os.environ, "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "LC_ALL": "C.UTF-8"}
    result = subprocess.run(["man", "--warnings", "-l", str(REPO / "docs" / "iolab.1")], capture_output=True,
                            text=True, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "iolab patch" in result.stdout and "EXIT STATUS" in result.stdout
