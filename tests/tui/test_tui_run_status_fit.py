"""The Run view's status block (state, Tokens, Usage, Budget, Flight, Errors) keeps one line
per line at 80 columns while watching a ledger: a line that would wrap pushes the arm table
down and reads as two half-lines, so the least useful detail at its end is dropped instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_tui_watch_keys import SPEC as WATCH_SPEC

from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.testing import run_summary_whole, screen_text, until

SPEC = WATCH_SPEC.replace("9000", "987654321")  # a budget limit of nine digits

ERROR_CLASSES = (
    "rate_limit",
    "server_error",
    "connection_reset",
    "read_timeout",
    "bad_request",
    "context_too_long",
)


def demo_like(path: Path) -> None:
    """A finished demo's ledger: server usage, latencies in the hundreds of ms."""
    with LedgerWriter(path) as writer:
        for i in range(200):
            writer.append(
                {
                    "ts": 1_700_000_000.0 + i * 0.1,
                    "task_id": f"arith-{i:03d}",
                    "arm": f"best_of_{1 + i % 4}",
                    "status": "ok",
                    "prompt_tokens": 57,
                    "completion_tokens": 166,
                    "usage_source": "server",
                    "latency_ms": 480 + (i * 37) % 500,
                }
            )


def large(path: Path) -> None:
    """A long, troubled run: millions of tokens, retries, 429s, six error classes,
    estimated usage (the warning lines) and latencies in seconds."""
    (path.parent / "exp.toml").write_text(SPEC, encoding="utf-8")
    with LedgerWriter(path) as writer:
        for i in range(300):
            row: dict = {
                "ts": 1_700_000_000.0 + i,
                "task_id": f"arith-{i:03d}",
                "arm": "a",
                "status": "ok",
                "prompt_tokens": 1_234_567,
                "completion_tokens": 7_654_321,
                "usage_source": "estimated" if i % 3 else "server",
                "latency_ms": 12_345 + i * 100,
            }
            if i % 5 == 0:
                row.update(
                    status="error",
                    error_class=ERROR_CLASSES[i // 5 % len(ERROR_CLASSES)],
                    http_status=429 if i % 2 else 500,
                    will_retry=i % 35 == 0,
                )
            writer.append(row)


def status_block(text: str) -> list[str]:
    """The screen lines from the state line down to the line before the next heading (the
    sparkline's at 120×40, the arm table's at 80×24)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "●" in line)
    end = next(
        i for i, line in enumerate(lines) if line.startswith(("arm ", "tokens/s")) or not line
    )
    return lines[start:end]


@pytest.mark.parametrize("ledger", [demo_like, large])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_status_line_is_one_line(tmp_path: Path, ledger, size: tuple[int, int]) -> None:
    path = tmp_path / "exp.jsonl"
    ledger(path)
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=size):
        # percentiles come at 2 Hz; then the block is laid out to its height a frame later
        assert await until(
            lambda: re.search(r"p50 \d", screen_text(app)) and run_summary_whole(app)
        )
        text = screen_text(app)
    block = status_block(text)
    heads = [line.split()[0] for line in block]
    warning = ["⚠", "fix:"] if ledger is large else []
    # each line starts with its own label: no line spilled onto the next
    assert heads == ["●", "Tokens", "Usage", *warning, "Budget", "Flight", "Errors"], text
    assert all(len(line) <= size[0] for line in block), text
    flight = next(line for line in block if line.startswith(" Flight"))
    assert "retries" in flight and "p50" in flight, flight  # the first parts are never dropped
    tokens = next(line for line in block if line.startswith(" Tokens"))
    assert "total" in tokens, tokens
    if ledger is large:
        errors = next(line for line in block if line.startswith(" Errors"))
        assert errors.split()[1] in ERROR_CLASSES, errors  # the commonest class, whole
        if size[0] == 80:  # six long classes do not fit: the rest is marked, not cut mid-word
            assert errors.rstrip().endswith("…"), errors
