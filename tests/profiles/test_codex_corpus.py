"""A real-world config corpus switched there and back through the real CLI, byte-compared.

a switch changes only ``model_provider`` (and ``model`` when the
profile names one) and eloledger's own provider table; the user's Azure / OpenRouter / Ollama
tables, MCP servers, comments and profile files stay byte for byte; the way back that the first
switch suggests gives back exactly what was there; new tables and members are placed and
formatted like the file around them.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

from eloledger.profiles.edit import DELETE, tomledit

KEY = "sk-corpus-0123456789abcdef"

CODEX_AZURE = """\
# ~/.codex/config.toml — my setup
model = "gpt-4o-deploy"
model_provider = "azure"
approval_policy = "on-request"

[model_providers.azure]
name = "Azure OpenAI"
base_url = "https://myres.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
query_params = { api-version = "2025-04-01-preview" }
wire_api = "responses"

[model_providers.openrouter]
name = "OpenRouter"
base_url = "https://openrouter.ai/api/v1"
env_key = "OPENROUTER_API_KEY"
http_headers = { "HTTP-Referer" = "https://me.example", "X-Title" = "codex" }

# MCP servers
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.fs]
command = "fs-mcp"
env = { ROOT = "/home/me" }

[projects."/home/me/work"]
trust_level = "trusted"
"""

CODEX_OLLAMA = """\
model = "qwen3-coder"
model_provider = "local-ollama"

[model_providers.local-ollama]
name = "Ollama on the box"
base_url = "http://127.0.0.1:11434/v1"
wire_api = "responses"
request_max_retries = 2
stream_idle_timeout_ms = 600000
# MCP servers
[mcp_servers.browser]
command = "browser-mcp"
"""

CODEX_OPENROUTER_NO_TRAILING_NEWLINE = """\
model_provider = "openrouter"
model = "openai/gpt-5"

[model_providers.openrouter]
name = "OpenRouter"
base_url = "https://openrouter.ai/api/v1"
env_key = "OPENROUTER_API_KEY"
wire_api = "responses\""""

CODEX_PROFILE_FILE = """\
# loaded by 'codex --profile work'
model = "o4-mini"
model_reasoning_effort = "high"
"""

CLAUDE_SETTINGS = """\
{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)"],
    "defaultMode": "acceptEdits"
  },
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier -w"}]}
    ]
  },
  "env": {
    "ANTHROPIC_BASE_URL": "https://old-gw.example/api",
    "ANTHROPIC_AUTH_TOKEN": "sk-old-claude-0123456789",
    "BASH_DEFAULT_TIMEOUT_MS": "60000"
  },
  "includeCoAuthoredBy": false
}
"""

GEMINI_SETTINGS = """\
{
  // my Gemini settings
  "general": {"vimMode": true},
  "security": { "folderTrust": {"enabled": true} },
  "mcpServers": {"gh": {"command": "gh-mcp", "args": ["--ro"]}}
}
"""

GEMINI_ENV = """\
# gemini
export GOOGLE_CLOUD_PROJECT=my-project
GOOGLE_GEMINI_BASE_URL=https://old-gemini.example
GEMINI_API_KEY=gm-old-0123456789abc
"""

CORPUS = {
    "azure+mcp": {".codex/config.toml": CODEX_AZURE, ".codex/work.config.toml": CODEX_PROFILE_FILE},
    "ollama": {".codex/config.toml": CODEX_OLLAMA},
    "openrouter-no-newline": {".codex/config.toml": CODEX_OPENROUTER_NO_TRAILING_NEWLINE},
    "all-three": {
        ".codex/config.toml": CODEX_AZURE,
        ".claude/settings.json": CLAUDE_SETTINGS,
        ".gemini/settings.json": GEMINI_SETTINGS,
        ".gemini/.env": GEMINI_ENV,
    },
}


def cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GW_KEY": KEY, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def write_corpus(home: Path, files: dict[str, str]) -> dict[str, bytes]:
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return {rel: (home / rel).read_bytes() for rel in files}


def current(home: Path, files: dict[str, bytes]) -> dict[str, bytes | None]:
    return {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in files}


