"""The tree's layers: what the VM guest imports, and no import loops.

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


def _imports(path: Path) -> set[str]:
    """iolab modules a module imports at its top level (not inside functions
    or under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iolab"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("iolab"))
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles():
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}
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
    assert cycles == []


def test_spec_is_a_leaf():
    """The schema imports no engine, kernel or machine check (those are in
    iolab.load)."""
    assert {m for m in _imports(ROOT / "spec.py") if m.startswith("iolab")} <= {"iolab.units",
                                                                                "iolab.units.format_size",
                                                                                "iolab.units.parse_size"}
    source = (ROOT / "spec.py").read_text()
    assert "import os" not in source and "/proc/" not in source
