"""Client-specific static checks: Gemini CLI (auth type, folder trust) and Codex CLI
(provider tables, wire_api, env_key), each finding pointing at the file and line."""

from __future__ import annotations

import re
from typing import Any

from eloledger import clientfacts
from eloledger.doctor.effective import UNTRUSTED_NOTE, Effective, tilde
from eloledger.doctor.findings import Finding, FixAction, make
from eloledger.doctor.keys import key_findings
from eloledger.redact import mask


def gemini_checks(eff: Effective) -> list[Finding]:
    findings: list[Finding] = []
    key = eff.get("gemini-cli", "GEMINI_API_KEY")
    base = eff.get("gemini-cli", "GOOGLE_GEMINI_BASE_URL")
    selected = eff.get("gemini-cli", "security.auth.selectedType")
    settings_path = clientfacts.gemini_dir(eff.env) / "settings.json"
    if key and key.raw:
        findings += key_findings(key.raw, "gemini-cli", key.source.label, "GEMINI_API_KEY")
        if not selected or selected.raw != clientfacts.GEMINI_AUTH_SELECTED_TYPE:
            found = (
                f"selectedType = {selected.raw!r} at {selected.source.label}"
                if selected
                else f"{tilde(settings_path)} has no security.auth.selectedType"
            )
            findings.append(
                make(
                    "gemini.auth_type_missing",
                    "gemini-cli",
                    "GEMINI_API_KEY is set but Gemini CLI is not told to use it: non-interactive "
                    "runs fail with 'Invalid auth method selected.' (exit 41)",
                    found,
                    f'add {{"security": {{"auth": {{"selectedType": "gemini-api-key"}}}}}} to '
                    f"{tilde(settings_path)}",
                    action=FixAction(
                        settings_path,
                        "jsonc",
                        ("security", "auth", "selectedType"),
                        clientfacts.GEMINI_AUTH_SELECTED_TYPE,
                        f"set security.auth.selectedType = "
                        f'"{clientfacts.GEMINI_AUTH_SELECTED_TYPE}" in {tilde(settings_path)}',
                    ),
                )
            )
    elif base and base.raw:
        findings.append(
            make(
                "auth.missing_key",
                "gemini-cli",
                f"Gemini CLI points at {base.raw} but GEMINI_API_KEY is not set",
                base.source.label,
                "set GEMINI_API_KEY in ~/.gemini/.env",
            )
        )
    return findings


def gemini_trust(eff: Effective) -> list[Finding]:
    """gemini.untrusted_folder: settings Gemini CLI would read here if it trusted the folder."""
    trust = eff.gemini_trust
    if trust is None or trust.trusted is not False or trust.error:
        return []
    would_read = next(
        (p for p in clientfacts.gemini_env_candidates(eff.env, eff.cwd) if p.is_file()), None
    )
    ignored = [
        (setting.name, source)
        for setting in eff.settings.get("gemini-cli", [])
        if setting.name not in eff.env
        for source in (setting.source, *setting.shadowed)
        if source.path == would_read and UNTRUSTED_NOTE in source.label
    ]
    if not ignored or would_read is None:
        return []
    ignored.sort(key=lambda item: item[1].line or 0)
    names = [name for name, _source in ignored]
    where = tilde(would_read)
    folders = tilde(clientfacts.gemini_trusted_folders_path(eff.env))
    lines = ", ".join(f"{where}:{source.line} {name}" for name, source in ignored)
    if "GEMINI_API_KEY" in names:
        effect = "'gemini -p' stops with exit 41 ('must specify the GEMINI_API_KEY')"
    else:
        effect = "'gemini -p' stops with exit 55 (untrusted folder)"
    return [
        make(
            "gemini.untrusted_folder",
            "gemini-cli",
            f"Gemini CLI does not trust {eff.cwd}, so it ignores {', '.join(names)} in "
            f"{where}: {effect}, and interactive runs go without these settings",
            f"{lines}; {folders}: {trust.reason}"
            if trust.source == "file"
            else f"{lines}; {trust.reason}",
            "in scripts run 'gemini --skip-trust -p ...' (or export "
            "GEMINI_CLI_TRUST_WORKSPACE=true); to work here interactively trust the folder when "
            f'Gemini CLI asks (or add "{eff.cwd}": "TRUST_FOLDER" to {folders}); or set the '
            'values in the shell instead: eval "$(eloledger env PROFILE)"',
        )
    ]


# --- Codex ------------------------------------------------------------------------------------


