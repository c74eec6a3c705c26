"""docs/spec-reference.md is what docs/make_spec_reference.py makes from the parser, and the
defaults it states are the ones the parser really gives."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from eloledger.runner import spec as spec_module
from eloledger.runner.spec import parse_spec

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator() -> ModuleType:
    found = importlib.util.spec_from_file_location("make_spec_reference", DOCS / "make_spec_reference.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules[found.name] = module  # its dataclass looks its module up there
    found.loader.exec_module(module)
    return module


def test_spec_reference_is_the_generators_output() -> None:
    written = (DOCS / "spec-reference.md").read_text(encoding="utf-8")
    assert written == _generator().render(), (
        "docs/spec-reference.md is stale: run .venv/bin/python docs/make_spec_reference.py"
    )


def test_every_accepted_key_has_one_row_at_least() -> None:
    rows = _generator().collect()
    for table, keys in spec_module._TABLES.items():
        assert {r.key for r in rows if r.table == table} == set(keys), table


def test_a_key_the_parser_accepts_without_a_meaning_stops_the_generator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    generator = _generator()
    tables = {**spec_module._TABLES, "judge": spec_module._TABLES["judge"] | {"seed"}}
    monkeypatch.setattr(spec_module, "_TABLES", tables)
    with pytest.raises(generator.SpecReferenceError, match=r"judge\.seed: accepted, but"):
        generator.render()


def _literal(cell: str) -> object:
    """A default cell that is a TOML literal (`8`, `"auto"`, `false`), else None."""
    if not (cell.startswith("`") and cell.endswith("`")):
        return None
    return tomllib.loads(f"v = {cell.strip('`')}")["v"]


SPEC = """
[experiment]
name = "defaults"
profile = "sim"
[tasks]
source = "builtin:arith"
[[arms]]
name = "one"
[[arms]]
name = "agent"
kind = "agent"
agent = "codex"
"""


def test_stated_defaults_are_what_the_parser_gives(tmp_path: Path) -> None:
    """Every literal default in the reference, read back from a spec that sets none."""
    spec = parse_spec(SPEC, path=tmp_path / "spec.toml")
    chat, agent = spec.arms
    where = {
        "experiment": lambda key: getattr(spec, key),
        "tasks": lambda key: getattr(spec, f"tasks_{key}"),
        "judge": lambda key: getattr(spec.judge, key),
        "retry": lambda key: getattr(spec.retry, key),
        "sim": lambda key: getattr(spec.sim, key),
    }
    checked = 0
    for row in _generator().collect():
        value = _literal(row.default)
        if value is None:
            continue
        if row.table in where:
            actual = where[row.table](row.key)
        elif row.table == "arms" and row.context in ("every", "chat"):
            actual = getattr(chat, row.key)
        elif row.table == "arms" and row.context == "agent":
            actual = getattr(agent.agent, row.key, None)
            actual = getattr(agent, row.key) if actual is None else actual
        else:
            continue  # gates: checked by budget.gates, not by the spec's defaults
        assert actual == value, f"{row.table}.{row.key} ({row.context}): {actual!r} != {value!r}"
        checked += 1
    assert checked >= 24  # every literal default outside [gates] (24 today)