def table_block(text: str, header: str) -> str:
    """The header line and the lines of its table, up to the next header, blank or comment."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    end = start + 1
    while end < len(lines) and lines[end].strip() and not lines[end].startswith(("[", "#")):
        end += 1
    return "".join(lines[start:end])


def user_tables(text: str) -> list[str]:
    return [
        table_block(text, line.split("]")[0] + "]")
        for line in text.splitlines()
        if line.startswith("[") and "model_providers.gw]" not in line
    ]


def only_pointer_and_our_table_changed(old: str, new: str) -> None:
    """Removed lines: only model/model_provider; added: those and the [model_providers.gw]."""
    ours = table_block(new, "[model_providers.gw]").splitlines()
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        tag, body = line[:2], line[2:]
        if tag == "- ":
            assert re.match(r"(model|model_provider) = ", body), body
        elif tag == "+ ":
            assert re.match(r"(model|model_provider) = ", body) or body in ours or not body, body


def add_gw(home: Path) -> None:
    ok(cli("profile", "add", "gw", "--base-url", "https://gw.example/api", "--key-env", "GW_KEY"))
    ok(cli("profile", "add", "gw2", "--base-url", "https://gw2.example", "--key-env", "GW_KEY",
           "--model", "gw2-model"))  # fmt: skip


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_switch_keeps_user_tables_and_the_hint_restores_every_byte(
    temp_home: Path, case: str
) -> None:
    files = CORPUS[case]
    original = write_corpus(temp_home, files)
    add_gw(temp_home)
    targets = "claude-code,codex,gemini-cli" if ".claude/settings.json" in files else "codex"
    first = ok(cli("profile", "use", "gw", "--to", targets, "--yes"))
    codex_old = original[".codex/config.toml"].decode()
    codex_new = (temp_home / ".codex/config.toml").read_text()
    # item 8: every table of the user's is still there, byte for byte
    for block in user_tables(codex_old):
        assert block in codex_new, block
    only_pointer_and_our_table_changed(codex_old, codex_new)
    assert 'model_provider = "gw"' in codex_new
    if ".codex/work.config.toml" in files:
        assert (temp_home / ".codex/work.config.toml").read_bytes() == original[
            ".codex/work.config.toml"
        ]
    # an identical second switch changes no byte
    before = current(temp_home, original)
    again = ok(cli("profile", "use", "gw", "--to", targets, "--yes"))
    assert "no change" in again.stdout and current(temp_home, original) == before
    # another gateway, still the user's tables untouched
    ok(cli("profile", "use", "gw2", "--to", targets, "--yes"))
    codex_gw2 = (temp_home / ".codex/config.toml").read_text()
    for block in user_tables(codex_old):
        assert block in codex_gw2, block
    assert "[model_providers.gw]" not in codex_gw2
    # item 9: follow the hint the first switch printed, literally
    hint = re.search(r"with '(eloledger profile restore \S+ --yes)'", first.stderr)
    assert hint, first.stderr
    argv = shlex.split(hint.group(1))[1:]
    ok(cli(*argv))
    assert current(temp_home, original) == original


@pytest.mark.parametrize("case", ["azure+mcp", "ollama", "openrouter-no-newline"])
def test_switching_to_the_imported_profile_gives_codex_back_byte_for_byte(
    temp_home: Path, case: str
) -> None:
    original = write_corpus(temp_home, CORPUS[case])
    add_gw(temp_home)
    ok(cli("profile", "use", "gw", "--to", "codex", "--yes"))
    ok(cli("profile", "use", "gw2", "--to", "codex", "--yes"))
    ok(cli("profile", "use", "imported", "--to", "codex", "--yes"))
    back = current(temp_home, original)
    if case == "openrouter-no-newline":  # the one byte a table appended after it needed
        assert back[".codex/config.toml"] == original[".codex/config.toml"] + b"\n"
    else:
        assert back == original


def test_the_imported_profile_serves_only_what_it_was_found_in(temp_home: Path) -> None:
    """A gateway seen only in Codex's Azure table is not offered to Claude Code or Gemini."""
    write_corpus(temp_home, CORPUS["azure+mcp"])
    add_gw(temp_home)
    ok(cli("profile", "use", "gw", "--to", "codex", "--yes"))
    for target in ("claude-code", "gemini-cli"):
        refused = cli("profile", "use", "imported", "--to", target, "--yes")
        assert refused.returncode == 2 and "does not serve" in refused.stderr, refused.stderr
    assert not (temp_home / ".claude").exists() and not (temp_home / ".gemini").exists()


