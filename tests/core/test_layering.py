"""The house rule, checked on the source: the core imports neither face, the TUI never the CLI.

Data flows one way and the faces are thin, so an import that goes upward (core -> tui/cli) or
sideways (tui -> cli) is a defect even when it happens to work. The CLI is the entry point and
may open the TUI; nothing else may import a face.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "eloledger"
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


# Inside the core, each part imports only parts on a lower layer (or itself). Lowest first:
# plain helpers, then what everything reads (the wire format, tasks, the sandbox), the ledger,
# profiles and the simulator, what checks and judges them, the meter, rating, the runner that
# drives them all, and the views built from their files. The faces (cli, tui) sit above.
CORE_LAYERS = (
    ("eloledger", "errors"),
    ("textsafe", "words", "redact", "fsutil", "jsonc", "locations", "gcpause"),
    ("gateway", "tasks", "sandbox", "safetree", "tables", "clients_dir", "clientfacts"),
    ("ledger",),
    ("profiles", "sim"),
    ("doctor", "judges", "agents"),
    ("meter",),
    ("rating",),
    ("budget",),
    ("report",),
    ("runner",),
    ("history", "plots"),
)
_LAYER_OF = {part: depth for depth, parts in enumerate(CORE_LAYERS) for part in parts}


def _part(name: str) -> str:
    """The core part a dotted module name belongs to: ``eloledger.ledger.reader`` -> ``ledger``."""
    pieces = name.split(".")
    if len(pieces) == 1 or pieces[1] in ("__init__", "__version__"):
        return "eloledger"
    return pieces[1]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_the_core_imports_only_lower_layers(path: Path) -> None:
    own = _part(_package_of(path))
    if own in ("cli", "tui", "__main__"):
        return  # the faces: checked above
    assert own in _LAYER_OF, f"{own} has no layer: add it to CORE_LAYERS"
    bad = []
    for line, name in _imports(path):
        if not name.startswith("eloledger"):
            continue
        other = _part(name)
        if other in ("cli", "tui") or other == own or (own == "eloledger"):
            continue
        if other not in _LAYER_OF:
            continue  # ``from eloledger import x`` of a name, seen again as eloledger.x
        if _LAYER_OF[other] >= _LAYER_OF[own]:
            bad.append(f"{path.relative_to(SRC)}:{line} ({own}) imports {name} ({other})")
    assert not bad, "; ".join(bad)


def test_the_layer_check_sees_a_sideways_import() -> None:
    """The doctor reading the runner (one layer up) is named, as it once was."""
    assert _LAYER_OF[_part("eloledger.runner.resolve")] > _LAYER_OF[_part("eloledger.doctor.x")]
    assert _LAYER_OF[_part("eloledger.clientfacts")] < _LAYER_OF[_part("eloledger.profiles.edit")]


@pytest.mark.parametrize(
    "path", sorted((SRC / "cli").glob("*.py")), ids=lambda p: p.name
)
def test_commands_share_helpers_only_through_public_names(path: Path) -> None:
    """A command module never reaches into another command's private ``_helper``."""
    bad = [
        f"cli/{path.name}:{line} imports {name}"
        for line, name in _imports(path)
        if name.startswith("eloledger.cli.") and name.rsplit(".", 1)[-1].startswith("_")
        and not name.rsplit(".", 1)[-1].startswith("__")
    ]
    assert not bad, "; ".join(bad)
