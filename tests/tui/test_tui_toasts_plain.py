"""Toasts show file-derived text as typed: a ``[b]`` in a path is not eaten as markup."""

from __future__ import annotations

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.testing import screen_text, until


async def test_a_toast_shows_brackets_in_a_path_as_typed() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(120, 30), notifications=True):
        app.notify("opened /tmp/[b]runs[/b]/x.jsonl")
        assert await until(lambda: "runs" in screen_text(app), 10)
        assert "/tmp/[b]runs[/b]/x.jsonl" in screen_text(app)
