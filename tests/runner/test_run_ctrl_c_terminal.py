"""Ctrl-C in a real terminal stops a headless run's spending at once.

The run is ``eloledger run spec.toml --headless`` on a pseudo-terminal that is its controlling
terminal, so the key (``\\x03`` typed into the terminal) reaches the whole foreground process
group as a user's would. The spec runs on the embedded simulator, 48 calls at a time and
fast, which is where a worker whose cancellation was lost used to go on taking calls until
the whole run was done (hundreds of rows after the key).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path

import orjson

SRC = str(Path(__file__).resolve().parents[2] / "src")


SPEC = """\
[experiment]
name = "ctrl-c"
profile = "sim"
model = "sim-small"
ledger = "run.ledger.jsonl"
concurrency = 48
seed = 7

[tasks]
source = "builtin:arith"
limit = 20

[sim]
speed = 40.0

[[arms]]
name = "baseline"

[[arms]]
name = "best_of_8"
kind = "best_of_n"
n = 8
select = "verifier"
temperature = 0.7
"""
PLANNED = 20 * (1 + 8)


def _rows(ledger: Path) -> list[dict]:
    if not ledger.exists():
        return []
    return [orjson.loads(line) for line in ledger.read_bytes().splitlines() if line.endswith(b"}")]


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is stdin's pty."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _ctrl_c_after(args: list[str], ledger: Path, rows: int) -> tuple[int, str, float, float]:
    """Run the CLI on its own terminal, type ctrl-C once ``rows`` rows are in the ledger.

    Returns the exit status, everything the terminal showed, the wall time of the key, and the
    seconds from the key to the exit."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-m", "eloledger", *args],
        stdin=slave, stdout=slave, stderr=slave, env=env,
        preexec_fn=_own_terminal, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    shown = bytearray()

    def drain(wait: float) -> bool:
        ready, _, _ = select.select([master], [], [], wait)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                return False
            shown.extend(data)
            return bool(data)
        return True

    deadline = time.monotonic() + 90
    while len(_rows(ledger)) < rows:
        assert proc.poll() is None, shown.decode(errors="replace")
        assert time.monotonic() < deadline, "the run wrote too few rows in 90 s"
        drain(0.02)
    key_at = time.time()
    pressed = time.monotonic()
    os.write(master, b"\x03")
    while proc.poll() is None and time.monotonic() - pressed < 60:
        drain(0.05)
    took = time.monotonic() - pressed
    if proc.poll() is None:
        proc.kill()
    while drain(0.05):
        pass
    os.close(master)
    status = proc.wait(timeout=10)
    return status, shown.decode(errors="replace").replace("\r\n", "\n"), key_at, took


# About 10 s: two real runs (interrupted, then resumed) of 180 calls; the race needs many calls
# in flight at once to show.
def test_ctrl_c_in_a_terminal_starts_no_new_call_and_resume_finishes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    ledger = tmp_path / "run.ledger.jsonl"
    status, shown, key_at, took = _ctrl_c_after(
        ["run", str(spec), "--headless", "--ledger", str(ledger)], ledger, rows=60
    )
    assert status == 130, shown
    assert took < 5, f"exit {took:.1f} s after the key"
    last = shown.strip().splitlines()[-1]
    assert "interrupted" in last and "--resume" in last, shown
    assert "Traceback" not in shown and "CancelledError" not in shown, shown
    before = _rows(ledger)
    # A call's start is its row's time less its latency; none may start after the key (0.2 s
    # for the key to reach the process and its loop).
    late = [r for r in before if r["ts"] - r["latency_ms"] / 1000 > key_at + 0.2]
    assert not late, f"{len(late)} calls started after ctrl-C"
    assert 60 <= len(before) < PLANNED

    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(ledger), "--resume"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = _rows(ledger)
    assert after[: len(before)] == before  # the rows before the key are kept as they were
    finals = Counter(
        (r["task_id"], r["arm"], r["session"], r["sample"], r["round"])
        for r in after
        if r["role"] == "sample" and not r.get("will_retry")
    )
    assert len(finals) == PLANNED and set(finals.values()) == {1}, finals.most_common(3)
