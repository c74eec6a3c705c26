"""The CLI width rule, on the real command in a real pseudo-terminal.

Tables fit the terminal: the TTY's width, or COLUMNS, or 80 when a terminal does not say; no
limit when piped. ``--wide`` (and JSON/CSV) give every column.
"""

from __future__ import annotations

import os
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from eloledger.budget.sampling_sim import four_arms
from eloledger.ledger import LedgerWriter
from eloledger.profiles.backups import create_backup
from eloledger.tables import Column, render_table, terminal_width
from pty_support import CLI, run_on_pty

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
FAIR = ["--old-1", "old_1", "--new-1", "new_1", "--old-n", "old_n", "--new-n", "new_n"]


def in_pty(args: list[str], *, cols: int = 80, rows: int = 24, env: dict | None = None) -> str:
    """Run the real CLI with its stdout on a pseudo-terminal of ``cols`` columns."""
    status, text = run_on_pty(args, cols=cols, rows=rows, env=env)
    assert status == 0
    return text


def piped(args: list[str], env: dict | None = None) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (env or {})
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=environ, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    path = tmp_path / "leaky.jsonl"
    with LedgerWriter(path) as writer:
        for row in four_arms(n_old=2, n_new=4, tasks=10, seed=4):
            writer.append(row)
    return path


def test_elo_fits_80_columns_on_a_terminal_and_wide_gives_all() -> None:
    out = in_pty(["elo", "--example", "--bootstrap", "50"])
    assert widest(out) <= 80, out
    header = out.splitlines()[0].split()
    assert header[:3] == ["player", "elo", "95%"]
    assert {"tok/task", "d_elo/1k", "marg/1k", "pass@1", "tok/success"} <= set(header)
    assert "--wide shows all" in out
    wide = in_pty(["elo", "--example", "--bootstrap", "50", "--wide"])
    assert widest(wide) > 120 and "raw/1k*" in wide and "--wide shows all" not in wide


def test_piped_output_has_every_column_unless_columns_is_set() -> None:
    """COLUMNS is honoured piped too (as Rich, argparse and git do): a user
    who sets it means it; without it a script gets every column."""
    full = piped(["elo", "--example", "--bootstrap", "50"])
    assert "elo/decade" in full and "not shown" not in full and widest(full) > 120
    narrow = piped(["elo", "--example", "--bootstrap", "50"], env={"COLUMNS": "80"})
    assert widest(narrow) <= 80 and "--wide shows all" in narrow
    wide = piped(["elo", "--example", "--bootstrap", "50", "--wide"], env={"COLUMNS": "80"})
    assert wide == full


def test_columns_env_overrides_the_terminal_width() -> None:
    out = in_pty(["tokens", str(EXAMPLES / "ledger.jsonl")], cols=200, env={"COLUMNS": "72"})
    assert widest(out) <= 72


def test_a_terminal_that_reports_no_size_counts_as_80() -> None:
    out = in_pty(["elo", "--example", "--bootstrap", "50"], cols=0, rows=0)
    assert widest(out) <= 80
    assert "--wide shows all" in out


def test_tokens_fits_sorts_totals_and_separates_thousands() -> None:
    out = in_pty(["tokens", str(EXAMPLES / "ledger.jsonl"), "--sort", "total"])
    assert widest(out) <= 80, out
    lines = out.splitlines()
    names = [line.split()[0] for line in lines[2:7]]
    assert names == ["best_of_8", "long_cot", "best_of_4", "best_of_2", "best_of_1"]
    total = lines[7].split()
    assert total[0] == "TOTAL" and "1,408,670" in total
    by_name = in_pty(["tokens", str(EXAMPLES / "ledger.jsonl")])
    assert [line.split()[0] for line in by_name.splitlines()[2:7]] == sorted(names)
    assert "513,467" in by_name


