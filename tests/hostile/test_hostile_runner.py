"""Hostile conditions for a real ``eloledger run``: ctrl-C, a ledger that cannot be written, a
ledger path that is not a file. Each ends with a clear message and the right exit status, the
ledger whole, and ``--resume`` able to finish the run. Never a traceback, never a hang.
"""

from __future__ import annotations

import asyncio
import errno
import os
import resource
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest

from eloledger.errors import UserError
from eloledger.runner import run as run_module
from eloledger.runner.run import run_experiment
from eloledger.runner.spec import load_spec
from runner_cli import add_profile, env, popen, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

TASKS = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(12)]
TOTAL = 12 * 2


def _slow_gateway(state: dict) -> GatewayConfig:
    def reply(prompt: str) -> str:
        time.sleep(state["delay"])
        return "TIE" if "Which answer is better?" in prompt else "pong"

    return GatewayConfig(reply=reply)


def _wait_for_rows(ledger: Path, n: int, proc: subprocess.Popen, role: str = "sample") -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(r["role"] == role for r in rows(ledger)) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"no {n} {role} rows in time")


def _assert_whole(ledger: Path) -> list[dict]:
    raw = ledger.read_bytes()
    assert raw.endswith(b"\n")
    return [orjson.loads(line) for line in raw.splitlines()]  # every line parses


def _interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err, err
    assert "Traceback" not in err and "CancelledError" not in err, err
    assert "never retrieved" not in err, err
    return out, err


def test_ctrl_c_mid_sampling_then_resume(tmp_path: Path) -> None:
    state = {"delay": 0.15}
    ledger = tmp_path / "l.jsonl"
    with serve(_slow_gateway(state)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS), concurrency=2)
        proc = popen(spec, ledger, "--quiet", key=GOOD_KEY)
        _wait_for_rows(ledger, 4, proc)
        _interrupt(proc)
        before = _assert_whole(ledger)
        assert 4 <= len(before) < TOTAL
        state["delay"] = 0.0
        done = run(spec, ledger, "--resume", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    after = _assert_whole(ledger)
    keys = Counter((r["task_id"], r["arm"]) for r in after if r["status"] == "ok")
    assert len(keys) == TOTAL and set(keys.values()) == {1}


def test_ctrl_c_mid_judging_then_resume(tmp_path: Path) -> None:
    state = {"delay": 0.0}
    ledger = tmp_path / "l.jsonl"
    open_tasks = [{"task_id": t["task_id"], "prompt": t["prompt"]} for t in TASKS]
    with serve(_slow_gateway(state)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(
            tmp_path, write_tasks(tmp_path / "t.jsonl", open_tasks), judge='[judge]\nkind = "llm"\n'
        )
        proc = popen(spec, ledger, "--quiet", key=GOOD_KEY)
        _wait_for_rows(ledger, TOTAL, proc)
        state["delay"] = 0.2  # judge calls are slow: interrupt while they run
        _wait_for_rows(ledger, 2, proc, role="judge")
        _interrupt(proc)
        assert not (tmp_path / "l.comparisons.csv").exists()  # nothing half-judged written
        state["delay"] = 0.0
        done = run(spec, ledger, "--resume", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    judges = [r for r in _assert_whole(ledger) if r["role"] == "judge" and r["status"] == "ok"]
    assert len({(r["task_id"], r["round"]) for r in judges}) == 12 * 2
    assert len((tmp_path / "l.comparisons.csv").read_text().splitlines()) == 1 + 12


def _limit_file_size(limit: int):  # noqa: ANN202
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write(2) then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_ledger_write_error_stops_cleanly_with_one_line(tmp_path: Path) -> None:
    # a real failing write(2): the file-size limit makes the ledger full after a few rows
    ledger = tmp_path / "l.jsonl"
    with serve(GatewayConfig(reply="pong")) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS))
        args = [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
                "--bootstrap", "0", "--ledger", str(ledger)]  # fmt: skip
        done = subprocess.run(
            args, capture_output=True, text=True, env=env(GOOD_KEY), timeout=120,
            preexec_fn=_limit_file_size(3000),
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert str(ledger) in lines[0] and "cannot write the ledger" in lines[0]
        assert "File too large" in lines[0] and "--resume" in lines[0]
        assert 0 < ledger.stat().st_size <= 3000
        resumed = run(spec, ledger, "--resume", key=GOOD_KEY)
    assert resumed.returncode == 0, resumed.stderr
    ok = Counter((r["task_id"], r["arm"]) for r in rows(ledger) if r["status"] == "ok")
    assert len(ok) == TOTAL and set(ok.values()) == {1}


async def test_ledger_write_error_leaves_no_call_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(
        '[experiment]\nname = "w"\nprofile = "sim"\nconcurrency = 8\n[sim]\nspeed = 50\n'
        '[tasks]\nsource = "builtin:arith"\nlimit = 10\n[[arms]]\nname = "a"\n'
        '[[arms]]\nname = "b"\nkind = "best_of_n"\nn = 3\n'
    )
    spec = load_spec(spec_path, ledger=tmp_path / "l.jsonl")
    real_append = run_module.LedgerWriter.append
    written = []

    def append(self, row) -> None:  # noqa: ANN001
        if len(written) >= 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(row)
        real_append(self, row)

    monkeypatch.setattr(run_module.LedgerWriter, "append", append)
    with pytest.raises(UserError) as caught:
        await run_experiment(spec)
    assert "cannot write the ledger (No space left on device)" in caught.value.one_line()
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not [t for t in others if not t.done()], others  # every in-flight call was cancelled
    assert len(rows(tmp_path / "l.jsonl")) == 5


@pytest.mark.parametrize("kind", ["dir", "fifo"])
@pytest.mark.parametrize("resume", [False, True])
def test_ledger_that_is_not_a_file_is_refused(tmp_path: Path, kind: str, resume: bool) -> None:
    ledger = tmp_path / "l.jsonl"
    ledger.mkdir() if kind == "dir" else os.mkfifo(ledger)
    with serve() as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS))
        done = run(spec, ledger, *(["--resume"] if resume else []), key=GOOD_KEY, timeout=30)
        assert not gw.requests
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and str(ledger) in line and "--ledger" in line, line
