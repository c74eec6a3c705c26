"""Make docs/ledger-reference.md from the ledger's schema module, so the reference cannot drift.

    .venv/bin/python docs/make_ledger_reference.py   # writes docs/ledger-reference.md

The fields and their JSON types are ``eloledger.ledger.row.LedgerRow``'s (the row every writer
builds); ``eloledger.ledger.schema.FIELD_GROUPS`` groups them and says which rows carry each and
what it means; the roles, usage sources and the names read from other tools come from the schema
module too. ``tests/docs/test_docs_ledger_reference.py`` fails when the file is not this script's
output or a field of LedgerRow is not in the table (or the table names one it does not have).
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec.inspect as mi

from eloledger.ledger import schema
from eloledger.ledger.row import LedgerRow

OUTPUT = Path(__file__).resolve().parent / "ledger-reference.md"


def render() -> str:
    lines = [
        "# Ledger reference",
        "",
        "<!-- made by docs/make_ledger_reference.py from eloledger/ledger/row.py and schema.py: "
        "do not edit -->",
        "",
        "One JSON object per line, one line per model call (and per agent session, judge call "
        "and checkpoint). What the format guarantees (one writer, torn lines, duplicates) is in "
        "[ledger.md](ledger.md). A field a row does not carry is absent or null.",
        "",
        f"Roles: {', '.join(f'`{r}`' for r in schema.ROLES)}. "
        f"`usage_source`: {', '.join(f'`{s}`' for s in schema.USAGE_SOURCES)}. "
        f"`status`: {', '.join(f'`{s}`' for s in schema.STATUSES)}.",
        "",
    ]
    types = json_types()
    for title, fields in schema.FIELD_GROUPS:
        lines += [f"## {title}", "", "| field | type | rows | meaning |", "| --- | --- | --- | --- |"]
        lines += [
            f"| `{f.name}` | {types[f.name]} | {f.rows} | {_cell(f.meaning)} |" for f in fields
        ]
        lines.append("")
    lines += [
        "## Names read from other tools",
        "",
        "Readers map these to the ledger's own names (a row's own name wins where both are "
        "there), and read the counts inside a nested `usage` object (OpenAI and Anthropic "
        "shapes) or Gemini's `usageMetadata`:",
        "",
        "| name | read as |",
        "| --- | --- |",
    ]
    lines += [f"| `{alias}` | `{name}` |" for alias, name in schema.ALIASES.items()]
    return "\n".join(lines) + "\n"


def json_types() -> dict[str, str]:
    """Each field's JSON type(s) as LedgerRow declares it: ``integer or null``, ``array of
    strings``, ... (absent, msgspec's UNSET, is no type: any field may be absent)."""
    info = mi.type_info(LedgerRow)
    assert isinstance(info, mi.StructType)
    return {f.name: _json_type(f.type) for f in info.fields}


_NAMES = {mi.IntType: "integer", mi.FloatType: "number", mi.StrType: "string",
          mi.BoolType: "boolean", mi.NoneType: "null"}  # fmt: skip


def _json_type(t: mi.Type) -> str:
    if isinstance(t, mi.UnionType):
        names = [_json_type(x) for x in t.types]
        return " or ".join(sorted(names, key=lambda n: n == "null"))  # null last
    if isinstance(t, mi.ListType):
        return f"array of {_json_type(t.item_type)}s"
    return _NAMES[type(t)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a bar would end the table's cell


def main() -> int:
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
