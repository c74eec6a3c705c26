"""The Run view: numbers pulled on a timer, one Line-API list redrawing only changed lines."""

from __future__ import annotations

from eloledger.runner.counters import RequestLine, RunCounters
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import ConfirmScreen
from eloledger.tui.line_list import LineList
from eloledger.tui.sources import SnapshotSource
from eloledger.tui.testing import sample_counters, screen_text, until


def missing(app: EloLedgerApp, wanted: tuple[str, ...]) -> list[str]:
    """What of ``wanted`` the screen does not show (yet)."""
    text = screen_text(app)
    return [words for words in wanted if words not in text]


class PausableSource(SnapshotSource):
    """A source whose pause/cancel the view drives (the live runner's are tested end to end)."""

    def __init__(self, counters: RunCounters) -> None:
        super().__init__(counters, label="unit", state="running")
        self.paused = False
        self.cancelled = False

    def state(self) -> str:
        return "cancelling" if self.cancelled else "paused" if self.paused else "running"

    def can_pause(self) -> bool:
        return not self.cancelled

    def can_cancel(self) -> bool:
        return not self.cancelled

    def toggle_pause(self) -> None:
        self.paused = not self.paused

    def cancel(self) -> None:
        self.cancelled = True


async def test_run_view_shows_counters_arms_and_requests() -> None:
    counters = sample_counters()
    app = EloLedgerApp(source=SnapshotSource(counters, label="demo.jsonl", state="running"))
    async with app.run_test(size=(80, 24)):
        shown = (
            "total 6,780",
            "429s 6",
            "rate_limit 6",
            "6,780 / 50,000",  # budget gauge
            "0/8 in flight",
            "best_of_1",
            "best_of_2",
            "best_of_3",
            "14/20",  # best_of_1 progress
            "arith-039",  # the list follows the newest request
        )
        assert await until(lambda: not missing(app, shown)), missing(app, shown)
        # the numbers move when the counters move (pulled by the timer, no message sent)
        counters.apply_row(
            {
                "arm": "best_of_9",
                "task_id": "new-task",
                "status": "ok",
                "prompt_tokens": 1000,
                "completion_tokens": 220,
            }
        )
        counters.on_tokens("best_of_9", 77)
        moved = ("total 8,000", "best_of_9", "+77 tok", "new-task")
        assert await until(lambda: not missing(app, moved)), missing(app, moved)


async def test_request_list_refreshes_only_changed_lines() -> None:
    counters = sample_counters(rows=5)
    app = EloLedgerApp(source=SnapshotSource(counters, label="x", state="running"))
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "arith-004" in screen_text(app))  # the list is drawn
        requests = app.query_one("#run-requests", LineList)
        # layout settles (a resize repaints everything once)
        assert await until(lambda: requests.sync() == 0)
        assert requests.sync() == 0  # nothing changed since the last paint
        # no await from here: nothing else can touch the list between the syncs
        counters.requests[2].status = "error"
        counters.requests[2].error_class = "server"
        assert requests.sync() == 1
        counters.requests.append(RequestLine("t-new", "best_of_1", 0, "ok", 10))
        assert requests.sync() == 1
        assert await until(lambda: "server" in screen_text(app))


async def test_request_list_is_one_widget_for_thousands_of_rows() -> None:
    counters = sample_counters(rows=2000)
    app = EloLedgerApp(source=SnapshotSource(counters, label="x", state="running"))
    async with app.run_test(size=(80, 24)) as pilot:
        requests = app.query_one("#run-requests", LineList)
        # the app has painted the list at its tail (a condition that draws nothing itself:
        # the lines drawn are what this test counts)
        assert await until(lambda: requests.lines_rendered and requests.scroll_y > 0)
        assert len(list(requests.query("*"))) == 0  # no child widget per row
        rendered = requests.lines_rendered
        assert rendered < 200  # only visible lines were drawn
        assert await until(lambda: "arith-1999" in screen_text(app))
        assert await until(lambda: requests.has_focus)  # placed after the first refresh
        await pilot.press("home")  # scroll away from the tail: following stops
        assert await until(lambda: "arith-000" in screen_text(app))
        assert "arith-000" in screen_text(app) and not requests.follow
        counters.apply_row({"arm": "best_of_1", "task_id": "tail-row", "status": "ok"})
        # the arm's new count is drawn by the tick that syncs the list: the row was seen
        done = f"{counters.arms['best_of_1'].done}/20"
        assert await until(lambda: done in screen_text(app)), screen_text(app)
        assert "tail-row" not in screen_text(app)
        await pilot.press("f")  # follow again
        assert await until(lambda: "tail-row" in screen_text(app))


