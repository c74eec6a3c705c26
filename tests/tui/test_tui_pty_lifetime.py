"""The real `eloledger watch` on a pseudo-terminal: an idle view on a finished run sends the
terminal nothing, `q` quits, and SIGTERM, SIGHUP or a terminal that goes away end the app
(none is left rendering to nobody). Each test starts the real app once on a pty (2–8 s on a
loaded 2-core machine): Pilot cannot see the bytes a terminal receives, nor signals."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from eloledger.ledger import LedgerWriter
from pty_app import AppOnPty


def finished_run(folder: Path) -> Path:
    ledger = folder / "run.jsonl"
    with LedgerWriter(ledger) as writer:
        for i in range(30):
            writer.append(
                {"task_id": f"t{i}", "arm": "a" if i % 2 else "b", "status": "ok",
                 "total_tokens": 120, "latency_ms": 80.0 + i}
            )
    (folder / "run.comparisons.csv").write_text("task_id,winner,loser\nt0,a,b\n", encoding="utf-8")
    return ledger


def test_an_idle_view_of_a_finished_run_sends_nothing_and_q_quits(tmp_path: Path) -> None:
    # 120×40: tall enough for the tokens/s plot, which used to repaint every second
    app = AppOnPty(["watch", str(finished_run(tmp_path))], cols=120, rows=40)
    try:
        assert b"run finished" in app.read_until(b"run finished")
        app.settle()  # the first paint, the Elo fit in the background
        idle = app.read(3.0)
        assert len(idle) == 0, f"{len(idle)} bytes in 3 s of an idle view: {idle[:200]!r}"
        app.send("q")
        assert app.exited_within(10) == 0
    finally:
        app.stop()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "terminal closed"])
def test_the_app_ends_when_its_terminal_or_a_signal_says_so(tmp_path: Path, how: str) -> None:
    app = AppOnPty(["watch", str(finished_run(tmp_path))])
    try:
        assert b"run finished" in app.read_until(b"run finished")
        if how == "terminal closed":
            app.close_terminal()  # an SSH link dropping: the input hangs up
        else:
            app.signal(getattr(signal, how))
        assert app.exited_within(10) == 0  # a clean exit, not a kill by the signal
    finally:
        app.stop()
