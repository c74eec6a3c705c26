"""A run's summary counts in the singular for one and says how it
stopped in words; a quota run says its fix once; `demo --help` tells the demo's real duration;
`fairness` refuses an arm measured against itself.

Runs are real: the CLI in a subprocess against the embedded simulator (127.0.0.1).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_cli_width import leaky  # noqa: F401 (the fixture: a ledger with four arms)
from test_runner_run import make_spec

from eloledger.cli import main
from eloledger.cli.run_cmd import _run_summary
from eloledger.runner.outcome import fix_once
from eloledger.runner.result import RunResult
from pty_support import CLI


def cli(*argv: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, env=environ, timeout=300)


def test_the_run_summary_says_one_call_one_pair_and_how_it_stopped(tmp_path: Path) -> None:
    result = RunResult(
        run_id="r1",
        experiment="x",
        ledger_path=tmp_path / "l.jsonl",
        comparisons_path=tmp_path / "c.csv",
        results_path=None,
        stopped="errors",
        attempts=1,
        comparisons=1,
        elapsed_s=0.1,
    )
    text = _run_summary(result)
    assert text.startswith("eloledger: run r1 stopped on repeated errors after 0.1s: 1 call made,")
    assert text.rstrip().endswith("c.csv (1 pair)")
    result.stopped, result.attempts, result.comparisons = "budget", 2, 3
    text = _run_summary(result)
    assert "run r1 stopped at the token budget after 0.1s: 2 calls made," in text
    assert "(3 pairs)" in text
    result.stopped = "completed"
    assert "run r1 completed in 0.1s:" in _run_summary(result)


def test_a_quota_run_says_the_fix_once(tmp_path: Path) -> None:
    make_spec(tmp_path, sim='fault = "429_quota"', limit=2, concurrency=4)  # arms one, four, sc
    done = cli(
        "run",
        str(tmp_path / "spec.toml"),
        "--headless",
        "--quiet",
        "--ledger",
        str(tmp_path / "q.jsonl"),
    )
    assert done.returncode == 1, done.stderr
    err = done.stderr
    assert err.count("add credit or raise the quota for this key") == 1, err
    assert "stopped after 5 consecutive quota failures (HTTP 429)" in err
    errors = [line for line in err.splitlines() if line.startswith("eloledger: error: arm ")]
    assert len(errors) == 3, err  # every arm is named, each pointing back to the one fix
    assert all(line.endswith("rate.quota, same fix as above") for line in errors), errors
    assert "stopped on repeated errors after" in err and " errors in " not in err


def test_fix_once_keeps_different_fixes() -> None:
    quota = "rate.quota: quota or credit exhausted; fix: add credit"
    auth = "auth.unauthorized: the gateway rejects the key; fix: check KEY"
    lines = [f"stopped: {quota}", f"arm a: no call (1 of 1): {auth}", f"arm b: no call: {quota}"]
    assert fix_once(lines) == [
        f"stopped: {quota}",
        f"arm a: no call (1 of 1): {auth}",
        "arm b: no call: rate.quota, same fix as above",
    ]
    assert fix_once(["most judge calls gave no verdict: x"]) == [
        "most judge calls gave no verdict: x"
    ]


def test_demo_help_says_how_long_the_demo_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """Measured on this 2-core machine under the session's load: 12-18 s wall for
    `demo --headless` (the run itself 10-13 s), so 15-30 s overstated it."""
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Takes about 10-20 seconds." in text and "15-30" not in text


def test_fairness_refuses_one_arm_as_old_and_new(leaky: Path) -> None:  # noqa: F811
    args = ["--old-1", "old_1", "--new-1", "old_1", "--old-n", "old_n", "--new-n", "new_n"]
    done = cli("fairness", str(leaky), *args, "--bootstrap", "20")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, lines
    assert lines[0].startswith("eloledger: error: fairness: --old-1 and --new-1 are both 'old_1'")
    assert "(fix: name different arms for the old and the new side" in lines[0]


def test_fairness_warns_when_a_side_uses_one_arm_for_1_and_n(leaky: Path) -> None:  # noqa: F811
    args = ["--old-1", "old_1", "--new-1", "new_1", "--old-n", "old_1", "--new-n", "new_n"]
    done = cli("fairness", str(leaky), *args, "--bootstrap", "20", "--format", "table")
    assert done.returncode in (0, 1), done.stderr
    assert (
        "eloledger: warning: --old-1 and --old-n are both 'old_1': the N-way gates measure the "
        "single-sample arm again"
    ) in done.stderr
    assert done.stdout.startswith("verdict: ")
