"""Helpers for tests that run the real ``eloledger run`` CLI against tests/strict_gateway.py.

A profile is added with the real ``profile add`` command in the test's temporary HOME (the
conftest fixture), its key taken from ``STRICT_KEY``; the run is a subprocess, so exit codes,
stderr and signals are the user's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

SRC = str(Path(__file__).resolve().parents[1] / "src")


def env(key: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, "STRICT_KEY": key}


def add_profile(root: str, *, key: str, wire: str = "openai-chat", name: str = "strict") -> None:
    """``eloledger profile add`` for the strict gateway at ``root`` (no /v1)."""
    model = "claude-strict" if wire == "anthropic" else "gpt-strict"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "profile", "add", name, "--base-url", root,
         "--key-env", "STRICT_KEY", "--model", model, "--wire-api", wire],
        capture_output=True, text=True, env=env(key), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def write_spec(
    folder: Path,
    tasks: Path,
    *,
    arms: str = '[[arms]]\nname = "one"\n\n[[arms]]\nname = "two"\n',
    judge: str = "",
    extra: str = "",
    concurrency: int = 2,
) -> Path:
    spec = folder / "spec.toml"
    spec.write_text(
        f'[experiment]\nname = "strict"\nprofile = "strict"\nconcurrency = {concurrency}\n'
        f"{extra}\n[retry]\nbase_s = 0.01\ncap_s = 0.02\n\n"
        f'[tasks]\nsource = "{tasks}"\n\n{arms}\n{judge}'
    )
    return spec


def run(
    spec: Path, ledger: Path, *extra: str, key: str, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(ledger), *extra],
        capture_output=True, text=True, env=env(key), timeout=timeout,
    )  # fmt: skip


def popen(spec: Path, ledger: Path, *extra: str, key: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless",
         "--bootstrap", "0", "--ledger", str(ledger), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(key),
    )  # fmt: skip


def rows(ledger: Path) -> list[dict[str, Any]]:
    if not ledger.exists():
        return []
    return [orjson.loads(line) for line in ledger.read_bytes().splitlines() if line.strip()]
