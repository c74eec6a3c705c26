"""Helpers for tests that run the real CLI in-process on the embedded simulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.runner.demo import demo_spec_text


def small_demo_spec(folder: Path, limit: int) -> Path:
    """The demo's own spec on its first ``limit`` tasks: quick, still seven arms."""
    text = demo_spec_text().replace("# limit = 20 ", f"limit = {limit} ")
    assert f"limit = {limit}" in text  # the demo spec still has the commented limit line
    spec = folder / "spec.toml"
    spec.write_text(text)
    return spec


def cli_json(capsys: pytest.CaptureFixture, argv: list[str]) -> dict:
    """``eloledger ARGV`` in-process; exit 0 and its stdout as JSON."""
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)
