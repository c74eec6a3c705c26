"""Every test runs in a temporary HOME with no provider variables, so nothing real is touched."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import agent_gateway  # noqa: F401  (finds the real CLIs now, before any test moves HOME/XDG)
from eloledger import redact

DATA = Path(__file__).resolve().parent / "data"
# The real home, read before any test moves HOME: the session checks nothing of eloledger's
# appeared in it. Both the login home and the HOME we were started with.
REAL_HOMES = tuple(dict.fromkeys(
    Path(h) for h in (os.environ.get("HOME"), pwd.getpwuid(os.getuid()).pw_dir) if h
))  # fmt: skip
# Where eloledger would write in a real home (XDG defaults); the clients/bench/litellm caches
# under ~/.cache are installs the tests read, not state they write.
REAL_STATE = (".local/share/eloledger", ".config/eloledger", ".local/state/eloledger",
              ".cache/eloledger")  # fmt: skip
# The variables the session started with that say where the real state and installs are (a CI
# may set XDG_* or ELOLEDGER_CLIENTS_DIR elsewhere than HOME): read before any test moves them.
REAL_ENV = {
    name: os.environ[name]
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                 "ELOLEDGER_CLIENTS_DIR")
    if os.environ.get(name)
}  # fmt: skip
REAL_XDG_STATE = tuple(
    Path(REAL_ENV[name]) / "eloledger"
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
    if name in REAL_ENV and os.path.isabs(REAL_ENV[name])
)
# A shell runs a background job (`.ci/run &`, nohup) with SIGINT ignored, and children inherit
# that: the tests that stop a CLI with ctrl-C would wait for ever. Tests send SIGINT on purpose,
# so the session takes it back (a Python handler is reset to the default in each child).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
_REAL_KEY = pytest.StashKey[dict[str, "float | None"]]()

_PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_MODEL",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_RESTRICTED_MODE",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "NO_COLOR",
    "COLUMNS",  # xdist workers export COLUMNS=80, and the CLI honours it even piped
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def _isolate(mp: pytest.MonkeyPatch, home: Path, work: Path) -> None:
    """Point HOME and every XDG folder into ``home``, cwd at ``work``; drop provider and proxy
    variables. Subprocess CLIs inherit all of it."""
    for var in _PROVIDER_VARS:
        mp.delenv(var, raising=False)
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    mp.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    # The real CLIs were found at import time (tests/agent_gateway.py, before any test ran), and
    # runner subprocesses get ELOLEDGER_CLIENTS_DIR from there, so the cache can move too.
    mp.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    mp.setenv("NO_PROXY", "127.0.0.1,localhost")
    mp.chdir(work)


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Module- and session-scoped fixtures are set up before any per-test HOME exists (one ran
    ``eloledger run`` shards with the real HOME): they get a temporary HOME of their own."""
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as mp:
        _isolate(mp, home, tmp_path_factory.mktemp("session-work"))
        yield home


@pytest.fixture(autouse=True)
def temp_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME (and cwd) per test; provider and proxy variables removed."""
    home = tmp_path_factory.mktemp("home")
    _isolate(monkeypatch, home, tmp_path_factory.mktemp("work"))
    redact.forget_all()
    assert os.path.realpath(os.path.expanduser("~")) == os.path.realpath(home)
    return home


def _real_state() -> dict[str, float | None]:
    """Each eloledger folder of the real home and its mtime (None: absent)."""
    found: dict[str, float | None] = {}
    paths = [real / rel for real in REAL_HOMES for rel in REAL_STATE]
    for path in [*paths, *REAL_XDG_STATE]:
        found[str(path)] = path.stat().st_mtime if path.exists() else None
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_REAL_KEY] = _real_state()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test wrote eloledger state into the real home (a leaked HOME/XDG)."""
    before = session.config.stash.get(_REAL_KEY, None)
    if before is None or hasattr(session.config, "workerinput"):
        return  # under xdist the controller checks once, around every worker
    changed = [p for p, mtime in _real_state().items() if before.get(p) != mtime]
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"eloledger state written into the real home: {', '.join(changed)}", red=True)  # fmt: skip
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def data_dir() -> Path:
    """The small real data the tests read (tests/data: AlpacaEval 2.0 judgments, agent logs)."""
    return DATA


@dataclass(frozen=True)
class DemoRun:
    """One finished ``eloledger demo --headless --format json`` run, shared read-only."""

    folder: Path
    ledger: Path
    comparisons: Path
    report: dict
    stderr: str


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The whole demo, run once per test session (per xdist worker) in its own HOME.

    Tests that only read what a finished demo wrote share it; a test that needs the live run
    itself (its terminal, its ctrl-C) runs its own.
    """
    folder = tmp_path_factory.mktemp("demo")
    home = folder / "home"
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[name] = str(home / name.lower())
    ledger = folder / "demo.ledger.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "demo", "--headless", "--format", "json",
         "--ledger", str(ledger)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return DemoRun(folder, ledger, folder / "demo.comparisons.csv", json.loads(done.stdout),
                   done.stderr)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test is slow too, so ``-m 'not slow'`` is a quick pass."""
    for item in items:
        if item.get_closest_marker("e2e") is not None or "e2e" in item.path.parts:
            item.add_marker(pytest.mark.slow)
