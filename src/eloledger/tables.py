"""Render a list of records as a table, CSV, Markdown or JSON: one place for every command."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    digits: int | None = None  # None: print as is; n: fixed-point with n decimals

    def cell(self, record: Mapping[str, Any]) -> str:
        value = record.get(self.key)
        if value is None:
            return ""
        if isinstance(value, float):
            if math.isnan(value):
                return ""
            if math.isinf(value):
                return "inf" if value > 0 else "-inf"
            if self.digits is not None:
                return f"{value:.{self.digits}f}"
            return f"{value:g}"
        if isinstance(value, bool):
            return "yes" if value else ""
        return str(value)


def render_table(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    """Aligned plain text: numbers right, text left."""
    header = [c.title for c in columns]
    body = [[c.cell(r) for c in columns] for r in records]
    widths = [max([len(h)] + [len(row[i]) for row in body]) for i, h in enumerate(header)]
    numeric = [all(_looks_numeric(row[i]) for row in body if row[i]) for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(w) if num else cell.ljust(w)
            for cell, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(row) for row in body)
    return "\n".join(out)


def render_csv(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.key for c in columns])
    for r in records:
        writer.writerow([c.cell(r) for c in columns])
    return buf.getvalue().rstrip("\n")


def render_markdown(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(esc(c.title) for c in columns) + " |"]
    lines.append("|" + "|".join("---:" if c.digits is not None else "---" for c in columns) + "|")
    for r in records:
        lines.append("| " + " | ".join(esc(c.cell(r)) for c in columns) + " |")
    return "\n".join(lines)


def to_json(payload: Any) -> str:
    """JSON with NaN/inf turned into null, so every consumer can parse it."""
    return json.dumps(_finite(payload), indent=2, ensure_ascii=False)


def render(fmt: str, records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    if fmt == "table":
        return render_table(records, columns)
    if fmt == "csv":
        return render_csv(records, columns)
    if fmt == "md":
        return render_markdown(records, columns)
    raise ValueError(f"unknown format {fmt!r}")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _looks_numeric(text: str) -> bool:
    try:
        float(text.replace(",", ""))  # 1,234,567: thousands separators
    except ValueError:
        return text in ("inf", "-inf")
    return True
