"""One folder for the real agent CLIs: the install script, the runner and the tests agree.

The script runs for real with a stand-in ``npm`` on PATH (it records where it was asked to
install and creates the three executables there), so no registry is needed; then the runner's
lookup and the tests' lookup must find those executables, whatever HOME and XDG_CACHE_HOME say.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger import clients_dir

ROOT = Path(__file__).resolve().parents[2]
FAKE_NPM = """#!/bin/sh
# stand-in for npm: "install" the three CLIs into ./node_modules/.bin of the current folder
pwd > "$NPM_LOG"
mkdir -p node_modules/.bin
for bin in claude codex gemini; do
  printf '#!/bin/sh\\necho "%s 9.9.9"\\n' "$bin" > "node_modules/.bin/$bin"
  chmod +x "node_modules/.bin/$bin"
done
"""


def test_rules_in_order(tmp_path: Path) -> None:
    home, xdg, own = tmp_path / "h", tmp_path / "x", tmp_path / "own"
    both = {"HOME": str(home), "XDG_CACHE_HOME": str(xdg)}
    assert clients_dir.candidates({"HOME": str(home)}) == [home / ".cache/eloledger-clients"]
    assert clients_dir.install_dir(both) == xdg / "eloledger-clients"
    assert clients_dir.candidates({**both, "ELOLEDGER_CLIENTS_DIR": str(own)}) == [
        own,
        xdg / "eloledger-clients",
        home / ".cache/eloledger-clients",
    ]
    relative = {"HOME": str(home), "XDG_CACHE_HOME": "cache"}  # not absolute: ignored (XDG)
    assert clients_dir.install_dir(relative) == home / ".cache/eloledger-clients"
    assert clients_dir.bin_dirs(both)[0] == xdg / "eloledger-clients/node_modules/.bin"


def _install(tmp_path: Path, env: dict[str, str]) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    (tools / "npm").write_text(FAKE_NPM)
    (tools / "npm").chmod(0o755)
    log = tmp_path / "npm.log"
    run_env = {**env, "PATH": f"{tools}:/usr/bin:/bin", "NPM_LOG": str(log)}
    run_env["PYTHON"] = sys.executable
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/install_clients.sh")],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "claude  claude 9.9.9" in done.stdout
    return Path(log.read_text().strip())


@pytest.mark.parametrize("rule", ["xdg", "home", "env"])
def test_script_runner_and_tests_find_the_same_folder(tmp_path: Path, rule: str) -> None:
    env = {"HOME": str(tmp_path / "home")}
    if rule == "xdg":
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    if rule == "env":
        env["ELOLEDGER_CLIENTS_DIR"] = str(tmp_path / "clients")
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    installed = _install(tmp_path, env)
    assert installed == clients_dir.install_dir(env)
    expected = installed / "node_modules" / ".bin"
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import agent_gateway as gw;"
        "from eloledger.runner.agent_clis import find_cli;"
        "print(gw.cli_path('claude-code')); print(gw.cli_path('gemini')); print(find_cli('codex'))"
    )
    child_env = {**env, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(ROOT / "tests")],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        str(expected / "claude"),
        str(expected / "gemini"),
        str(expected / "codex"),
    ]


SKIPPING = """
import sys
sys.path.insert(0, {tests!r})
import pytest
import agent_gateway as gw

def test_needs_claude():
    if reason := gw.missing_reason("claude-code"):
        pytest.skip(reason)
"""


@pytest.mark.parametrize("required", [False, True])
def test_a_missing_cli_skips_unless_required(tmp_path: Path, required: bool) -> None:
    test = tmp_path / "test_probe.py"
    test.write_text(SKIPPING.format(tests=str(ROOT / "tests")))
    env = {
        "HOME": str(tmp_path / "empty-home"),
        "PATH": "/usr/bin:/bin",
        "ELOLEDGER_CLIENTS_DIR": str(tmp_path / "nothing"),
    }
    if required:
        env["ELOLEDGER_REQUIRE_CLIENTS"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         str(test)],
        env={**{k: v for k, v in os.environ.items() if k != "ELOLEDGER_REQUIRE_CLIENTS"}, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )  # fmt: skip
    if required:
        assert done.returncode == 1, done.stdout
        assert "1 failed" in done.stdout and "ELOLEDGER_REQUIRE_CLIENTS=1" in done.stdout
    else:
        assert done.returncode == 0, done.stdout
        assert "1 skipped" in done.stdout
