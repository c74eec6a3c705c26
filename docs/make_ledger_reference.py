"""Make docs/ledger-reference.md from the ledger's schema module, so the reference cannot drift.

    .venv/bin/python docs/make_ledger_reference.py   # writes docs/ledger-reference.md

The fields are ``eloledger.ledger.schema.FIELD_GROUPS`` (name, JSON type, the rows that carry
it, its meaning); the roles, usage sources and the names read from other tools come from the same
module. ``tests/docs/test_docs_ledger_reference.py`` fails when the file is not this script's
output, and ``tests/ledger/test_ledger_fields_documented.py`` when a writer writes a field the
table does not describe.
"""

from __future__ import annotations

import sys
from pathlib import Path

from eloledger.ledger import schema

OUTPUT = Path(__file__).resolve().parent / "ledger-reference.md"


def render() -> str:
    lines = [
        "# Ledger reference",
        "",
        "<!-- made by docs/make_ledger_reference.py from eloledger/ledger/schema.py: "
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
    for title, fields in schema.FIELD_GROUPS:
        lines += [f"## {title}", "", "| field | type | rows | meaning |", "| --- | --- | --- | --- |"]
        lines += [f"| `{f.name}` | {f.type} | {f.rows} | {_cell(f.meaning)} |" for f in fields]
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a bar would end the table's cell


def main() -> int:
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
