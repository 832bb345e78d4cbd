"""The tree's layers: the order of the stages, what the VM guest imports,
and no import loops (an import inside a function or under TYPE_CHECKING
counts as one at the top).

STAGES lists iolab's stages from the bottom up; a module imports only
modules of its own stage or of stages below it (at the top of the file or
inside a function alike), so that `cli` is the only top and no stage
reaches up into a later one (the analysis into its renderers, the cell
side into the runner).

The guest (python -m iolab.hosts.vm.guest) runs the cell executor under
emulation, where every imported module costs boot time: it must load the
cell side only -- no pydantic, no statistics, store, runner or reports.
"""

import ast
import subprocess
import sys
from pathlib import Path

import iolab

ROOT = Path(iolab.__file__).parent
GUEST_FORBIDDEN = ("pydantic", "scipy", "numpy", "sqlite3", "rich", "matplotlib",
                   "iolab.spec", "iolab.stats", "iolab.store", "iolab.run", "iolab.report",
                   "iolab.analysis", "iolab.cli", "iolab.hosts.vm.host", "iolab.hosts.vm.qemu",
                   "iolab.hosts.vm.variants", "iolab.kernels")


def test_guest_imports_only_the_cell_side():
    program = (
        "import sys, json; import iolab.hosts.vm.guest, iolab.cell.executor; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         cwd=ROOT.parent).stdout
    loaded = __import__("json").loads(out)
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in GUEST_FORBIDDEN)]
    assert bad == []


def test_the_command_line_starts_without_the_heavy_libraries():
    """scipy.stats (1-2 s to import), matplotlib and the queue's libraries load
    when a command uses them, not with every `iolab` (--help, runs, cleanup, a
    dry run, each agent): the statistics import scipy, whose submodules load
    at their first use."""
    program = "import sys, json; import iolab.cli; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         cwd=ROOT.parent).stdout
    loaded = __import__("json").loads(out)
    assert [m for m in ("scipy.stats", "matplotlib", "procrastinate", "psycopg") if m in loaded] == []


# From the bottom up; a name is a top-level module or package of iolab (a
# package's modules with it): each folder is one stage, never split.
STAGES = (
    ("iolab.units", "iolab.sysutil", "iolab.histogram"),  # leaves
    ("iolab.journal",),  # the crash journal every stage that makes resources writes to
    ("iolab.process",),  # the one runner of programs, and reclaiming what a dead run left (through it)
    ("iolab.knobs",),
    ("iolab.engines", "iolab.collectors"),
    ("iolab.cell",),  # the cell executor: the guest's top
    ("iolab.spec",),  # the experiment schema
    ("iolab.stats",),  # pure statistics (the plan fixes each comparison's test with them)
    ("iolab.plan", "iolab.kernels"),
    ("iolab.mail",),  # a patch mail read once (b4; the kernel source for a web copy's diff): message, benchmark, claim
    ("iolab.load", "iolab.workloads"),  # the experiment file; the workload library `iolab patch` writes one from
    ("iolab.store",),
    ("iolab.analysis",),  # samples -> a Report
    ("iolab.hosts",),
    ("iolab.run",),  # the runner drives hosts, stores samples, asks the analysis when to stop
    ("iolab.report",),  # renderers of a Report
    ("iolab.cli", "iolab.__main__"),  # the command line: the only top (`python -m iolab` runs it too)
)


def test_each_stage_is_a_whole_top_level_module_or_package():
    """`ls iolab/` reads as the stages: every name in STAGES is a top-level
    module or package, none is a part of another (a package split over two
    stages is an import cycle between folders), and every top-level module
    and package has its stage."""
    names = [name for stage in STAGES for name in stage]
    assert [n for n in names if n.count(".") != 1] == []
    top = {f"iolab.{p.stem}" for p in ROOT.iterdir()
           if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert sorted(top ^ set(names)) == []


def stage_of(module: str) -> int:
    """The index in STAGES of a module (the longest name that covers it)."""
    found = [(len(name), index) for index, names in enumerate(STAGES) for name in names
             if module == name or module.startswith(name + ".")]
    assert found, f"{module} is in no stage: add it to STAGES in tests/test_layers.py"
    return max(found)[1]


def _all_imports(path: Path) -> set[str]:
    """Every iolab module a module imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iolab."):
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.module == "iolab":
            found.update(f"iolab.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("iolab."))
    return found


def later_stage_imports(root: Path = ROOT) -> list[str]:
    """'module -> module' for every import of a later stage."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        name = _module_name(path)
        if name == "iolab":
            continue
        for imported in sorted(_all_imports(path)):
            if stage_of(imported) > stage_of(name):
                bad.append(f"{name} -> {imported}")
    return bad


def test_no_module_imports_a_later_stage():
    assert later_stage_imports() == []


def _imports(path: Path, modules: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """iolab modules a module imports anywhere in it: at its top, inside a
    function (a lazy import) or under TYPE_CHECKING alike, since each ties
    the two modules as much as a top-level import does. ``from package
    import module`` (a name of ``modules``) is that module, not the package."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iolab"):
            named = {f"{node.module}.{a.name}" for a in node.names}
            if not named <= modules:
                found.add(node.module)
            found.update(named)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("iolab"))
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles():
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    names = frozenset(modules)
    graph = {name: {m for m in _imports(path, names) if m in modules and m != name} for name, path in modules.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    # a package's __init__ importing its own submodules is not a loop
    cycles = [c for c in cycles if not all(m.startswith(c[0]) or c[0].startswith(m) for m in c)]
    assert cycles == [], cycles


def test_spec_is_a_leaf():
    """The schema imports no engine, kernel or machine check (those are in
    iolab.load): only its own modules and units."""
    for path in sorted((ROOT / "spec").glob("*.py")):
        imported = {m for m in _imports(path) if m.startswith("iolab")}
        assert {m for m in imported if not m.startswith("iolab.spec.")} <= {
            "iolab.units", "iolab.units.format_size", "iolab.units.parse_duration", "iolab.units.parse_size"}, path
        source = path.read_text()
        assert "import os" not in source and "/proc/" not in source, path


def test_the_command_lines_map_names_its_modules():
    """iolab.cli.commands' docstring says where each command lives: every
    module of iolab/cli is named there, and every name it gives is one."""
    import re

    from iolab.cli import commands

    named = set(re.findall(r"iolab\.cli\.(\w+)", commands.__doc__ or ""))
    there = {p.stem for p in (ROOT / "cli").glob("*.py")} - {"__init__", "__main__", "commands"}
    assert (sorted(named - there), sorted(there - named)) == ([], [])


MODULE_LINES = 500  # the house's limits (issue 35): a module a reader takes in whole,
FUNCTION_LINES = 60  # and a function on one screen


def test_no_module_or_function_over_the_limits():
    """No module of iolab/ has more than MODULE_LINES lines and no function
    (a method, a nested function) more than FUNCTION_LINES, its docstring
    counted: where one grows past them, it splits along a seam."""
    long_modules, long_functions = [], []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        name = path.relative_to(ROOT.parent)
        if len(text.splitlines()) > MODULE_LINES:
            long_modules.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long_functions.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    assert (long_modules, long_functions) == ([], [])