def codex_checks(eff: Effective) -> list[Finding]:
    findings: list[Finding] = []
    for path, (text, doc) in eff.codex_docs.items():
        where = tilde(path)
        providers = (
            doc.get("model_providers") if isinstance(doc.get("model_providers"), dict) else {}
        )
        for pid, table in providers.items():
            if not isinstance(table, dict):
                continue
            if table.get("wire_api") == "chat":
                line = _find_line(text, f"model_providers.{pid}", "wire_api")
                findings.append(
                    make(
                        "codex.wire_api_chat",
                        "codex",
                        f'[model_providers.{pid}] sets wire_api = "chat": Codex refuses to load '
                        "the config ('wire_api = \"chat\" is no longer supported')",
                        f"{where}:{line}" if line else where,
                        f'set wire_api = "responses" in [model_providers.{pid}] (the gateway must '
                        "serve /responses)",
                        action=FixAction(
                            path,
                            "toml",
                            ("model_providers", pid, "wire_api"),
                            "responses",
                            f'set model_providers.{pid}.wire_api = "responses" in {where}',
                        ),
                    )
                )
            if pid in clientfacts.CODEX_BUILTIN_PROVIDERS:
                line = _find_line(text, f"model_providers.{pid}", None)
                findings.append(
                    make(
                        "codex.builtin_redefined",
                        "codex",
                        f"[model_providers.{pid}] redefines a built-in provider id: Codex silently "
                        "ignores this table and uses its own settings",
                        f"{where}:{line}" if line else where,
                        f"rename the table to [model_providers.{pid}-gateway] and set "
                        f'model_provider = "{pid}-gateway"',
                    )
                )
        findings += _foreign_keys(path, text, doc)
        legacy = [k for k in ("profiles", "profile") if k in doc]
        if legacy:
            line = _find_line(text, "profiles", None) or _find_line(text, "", "profile")
            names = list(doc["profiles"]) if isinstance(doc.get("profiles"), dict) else []
            example = names[0] if names else "NAME"
            findings.append(
                make(
                    "codex.legacy_profiles",
                    "codex",
                    "a [profiles.x] table or top-level profile = is rejected since Codex 0.134 "
                    "('legacy ... no longer supported')",
                    f"{where}:{line}" if line else where,
                    f"move each [profiles.{example}] table into {path.parent}/{example}.config.toml "
                    f"and run 'codex --profile {example}'; delete the old table and profile =",
                )
            )
    for client, settings in eff.settings.items():
        if not client.startswith("codex"):
            continue
        key = next((s for s in settings if s.name == "key"), None)
        env_key = next((s for s in settings if s.name == "env_key"), None)
        if env_key and env_key.raw and not _ENV_NAME.match(env_key.raw):
            findings.append(_key_in_env_key(client, env_key.raw, env_key.source.label))
        elif env_key and (key is None or not key.raw):
            findings.append(
                make(
                    "codex.env_key_unset",
                    client,
                    f"the provider's env_key names ${env_key.raw}, which is unset or empty: Codex "
                    f"stops with 'Missing environment variable: `{env_key.raw}`' (OPENAI_API_KEY is "
                    "not a fallback)",
                    env_key.source.label,
                    f"export {env_key.raw}=<your key> in the shell that runs codex",
                )
            )
        elif key and env_key:
            findings += key_findings(key.raw, client, key.source.label, env_key.raw or "key")
    return findings


def _foreign_keys(path: Any, text: str, doc: dict) -> list[Finding]:
    """``ANTHROPIC_*`` keys pasted into Codex's config.toml (a guide's Claude Code step done in
    the wrong file): Codex ignores them, and Claude Code never sees them. Values never shown."""
    found: list[str] = []

    def walk(table: Any, prefix: str) -> None:
        if isinstance(table, dict):
            for key, value in table.items():
                name = f"{prefix}{key}"
                if str(key).upper().startswith("ANTHROPIC_"):
                    found.append(name)
                walk(value, f"{name}.")

    walk(doc, "")
    if not found:
        return []
    where = tilde(path)
    last = str(found[0]).rsplit(".", 1)[-1]
    line = next(
        (n for n, raw in enumerate(text.splitlines(), 1) if raw.strip().startswith(last)), None
    )
    return [
        make(
            "codex.foreign_keys",
            "codex",
            f"{', '.join(found)} in Codex's config: Codex does not read Claude Code's settings, "
            "and Claude Code does not read this file",
            f"{where}:{line}" if line else where,
            "remove them here; point Claude Code at the gateway with 'eloledger profile use "
            "NAME --to claude-code' (or the env of ~/.claude/settings.json)",
        )
    ]


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key_in_env_key(client: str, value: str, evidence: str) -> Finding:
    """``env_key`` holding the key itself (the guides' "most common error"): Codex reads it as
    a variable's name. The value is shown masked, never in an ``export`` line."""
    return make(
        "codex.env_key_unset",
        client,
        f"env_key holds what looks like the key itself ({mask(value)}), not a variable name: "
        "Codex looks up an environment variable of that name and stops",
        evidence,
        'put the variable NAME there (env_key = "OPENAI_API_KEY", or your gateway\'s, e.g. '
        '"TAOTOKEN_API_KEY"), export that variable with your key in the shell that runs codex, '
        "and rotate the key if the file was shared",
    )


def _find_line(text: str, table: str, key: str | None) -> int | None:
    lines = text.splitlines()
    in_table = not table
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            name = stripped.strip("[]").strip().replace('"', "")
            in_table = name == table or (table and name.startswith(table + "."))
            if in_table and key is None:
                return number
            continue
        if in_table and key and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
    return None
