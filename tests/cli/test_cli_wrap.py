"""At 80 columns, `doctor` and `sim --help` wrap between
words; a fresh HOME's doctor says what to do; counts are in the singular for one.

Each command runs in a real pseudo-terminal of 80 columns (stdout is a tty, as for a user),
so the width comes from the terminal, and the test reads exactly what the user would see.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pty_support import run_on_pty

COLUMNS = 80


def run_in_pty(*argv: str, home: Path) -> str:
    """``eloledger ARGV`` on an 80x24 pty in ``home``, without colour: what the user sees."""
    status, out = run_on_pty(
        list(argv), cols=COLUMNS, env={"HOME": str(home), "NO_COLOR": "1"}, stderr=True
    )
    assert status in (0, 1, 2), out
    return out


def assert_fits_between_words(out: str, *sentences: str) -> None:
    """No line is wider than the terminal, and each sentence reads whole once the lines are
    joined again (a word cut in two would read "silentl y")."""
    wide = [line for line in out.splitlines() if len(line) > COLUMNS]
    assert not wide, wide
    joined = " ".join(out.split())
    for sentence in sentences:
        assert " ".join(sentence.split()) in joined, sentence


def test_sim_help_wraps_between_words_at_80_columns(temp_home: Path) -> None:
    out = run_in_pty("sim", "--help", home=temp_home)
    assert_fits_between_words(
        out,
        "Run eloledger's embedded simulator: an OpenAI- and Anthropic-compatible HTTP server "
        "on 127.0.0.1 with a simulated model, for demos and tests.",
        "fraction of requests that get the fault (default 1.0)",
    )
    assert "  eloledger sim --port 8787 --speed 5   # fixed port" in out  # examples kept as is


def test_doctor_wraps_messages_and_notes_between_words(temp_home: Path) -> None:
    codex = temp_home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        'model_provider = "openai"\n[model_providers.openai]\nname = "x"\n'
        'base_url = "http://127.0.0.1:9/v1"\n',
        encoding="utf-8",
    )
    out = run_in_pty("doctor", "--offline", home=temp_home)
    assert_fits_between_words(
        out,
        "redefines a built-in provider id: Codex silently ignores this table",
        "rename the table to [model_providers.openai-gateway] and set model_provider = "
        '"openai-gateway"',
    )
    assert out.rstrip().endswith("1 error, 0 warnings, 0 info")


def test_doctor_on_a_fresh_home_says_what_to_do(temp_home: Path) -> None:
    out = run_in_pty("doctor", "--offline", home=temp_home)
    assert "no problems found" not in out
    assert_fits_between_words(
        out,
        "nothing to check yet: no profile is stored and no client points at a gateway",
        "add a gateway profile: eloledger profile add NAME --base-url URL --key-env VAR",
    )
    assert out.rstrip().endswith("0 errors, 0 warnings, 0 info")


def test_doctor_with_a_profile_is_not_called_empty(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eloledger.profiles.model import Profile
    from eloledger.profiles.store import save_profile

    save_profile(Profile("gw", "https://gw.example.com", key_env="GW_KEY"))
    out = run_in_pty("doctor", "--offline", home=temp_home)
    assert "nothing to check yet" not in out and "add a gateway profile" not in out


def test_fill_keeps_a_long_url_and_hyphenated_words_whole() -> None:
    from eloledger.tables import fill

    url = "https://gateway.example.com/a/very/long/path/that/does/not/fit"
    out = fill(f"open {url} with an OpenAI-compatible client", 30, "fix: ", "  ")
    assert "  " + url in out.splitlines()  # alone on its line, over the width, not cut
    assert "OpenAI-compatible" in out
    assert out.splitlines()[0] == "fix: open"
