"""Doctor tab at 80×24: hanging indent, the fix in view, Enter shows the
evidence and the fix, End keeps the selection visible."""

from __future__ import annotations

from textual.widgets import OptionList

from eloledger.doctor.findings import CODES, Finding
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import TextScreen
from eloledger.tui.doctor_tab import DoctorTab
from eloledger.tui.testing import screen_text, until

CODE = sorted(CODES)[0]


def findings(n: int) -> list[Finding]:
    return [
        Finding(
            CODE,
            "warning",
            f"client{i % 3}",
            f"finding {i}: " + "a long message that must wrap onto a second line " * 2,
            evidence=f"~/.config/file{i}.json:12",
            fix=f"set BASE_URL to https://gw{i}.example.com/v1",
        )
        for i in range(n)
    ]


async def test_wrapped_findings_hang_and_enter_shows_evidence_and_fix() -> None:
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(DoctorTab)
        assert await until(lambda: bool(tab.last_run))
        tab._show(findings(12), {}, "now")
        fix = "fix: set BASE_URL to https://gw0.example.com/v1"
        assert await until(lambda: "finding 0:" in screen_text(app) and fix in screen_text(app))
        lines = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(lines) if "finding 0:" in line)
        mark = lines[first].index("!")
        text_col = lines[first].index(CODE)
        assert lines[first + 1][mark] == " "  # the mark column stays clear ...
        assert lines[first + 1][text_col] != " "  # ... the message goes on under its text
        assert "fix: set BASE_URL to https://gw0.example.com/v1" in screen_text(app)
        app.query_one("#doctor-list", OptionList).focus()
        await pilot.press("enter")
        assert await until(lambda: isinstance(app.screen, TextScreen))
        assert await until(lambda: "(warning) on client0" in screen_text(app))  # its heading
        text = screen_text(app)
        assert "~/.config/file0.json:12" in text and "https://gw0.example.com/v1" in text
        await pilot.press("escape")
        option_list = tab.query_one("#doctor-list", OptionList)
        assert await until(lambda: app.focused is option_list)  # back from the dialog
        await pilot.press("end")
        last = option_list.option_count - 1
        assert await until(lambda: option_list.highlighted == last)
        assert await until(lambda: "finding 11:" in screen_text(app))  # scrolled after a refresh
        assert option_list.highlighted == option_list.option_count - 1
        assert "finding 11:" in screen_text(app)  # the selection is on screen
