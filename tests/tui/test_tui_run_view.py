"""The Run view: item 7 (an empty Run tab says how to start a run, its footer shows
the keys), item 8 (a paused watch says it pauses the view, not the run; the demo's cancel
dialog offers a re-run, not ``--resume``, which only a spec run can do) and item 9a (a viewer
that joins a run late shows no tokens/s spike while it reads the backlog)."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_tui_fit import footer_drawn

from eloledger.ledger import LedgerWriter
from eloledger.runner.counters import RunCounters
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import ConfirmScreen
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.run_view import RunView, cancel_words
from eloledger.tui.sources import LedgerWatch, LiveRun
from eloledger.tui.testing import footer_current, screen_text, until

SIZES = [(80, 24), (120, 40)]


def footer(app: EloLedgerApp) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_empty_run_tab_says_how_to_start_a_run(size: tuple[int, int]) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # keys reach tabs
        await pilot.press("2")
        assert await until(partial(footer_drawn, app, "run")), footer(app)
        text = " ".join(screen_text(app).split())  # the hints wrap at 80 columns
        assert "No run yet. To start one" in text
        for hint in ("ctrl+r", "eloledger demo", "eloledger run SPEC.toml", "eloledger watch"):
            assert hint in text, hint
        keys = footer(app)
        assert "^r Demo run" in keys and "o Open spec" in keys and "w Watch" in keys, keys
        assert "Follow tail" not in keys, keys  # nothing to follow without a run


async def test_demo_cancel_offers_a_rerun_and_no_resume() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # keys reach tabs
        await pilot.press("2")
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("ctrl+r")  # the key the empty Run tab shows
        view = app.query_one(RunView)
        assert await until(lambda: view.source is not None and view.source.state() == "running")
        assert view.source.demo
        # the footer recomposed for the running demo, and drawn
        assert await until(lambda: footer_current(app) and "Cancel run" in footer(app)), footer(app)
        assert "Demo run" not in footer(app)  # a run is going: no second one
        await pilot.press("x")
        assert await until(lambda: isinstance(app.screen, ConfirmScreen))
        assert await until(lambda: "Cancel the demo?" in " ".join(screen_text(app).split()))
        question = " ".join(screen_text(app).split())
        assert "Cancel the demo?" in question
        assert "ctrl+r runs the demo again" in question
        assert "--resume" not in question
        await pilot.press("y")
        assert await until(lambda: view.source.state() == "cancelled", seconds=60)
        # and the key to run it again is shown (the footer follows the state)
        assert await until(lambda: "^r Demo run" in footer(app)), footer(app)


def test_a_spec_run_keeps_resume_with_its_own_spec_path(tmp_path: Path) -> None:
    spec = SimpleNamespace(path=tmp_path / "exp.toml", name="exp", ledger=tmp_path / "exp.jsonl")
    live = LiveRun(spec)
    assert not live.demo
    what, later = cancel_words(live)
    assert what == "run"
    assert f"eloledger run {tmp_path / 'exp.toml'} --resume" in later


def _rows(path: Path, count: int, *, start: float, step: float, tokens: int) -> None:
    with LedgerWriter(path) as writer:
        for i in range(count):
            writer.append(
                {
                    "ts": start + i * step,
                    "task_id": f"t{i:04d}",
                    "arm": ("best_of_1", "best_of_4")[i % 2],
                    "sample": 0,
                    "role": "sample",
                    "status": "ok",
                    "prompt_tokens": tokens // 2,
                    "completion_tokens": tokens - tokens // 2,
                    "total_tokens": tokens,
                    "usage_source": "server",
                    "latency_ms": 200.0,
                }
            )


async def test_paused_watch_says_the_view_is_paused_not_the_run(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _rows(path, 4, start=time.time() - 10, step=1.0, tokens=100)
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.live_source.counters.total_tokens == 400)
        assert await until(lambda: footer_current(app) and "p Pause view" in footer(app))
        keys = footer(app)
        assert "p Pause view" in keys and "Pause/resume" not in keys, keys  # not the run
        await pilot.press("p")
        assert app.live_source.paused
        assert await until(lambda: "view paused" in screen_text(app)), screen_text(app)
        first = screen_text(app).splitlines()[2]
        assert "● view paused (the run goes on; p catches up)" in first, first
        await pilot.press("p")
        assert await until(lambda: not app.live_source.paused)


async def test_late_viewer_shows_no_rate_spike_while_reading_the_backlog(tmp_path: Path) -> None:
    """600 rows of 100 tokens, one a second (100 tok/s), written before the viewer starts."""
    path = tmp_path / "run.jsonl"
    rows, tokens, step = 600, 100, 1.0
    _rows(path, rows, start=time.time() - rows * step - 1.0, step=step, tokens=tokens)
    true_rate = tokens / step
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(RunView)
        rates: list[float] = []
        shown = view.summary_text

        def spy(source):  # every rate the view computes, tick by tick
            text = shown(source)
            rates.append(view._last_rate)
            return text

        view.summary_text = spy  # type: ignore[method-assign]
        source = app.live_source
        assert isinstance(source, LedgerWatch)
        assert await until(lambda: source.rows_seen == rows)
        ticks = view.ticks
        assert await until(lambda: view.ticks >= ticks + 10)
        await pilot.pause()
    assert rates, "the view never computed a rate"
    assert max(rates) <= 1.5 * true_rate, f"tok/s spike while reading the backlog: {max(rates)}"


def test_followed_rate_is_in_the_rows_own_time() -> None:
    """Rows that arrive in bursts (a poll every 0.25 s, or a catch-up) give the rows' rate."""
    counters = RunCounters()
    source = SimpleNamespace(
        counters=counters, label="x", from_ledger=True, state=lambda: "following", detail=str
    )
    now = [1000.0]
    view = RunView(source, clock=lambda: now[0])  # type: ignore[arg-type]
    ts = 5_000.0
    rates = []
    for _burst in range(40):  # 10 rows of 20 tokens per burst, 0.1 s apart in the ledger
        for _ in range(10):
            ts += 0.1
            counters.apply_row(
                {
                    "ts": ts,
                    "arm": "a",
                    "status": "ok",
                    "total_tokens": 20,
                    "prompt_tokens": 10,
                    "completion_tokens": 10,
                    "usage_source": "server",
                }
            )
        for _ in range(10):  # the view ticks at 10 Hz between bursts
            now[0] += 0.1
            view.summary_text(source)  # type: ignore[arg-type]
            rates.append(view._last_rate)
    assert all(150 <= r <= 250 for r in rates[20:]), rates[20:]  # 200 tok/s throughout
    for _ in range(40):  # the writer stops: after the window the rate falls to zero
        now[0] += 0.1
        view.summary_text(source)  # type: ignore[arg-type]
    assert view._last_rate == 0.0
