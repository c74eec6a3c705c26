"""The house rule, checked on the source: the core imports neither face, the TUI never the CLI.

Data flows one way and the faces are thin, so an import that goes upward (core -> tui/cli) or
sideways (tui -> cli) is a defect even when it happens to work. The CLI is the entry point and
may open the TUI; nothing else may import a face.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "eloledger"
FACES = ("eloledger.cli", "eloledger.tui")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(rel.parts)


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _is_face(name: str, face: str) -> bool:
    return name == face or name.startswith(face + ".")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_only_downward(path: Path) -> None:
    module = _package_of(path)
    if _is_face(module, "eloledger.cli") or module == "eloledger.__main__":
        allowed = FACES
    elif _is_face(module, "eloledger.tui"):
        allowed = ("eloledger.tui",)
    else:
        allowed = ()
    bad = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for line, name in _imports(path)
        for face in FACES
        if _is_face(name, face) and face not in allowed
    ]
    assert not bad, "; ".join(bad)


def test_the_scan_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself can fail: a planted upward import is found."""
    planted = tmp_path / "x.py"
    planted.write_text("def f():\n    from eloledger.cli import demo_cmd\n", encoding="utf-8")
    assert (2, "eloledger.cli.demo_cmd") in _imports(planted)
