"""Every test runs in a temporary HOME *and* temporary XDG folders, so no test
(nor a CLI subprocess it starts, which inherits the environment) can write into the real
~/.local/share, ~/.config, ~/.local/state or ~/.cache; the real agent CLIs are still found."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

import conftest
from eloledger import clients_dir

XDG = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def _inside(path: str | Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


@pytest.fixture(scope="module")
def module_env() -> dict[str, str]:
    """What a module-scoped fixture sees (it is set up before any per-test HOME)."""
    return {var: os.environ.get(var, "") for var in ("HOME", *XDG)}


def test_module_scoped_fixtures_do_not_see_the_real_home(module_env: dict[str, str]) -> None:
    """tests/budget/test_gates_elo_shards.py's module fixture ran `eloledger run` with the real HOME,
    and the run index landed in the real ~/.local/share (found by the session guard)."""
    for var, value in module_env.items():
        assert value, f"{var} unset in a module fixture: it would fall back to the real home"
        for real in conftest.REAL_HOMES:
            assert not _inside(value, real), f"{var} = {value} is in the real home"


def test_home_and_every_xdg_folder_are_the_tests_own(temp_home: Path) -> None:
    assert _inside(os.environ["HOME"], temp_home)
    for var in XDG:
        assert var in os.environ, f"{var} is not set: it would fall back to a default"
        assert _inside(os.environ[var], temp_home), var
        for real in conftest.REAL_HOMES:
            assert not _inside(os.environ[var], real), f"{var} points into the real home"
    for where in (
        platformdirs.user_data_dir("eloledger"),
        platformdirs.user_config_dir("eloledger"),
        platformdirs.user_state_dir("eloledger"),
        platformdirs.user_cache_dir("eloledger"),
    ):
        assert _inside(where, temp_home), where


def test_each_test_gets_a_fresh_home(temp_home: Path) -> None:
    """Nothing the previous test wrote is visible (the index starts empty)."""
    assert not (temp_home / ".local" / "share" / "eloledger").exists()
    assert list(temp_home.iterdir()) == []


def test_a_cli_subprocess_writes_into_the_temp_home(temp_home: Path) -> None:
    """A subprocess inherits the moved variables: its run index is in the temp HOME."""
    out = subprocess.run(
        [sys.executable, "-m", "eloledger", "history", "--where"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    where = Path(out.stdout.strip())
    assert where == temp_home / ".local" / "share" / "eloledger" / "runs.jsonl"


def test_the_real_clis_are_still_found_after_the_move() -> None:
    """tests/agent_gateway.py resolves the CLIs at import time; moving XDG_CACHE_HOME per test
    must not lose a CLI installed in the real home's cache."""
    import agent_gateway as gw

    real_env = {"HOME": str(conftest.REAL_HOMES[0]), **conftest.REAL_ENV, "PATH": ""}
    installed = {b: clients_dir.find(b, real_env) for b in gw.BINARY.values()}
    if not any(installed.values()):
        pytest.skip("no real agent CLI installed in the real home's cache")
    for binary, path in installed.items():
        if path is not None:
            assert gw.CLI_PATHS[binary] is not None, binary


def test_the_session_guard_sees_a_write_into_a_real_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end-of-session check (conftest.pytest_sessionfinish) can fail: a planted folder in a
    stand-in real home changes what it compares."""
    monkeypatch.setattr(conftest, "REAL_HOMES", (tmp_path,))
    xdg_data = tmp_path / "elsewhere" / "data" / "eloledger"  # XDG_DATA_HOME set outside HOME
    monkeypatch.setattr(conftest, "REAL_XDG_STATE", (xdg_data,))
    before = conftest._real_state()
    assert all(v is None for v in before.values())
    (tmp_path / ".local" / "share" / "eloledger").mkdir(parents=True)
    xdg_data.mkdir(parents=True)
    after = conftest._real_state()
    assert [p for p in after if before[p] != after[p]] == [
        str(tmp_path / ".local" / "share" / "eloledger"),
        str(xdg_data),
    ]
