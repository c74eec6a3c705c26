"""A realistic HOME for profile tests: real-world configs eloledger must never damage.

Plain functions (imported by the other test_profiles_* modules); no tests here.
"""

from __future__ import annotations

import os
from pathlib import Path

from eloledger.profiles.model import ClientOverride, Profile

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "~/.claude/hooks/guard.sh"}]
      }
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0},
  "permissions": {
    "allow": ["Bash(git status)", "Read(~/notes/**)"],
    "deny": ["Read(./.env)"]
  },
  "env": {
    "DISABLE_TELEMETRY": "1",
    "ANTHROPIC_MODEL": "claude-old-model"
  },
  "mcpServers": {"fs": {"command": "npx", "args": ["-y", "@mcp/fs", "/home"]}},
  "enabledPlugins": {"superpowers@market": true},
  "unicode": "caf\\u00e9 — ünïcödé"
}
"""

CODEX_CONFIG = """# Codex config, hand-written. Do not lose these comments!
model = "gpt-5.1-codex"  # the model I like
approval_policy = "on-request"
sandbox_mode = "workspace-write"

# MCP servers
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]  # inline comment on an array
env = { "DOCS_TOKEN" = "x" }

[model_providers.azure]  # my other provider
name = "Azure"
base_url = "https://example.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
wire_api = "responses"
query_params = { api-version = "2025-04-01-preview" }

[projects."/p"]
trust_level = "trusted"

[projects."/home/me/work"]
trust_level = "untrusted"
"""

GEMINI_ENV = """# Gemini CLI environment
# (kept by hand)
export GOOGLE_CLOUD_PROJECT=my-project   # the GCP project
DEBUG=false

SOME_TOKEN="quoted value # not a comment"
"""

GEMINI_SETTINGS = """{
  // Gemini allows comments
  "ui": {"theme": "GitHub"},
  "general": {"vimMode": true},
  "mcpServers": {"gh": {"command": "gh-mcp"}}
}
"""


def make_realistic_home(home: Path) -> dict[str, Path]:
    """Write the fixture configs; ~/.claude/settings.json is a symlink into a dotfiles repo."""
    dotfiles = home / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    (dotfiles / "settings.json").write_text(CLAUDE_SETTINGS)
    (home / ".claude").mkdir()
    os.symlink(dotfiles / "settings.json", home / ".claude" / "settings.json")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (home / ".gemini").mkdir()
    (home / ".gemini" / ".env").write_text(GEMINI_ENV)
    (home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    return {
        "claude-code": home / ".claude" / "settings.json",
        "claude_real": dotfiles / "settings.json",
        "codex": home / ".codex" / "config.toml",
        "gemini_env": home / ".gemini" / ".env",
        "gemini_settings": home / ".gemini" / "settings.json",
    }


def snapshot(paths: dict[str, Path]) -> dict[str, tuple[bytes | None, int | None]]:
    """Bytes and mtime (ns) of each file, to prove nothing was written."""
    out: dict[str, tuple[bytes | None, int | None]] = {}
    for name, path in paths.items():
        try:
            out[name] = (path.read_bytes(), path.stat().st_mtime_ns)
        except (FileNotFoundError, NotADirectoryError):
            out[name] = (None, None)
    return out


def profile_a() -> Profile:
    return Profile(
        name="gw-a",
        base_url="https://gw-a.example/api",
        key_env="GW_A_KEY",
        model="model-a",
        models={"haiku": "small-a"},
    )


def profile_b() -> Profile:
    return Profile(
        name="gw-b",
        base_url="https://gw-b.example",
        key_env="GW_B_KEY",
        auth="x-api-key",
        overrides={"claude-code": ClientOverride(base_url="https://gw-b.example/anthropic")},
    )
