"""Static checks (no network) over the live client configs, the environment and the profiles.

Every finding is about the value the client will actually use (see :mod:`effective`), and its
evidence names the file and line or the variable it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from eloledger import clientfacts
from eloledger.doctor.effective import UNTRUSTED_NOTE, Effective, Setting, collect
from eloledger.doctor.findings import Finding, FixAction, make
from eloledger.doctor.urls import check_root, check_url, suggested_url

BASE_URL_SETTINGS = {
    "claude": "ANTHROPIC_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
}
_WHO = {
    "claude": "Claude Code",
    "anthropic": "the Anthropic SDK",
    "openai": "the OpenAI SDK",
    "gemini": "Gemini CLI",
    "codex": "Codex CLI",
}
# URL findings whose fix is "use <the corrected URL>": a one-key edit when the URL is in a file.
URL_FIX_CODES = frozenset(
    {
        "url.missing_v1",
        "url.extra_v1",
        "url.trailing_slash",
        "url.query_string",
        "gemini.extra_v1beta",
    }
)
_PLACEHOLDER = re.compile(
    r"^(<.*>|\$\{?\w+\}?|x{3,}|\.{3,}|\*{3,}|(sk-)?(your|my|insert|replace|enter|paste|put)"
    r"[-_ ]?.*(key|token|here)|.*(api[-_]?key|token)[-_ ]?here|changeme|change[-_]me|todo|"
    r"placeholder|dummy|example|test|none|null|sk-\.\.\.|sk-x+|sk-\*+)$",
    re.IGNORECASE,
)


def is_placeholder(key: str) -> bool:
    """True for the values setup guides tell people to replace (YOUR_API_KEY, <key>, sk-xxx)."""
    return bool(_PLACEHOLDER.match(key.strip()))


def key_findings(key: str | None, target: str, evidence: str, name: str) -> list[Finding]:
    """auth.placeholder_key / auth.key_whitespace for one key value (never shown)."""
    if not key:
        return []
    found = []
    if is_placeholder(key):
        found.append(
            make(
                "auth.placeholder_key",
                target,
                f"{name} holds a placeholder, not a key",
                evidence,
                f"set {name} to your real key",
            )
        )
    if key != key.strip() or re.search(r"\s", key):
        found.append(
            make(
                "auth.key_whitespace",
                target,
                f"{name} has whitespace or a newline in it (clients send it as is)",
                evidence,
                f"set {name} again without spaces or newlines, e.g. "
                f'export {name}="$(printf %s "${name}" | tr -d \'[:space:]\')"',
            )
        )
    return found


def static_findings(
    env: Mapping[str, str] | None = None, cwd: Path | None = None, profiles: Iterable[object] = ()
) -> list[Finding]:
    """Every static finding: live configs and environment, plus the given profiles."""
    eff = collect(env, cwd)
    findings = list(eff.problems)
    findings += live_config_findings(eff)
    for profile in profiles:
        findings += profile_findings(profile, eff.env)
    return findings


def live_config_findings(eff: Effective) -> list[Finding]:
    findings: list[Finding] = []
    for client, settings in eff.settings.items():
        for setting in settings:
            findings += _shadow_findings(client, setting)
    for client, var in BASE_URL_SETTINGS.items():
        setting = eff.get(client, var)
        if setting is not None:
            findings += _base_url_findings(client, setting, eff)
    for client, settings in eff.settings.items():
        base = next((x for x in settings if x.name == "base_url"), None)
        if client.startswith("codex") and base and base.raw and base.source.path is not None:
            found = check_url(base.raw, "codex", target=client, evidence=base.source.label)
            provider = next((x.raw for x in settings if x.name == "model_provider"), None)
            if provider:
                keypath = ("model_providers", provider, "base_url")
                _attach_url_fix(found, base.raw, "codex", (base.source.path, "toml", keypath))
            findings += found
    findings += _claude_auth(eff)
    findings += _sdk_auth(eff)
    findings += _gemini_checks(eff)
    findings += _gemini_trust(eff)
    findings += _codex_checks(eff)
    return findings


# --- base URLs and shadowing ------------------------------------------------------------------


def _base_url_findings(client: str, setting: Setting, eff: Effective) -> list[Finding]:
    if setting.source.label == "built-in default" or setting.raw is None:
        return []
    where = _file_key(setting)
    if setting.raw == "":
        ignored = [s for s in setting.shadowed if s.value]
        extra = f"; the value in {ignored[0].label} is ignored because of it" if ignored else ""
        action = None
        if where is not None:
            path, fmt, keypath = where
            action = FixAction(
                path, fmt, keypath, None, f"remove the empty {setting.name} from {_short(path)}"
            )
        return [
            make(
                "env.empty_base_url",
                client,
                f"{setting.name} is set but empty: {_WHO[client]} fails every call with a "
                f"connection error (missing scheme){extra}",
                setting.source.label,
                f"unset {setting.name} (or set it to the gateway URL)",
                action=action,
            )
        ]
    found = check_url(setting.raw or "", client, target=client, evidence=setting.source.label)
    if where is not None:
        _attach_url_fix(found, setting.raw, client, where)
    return found


def _file_key(setting: Setting) -> tuple[Path, str, tuple[str, ...]] | None:
    """(file, format, key path) of a base URL variable set in a config file, else None."""
    path = setting.source.path
    if path is None:
        return None
    if path.suffix == ".json":  # Claude Code's settings files: the variable is in "env"
        return path, "json", ("env", setting.name)
    if path.name.endswith(".env"):  # Gemini CLI's .env files
        return path, "env", (setting.name,)
    return None


def _attach_url_fix(
    found: list[Finding], url: str, wire: str, where: tuple[Path, str, tuple[str, ...]]
) -> None:
    """Give each fixable URL finding the edit that puts the corrected URL in its file."""
    new_url = suggested_url(url, wire)
    if new_url == url:
        return
    path, fmt, keypath = where
    for finding in found:
        if finding.code in URL_FIX_CODES:
            finding.action = FixAction(
                path,
                fmt,
                keypath,
                new_url,
                f"set {'.'.join(keypath)} = {new_url} in {_short(path)}",
            )


def _shadow_findings(client: str, setting: Setting) -> list[Finding]:
    # A value skipped because the folder is untrusted is gemini.untrusted_folder's business.
    differing = [
        s for s in setting.shadowed if s.value != setting.value and UNTRUSTED_NOTE not in s.label
    ]
    if not differing:
        return []
    who = _WHO.get(client.split("@")[0], client)
    losers = "; ".join(f"{s.label} = {_quote(s.value)}" for s in differing)
    if any("ignored by a custom provider" in s.label for s in differing):
        return [
            make(
                "env.shadowed",
                client,
                f"{who} uses base_url = {_quote(setting.value)} from {setting.source.label}; "
                f"$OPENAI_BASE_URL = {_quote(differing[0].value)} is ignored by a custom "
                "provider",
                f"winner: {setting.source.label}; overridden: {losers}",
                f"to change Codex's URL edit {_place(setting.source)}; $OPENAI_BASE_URL only "
                "affects the OpenAI SDK and Codex's built-in openai provider",
            )
        ]
    return [
        make(
            "env.shadowed",
            client,
            f"{who} uses {setting.name} = {_quote(setting.value)} from "
            f"{setting.source.label}; it overrides {losers}",
            f"winner: {setting.source.label}; overridden: {losers}",
            f"set {setting.name} at {_place(setting.source)} (that is the value {who} "
            f"uses), and remove it from {', '.join(_place(s) for s in differing)}",
        )
    ]


def _place(source) -> str:  # noqa: ANN001
    """Where to edit a value: file:line, or the shell for an environment variable."""
    if source.path is not None:
        where = _short(source.path)
        return f"{where}:{source.line}" if source.line else where
    return source.label.split(" (")[0] + " in your shell"


def _quote(value: str | None) -> str:
    return "<unset>" if value is None else repr(value)


# --- auth -------------------------------------------------------------------------------------


def _claude_auth(eff: Effective) -> list[Finding]:
    findings = []
    base = eff.get("claude", "ANTHROPIC_BASE_URL")
    token = eff.get("claude", "ANTHROPIC_AUTH_TOKEN")
    api_key = eff.get("claude", "ANTHROPIC_API_KEY")
    helper = eff.get("claude", "apiKeyHelper")
    if token and token.raw and api_key and api_key.raw:
        findings.append(
            make(
                "auth.both_anthropic_vars",
                "claude",
                "ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are both set: Claude Code sends both "
                "headers (Authorization: Bearer and x-api-key), and gateways disagree on which wins",
                f"{token.source.label}; {api_key.source.label}",
                "keep one: ANTHROPIC_AUTH_TOKEN for Bearer gateways, ANTHROPIC_API_KEY for "
                "x-api-key gateways; remove the other",
            )
        )
    if (
        base
        and base.raw
        and not (token and token.raw)
        and not (api_key and api_key.raw)
        and not helper
    ):
        findings.append(
            make(
                "auth.missing_key",
                "claude",
                f"Claude Code points at {base.raw} but has no key",
                f"{base.source.label}; ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY unset",
                "set ANTHROPIC_AUTH_TOKEN (Bearer) or ANTHROPIC_API_KEY (x-api-key) in "
                "~/.claude/settings.json env",
            )
        )
    for setting in (token, api_key):
        if setting:
            findings += key_findings(setting.raw, "claude", setting.source.label, setting.name)
    return findings


def _sdk_auth(eff: Effective) -> list[Finding]:
    findings = []
    api_key = eff.get("anthropic", "ANTHROPIC_API_KEY")
    token = eff.get("anthropic", "ANTHROPIC_AUTH_TOKEN")
    base = eff.get("anthropic", "ANTHROPIC_BASE_URL")
    if token and token.raw and api_key and api_key.raw:
        findings.append(
            make(
                "auth.both_anthropic_vars",
                "anthropic",
                "ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are both exported: the Anthropic SDK "
                "uses the API key (and logs a warning)",
                f"{api_key.source.label}; {token.source.label}",
                "unset one of them",
            )
        )
    if base and base.raw and not (api_key and api_key.raw) and not (token and token.raw):
        findings.append(
            make(
                "auth.missing_key",
                "anthropic",
                f"ANTHROPIC_BASE_URL is {base.raw} but no Anthropic key is exported",
                base.source.label,
                "export ANTHROPIC_API_KEY",
            )
        )
    for setting in (api_key, token):
        if setting:
            findings += key_findings(setting.raw, "anthropic", setting.source.label, setting.name)
    openai_key = eff.get("openai", "OPENAI_API_KEY")
    openai_base = eff.get("openai", "OPENAI_BASE_URL")
    if (
        openai_base
        and openai_base.source.label != "built-in default"
        and openai_base.raw
        and not (openai_key and openai_key.raw)
    ):
        findings.append(
            make(
                "auth.missing_key",
                "openai",
                f"OPENAI_BASE_URL is {openai_base.raw} but OPENAI_API_KEY is not "
                "set: the OpenAI SDK raises at construction",
                openai_base.source.label,
                "export OPENAI_API_KEY",
            )
        )
    if openai_key:
        findings += key_findings(
            openai_key.raw, "openai", openai_key.source.label, "OPENAI_API_KEY"
        )
    return findings


# --- Gemini -----------------------------------------------------------------------------------


def _gemini_checks(eff: Effective) -> list[Finding]:
    findings: list[Finding] = []
    key = eff.get("gemini", "GEMINI_API_KEY")
    base = eff.get("gemini", "GOOGLE_GEMINI_BASE_URL")
    selected = eff.get("gemini", "security.auth.selectedType")
    settings_path = clientfacts.gemini_dir(eff.env) / "settings.json"
    if key and key.raw:
        findings += key_findings(key.raw, "gemini", key.source.label, "GEMINI_API_KEY")
        if not selected or selected.raw != clientfacts.GEMINI_AUTH_SELECTED_TYPE:
            found = (
                f"selectedType = {selected.raw!r} at {selected.source.label}"
                if selected
                else f"{_short(settings_path)} has no security.auth.selectedType"
            )
            findings.append(
                make(
                    "gemini.auth_type_missing",
                    "gemini",
                    "GEMINI_API_KEY is set but Gemini CLI is not told to use it: non-interactive "
                    "runs fail with 'Invalid auth method selected.' (exit 41)",
                    found,
                    f'add {{"security": {{"auth": {{"selectedType": "gemini-api-key"}}}}}} to '
                    f"{_short(settings_path)}",
                    action=FixAction(
                        settings_path,
                        "jsonc",
                        ("security", "auth", "selectedType"),
                        clientfacts.GEMINI_AUTH_SELECTED_TYPE,
                        f"set security.auth.selectedType = "
                        f'"{clientfacts.GEMINI_AUTH_SELECTED_TYPE}" in {_short(settings_path)}',
                    ),
                )
            )
    elif base and base.raw:
        findings.append(
            make(
                "auth.missing_key",
                "gemini",
                f"Gemini CLI points at {base.raw} but GEMINI_API_KEY is not set",
                base.source.label,
                "set GEMINI_API_KEY in ~/.gemini/.env",
            )
        )
    return findings


def _gemini_trust(eff: Effective) -> list[Finding]:
    """gemini.untrusted_folder: settings Gemini CLI would read here if it trusted the folder."""
    trust = eff.gemini_trust
    if trust is None or trust.trusted is not False or trust.error:
        return []
    would_read = next(
        (p for p in clientfacts.gemini_env_candidates(eff.env, eff.cwd) if p.is_file()), None
    )
    ignored = [
        (setting.name, source)
        for setting in eff.settings.get("gemini", [])
        if setting.name not in eff.env
        for source in (setting.source, *setting.shadowed)
        if source.path == would_read and UNTRUSTED_NOTE in source.label
    ]
    if not ignored or would_read is None:
        return []
    ignored.sort(key=lambda item: item[1].line or 0)
    names = [name for name, _source in ignored]
    where = _short(would_read)
    folders = _short(clientfacts.gemini_trusted_folders_path(eff.env))
    lines = ", ".join(f"{where}:{source.line} {name}" for name, source in ignored)
    if "GEMINI_API_KEY" in names:
        effect = "'gemini -p' stops with exit 41 ('must specify the GEMINI_API_KEY')"
    else:
        effect = "'gemini -p' stops with exit 55 (untrusted folder)"
    return [
        make(
            "gemini.untrusted_folder",
            "gemini",
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


def _codex_checks(eff: Effective) -> list[Finding]:
    findings: list[Finding] = []
    for path, (text, doc) in eff.codex_docs.items():
        where = _short(path)
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
        if env_key and (key is None or not key.raw):
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


def _short(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + "/") else text


# --- profiles ---------------------------------------------------------------------------------


def profile_findings(profile, env: Mapping[str, str] | None = None) -> list[Finding]:  # noqa: ANN001
    """URL, key and host checks for one eloledger profile."""
    from eloledger.profiles.model import CLIENTS

    target = f"profile:{profile.name}"
    findings = check_root(
        profile.base_url, target=target, evidence=f"profile {profile.name!r} base_url"
    )
    for client, override in profile.overrides.items():
        if override.base_url:
            findings += check_url(
                override.base_url,
                client,
                target=f"{target}/{client}",
                evidence=f"profile {profile.name!r} [{client}] base_url",
            )
    findings += _profile_key(profile, target)
    hosts: dict[str, list[str]] = {}
    for client in CLIENTS:
        if not profile.serves(client):
            continue
        try:
            host = urlsplit(profile.client_base_url(client).strip()).netloc.lower()
        except ValueError:
            continue
        hosts.setdefault(host, []).append(client)
    if len(hosts) > 1:
        detail = "; ".join(f"{h}: {', '.join(c)}" for h, c in hosts.items())
        findings.append(
            make(
                "hosts.inconsistent",
                target,
                f"profile {profile.name!r} sends its clients to different hosts",
                detail,
                "point every client override at the same gateway, or split the profile in two",
            )
        )
    return findings


def _profile_key(profile, target: str) -> list[Finding]:  # noqa: ANN001
    from eloledger.profiles.store import resolve_key

    key = resolve_key(profile)
    label = f"${profile.key_env}" if profile.key_env else "the secrets file"
    if not key:
        if profile.key_in_secrets or profile.key_env:
            fix = (
                f"export {profile.key_env}=<your key>"
                if profile.key_env and not profile.key_in_secrets
                else f"eloledger profile edit {profile.name} (set the key)"
            )
            return [
                make(
                    "auth.missing_key",
                    target,
                    f"profile {profile.name!r} has no key: {label} is unset or empty",
                    label,
                    fix,
                )
            ]
        return [
            make(
                "auth.missing_key",
                target,
                f"profile {profile.name!r} names no key",
                f"profile {profile.name!r}",
                f"eloledger profile edit {profile.name} --key-env VAR",
            )
        ]
    return key_findings(key, target, label, label.lstrip("$"))
