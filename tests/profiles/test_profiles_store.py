"""Profile store, presets and URL derivation, on real files in the temp HOME."""

from __future__ import annotations

import stat

import pytest

from eloledger.errors import UserError
from eloledger.profiles import store
from eloledger.profiles.model import ClientOverride, Profile, derive_base_url
from eloledger.profiles.presets import PRESETS
from eloledger.redact import scrub


@pytest.mark.parametrize(
    ("root", "client", "expected"),
    [
        ("https://gw.example/api", "claude-code", "https://gw.example/api"),
        ("https://gw.example/api/", "openai", "https://gw.example/api/v1"),
        ("https://gw.example/api/v1", "codex", "https://gw.example/api/v1"),
        ("https://gw.example/api/v1", "anthropic", "https://gw.example/api"),
        ("https://gw.example/v1beta", "gemini-cli", "https://gw.example"),
    ],
)
def test_derive_base_url_follows_client_facts(root: str, client: str, expected: str) -> None:
    assert derive_base_url(root, client) == expected


def test_profiles_file_holds_no_key_and_secrets_file_is_0600() -> None:
    profile = Profile(
        name="gw",
        base_url="https://gw.example/api",
        key_in_secrets=True,
        models={"haiku": "h-1"},
        overrides={"codex": ClientOverride(base_url="https://gw.example/codex/v1")},
    )
    store.save_profile(profile)
    store.set_secret("gw", "sk-secret-value-1234567890")
    assert "sk-secret" not in store.profiles_path().read_text()
    assert stat.S_IMODE(store.secrets_path().stat().st_mode) == 0o600
    loaded = store.get_profile("gw")
    assert loaded == profile
    assert loaded.client_base_url("codex") == "https://gw.example/codex/v1"
    assert loaded.client_base_url("openai") == "https://gw.example/api/v1"
    key = store.resolve_key(loaded)
    assert key == "sk-secret-value-1234567890"
    assert "sk-secret-value" not in scrub(f"401: bad key {key}")  # registered for scrubbing


def test_key_from_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    store.save_profile(Profile(name="e", base_url="https://x.example", key_env="MY_GW_KEY"))
    assert store.resolve_key(store.get_profile("e")) is None
    monkeypatch.setenv("MY_GW_KEY", "tok-123456")
    assert store.resolve_key(store.get_profile("e")) == "tok-123456"


def test_user_comments_in_profiles_file_survive_saves() -> None:
    path = store.profiles_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        '# my gateways\n[profiles.old]  # keep me\nbase_url = "https://old.example"\n'
        'key_env = "OLD"\n'
    )
    store.save_profile(Profile(name="new", base_url="https://new.example", key_env="NEW"))
    text = path.read_text()
    assert text.startswith(
        '# my gateways\n[profiles.old]  # keep me\nbase_url = "https://old.example"'
    )
    assert set(store.load_profiles()) == {"old", "new"}
    store.remove_profile("new")
    assert set(store.load_profiles()) == {"old"}


def test_unknown_profile_lists_names() -> None:
    store.save_profile(Profile(name="mine", base_url="https://x.example", key_env="K"))
    with pytest.raises(UserError, match="mine"):
        store.get_profile("nope")


def test_broken_profiles_file_is_a_user_error_with_line() -> None:
    path = store.profiles_path()
    path.parent.mkdir(parents=True)
    path.write_text('[profiles.x]\nbase_url = "https://x"\nkey_env = \n')
    with pytest.raises(UserError, match=r"profiles.toml:3"):
        store.load_profiles()


@pytest.mark.parametrize(
    "url", ["gw.example/api", "https://gw.example/api?utm_source=x", "ftp://gw.example"]
)
def test_bad_base_urls_are_refused(url: str) -> None:
    with pytest.raises(UserError):
        store.save_profile(Profile(name="bad", base_url=url, key_env="K"))


def test_presets_are_valid_and_follow_the_facts() -> None:
    assert {"anthropic", "openai", "gemini", "openrouter", "deepseek", "moonshot"} <= set(PRESETS)
    for preset in PRESETS.values():
        preset.validate()
        for client in ("claude-code", "anthropic"):
            if preset.serves(client):
                assert not preset.client_base_url(client).endswith("/v1")
        if preset.serves("codex"):
            assert preset.client_base_url("codex").endswith("/v1")
    assert PRESETS["openrouter"].client_base_url("claude-code") == "https://openrouter.ai/api"
    assert PRESETS["openrouter"].client_base_url("openai") == "https://openrouter.ai/api/v1"
    assert PRESETS["anthropic"].client_base_url("claude-code") == "https://api.anthropic.com"
    assert PRESETS["gemini"].client_base_url("gemini-cli") == (
        "https://generativelanguage.googleapis.com"
    )
    # a preset is usable by name without being stored
    assert store.get_profile("deepseek").client_base_url("claude-code").endswith("/anthropic")
