"""The fairness dialog: enter judges, the inputs are on screen, and the
dialog and `eloledger fairness` give the same record for the same ledger and arms."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from textual.widgets import Select

from eloledger.budget.sampling_sim import four_arms
from eloledger.cli import main
from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.budget_views import FairnessScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until

ROLES = ("old_1", "new_1", "old_n", "new_n")


@pytest.fixture
def run_files(tmp_path: Path) -> tuple[Path, Path]:
    """A ledger of the four design arms (named so nothing hints at their roles) + comparisons."""
    names = dict(zip(ROLES, ("alpha", "bravo", "charlie", "delta"), strict=True))
    ledger = tmp_path / "run.ledger.jsonl"
    with LedgerWriter(ledger) as writer:
        for row in four_arms(n_old=2, n_new=4, tasks=12, seed=3):
            writer.append({**row, "arm": names[row["arm"]]})
    comparisons = tmp_path / "run.comparisons.csv"
    with comparisons.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["task_id", "winner", "loser"])
        for t in range(12):
            out.writerow([f"t{t}", "delta", "alpha"])
            out.writerow([f"t{t}", "bravo" if t % 3 else "alpha", "alpha" if t % 3 else "bravo"])
            out.writerow([f"t{t}", "charlie", "bravo"])
    return comparisons, ledger


async def test_dialog_and_cli_give_the_same_record(run_files, capsys) -> None:
    comparisons, ledger = run_files
    chosen = {"old_1": "alpha", "new_1": "bravo", "old_n": "charlie", "new_n": "delta"}
    args = [f"--{role.replace('_', '-')}" for role in ROLES]
    cli_args = [x for role, flag in zip(ROLES, args, strict=True) for x in (flag, chosen[role])]
    assert main(["fairness", str(ledger), *cli_args, "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)

    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None and tab.has_focus_within)
        await pilot.press("f")
        assert await until(lambda: "2000 bootstrap rounds" in screen_text(app))
        assert isinstance(app.screen, FairnessScreen)
        text = screen_text(app)
        assert "2000 bootstrap rounds" in text and "seed 0" in text
        for role, arm in chosen.items():
            app.screen.query_one(f"#fair-{role}", Select).value = arm
        app.screen.query_one("#fair-ok").focus()
        await pilot.press("enter")  # enter on Judge judges (on a list it opens it)
        assert await until(lambda: tab.verdict is not None)
        said = ("old_1=alpha", "new_n=delta", "seed 0", "pass@1")  # the verdict, drawn
        assert await until(lambda: all(words in screen_text(app) for words in said))
        shown = screen_text(app)
    tui = tab.verdict
    for record in (cli, tui):
        record.pop("created_utc", None)
    assert json.loads(json.dumps(tui)) == cli
    assert "old_1=alpha" in shown and "new_n=delta" in shown and "seed 0" in shown
    assert "pass@1" in shown


async def test_dialog_does_not_guess_roles_from_the_order_of_names(run_files) -> None:
    comparisons, ledger = run_files
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None and tab.has_focus_within)
        await pilot.press("f")
        assert await until(lambda: isinstance(app.screen, FairnessScreen))
        app.screen.query_one("#fair-ok").focus()
        await pilot.press("enter")
        assert await until(lambda: "choose an arm for" in screen_text(app))  # Judge answered
        assert isinstance(app.screen, FairnessScreen)  # nothing chosen yet: not judged
        assert "choose" in screen_text(app)
        assert tab.verdict is None
