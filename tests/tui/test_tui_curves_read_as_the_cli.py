"""The Elo tab's budget curves are the curves ``eloledger curve LEDGER`` prints, on a ledger
whose lines repeat (before: the tab read the rows without the duplicate rule and counted a
repeated call twice)."""

from __future__ import annotations

import json
from pathlib import Path

from test_rating_ledger_outcomes import varied, write

from eloledger.cli import main
from eloledger.tables import to_json
from eloledger.tui.budget_views import compute_curves


def test_the_tabs_curves_equal_the_commands_on_a_ledger_with_repeated_lines(
    tmp_path: Path, capsys
) -> None:
    rows = [r for r in varied(8, 400) if r.get("role") != "checkpoint"]
    ledger = write(tmp_path / "run.jsonl", rows + rows[:60])  # a writer appended 60 again
    assert main(["curve", str(ledger), "--format", "json", "--bootstrap", "30"]) == 0
    printed = json.loads(capsys.readouterr().out)
    shown = json.loads(to_json(compute_curves(ledger, bootstrap=30).to_dict()))
    assert shown == printed
    assert any("60 duplicate rows" in w for w in shown["warnings"])
