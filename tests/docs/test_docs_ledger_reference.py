"""docs/ledger-reference.md is what docs/make_ledger_reference.py makes from the row contract
(LedgerRow: names and types) and the schema module (groups, rows, meanings), and the schema's
field table describes exactly LedgerRow's fields, once each."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from eloledger.ledger import schema
from eloledger.ledger.row import LedgerRow

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator() -> ModuleType:
    found = importlib.util.spec_from_file_location(
        "make_ledger_reference", DOCS / "make_ledger_reference.py"
    )
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def test_ledger_reference_is_the_generators_output() -> None:
    written = (DOCS / "ledger-reference.md").read_text(encoding="utf-8")
    assert written == _generator().render(), (
        "docs/ledger-reference.md is stale: run .venv/bin/python docs/make_ledger_reference.py"
    )


def test_every_field_of_the_row_is_described_once_and_nothing_else() -> None:
    names = [f.name for _, group in schema.FIELD_GROUPS for f in group]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) == set(LedgerRow.__struct_fields__), set(names) ^ set(schema.FIELDS)
    assert not set(schema.ALIASES) & set(names)  # a name read from elsewhere is not a field


def test_the_page_gives_each_field_the_type_the_row_declares() -> None:
    page = (DOCS / "ledger-reference.md").read_text(encoding="utf-8")
    assert "| `prompt_tokens` | integer or null |" in page
    assert "| `session` | integer or string |" in page
    assert "| `tags` | array of strings |" in page
    assert "| `budget_seconds` | number |" in page
    assert set(_generator().json_types()) == set(schema.FIELDS)


def test_the_page_is_linked_from_the_ledger_page() -> None:
    assert "(ledger-reference.md)" in (DOCS / "ledger.md").read_text(encoding="utf-8")
