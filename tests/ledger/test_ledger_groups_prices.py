"""`tokens --by session|model|day|project|source` and the user's price table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.errors import UserError
from eloledger.ledger.prices import load_prices, prices_path

DAY = 86400.0
ROWS = [
    {"source": "claude-code", "project": "/w/api", "session": "s1", "model": "claude-x",
     "prompt_tokens": 1000, "completion_tokens": 100, "cached_tokens": 600,
     "cache_write_tokens": 200, "usage_source": "log", "ts": 20000 * DAY + 10},
    {"source": "claude-code", "project": "/w/api", "session": "s1", "model": "claude-x",
     "prompt_tokens": 500, "completion_tokens": 50, "usage_source": "log", "ts": 20000 * DAY + 20},
    {"source": "codex", "project": "/w/web", "session": "s2", "model": "gpt-y",
     "prompt_tokens": 2000, "completion_tokens": 300, "cached_tokens": 1000, "usage_source": "log",
     "ts": 20001 * DAY + 5},
    {"source": "gemini-cli", "project": "/w/web", "session": "s3", "model": "gemini-z",
     "prompt_tokens": 10, "completion_tokens": 1, "usage_source": "log", "ts": 20001 * DAY + 6},
]  # fmt: skip


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "imported.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["tokens", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("by", "expected"),
    [
        ("session", {"s1": 1650, "s2": 2300, "s3": 11}),
        ("model", {"claude-x": 1650, "gpt-y": 2300, "gemini-z": 11}),
        ("project", {"/w/api": 1650, "/w/web": 2311}),
        ("source", {"claude-code": 1650, "codex": 2300, "gemini-cli": 11}),
        ("day", {"2024-10-04": 1650, "2024-10-05": 2311}),
    ],
)
def test_group_by(
    ledger: Path, capsys: pytest.CaptureFixture[str], by: str, expected: dict[str, int]
) -> None:
    out = _json(capsys, str(ledger), "--by", by)
    assert {g["name"]: g["total_tokens"] for g in out["groups"]} == expected
    assert out["by"] == by


def test_no_price_table_no_cost_column(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, str(ledger), "--by", "model")
    assert all("cost" not in g for g in out["groups"])
    assert main(["tokens", str(ledger), "--by", "model"]) == 0
    assert "cost" not in capsys.readouterr().out.splitlines()[0]


def test_prices_give_costs_only_for_priced_models(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = prices_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[models."claude-x"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\n'
        '[models."gpt-y"]\ninput = 1.25\noutput = 10.0\n'  # no cache_read: its cached tokens
    )
    out = _json(capsys, str(ledger), "--by", "model", "--sort", "cost")
    cost = {g["name"]: g["cost"] for g in out["groups"]}
    # claude-x: (1000-600-200)*3 + 100*15 + 600*0.3 + 200*3.75 + 500*3 + 50*15, per 1M
    assert cost["claude-x"] == pytest.approx((600 + 1500 + 180 + 750 + 1500 + 750) / 1e6)
    assert cost["gpt-y"] is None  # cached tokens but no cache_read price: not guessed
    assert cost["gemini-z"] is None  # not in the table
    assert [g["name"] for g in out["groups"]][0] == "claude-x"  # --sort cost: priced first
    assert any("gemini-z" in w and "gpt-y" in w and "never guesses" in w for w in out["warnings"])
    assert main(["tokens", str(ledger), "--by", "source"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[-1] == "cost"
    assert table[2].startswith("claude-code") and table[2].split()[-1] == "0.0053"
    assert table[-1].startswith("TOTAL")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[models."m"]\ninput = 1\n', "output is missing"),
        ('[models."m"]\ninput = "cheap"\noutput = 1\n', "input must be a number"),
        ('[models."m"]\ninput = -1\noutput = 1\n', "is not a price"),
        ('[models."m"]\ninput = 1\noutput = 1\ncache = 2\n', "unknown key 'cache'"),
        ("[models\n", "not valid TOML"),
        ('\ufeff[models."m"]\ninput = 1\noutput = 1\n', "BOM"),
    ],
)
def test_bad_price_tables_are_one_line(
    ledger: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    path = prices_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=needle):
        load_prices()
    assert main(["tokens", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and needle in err


def test_a_ledger_without_arms_points_to_the_groups_it_has(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An imported agent log names no arm: the default --by arm is one "(none)" row, and
    the warning names the groupings that fit it; a ledger with arms gets no such line."""
    assert main(["tokens", str(ledger)]) == 0
    err = capsys.readouterr().err
    assert "no row names an arm" in err and "--by model" in err
    with_arms = tmp_path / "arms.jsonl"
    with_arms.write_text("".join(json.dumps({**r, "arm": "a"}) + "\n" for r in ROWS))
    assert main(["tokens", str(with_arms)]) == 0
    assert "no row names an arm" not in capsys.readouterr().err
