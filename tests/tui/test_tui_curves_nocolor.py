"""Under NO_COLOR every series of the curves view is tellable.

Five arms, each named by its letter at its curve's end (no later line may paint over it), and
the reference line dotted, unlike the arms' braille lines, with the legend saying so.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def inside(text: str) -> str:
    """The plot's cells: the rows between its top (┏) and bottom (┗) border, without the
    y-axis labels and the frame."""
    lines = text.splitlines()
    if not any("┏" in line for line in lines):
        return ""  # no plot drawn (yet)
    top = next(i for i, line in enumerate(lines) if "┏" in line)
    bottom = next(i for i, line in enumerate(lines) if "┗" in line)
    cells = []
    for line in lines[top + 1 : bottom]:
        left = max(line.find("┃"), line.find("┫"))
        right = max(line.rfind("┃"), line.rfind("┣"))
        cells.append(line[left + 1 : right])
    return "\n".join(cells)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_color_curves_name_every_arm_and_dot_the_reference(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=size) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None and tab.has_focus_within)
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)
        names = [arm.name for arm in tab.curves.arms]
        assert len(names) == 5
        letters = [chr(ord("A") + i) for i in range(len(names))]

        def lettered() -> bool:  # the curves drawn, each with its letter
            text = screen_text(app)
            return "budget curves" in text and all(letter in inside(text) for letter in letters)

        assert await until(lettered), screen_text(app)
        cells = inside(screen_text(app))
        missing = [letter for letter in letters if letter not in cells]
        assert not missing, f"curves without their letter on the plot: {missing}\n{cells}"
        # the reference of best_of_8 (5 budgets): a dotted line, not braille like the arms
        tab.reference = names.index("best_of_8")
        tab.refresh_plot()
        assert await until(lambda: "from best_of_8 (r: next)" in screen_text(app))
        text = screen_text(app)
        cells = inside(text)
        assert cells.count("·") >= 8, cells
        assert all(letter in cells for letter in letters), cells
        legend = next(line for line in text.splitlines() if "from best_of_8 (r: next)" in line)
        assert legend.lstrip().startswith("···"), legend
