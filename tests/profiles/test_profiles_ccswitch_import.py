"""`eloledger profile import cc-switch [PATH]`: CC Switch's providers become profiles.

The fixtures follow CC Switch's own formats as its public source defines them
(github.com/farion1231/cc-switch):

* v3.0.0 ``~/.cc-switch/config.json``: ``ProviderManager`` in ``src-tauri/src/provider.rs``
  (``{"providers": {ID: {id, name, settingsConfig, websiteUrl}}, "current": ID}``);
* v3.7.1 ``config.json``: ``MultiAppConfig`` in ``src-tauri/src/app_config.rs`` (``version`` 2
  and one ``{"providers", "current"}`` per app), Codex providers as ``{"auth": {...}, "config":
  "<config.toml>"}`` (``src/config/codexProviderPresets.ts`` ``generateThirdPartyConfig``),
  Gemini as ``{"env": {GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL}}``
  (``src/config/geminiProviderPresets.ts``, ``src-tauri/src/gemini_config.rs``);
* v3.8.0 ``~/.cc-switch/cc-switch.db``: the ``providers`` table of
  ``src-tauri/src/database/schema.rs`` (the same JSON in ``settings_config``, ``meta`` with
  ``apiKeyField``, ``is_current``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.profiles import store

CLAUDE_KEY = "sk-ant-claude-0123456789abcdefghij"
CODEX_KEY = "sk-codex-9876543210zyxwvutsrqpo"
GEMINI_KEY = "AIzaGemini-abcdefghij0123456789"
DB_KEY = "sk-db-key-for-x-api-key-00112233"
KEYS = (CLAUDE_KEY, CODEX_KEY, GEMINI_KEY, DB_KEY)

CODEX_TOML = """model_provider = "packycode"
model = "gpt-5-codex"
model_reasoning_effort = "high"
disable_response_storage = true

