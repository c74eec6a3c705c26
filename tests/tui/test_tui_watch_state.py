"""`eloledger watch` says what is true: a missing file, a file that is not a
ledger, skipped lines, the run's end, its spec's budget and plan, stale percentiles."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from eloledger.cli import watch_cmd
from eloledger.errors import UserError
from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until


def append(path: Path, rows: int, arm: str, *, latency: float = 200.0, task: str = "t") -> None:
    with LedgerWriter(path) as w:
        for i in range(rows):
            w.append(
                {
                    "task_id": f"{task}{i}",
                    "arm": arm,
                    "status": "ok",
                    "total_tokens": 100,
                    "prompt_tokens": 50,
                    "completion_tokens": 50,
                    "latency_ms": latency,
                }
            )


def summary(app: EloLedgerApp) -> str:
    return screen_text(app)


async def test_a_missing_file_is_said_to_be_missing(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "does not exist yet" in summary(app)), summary(app)
        text = summary(app)
        assert "waiting" in text and "later.jsonl" in text and "does not exist yet" in text
        assert "following" not in text
        append(path, 2, "a")
        assert await until(lambda: app.live_source.counters.total_tokens == 200)
        assert await until(lambda: "following" in summary(app)), summary(app)  # redrawn
        assert "does not exist yet" not in summary(app)


async def test_a_file_that_is_not_a_ledger_says_so(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\nthis is not json\n", encoding="utf-8")
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)):
        said = ("not a ledger", "2 lines skipped")
        assert await until(lambda: all(words in summary(app) for words in said)), summary(app)
        text = summary(app)
        assert "not a ledger" in text and "2 lines skipped" in text
        assert "following" not in text


def test_watch_command_refuses_a_file_that_is_not_a_ledger(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"notes\.txt:1: .*not a ledger"):
        watch_cmd.handle(argparse.Namespace(ledger=str(path), from_start=True, theme=None))


async def test_skipped_garbage_lines_are_counted_and_shown(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    append(path, 3, "a")
    with path.open("a", encoding="utf-8") as fh:
        fh.write("garbage line\n")
    append(path, 2, "a", task="u")
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: app.live_source.counters.total_tokens == 500)
        assert await until(lambda: "1 line skipped" in summary(app))
        assert "run.jsonl:4" in app.live_source.detail()


async def test_run_finished_loads_comparisons_and_shows_the_spec_plan(tmp_path: Path) -> None:
    ledger = tmp_path / "exp.jsonl"
    spec = tmp_path / "exp.toml"
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            f'{{"task_id": "t{i}", "prompt": "1+{i}?", "answer": "{1 + i}"}}\n' for i in range(3)
        ),
        encoding="utf-8",
    )
    spec.write_text(
        '[experiment]\nname = "exp"\nprofile = "sim"\nmodel = "sim-small"\n'
        'ledger = "exp.jsonl"\n\n[budget]\nmax_total_tokens = 9000\n\n'
        '[tasks]\nsource = "tasks.jsonl"\n\n'
        '[[arms]]\nname = "a"\nkind = "single"\n\n'
        '[[arms]]\nname = "b"\nkind = "best_of_n"\nn = 4\nselect = "verifier"\n',
        encoding="utf-8",
    )
    append(ledger, 3, "a")
    append(ledger, 3, "b")
    app = EloLedgerApp(watch=ledger)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: app.live_source.counters.total_tokens == 600)
        assert await until(lambda: "9,000" in summary(app)), summary(app)  # the spec's, drawn
        text = summary(app)
        assert "following" in text and "run finished" not in text
        assert "9,000" in text  # the spec's budget
        assert app.live_source.counters.arms["b"].planned == 12  # 3 tasks × 4 samples
        comparisons = tmp_path / "exp.comparisons.csv"
        comparisons.write_text("task_id,winner,loser\nt0,b,a\nt1,b,a\nt2,a,b\n", encoding="utf-8")
        assert await until(lambda: "run finished" in summary(app))
        assert await until(lambda: app.query_one(EloTab).data is not None)
        assert app.query_one(EloTab).data.ledger == ledger


async def test_percentiles_start_over_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    append(path, 5, "a", latency=5000.0)
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "p50 5.0s" in summary(app) or "p50 5.00s" in summary(app))
        fresh = tmp_path / "fresh.jsonl"
        with LedgerWriter(fresh) as w:
            w.append({"task_id": "x", "arm": "z", "status": "ok", "total_tokens": 5})
        os.replace(fresh, path)
        assert await until(lambda: app.live_source.counters.total_tokens == 5)
        assert await until(lambda: "p50 -" in summary(app)), summary(app)
        assert "5.0s" not in summary(app)