async def test_pause_and_cancel_bindings() -> None:
    source = PausableSource(sample_counters(rows=3))
    app = EloLedgerApp(source=source)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("p")
        assert await until(lambda: source.paused and "● paused" in screen_text(app))
        await pilot.press("p")
        assert not source.paused
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # declining changes nothing
        await pilot.pause()
        assert not source.cancelled
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        assert await until(lambda: source.cancelled and "cancelling" in screen_text(app))


async def test_bursts_of_token_events_post_no_messages() -> None:
    """20k token events between two ticks: the app's message queues stay empty."""
    counters = RunCounters(concurrency=64)
    app = EloLedgerApp(source=SnapshotSource(counters, label="x", state="running"))
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "streaming +0 tok" in screen_text(app))  # the view is up
        view = app.run_view
        ticks = view.ticks
        before = (app.message_queue_size, app.screen.message_queue_size, view.message_queue_size)
        for _ in range(20_000):
            counters.on_tokens("arm", 1)
        after = (app.message_queue_size, app.screen.message_queue_size, view.message_queue_size)
        assert after == before
        assert await until(lambda: view.ticks > ticks)  # the timer pulls the counters
        assert await until(lambda: "streaming +20,000 tok" in screen_text(app))


async def test_demo_runs_live_in_the_run_tab_then_fills_the_elo_tab() -> None:
    """`eloledger demo` without --headless: live counters, pause works, then the Elo table."""
    import asyncio

    from eloledger.tui.elo_tab import EloTab
    from eloledger.tui.sources import LiveRun

    app = EloLedgerApp(demo=True)
    async with app.run_test(size=(80, 24)) as pilot:
        live = app.live_source
        assert isinstance(live, LiveRun)
        assert await until(lambda: live.counters.total_tokens > 0, 60)
        running = ("● running", "best_of_8", "in flight")
        assert await until(lambda: not missing(app, running)), missing(app, running)
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("p")
        assert await until(lambda: live.state() == "paused" and "● paused" in screen_text(app))
        # calls in flight finish; no new call starts
        assert await until(lambda: live.counters.in_flight == 0, 20)
        done = sum(a.done for a in live.counters.arms.values())
        await asyncio.sleep(0.5)  # an absence takes a duration: half a second with no new call
        assert live.counters.in_flight == 0
        assert sum(a.done for a in live.counters.arms.values()) == done
        await pilot.press("p")
        elo = app.query_one(EloTab)
        assert await until(lambda: elo.data is not None, 90)
        assert live.state() == "finished"
        assert elo.data is not None and {p["name"] for p in elo.data.players} >= {
            "best_of_1",
            "best_of_8",
            "self_consistency_5",
        }
        assert elo.data.has_costs
        assert await until(lambda: "knee:" in screen_text(app))  # the demo switched to the Elo tab


async def test_bench_script_runs_at_a_small_size() -> None:
    """Smoke test of bench/bench_tui.py (the real measurement runs 10 s per variant)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "bench_tui.py"
    spec = importlib.util.spec_from_file_location("bench_tui", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_tui"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    result = await bench.measure("eloledger", 0.5, 2000.0, "eloledger")
    assert result.events > 300 and result.ticks >= 3
    assert result.cpu_pct > 0 and result.lag_p99_ms >= 0
