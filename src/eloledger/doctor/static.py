"""Static checks (no network) over the live client configs, the environment and the profiles.

Every finding is about the value the client will actually use (see :mod:`effective`), and its
evidence names the file and line or the variable it came from. Here: base URLs, shadowed
values and the Claude/SDK key variables, and the entry points that run every check; Gemini
and Codex checks are in :mod:`client_checks`, key values in :mod:`keys`, stored profiles in
:mod:`profile_checks`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from eloledger.doctor.client_checks import codex_checks, gemini_checks, gemini_trust
from eloledger.doctor.effective import UNTRUSTED_NOTE, Effective, Setting, collect, tilde
from eloledger.doctor.findings import Finding, FixAction, make
from eloledger.doctor.keys import is_placeholder, key_findings
from eloledger.doctor.profile_checks import profile_findings
from eloledger.doctor.urls import check_url, suggested_url

__all__ = [  # the checks live in their own modules; callers may keep importing them here
    "is_placeholder",
    "key_findings",
    "live_config_findings",
    "profile_findings",
    "static_findings",
]

BASE_URL_SETTINGS = {
    "claude-code": "ANTHROPIC_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "gemini-cli": "GOOGLE_GEMINI_BASE_URL",
}
_WHO = {
    "claude-code": "Claude Code",
    "anthropic": "the Anthropic SDK",
    "openai": "the OpenAI SDK",
    "gemini-cli": "Gemini CLI",
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
    findings += _exit_hosts(eff)
    findings += _claude_auth(eff)
    findings += _sdk_auth(eff)
    findings += gemini_checks(eff)
    findings += gemini_trust(eff)
    findings += codex_checks(eff)
    return findings


def _exit_hosts(eff: Effective) -> list[Finding]:
    """The guides' rule "every client's exit host is the same", across the live configs: the
    base URLs each client really uses (not built-in defaults) point at one gateway."""
    from urllib.parse import urlsplit

    used: dict[str, tuple[str, str]] = {}  # client -> (url, where)
    for client, var in BASE_URL_SETTINGS.items():
        setting = eff.get(client, var)
        if setting is not None and setting.raw and setting.source.label != "built-in default":
            used[client] = (setting.raw, setting.source.label)
    for client, settings in eff.settings.items():
        base = next((x for x in settings if x.name == "base_url"), None)
        if client.startswith("codex") and base and base.raw and base.source.path is not None:
            used[client] = (base.raw, base.source.label)  # a config file's, not Codex's default
    hosts: dict[str, list[str]] = {}
    for client, (url, _) in used.items():
        try:
            host = urlsplit(url.strip()).netloc.lower()
        except ValueError:
            continue
        if host:
            hosts.setdefault(host, []).append(client)
    if len(hosts) < 2:
        return []
    detail = "; ".join(f"{h}: {', '.join(c)}" for h, c in hosts.items())
    return [
        make(
            "hosts.inconsistent",
            "clients",
            f"the live client configs send traffic to {len(hosts)} different hosts, so one "
            "client's calls bypass the gateway the others use",
            detail + " (" + ", ".join(f"{c} from {w}" for c, (_, w) in used.items()) + ")",
            "switch every client to one profile: eloledger profile use NAME --to all",
        )
    ]


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
                path, fmt, keypath, None, f"remove the empty {setting.name} from {tilde(path)}"
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
                f"set {'.'.join(keypath)} = {new_url} in {tilde(path)}",
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
        where = tilde(source.path)
        return f"{where}:{source.line}" if source.line else where
    return source.label.split(" (")[0] + " in your shell"


def _quote(value: str | None) -> str:
    return "<unset>" if value is None else repr(value)


# --- auth -------------------------------------------------------------------------------------


def _claude_auth(eff: Effective) -> list[Finding]:
    findings = []
    base = eff.get("claude-code", "ANTHROPIC_BASE_URL")
    token = eff.get("claude-code", "ANTHROPIC_AUTH_TOKEN")
    api_key = eff.get("claude-code", "ANTHROPIC_API_KEY")
    helper = eff.get("claude-code", "apiKeyHelper")
    if token and token.raw and api_key and api_key.raw:
        findings.append(
            make(
                "auth.both_anthropic_vars",
                "claude-code",
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
                "claude-code",
                f"Claude Code points at {base.raw} but has no key",
                f"{base.source.label}; ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY unset",
                "set ANTHROPIC_AUTH_TOKEN (Bearer) or ANTHROPIC_API_KEY (x-api-key) in "
                "~/.claude/settings.json env",
            )
        )
    for setting in (token, api_key):
        if setting:
            findings += key_findings(setting.raw, "claude-code", setting.source.label, setting.name)
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
