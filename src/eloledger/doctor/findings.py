"""A doctor finding: what is wrong, where the evidence is, and the concrete fix.

Every text field passes through :func:`eloledger.redact.scrub` when the finding is made, so a
key echoed back by a gateway (or read from a config file) can never reach the output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEVERITIES = ("error", "warning", "info")

# Every code the doctor can report, with its default severity and what it means.
CODES: dict[str, tuple[str, str]] = {
    "url.scheme": ("error", "the base URL does not start with http:// or https://"),
    "url.whitespace": ("error", "the base URL contains whitespace"),
    "url.query_string": ("error", "a query string in the base URL breaks every client's path join"),
    "url.fragment": ("error", "a #fragment in the base URL"),
    "url.missing_v1": ("warning", "an OpenAI-style base URL without a version segment such as /v1"),
    "url.extra_v1": ("error", "an Anthropic/Gemini-style base URL ending in /v1 (doubled /v1)"),
    "url.endpoint_path": ("error", "a full endpoint pasted where the base URL belongs"),
    "url.trailing_slash": ("info", "a trailing slash on the base URL"),
    "env.empty_base_url": ("error", "a base URL variable set to the empty string"),
    "env.shadowed": ("warning", "a value that another source overrides for that client"),
    "env.guide_var_mismatch": (
        "warning",
        "TAOTOKEN_BASE_URL / TAOTOKEN_BASE (read by the guides' scripts) disagree with the "
        "active profile's gateway",
    ),
    "auth.missing_key": ("error", "no key where one is needed"),
    "auth.placeholder_key": ("error", "the key is a placeholder such as YOUR_API_KEY"),
    "auth.key_whitespace": ("error", "the key has whitespace or a newline around it"),
    "auth.both_anthropic_vars": ("warning", "ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN both set"),
    "auth.unauthorized": ("error", "the gateway rejects the key (401)"),
    "auth.header_form": ("error", "the gateway accepts the key only in the other header form"),
    "auth.forbidden": ("error", "the key is valid but not allowed (403)"),
    "auth.upstream_key": (
        "error",
        "the gateway's own upstream rejects the gateway's key (its config, not the user's key)",
    ),
    "path.not_found": ("error", "the endpoint path does not exist on the gateway (404)"),
    "model.not_found": ("error", "the gateway does not know the model (404, 400 or 503)"),
    "rate.limited": (
        "error",
        "the probe's generation was rate limited (429): the run would be too",
    ),
    "rate.quota": ("error", "quota or credit exhausted (429 insufficient_quota): do not retry"),
    "server.error": ("error", "the gateway answers 5xx"),
    "net.unreachable": ("error", "connection refused, DNS failure or no route"),
    "net.timeout": ("error", "no answer within the probe timeout"),
    "net.gateway_timeout": (
        "error",
        "the gateway timed out on its upstream (a 408/504 well inside the client's timeout)",
    ),
    "net.tls": ("error", "TLS handshake or certificate failure"),
    "response.not_json": ("error", "a 200 answer that is not JSON (often a login page)"),
    "usage.missing": ("error", "answers carry no token usage"),
    "usage.zero": ("error", "answers report zero token usage"),
    "usage.stream_missing": ("warning", "streamed answers carry no usage (non-streamed ones do)"),
    "codex.wire_api_chat": ("error", 'Codex rejects wire_api = "chat"'),
    "codex.legacy_profiles": ("error", "Codex rejects [profiles.x] / top-level profile ="),
    "codex.builtin_redefined": ("error", "a built-in Codex provider id redefined (ignored)"),
    "codex.env_key_unset": ("error", "the variable named by env_key is unset or empty"),
    "codex.foreign_keys": ("warning", "Claude Code's ANTHROPIC_* settings in Codex's config.toml"),
    "gemini.auth_type_missing": ("error", "Gemini settings.json lacks the gemini-api-key type"),
    "gemini.untrusted_folder": (
        "warning",
        "Gemini CLI does not trust this folder, so it ignores the settings in a .gemini/.env",
    ),
    "gemini.extra_v1beta": ("error", "a Gemini base URL ending in /v1beta (doubled)"),
    "hosts.inconsistent": ("warning", "one profile's clients point at different hosts"),
    "ledger.usage_missing": ("error", "ok rows with missing or zero usage"),
    "ledger.total_mismatch": ("warning", "prompt + completion != total"),
    "ledger.usage_disagree": ("warning", "rows whose counts disagree with the provider's own"),
    "ledger.unknown_model": ("warning", "rows for a model the experiment did not use"),
    "ledger.duplicate": ("warning", "the same call recorded more than once"),
    "ledger.errors": ("warning", "error rows in the ledger"),
    "ledger.base_urls": ("warning", "more than one base URL in one run"),
    "probe.ok": ("info", "the live probe passed: a generation answered; key, path, model, usage"),
    "request.rejected": ("error", "the gateway rejected the minimal probe generation (4xx)"),
    "request.unsupported_param": (
        "error",
        "the gateway rejects a parameter the run sends (seed, temperature, stream_options)",
    ),
    "model.substituted": ("warning", "another model than the one asked for answered (fallback)"),
    "gateway.deployment": (
        "error",
        "the gateway accepts the URL and key but its deployment/upstream for the model fails",
    ),
    "config.unreadable": ("error", "a client config file does not parse"),
}


FIX_FORMATS = ("json", "jsonc", "toml", "env")
OUTPUT_KEYS = ("code", "severity", "target", "message", "evidence", "fix")


@dataclass(frozen=True)
class FixAction:
    """A fix that is a mechanical edit of one key in one live config file.

    Why a structure and not just the fix text: the TUI can then show the exact diff and apply
    it through the byte-preserving editors (:mod:`eloledger.doctor.fixes`). ``value`` None
    means "remove the key"; ``format`` "jsonc" is JSON with comments (Gemini's settings.json).
    """

    path: Path
    format: str  # one of FIX_FORMATS
    keypath: tuple[str, ...]
    value: Any | None
    summary: str

    def __post_init__(self) -> None:
        if self.format not in FIX_FORMATS:
            raise ValueError(f"unknown fix format {self.format!r}")
        if not self.keypath:
            raise ValueError("a fix action needs a key path")


@dataclass
class Finding:
    code: str
    severity: str
    target: str  # what the finding is about: "claude-code", "profile:gw/codex", "ledger", a URL ...
    message: str
    evidence: str = ""  # the file:line, variable or HTTP exchange that shows it
    fix: str = ""  # the concrete change: the exact URL or variable to set
    # the fix as an edit eloledger can make (diff first); never part of the JSON output
    action: FixAction | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        from eloledger.redact import scrub

        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        self.target = scrub(self.target)
        self.message = scrub(self.message)
        self.evidence = scrub(self.evidence)
        self.fix = scrub(self.fix)

    def to_dict(self) -> dict[str, str]:
        return {key: getattr(self, key) for key in OUTPUT_KEYS}


def make(
    code: str,
    target: str,
    message: str,
    evidence: str = "",
    fix: str = "",
    *,
    severity: str | None = None,
    action: FixAction | None = None,
) -> Finding:
    """A finding with the code's default severity unless one is given."""
    return Finding(code, severity or CODES[code][0], target, message, evidence, fix, action)


def exit_status(findings: Iterable[Finding]) -> int:
    """0 clean (or info only), 1 warnings, 2 errors: the CLI's contract."""
    severities = {f.severity for f in findings}
    if "error" in severities:
        return 2
    return 1 if "warning" in severities else 0


def sort_key(finding: Finding) -> tuple[int, str, str]:
    return (SEVERITIES.index(finding.severity), finding.target, finding.code)
