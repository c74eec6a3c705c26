"""The Elo tab's exports (``c`` CSV, ``m`` Markdown, ``e`` the curves figure): where they go
and what they hold.

They go next to the run's files (the comparisons' folder), never into the current folder (a
checkout, say). The shipped example's folder is inside the installed package and an unwritable
folder takes nothing, so those go to the exports folder instead: ``$ELOLEDGER_EXPORTS``, else
``platformdirs.user_data_dir("eloledger")/exports`` (say ``~/.local/share/eloledger/exports``).
CSV is exactly ``eloledger elo --format csv`` (its columns, its order); Markdown is the table
on screen, in its current sort.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eloledger.tui.elo_data import EloData


def exports_folder() -> Path:
    """The documented folder for exports that have no run folder to go to."""
    env = os.environ.get("ELOLEDGER_EXPORTS")
    if env:
        return Path(env).expanduser()
    from eloledger.locations import exports_dir

    return exports_dir()


def export_folder(data: EloData | None) -> Path:
    """The run's folder (the comparisons file's) when it can take files, else the exports
    folder (created)."""
    from importlib import resources

    package = Path(str(resources.files("eloledger"))).resolve()
    source = data.comparisons if data is not None else None
    if source is not None:
        folder = source.expanduser().resolve().parent
        if not folder.is_relative_to(package) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    folder = exports_folder()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fresh_stem(folder: Path, prefix: str, suffixes: Sequence[str]) -> str:
    """``prefix-YYYYmmdd-HHMMSS[-n]``: a name no earlier export in ``folder`` has."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    stem, n = f"{prefix}-{stamp}", 1
    while any((folder / f"{stem}.{s}").exists() for s in suffixes):
        n += 1
        stem = f"{prefix}-{stamp}-{n}"
    return stem


def export_records(
    data: EloData, fmt_name: str, players: Sequence[dict[str, Any]] | None = None
) -> str:
    """CSV as ``eloledger elo --format csv`` prints it, or Markdown as ``--format md`` prints
    its table (the same columns and cells) with ``players`` in the order given (the sort on
    screen; default: the report's order)."""
    from eloledger.report.elo_columns import shown_record
    from eloledger.tables import render

    if fmt_name == "csv":
        from eloledger.report.elo_files import csv_text

        return csv_text(data.report).rstrip("\n") + "\n"
    rows = data.players if players is None else players
    records = [shown_record(p) for p in rows]
    columns = [c.table_column() for c in data.columns()]
    note = f"\n\n_anchor: {data.anchor} = 1000 Elo; source: {data.source}_\n"
    return render("md", records, columns) + note


def write_export(
    data: EloData, fmt_name: str, players: Sequence[dict[str, Any]] | None = None
) -> Path:
    """Write the export to a new file in ``export_folder(data)``; OSError when it cannot."""
    suffix = "csv" if fmt_name == "csv" else "md"
    folder = export_folder(data)
    path = folder / f"{fresh_stem(folder, 'elo', (suffix,))}.{suffix}"
    path.write_text(export_records(data, fmt_name, players), encoding="utf-8")
    return path
