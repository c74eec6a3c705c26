"""No import cycle between modules of src/, checked on the source.

A cycle means two modules cannot be read, tested or moved apart, and a function-level import is
the usual way such a cycle is hidden rather than removed. So every import counts as an edge:
module level, inside `if TYPE_CHECKING:`, and inside function bodies alike. `from a.b import c`
is an edge to the module `a.b.c` when that module exists, else to `a.b` (importing a submodule
also runs the package's `__init__`, but counting that would make every package re-export a
cycle; grimp and import-linter follow the same rule).

The cycles still there are listed in KNOWN_CYCLES, and the list must be exact: a cycle fixed
must leave the list (so it cannot come back unseen), and a new one fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

SRC = Path(__file__).resolve().parents[2] / "src" / "eloledger"

# Each entry: the modules of one strongly connected component (a set of modules that all reach
# each other). To be broken in the second pass, once the helpers on these files merge.
KNOWN_CYCLES: set[frozenset[str]] = set()  # none left: keep it that way

# Packages that must sit below another: (lower, upper) means `lower` imports nothing of `upper`.
LAYERS = [("eloledger.agents", "eloledger.runner")]
# Imports across those layers still there, as (importing module, imported module).
KNOWN_LAYER_BREAKS: set[tuple[str, str]] = set()  # none: agents.events holds the shapes


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under `root` (a package directory)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_modules(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that the file imports anywhere (module level or in a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target:
                    targets.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    targets.add(f"{base}.{alias.name}")
                elif base in known:
                    targets.add(base)
    targets.discard(name)
    return targets


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports, within the package at `root`."""
    known = module_names(root)
    return {name: imported_modules(path, name, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components with more than one module (each holds a cycle)."""
    names = sorted(graph)
    index = {name: i for i, name in enumerate(names)}
    rows = [index[a] for a in names for b in graph[a]]
    cols = [index[b] for a in names for b in graph[a]]
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups: dict[int, set[str]] = {}
    for name, label in zip(names, labels, strict=True):
        groups.setdefault(int(label), set()).add(name)
    return {frozenset(group) for group in groups.values() if len(group) > 1}


def layer_breaks(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Imports that go from a lower package of LAYERS up into its upper one."""

    def within(name: str, package: str) -> bool:
        return name == package or name.startswith(package + ".")

    return {
        (source, target)
        for lower, upper in LAYERS
        for source, targets in graph.items()
        if within(source, lower)
        for target in targets
        if within(target, upper)
    }


def _show(found: set[frozenset[str]]) -> str:
    return "; ".join(" <-> ".join(sorted(c)) for c in sorted(found, key=sorted))


def test_no_import_cycle_beyond_the_known_ones() -> None:
    found = cycles(import_graph(SRC))
    new = found - KNOWN_CYCLES
    assert not new, f"new import cycle(s): {_show(new)}"


def test_the_known_cycle_list_is_exact() -> None:
    """A cycle broken (or changed) must leave KNOWN_CYCLES, so it cannot come back unseen."""
    found = cycles(import_graph(SRC))
    gone = KNOWN_CYCLES - found
    assert not gone, f"no longer a cycle, remove from KNOWN_CYCLES: {_show(gone)}"


def test_agents_sit_below_the_runner() -> None:
    found = layer_breaks(import_graph(SRC))
    assert found == KNOWN_LAYER_BREAKS, (
        f"new: {sorted(found - KNOWN_LAYER_BREAKS)}; fixed, remove from the list: "
        f"{sorted(KNOWN_LAYER_BREAKS - found)}"
    )


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_scan_sees_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The checker can fail: a function-level and a relative import close a planted cycle."""
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.sub import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "def f():\n    from .c import g\n",
            "sub/c.py": "import pkg.a\n",
            "d.py": "from pkg import a\n",
        },
    )
    graph = import_graph(root)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.sub.c"}
    assert cycles(graph) == {frozenset({"pkg.a", "pkg.sub.b", "pkg.sub.c"})}


def test_the_scan_sees_a_layer_break(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "agents/__init__.py": "",
            "agents/x.py": "def f():\n    from eloledger.runner.y import z\n",
            "runner/__init__.py": "",
            "runner/y.py": "",
        },
    )
    # The planted package is called `pkg`; name it eloledger for LAYERS to apply.
    renamed = root.rename(tmp_path / "eloledger")
    assert layer_breaks(import_graph(renamed)) == {("eloledger.agents.x", "eloledger.runner.y")}
