"""One writer per ledger: a second writer (thread or process) refuses, naming the holder."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from cli_process import SRC, eloledger
from eloledger.errors import UserError
from eloledger.ledger import LedgerWriter
from eloledger.ledger.writer import lock_path

SPEC = """\
[experiment]
name = "lockme"
profile = "sim"
concurrency = 2
seed = 3

[sim]
speed = 2

[tasks]
source = "builtin:arith"
limit = 6

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "four"
kind = "best_of_n"
n = 4
"""


def test_second_writer_in_another_thread_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    errors: list[str] = []
    with LedgerWriter(ledger) as first:
        first.append({"arm": "a", "task_id": "t"})

        def second() -> None:
            try:
                LedgerWriter(ledger)
            except UserError as exc:
                errors.append(exc.one_line())

        thread = threading.Thread(target=second)
        thread.start()
        thread.join()
        assert lock_path(ledger).read_text().split()[0] == str(os.getpid())
    assert len(errors) == 1
    assert f"being written by process {os.getpid()}" in errors[0]
    assert "--ledger" in errors[0] and "\n" not in errors[0]
    assert not lock_path(ledger).exists()  # released and removed on close
    with LedgerWriter(ledger) as again:  # free again once the first is closed
        again.append({"arm": "a", "task_id": "t2"})
    assert len(ledger.read_bytes().splitlines()) == 2


def test_many_threads_racing_for_one_ledger_get_exactly_one_writer(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    got: list[LedgerWriter] = []
    refused: list[str] = []
    barrier = threading.Barrier(8)

    def grab() -> None:
        barrier.wait()
        try:
            got.append(LedgerWriter(ledger))
        except UserError as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 1 and len(refused) == 7
    got[0].close()


def _run(spec: Path, ledger: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet"]
        + ["--format", "json", "--bootstrap", "0", "--ledger", str(ledger), "--resume"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": SRC},
    )


def test_two_real_runs_on_one_ledger_one_refuses_and_nothing_doubles(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    ledger = tmp_path / "l.jsonl"
    first = _run(spec, ledger)
    deadline = time.monotonic() + 60
    while not lock_path(ledger).exists():  # the first run holds the lock
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    second = _run(spec, ledger)
    out2, err2 = second.communicate(timeout=120)
    out1, err1 = first.communicate(timeout=300)
    assert first.returncode == 0, err1.decode()
    assert second.returncode == 2, err2.decode()
    message = err2.decode().strip()
    assert message.count("\n") == 0 and "Traceback" not in message
    assert f"being written by process {first.pid}" in message
    rows = [orjson.loads(line) for line in ledger.read_bytes().splitlines()]
    keys = [
        (r["task_id"], r["arm"], r["session"], r["sample"], r["attempt"], r.get("role"))
        for r in rows
    ]
    assert len(keys) == len(set(keys)) == 6 * (1 + 4)  # every call once


def _fail_writes(monkeypatch: pytest.MonkeyPatch, code: int, after: int = 0) -> None:
    real = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] > after:
            if calls["n"] == after + 1 and len(data) > 4:  # half a row first, then the error
                return real(fd, bytes(data)[: len(data) // 2])
            raise OSError(code, os.strerror(code))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize(
    ("code", "hint"), [(errno.ENOSPC, "disk is full"), (errno.EROFS, "read-only")]
)
def test_a_failing_write_is_one_line_and_leaves_no_half_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, hint: str
) -> None:
    ledger = tmp_path / "l.jsonl"
    with LedgerWriter(ledger) as writer:
        writer.append({"arm": "a", "task_id": "t1"})
        before = ledger.read_bytes()
        _fail_writes(monkeypatch, code)
        with pytest.raises(UserError) as caught:
            writer.append({"arm": "a", "task_id": "t2", "content": "x" * 100})
    text = caught.value.one_line()
    assert str(ledger) in text and hint in text and f"errno {code}" in text
    assert ledger.read_bytes() == before  # the half row was cut back: nothing torn, nothing lost


def test_opening_on_a_read_only_file_system_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def read_only(path, flags, *args):  # noqa: ANN001, ANN202
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(UserError) as caught:
        LedgerWriter(tmp_path / "l.jsonl")
    assert "read-only" in caught.value.one_line() and "errno 30" in caught.value.one_line()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_dev_full_gives_the_real_enospc_as_one_line() -> None:
    with LedgerWriter("/dev/full") as writer, pytest.raises(UserError) as caught:
        writer.append({"arm": "a", "task_id": "t"})
    assert "/dev/full" in caught.value.one_line() and "errno 28" in caught.value.one_line()
    assert not Path("/dev/full.lock").exists()


def test_run_on_dev_full_exits_2_with_one_line(tmp_path: Path) -> None:
    """A run refuses a device as its ledger before any request: it could never be resumed or
    read back (the real ENOSPC of a run is the tmpfs test below)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("speed = 0.5", "speed = 50"))
    proc = eloledger(
        "run", str(spec), "--headless", "--quiet", "--bootstrap", "0", "--ledger", "/dev/full"
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "/dev/full: the ledger is not a regular file" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


REAL_FS = """\
mount -t tmpfs -o ro,size=64k tmpfs "$1/ro" || exit 77
mount -t tmpfs -o size=12k tmpfs "$1/full" || exit 77
"$2" -m eloledger run "$3" --headless --quiet --bootstrap 0 --ledger "$1/ro/l.jsonl" 2> "$1/ro.err"
echo "ro $?"
"$2" -m eloledger run "$3" --headless --quiet --bootstrap 0 --ledger "$1/full/l.jsonl" \
    2> "$1/full.err"
echo "full $?"
"$2" -c 'import json, sys; data = open(sys.argv[1], "rb").read(); \
[json.loads(x) for x in data.splitlines()]; print("whole", data.endswith(b"\\n"))' "$1/full/l.jsonl"
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_real_read_only_and_full_file_systems(tmp_path: Path) -> None:
    """Real EROFS and ENOSPC (tmpfs mounts in a private mount namespace): one line, exit 2,
    and the full ledger holds only whole rows."""
    (tmp_path / "ro").mkdir()
    (tmp_path / "full").mkdir()
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("speed = 0.5", "speed = 50").replace("limit = 6", "limit = 40"))
    script = tmp_path / "fs.sh"
    script.write_text(REAL_FS)
    done = subprocess.run(
        ["unshare", "-m", "sh", str(script), str(tmp_path), sys.executable, str(spec)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    if done.returncode == 77 or "Operation not permitted" in done.stderr:
        pytest.skip("no permission to mount a tmpfs in a private namespace")
    assert done.stdout.split("\n")[:3] == ["ro 2", "full 2", "whole True"], done
    ro_err = (tmp_path / "ro.err").read_text().strip()
    full_err = (tmp_path / "full.err").read_text().strip()
    assert ro_err.count("\n") == 0 and "[errno 30]" in ro_err and "read-only" in ro_err
    assert full_err.count("\n") == 0 and "[errno 28]" in full_err and "--resume" in full_err
