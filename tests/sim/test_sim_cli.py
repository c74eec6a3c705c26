"""`eloledger sim` as a user runs it: a real process, real requests, Ctrl-C to stop."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from eloledger.cli import main


def test_sim_command_serves_until_interrupted() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "eloledger", "sim", "--speed", "50", "--seed", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        banner = [proc.stdout.readline() for _ in range(6)]
        assert "SIMULATOR" in banner[0] and "not a real model" in banner[0]
        openai_url = re.search(r"(http://127\.0\.0\.1:\d+/v1)", banner[1]).group(1)
        assert re.search(r"http://127\.0\.0\.1:\d+\s*$", banner[2])
        client = openai.OpenAI(base_url=openai_url, api_key="anything", max_retries=0)
        reply = client.chat.completions.create(
            model="sim-small", messages=[{"role": "user", "content": "hello"}]
        )
        assert reply.usage.completion_tokens > 0
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "simulator stopped" in out
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sim", "--fault", "418"], "--fault: unknown mode '418'"),
        (["sim", "--fault-rate", "1.5"], "--fault-rate must be between 0 and 1"),
        (["sim", "--speed", "0"], "--speed must be a positive number"),
        (["sim", "--port", "70000"], "--port must be between 0 and 65535"),
    ],
)
def test_sim_command_rejects_bad_options(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_sim_help_has_examples_and_fault_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sim", "--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "sse_error" in out and "SIMULATOR" in out


def test_sim_command_reports_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    from eloledger.sim import running_sim

    with running_sim() as busy:
        assert main(["sim", "--port", str(busy.port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{busy.port}" in err and "--port" in err


def test_bench_script_runs_small() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "sim_streams.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--requests", "8", "--concurrency", "4", "--speed", "40"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "baseline / eloledger" in done.stdout