def test_fairness_prints_the_table_on_a_terminal_and_json_when_piped(leaky: Path) -> None:
    args = ["fairness", str(leaky), *FAIR, "--bootstrap", "100"]
    out = in_pty(args)
    assert out.startswith("verdict: ") and widest(out) <= 80, out
    assert piped(args).lstrip().startswith("{")


def test_restore_list_is_newest_first_and_fits(tmp_path: Path) -> None:
    config = tmp_path / "some" / "deeply" / "nested" / "folder" / "with-a-long-name.json"
    config.parent.mkdir(parents=True)
    config.write_text("{}", encoding="utf-8")
    first = create_backup([(config, config, "{}", None)] * 4, reason="switch", profile="one")
    second = create_backup([(config, config, "{}", None)] * 4, reason="switch", profile="two")
    out = in_pty(["profile", "restore", "--list"])
    assert widest(out) <= 80, out
    body = out.splitlines()[2:]
    assert second.id in body[0] and first.id in body[1]
    assert "with-a-long-name.json" not in out  # the paths are --wide's; the default fits


def test_demo_headless_fits_80_columns() -> None:
    out = in_pty(["demo", "--headless", "--quiet", "--bootstrap", "50"])
    assert widest(out) <= 80, out
    assert "length%" in out and "player" in out


def test_render_table_drops_ranked_columns_then_cuts_text() -> None:
    records = [{"name": "x" * 40, "a": 1, "b": 2, "c": 3}]
    columns = [
        Column("name", "name"),
        Column("a", "a"),
        Column("b", "b", drop=1),
        Column("c", "c", drop=2),
    ]
    assert render_table(records, columns, width=None).splitlines()[0].split() == [
        "name",
        "a",
        "b",
        "c",
    ]
    lines = render_table(records, columns, width=46).splitlines()
    assert lines[0].split() == ["name", "a", "b"]  # c (ranked 2) goes first; 40+2+1+2+1 fits
    assert lines[2] == "x" * 40 + "  1  2"
    assert " ".join(lines[3:]) == "(not shown to fit 46 columns: c; --wide shows all)"
    lines = render_table(records, columns, width=30).splitlines()
    assert lines[0].split() == ["name", "a"]
    assert lines[2] == "x" * 26 + "…  1"  # then the text column is cut to fit exactly
    assert widest("\n".join(lines)) <= 30


def test_terminal_width_without_a_terminal_is_columns_or_unlimited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    with open(os.devnull, "w") as sink:
        assert terminal_width(sink) is None
    monkeypatch.setenv("COLUMNS", "100")
    with open(os.devnull, "w") as sink:
        assert terminal_width(sink) == 100


def test_new_counts_from_other_helpers_show_when_present(capsys: pytest.CaptureFixture) -> None:
    """usage_estimated (ledger summary) and judge_no_verdict (run result) get a column when a
    ledger or run has them, and no column otherwise."""
    import argparse

    from eloledger.cli import run_cmd, tokens_cmd
    from eloledger.runner.result import RunResult

    groups = [{"name": "a", "calls": 3, "ok": 3, "usage_estimated": 2, "total_tokens": 1234}]
    titles = [c.title for c in tokens_cmd._columns("arm", False, "table", groups)]
    assert "estimated" in titles
    plain = tokens_cmd._columns("arm", False, "table", [{"name": "a"}])
    assert "estimated" not in [c.title for c in plain]
    arm = {"arm": "a", "kind": "single", "n": 1, "max_tokens": 64, "calls": 2, "errors": 0}
    result = RunResult(
        run_id="r",
        experiment="e",
        ledger_path=Path("x.jsonl"),
        comparisons_path=None,
        results_path=None,
        stopped="completed",
        attempts=2,
        arm_tokens=5000,
        elapsed_s=1.0,
        arms=[{**arm, "tokens": 5000, "length_rate": 0.0, "judge_no_verdict": 3}],
    )
    run_cmd.report(result, argparse.Namespace(format="table", bootstrap=0, wide=False))
    out = capsys.readouterr().out
    assert "no verdict" in out and "5,000" in out
