"""One arm, one letter, on every view: the Elo table, its plot, the curves view and their
legends, and a legend that fits the width (an arm never cut, a second line instead).

The shipped example with its arms renamed so that name order, cost order and the ledger's
order all differ (the curves view used to call another arm A than the table)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from eloledger.tables import arm_letters, legend_lines
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, tables_measured, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
# cheapest first in the example: best_of_1 < best_of_2 < best_of_4 < long_cot < best_of_8
RENAMED = {
    "best_of_1": "zeta_baseline_n1",
    "best_of_2": "cot_sampled_twice",
    "best_of_4": "base_four_samples",
    "best_of_8": "alpha_eight_samples",
    "long_cot": "my_long_chain_thought",
}


def renamed_example(folder: Path) -> tuple[Path, Path]:
    out = []
    for name in ("comparisons.csv", "ledger.jsonl"):
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        for old, new in RENAMED.items():
            text = re.sub(rf"\b{old}\b", new, text)
        (folder / name).write_text(text, encoding="utf-8")
        out.append(folder / name)
    return out[0], out[1]


def names_each_arm(text: str, letters: dict[str, str]) -> bool:
    """Every arm as its letter and its name, e.g. "A alpha_eight_samples"."""
    return all(re.search(rf"\b{letter} {name}\b", text) for name, letter in letters.items())


def axis_row(lines: list[str]) -> int | None:
    """The plot's bottom border (its x axis)."""
    return max((i for i, line in enumerate(lines) if "┗" in line or "┻" in line), default=None)


def legend_under_plot(lines: list[str]) -> str:
    """The lines under the plot's tick labels, over the footer."""
    axis = axis_row(lines)
    return "" if axis is None else "\n".join(lines[axis + 2 : len(lines) - 1])


def test_letters_follow_names_not_positions() -> None:
    letters = arm_letters(["b", "c", "a", "b"])
    assert letters == {"a": "A", "b": "B", "c": "C"}
    assert arm_letters(reversed(["a", "b", "c"])) == letters  # any view's order, same letters


def test_legend_lines_never_cut_an_entry() -> None:
    keys = [f"[b]{chr(65 + i)}[/] arm_with_a_long_name_{i}" for i in range(6)]
    lines = legend_lines(keys, 60)
    assert len(lines) > 1
    assert all(len(re.sub(r"\[/?b\]", "", line)) <= 60 for line in lines)
    assert "  ".join(lines).count("arm_with_a_long_name_") == 6


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("no_color", [False, True], ids=["color", "NO_COLOR"])
async def test_table_plots_and_legends_name_each_arm_by_one_letter(
    tmp_path: Path, size: tuple[int, int], no_color: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    comparisons, ledger = renamed_example(tmp_path)
    expected = arm_letters(RENAMED.values())
    assert expected["alpha_eight_samples"] == "A" and expected["zeta_baseline_n1"] == "E"
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=size) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None)
        # (a table read before it has measured its rows keeps cut columns)
        assert await until(
            lambda: tables_measured(app) and names_each_arm(screen_text(app), expected)
        ), screen_text(app)
        text = screen_text(app)
        for name, letter in expected.items():  # the table: "A alpha_eight_samples"
            assert re.search(rf"\b{letter} {name}\b", text), (name, letter, text)
        assert await until(lambda: tab.has_focus_within)  # where "v" goes
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)

        def curves_drawn() -> bool:  # their status line, and a legend naming every arm
            if not tables_measured(app):  # the table is refilled for the curves
                return False
            text = screen_text(app)
            legend = legend_under_plot(text.splitlines())
            whole = all(f"{letter} {name}" in legend for name, letter in expected.items())
            return "budget curves" in text and whole

        assert await until(curves_drawn), screen_text(app)
        text = screen_text(app)
        lines = text.splitlines()
        axis = axis_row(lines)
        legend = legend_under_plot(lines)
        for name, letter in expected.items():  # the legend: every arm whole, same letter
            assert f"{letter} {name}" in legend, (name, letter, legend)
            assert re.search(rf"\b{letter} {name}\b", text)  # the table above, same letter
        assert all(len(line) <= size[0] for line in lines)
        plot = "\n".join(lines[: axis + 1])
        for letter in expected.values():  # each curve's end carries its letter
            assert letter in plot
