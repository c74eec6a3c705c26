"""Presets for the gateways users run, URLs derived like any profile's."""

from __future__ import annotations

import pytest

from eloledger.profiles.model import derive_base_url
from eloledger.profiles.presets import FROM_DOCS, PRESETS


@pytest.mark.parametrize(
    ("name", "root", "key"),
    [
        ("taotoken", "https://taotoken.net/api", "TAOTOKEN_API_KEY"),
        ("litellm", "http://localhost:4000", "LITELLM_API_KEY"),
        ("new-api", "http://localhost:3000", "NEW_API_KEY"),
    ],
)
def test_gateway_presets_serve_the_three_clis_from_one_root(name: str, root: str, key: str) -> None:
    preset = PRESETS[name]
    preset.validate()
    assert (preset.base_url, preset.key_env) == (root, key)
    assert {"claude-code", "codex", "gemini-cli"} <= set(preset.clients)
    assert not preset.overrides  # every client's URL comes from the shared rules
    assert preset.client_base_url("claude-code") == root  # Claude Code appends /v1/messages
    assert preset.client_base_url("codex") == root + "/v1"  # Codex appends /responses
    assert preset.client_base_url("gemini-cli") == root  # Gemini CLI appends /v1beta/...
    for client in preset.clients:
        assert preset.client_base_url(client) == derive_base_url(root, client)


def test_documentation_only_paths_are_marked() -> None:
    assert {"taotoken", "new-api", "one-api"} <= FROM_DOCS <= set(PRESETS)
    for name in FROM_DOCS:
        assert "not observed" in PRESETS[name].description and "doctor" in PRESETS[name].description
    assert PRESETS["one-api"].clients == ["openai"]  # classic one-api: chat completions only