def test_new_members_and_tables_take_the_style_around_them(temp_home: Path) -> None:
    """Item 12: Gemini's inline security block stays inline; the Codex table is not put
    between the user's '# MCP servers' comment and its table."""
    write_corpus(temp_home, CORPUS["all-three"])
    add_gw(temp_home)
    ok(cli("profile", "use", "gw", "--to", "claude-code,codex,gemini-cli", "--yes"))
    settings = (temp_home / ".gemini/settings.json").read_text()
    assert (
        '"security": { "folderTrust": {"enabled": true}, "auth": {"selectedType": '
        '"gemini-api-key"} },\n' in settings
    ), settings
    codex = (temp_home / ".codex/config.toml").read_text()
    assert "# MCP servers\n[mcp_servers.docs]\n" in codex, codex
    # ours sits with the other provider tables, one blank line before and after
    assert 'X-Title" = "codex" }\n\n[model_providers.gw]\n' in codex, codex
    assert 'wire_api = "responses"\n\n# MCP servers\n' in codex, codex


def test_a_block_settings_file_gets_a_block_member(temp_home: Path) -> None:
    gemini = temp_home / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(
        '{\n    "general": {\n        "vimMode": true\n    }\n}\n'
    )
    (gemini / ".env").write_text("")
    add_gw(temp_home)
    ok(cli("profile", "use", "gw", "--to", "gemini-cli", "--yes"))
    assert (gemini / "settings.json").read_text() == (
        '{\n    "general": {\n        "vimMode": true\n    },\n    "security": {\n'
        '        "auth": {\n            "selectedType": "gemini-api-key"\n        }\n    }\n}\n'
    )


PROVIDER_LAYOUTS = {
    "super-table with inline providers": (
        'model_provider = "azure"\n\n[model_providers]\nazure = { name = "Azure", base_url = '
        '"https://a/openai", query_params = { api-version = "1" } }\n\n[mcp_servers.x]\n'
        'command = "y"\n'
    ),
    "one inline table": (
        'model_provider = "azure"\nmodel_providers = { azure = { name = "Azure", base_url = '
        '"https://a/openai" } }\n'
    ),
    "CRLF": (
        'model_provider = "azure"\r\n\r\n[model_providers.azure]\r\nname = "Azure"\r\n'
        'base_url = "https://a/openai"\r\n'
    ),
    "dotted keys": (
        'model_provider = "azure"\nmodel_providers.azure.name = "Azure"\n'
        'model_providers.azure.base_url = "https://a/openai"\n'
    ),
    "a provider with a sub-table": (
        'model_provider = "azure"\n[model_providers.azure]\nname = "Azure"\n'
        '[model_providers.azure.http_headers]\nX = "1"\n# tail\n'
    ),
}


@pytest.mark.parametrize("layout", sorted(PROVIDER_LAYOUTS))
def test_every_way_of_writing_provider_tables_survives_there_and_back(layout: str) -> None:
    text = PROVIDER_LAYOUTS[layout]
    ours = {"name": "gw", "base_url": "https://gw/v1", "env_key": "K", "wire_api": "responses"}
    new = tomledit.apply(text, {("model_provider",): "gw", ("model_providers", "gw"): ours}, "c")
    data = tomlkit.parse(new).unwrap()
    assert data["model_providers"]["gw"] == ours
    assert (
        data["model_providers"]["azure"] == tomlkit.parse(text).unwrap()["model_providers"]["azure"]
    )
    if "[model_providers.azure.http_headers]" in text:  # ours after the whole azure family
        assert new.index("[model_providers.gw]") > new.index("[model_providers.azure.http_headers]")
    back = tomledit.apply(
        new, {("model_provider",): "azure", ("model_providers", "gw"): DELETE}, "c"
    )
    assert back == text