[model_providers.packycode]
name = "packycode"
base_url = "https://codex-api.packycode.com/v1"
wire_api = "responses"
requires_openai_auth = true
"""

CLAUDE = {
    "id": "p-claude-1",
    "name": "PackyCode",
    "settingsConfig": {"env": {
        "ANTHROPIC_BASE_URL": "https://api.packycode.com",
        "ANTHROPIC_AUTH_TOKEN": CLAUDE_KEY,
        "ANTHROPIC_MODEL": "claude-sonnet-4-5",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-haiku-4-5",
        "API_TIMEOUT_MS": "600000",
    }},
    "websiteUrl": "https://www.packyapi.com",
    "notes": "team\naccount",
}  # fmt: skip
OFFICIAL = {"id": "default", "name": "Claude Official", "settingsConfig": {"env": {}}}
CODEX = {
    "id": "p-codex-1",
    "name": "PackyCode",
    "settingsConfig": {"auth": {"OPENAI_API_KEY": CODEX_KEY}, "config": CODEX_TOML},
}
GEMINI = {
    "id": "p-gem-1",
    "name": "PackyCode Gemini",
    "settingsConfig": {"env": {
        "GOOGLE_GEMINI_BASE_URL": "https://www.packyapi.com",
        "GEMINI_API_KEY": GEMINI_KEY,
        "GEMINI_MODEL": "gemini-3-pro-preview",
    }},
}  # fmt: skip

V2 = {
    "version": 2,
    "claude": {"providers": {"p-claude-1": CLAUDE, "default": OFFICIAL}, "current": "p-claude-1"},
    "codex": {"providers": {"p-codex-1": CODEX}, "current": "p-codex-1"},
    "gemini": {"providers": {"p-gem-1": GEMINI}, "current": ""},
    "mcp": {"claude": {"servers": {}}, "codex": {"servers": {}}},
}

# v3.8.0 src-tauri/src/database/schema.rs, the providers table as created there
SCHEMA_V38 = """CREATE TABLE IF NOT EXISTS providers (
    id TEXT NOT NULL, app_type TEXT NOT NULL, name TEXT NOT NULL, settings_config TEXT NOT NULL,
    website_url TEXT, category TEXT, created_at INTEGER, sort_index INTEGER, notes TEXT,
    icon TEXT, icon_color TEXT, meta TEXT NOT NULL DEFAULT '{}',
    is_current BOOLEAN NOT NULL DEFAULT 0, PRIMARY KEY (id, app_type))"""


def _cc_dir(home: Path) -> Path:
    folder = home / ".cc-switch"
    folder.mkdir(exist_ok=True)
    return folder


def _write_db(path: Path, settings_text: str | None = None) -> None:
    claude = {"env": {"ANTHROPIC_BASE_URL": "https://gw.example/api/",
                      "ANTHROPIC_API_KEY": DB_KEY, "ANTHROPIC_MODEL": "glm-4.6"}}  # fmt: skip
    rows = [
        ("c1", "claude", "Relay GW", settings_text or json.dumps(claude), None, 0,
         json.dumps({"apiKeyField": "ANTHROPIC_API_KEY"}), 1),
        ("x1", "codex", "PackyCode", json.dumps(CODEX["settingsConfig"]), None, 1, "{}", 1),
        ("g1", "gemini", "PackyCode Gemini", json.dumps(GEMINI["settingsConfig"]), "n", 0, "{}", 0),
        ("o1", "opencode", "Other app", json.dumps({"options": {"baseURL": "https://o.example"}}),
         None, 0, "{}", 0),
    ]  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.execute(SCHEMA_V38)
        conn.executemany(
            "INSERT INTO providers (id, app_type, name, settings_config, notes, sort_index, meta,"
            " is_current) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    conn.close()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["profile", "import", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _no_key_shown(*texts: str) -> None:
    for text in texts:
        for key in KEYS:
            assert key not in text


def _secrets_mode() -> int:
    return stat.S_IMODE(store.secrets_path().stat().st_mode)


def test_config_json_v2_providers_become_profiles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = _cc_dir(Path.home()) / "config.json"
    config.write_text(json.dumps(V2, indent=2))
    before = config.read_bytes()
    status, out, err = _run(capsys, "cc-switch")
    assert status == 0, err
    profiles = store.load_profiles()
    assert set(profiles) == {"packycode-claude", "packycode-codex", "packycode-gemini-gemini"}
    claude = profiles["packycode-claude"]
    assert claude.client_base_url("claude-code") == "https://api.packycode.com"
    assert claude.clients == ["claude-code", "anthropic"] and claude.auth == "bearer"
    assert claude.model == "claude-sonnet-4-5" and claude.models == {"haiku": "claude-haiku-4-5"}
    assert "team account" in claude.description and "PackyCode" in claude.description
    codex = profiles["packycode-codex"]
    assert codex.client_base_url("codex") == "https://codex-api.packycode.com/v1"
    assert codex.wire_api == "openai-responses" and codex.model == "gpt-5-codex"
    assert codex.overrides["codex"].extra["provider_id"] == "packycode"
    gemini = profiles["packycode-gemini-gemini"]
    assert gemini.client_base_url("gemini-cli") == "https://www.packyapi.com"
    assert gemini.model == "gemini-3-pro-preview"
    # keys: in the 0600 secrets file, never in profiles.toml or on the terminal
    assert {n: store.stored_secret(n) for n in profiles} == {
        "packycode-claude": CLAUDE_KEY, "packycode-codex": CODEX_KEY,
        "packycode-gemini-gemini": GEMINI_KEY}  # fmt: skip
    assert _secrets_mode() == 0o600
    _no_key_shown(out, err, store.profiles_path().read_text())
    assert "sk-ant…(34 chars)" in out
    # what has no profile field is named, the official sign-in is said, CC Switch untouched
    assert "env.API_TIMEOUT_MS" in out and "config.model_reasoning_effort" in out
    assert "'Claude Official': no base URL" in out
    assert "(current in CC Switch)" in out
    assert "packycode-claude: claude-code via https://api.packycode.com" in out
    assert config.read_bytes() == before


def test_cc_switch_db_is_read_and_left_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = _cc_dir(tmp_path)
    db = folder / "cc-switch.db"
    _write_db(db)
    (folder / "config.json.migrated").write_text(json.dumps(V2))  # what 3.8 leaves behind
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    status, out, err = _run(capsys, "cc-switch", str(folder), "--format", "json")
    assert status == 0, err
    data = json.loads(out)
    assert data["layout"].startswith("cc-switch.db")
    assert [p["profile"] for p in data["profiles"]] == [
        "relay-gw-claude", "packycode-codex", "packycode-gemini-gemini"]  # fmt: skip
    assert [p["current"] for p in data["profiles"]] == [True, True, False]
    # CC Switch's app types as it spells them, and the eloledger client each one became
    assert [p["app"] for p in data["profiles"]] == ["claude", "codex", "gemini"]
    assert [p["client"] for p in data["profiles"]] == ["claude-code", "codex", "gemini-cli"]
    assert any("1 provider for opencode" in n for n in data["notes"])
    relay = store.load_profiles()["relay-gw-claude"]
    assert relay.auth == "x-api-key"  # meta.apiKeyField = ANTHROPIC_API_KEY
    assert relay.client_base_url("claude-code") == "https://gw.example/api"
    assert relay.client_base_url("anthropic") == "https://gw.example/api"
    assert store.stored_secret("relay-gw-claude") == DB_KEY
    _no_key_shown(out, err)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


def test_config_json_v1_of_cc_switch_3_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"providers": {"p-claude-1": CLAUDE}, "current": "p-claude-1"}))
    status, out, err = _run(capsys, "cc-switch", str(path))
    assert status == 0, err
    assert "config.json v1 (CC Switch 3.0)" in out
    assert set(store.load_profiles()) == {"packycode-claude"}


def test_bad_json_is_one_line_with_file_line_and_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n  "version": 2,\n  "claude": {"providers": {,}}\n}\n')
    status, out, err = _run(capsys, "cc-switch", str(path))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"{path}:3: not valid JSON" in err and "config.json.bak" in err
    assert "Traceback" not in err and not store.profiles_path().exists()


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ("{not json", "settings_config is not valid JSON"),
        (json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://gw.example/api?x=1"}}),
         "query string"),
        (json.dumps({"env": "ANTHROPIC_BASE_URL=https://x"}), "settingsConfig.env is not an object"),
    ],
    ids=["row-not-json", "url-with-query", "env-not-object"],
)
def test_a_bad_provider_row_names_itself_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, settings: str, said: str
) -> None:
    db = tmp_path / "cc-switch.db"
    _write_db(db, settings_text=settings)
    status, _, err = _run(capsys, "cc-switch", str(db))
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "providers row id='c1' app_type=claude" in err and said in err
    assert not store.profiles_path().exists() and not store.secrets_path().exists()


def test_not_a_store_and_taken_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junk = tmp_path / "cc-switch.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    status, _, err = _run(capsys, "cc-switch", str(junk))
    assert status == 2 and "cannot read CC Switch's providers table" in err
    assert _run(capsys, "cc-switch", str(tmp_path / "missing"))[0] == 2

    config = tmp_path / "config.json"
    config.write_text(json.dumps(V2))
    assert _run(capsys, "cc-switch", str(config))[0] == 0
    status, _, err = _run(capsys, "cc-switch", str(config))
    assert status == 2 and "exist; nothing was imported" in err and "--replace" in err
    assert _run(capsys, "cc-switch", str(config), "--replace")[0] == 0
