"""The profile model and how each client's base URL derives from one gateway root.

The derivation follows docs/observed/clients.md: Anthropic-style clients (Claude Code, the Anthropic
SDK) append ``/v1/messages`` so they take the root; the OpenAI SDK and Codex append
``/chat/completions`` or ``/responses`` so they need ``/v1``; Gemini CLI appends
``/v1beta/models/...`` so it takes the root. Per-client overrides win over the derivation
because real gateways often serve each protocol under a different root.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from eloledger.clientfacts import (
    CLAUDE_CODE,
    CODEX,
    GEMINI_CLI,
    OLD_CLIENT_NAMES,
    URL_FAMILY,
    client_name,
)
from eloledger.errors import UserError
from eloledger.redact import mask_url, register_secret
from eloledger.textsafe import refuse_control, visible

CLIENTS = (CLAUDE_CODE, CODEX, GEMINI_CLI, "openai", "anthropic")
AUTH_FORMS = ("bearer", "x-api-key")
WIRE_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
SIM_PROFILE = "sim"  # the profile name that means the embedded simulator, never a gateway
MODEL_ROLES = ("haiku", "sonnet", "opus")  # Claude Code's ANTHROPIC_DEFAULT_<ROLE>_MODEL

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_RE = ENV_RE
_PROVIDER_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Variables `eloledger env` itself sets to something that is not a key: a key read from one of
# them would be the URL (or model) after eval. The key variables (OPENAI_API_KEY, …) are fine:
# a profile that reads its key from one leaves it alone and points the others at it.
WRITTEN_VARS = frozenset(
    {
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "ANTHROPIC_MODEL",
        "GEMINI_MODEL",
        "ELOLEDGER_PROFILE",
        *(f"ANTHROPIC_DEFAULT_{role.upper()}_MODEL" for role in MODEL_ROLES),
    }
)
_VAR_FIX = "give the NAME of the variable that holds the key, e.g. OPENROUTER_API_KEY"


def check_var(name: object, where: str, field_name: str = "key_env") -> None:
    """Refuse anything but a plain shell variable name, and the variables eloledger writes.

    Why here, where it is read: the name is printed unquoted into ``export`` lines that users
    ``eval``; ``X=1;touch /tmp/PWN`` must never get that far.
    """
    if not isinstance(name, str) or not ENV_RE.match(name):
        shown = visible(name) if isinstance(name, str) else name
        raise UserError(
            f"{where}: {field_name} {shown!r} is not a variable name (letters, digits and '_', "
            "not starting with a digit)",
            fix=_VAR_FIX,
        )
    if name in WRITTEN_VARS:
        raise UserError(
            f"{where}: {field_name} {name!r} is a variable eloledger itself sets (to a URL or "
            "a model, not a key); after eval every key variable would hold that",
            fix=_VAR_FIX,
        )


ANTHROPIC_CLIENTS = frozenset({CLAUDE_CODE, "anthropic"})


def default_wire(clients: list[str], wire_api: str) -> str:
    """The runner's wire for a profile whose clients are given and no wire was asked for.

    Why: a gateway that serves only Claude Code (claude-code-router serves ``/v1/messages``
    only) stored with the OpenAI default made the doctor probe chat completions on it and the
    runner call a route that does not exist. A profile whose clients all speak Anthropic
    takes the anthropic wire; anything else keeps ``wire_api``.
    """
    if clients and set(clients) <= ANTHROPIC_CLIENTS and wire_api == "openai-chat":
        return "anthropic"
    return wire_api


@dataclass
class ClientOverride:
    """Settings for one client that differ from what the profile derives."""

    base_url: str | None = None
    model: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # client-specific, e.g. env vars


@dataclass
class Profile:
    name: str
    base_url: str  # the gateway root, without /v1 (e.g. https://openrouter.ai/api)
    key_env: str | None = None  # name of the environment variable that holds the key
    key_in_secrets: bool = False  # the key lives in the 0600 secrets file instead
    auth: str = "bearer"  # Anthropic-side header form: bearer (AUTH_TOKEN) | x-api-key (API_KEY)
    model: str | None = None
    models: dict[str, str] = field(default_factory=dict)  # e.g. {"haiku": "...", "sonnet": "..."}
    wire_api: str = "openai-chat"  # what the runner speaks by default
    overrides: dict[str, ClientOverride] = field(default_factory=dict)
    description: str = ""
    clients: list[str] = field(default_factory=list)  # clients the gateway serves; empty = all

    def client_base_url(self, client: str) -> str:
        """The base URL this client must be given for this gateway."""
        if client not in CLIENTS:
            raise ValueError(f"unknown client {client!r}; expected one of {', '.join(CLIENTS)}")
        override = self.overrides.get(client)
        if override and override.base_url:
            return override.base_url
        return derive_base_url(self.base_url, client)

    def client_model(self, client: str) -> str | None:
        override = self.overrides.get(client)
        if override and override.model:
            return override.model
        return self.model

    def serves(self, client: str) -> bool:
        """Whether the gateway speaks this client's protocol (unknown = assume yes)."""
        return not self.clients or client in self.clients

    def urls(self) -> list[str]:
        """The gateway root and every per-client base URL override."""
        return [self.base_url, *(o.base_url for o in self.overrides.values() if o.base_url)]

    def validate(
        self, where: str = "profile", *, stored: bool = False, lines: dict[str, int] | None = None
    ) -> None:
        """Refuse a profile that would write a broken config (see docs/observed/clients.md).

        ``stored``: a profile read back from the file; a password in its URL is registered
        for scrubbing instead of refused, so the store still lists it (masked). ``lines``:
        where each field sits in that file (``"codex.env_key"`` -> 12), for ``file:line``.
        """

        def at(field_name: str) -> str:
            line = (lines or {}).get(field_name) or (lines or {}).get("")
            if not line or ": " not in where:
                return where
            path, rest = where.split(": ", 1)
            return f"{path}:{line}: {rest}"

        if not _NAME_RE.match(self.name):
            raise UserError(
                f"{where}: bad profile name {visible(self.name)!r}",
                fix="use letters, digits, '.', '_' or '-' (up to 64 characters)",
            )
        if self.key_env is not None:
            check_var(self.key_env, at("key_env"))
        texts = {"model": self.model, "description": self.description}
        texts.update({f"models.{role}": m for role, m in self.models.items()})
        for client, override in self.overrides.items():
            texts[f"{client}.model"] = override.model
            for name, value in override.extra.items():
                texts[f"{client}.{name}"] = value
                refuse_control(name, at(f"{client}.{name}"))
        for name, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise UserError(f"{at(name)}: {name} must be a string")
            refuse_control(value or "", f"{at(name)}: {name}")
        codex = self.overrides.get("codex")
        if codex and "env_key" in codex.extra:
            check_var(codex.extra["env_key"], at("codex.env_key"), "codex.env_key")
        for name in ("provider_id", "user_provider"):
            value = codex.extra.get(name) if codex else None
            if value is not None and not _PROVIDER_ID_RE.match(value):
                raise UserError(
                    f"{at('codex.' + name)}: codex.{name} {visible(value)!r} is not a provider id",
                    fix="use letters, digits, '_' or '-'",
                )
        check_url(self.base_url, f"{where}: base_url", allow_credentials=stored)
        for client, override in self.overrides.items():
            if client not in CLIENTS:
                raise UserError(
                    f"{where}: unknown client section {client!r}",
                    fix=f"use one of {', '.join(CLIENTS)}",
                )
            if override.base_url:
                check_url(
                    override.base_url, f"{where}: {client}.base_url", allow_credentials=stored
                )
        if self.auth not in AUTH_FORMS:
            raise UserError(f"{where}: auth {self.auth!r}", fix=f"use {' or '.join(AUTH_FORMS)}")
        if self.wire_api not in WIRE_APIS:
            raise UserError(
                f"{where}: wire_api {self.wire_api!r}", fix=f"use one of {', '.join(WIRE_APIS)}"
            )
        for role in self.models:
            if role not in MODEL_ROLES:
                raise UserError(
                    f"{where}: unknown model role {role!r}", fix=f"use {', '.join(MODEL_ROLES)}"
                )
        for client in self.clients:
            if client not in CLIENTS:
                raise UserError(f"{where}: unknown client {client!r} in clients")

    # --- TOML table <-> Profile -------------------------------------------------------------

    def to_table(self) -> dict[str, Any]:
        """Plain data for the profiles file (no key: only where to find it)."""
        table: dict[str, Any] = {"base_url": self.base_url}
        if self.description:
            table["description"] = self.description
        if self.key_env:
            table["key_env"] = self.key_env
        if self.key_in_secrets:
            table["key_in_secrets"] = True
        table["auth"] = self.auth
        table["wire_api"] = self.wire_api
        if self.model:
            table["model"] = self.model
        if self.clients:
            table["clients"] = list(self.clients)
        if self.models:
            table["models"] = dict(self.models)
        for client in CLIENTS:
            override = self.overrides.get(client)
            if not override:
                continue
            sub: dict[str, Any] = {}
            if override.base_url:
                sub["base_url"] = override.base_url
            if override.model:
                sub["model"] = override.model
            sub.update(override.extra)
            if sub:
                table[client] = sub
        return table

    @classmethod
    def from_table(
        cls,
        name: str,
        table: dict[str, Any],
        where: str = "profiles",
        lines: dict[str, int] | None = None,
    ) -> Profile:
        table, lines = _in_current_names(name, table, where, lines)
        known = {
            "base_url", "description", "key_env", "key_in_secrets", "auth", "wire_api",
            "model", "models", "clients", *CLIENTS,
        }  # fmt: skip
        unknown = sorted(set(table) - known)
        if unknown:
            raise UserError(
                f"{where}: profile {name!r} has unknown field(s) {', '.join(unknown)}",
                fix=f"known fields: {', '.join(sorted(known))}",
            )
        if not isinstance(table.get("base_url"), str):
            raise UserError(f"{where}: profile {name!r} has no base_url")
        overrides: dict[str, ClientOverride] = {}
        for client in CLIENTS:
            sub = table.get(client)
            if sub is None:
                continue
            if not isinstance(sub, dict):
                raise UserError(f"{where}: [profiles.{name}.{client}] must be a table")
            extra = {k: str(v) for k, v in sub.items() if k not in ("base_url", "model")}
            overrides[client] = ClientOverride(
                base_url=sub.get("base_url"), model=sub.get("model"), extra=extra
            )
        profile = cls(
            name=name,
            base_url=str(table["base_url"]),
            key_env=table.get("key_env"),
            key_in_secrets=bool(table.get("key_in_secrets", False)),
            auth=str(table.get("auth", "bearer")),
            model=table.get("model"),
            models={str(k): str(v) for k, v in dict(table.get("models", {})).items()},
            wire_api=str(table.get("wire_api", "openai-chat")),
            overrides=overrides,
            description=str(table.get("description", "")),
            clients=[client_name(str(c)) for c in table.get("clients", [])],
        )
        profile.validate(f"{where}: [profiles.{name}]", stored=True, lines=lines)
        return profile


def _in_current_names(
    name: str, table: dict[str, Any], where: str, lines: dict[str, int] | None
) -> tuple[dict[str, Any], dict[str, int] | None]:
    """A profile table stored before the client names changed (``[profiles.gw.claude]``) with
    its client sections under the current names, and its field lines (``claude.model`` -> 7)
    to match, so errors still point at the right line."""
    table = dict(table)
    for old, new in OLD_CLIENT_NAMES.items():
        if old not in table:
            continue
        if new in table:
            raise UserError(
                f"{where}: profile {name!r} has both [{old}] and [{new}], the same client",
                fix=f"merge them into [profiles.{name}.{new}]",
            )
        table[new] = table.pop(old)
    if lines:
        lines = {_field_in_current_names(field_name): n for field_name, n in lines.items()}
    return table, lines


def _field_in_current_names(dotted: str) -> str:
    head, dot, rest = dotted.partition(".")
    return client_name(head) + dot + rest


def check_url(url: str, where: str, *, allow_credentials: bool = False) -> None:
    """A base URL every client can join: http(s), a host, a valid port, nothing to strip, no
    query string or fragment, and no ``user:password@`` (a secret outside the key store).

    ``allow_credentials`` is for profiles already stored that way: they still load (masked
    on display, their password registered for scrubbing) but cannot be switched to.
    """
    shown = repr(mask_url(url))
    if url != url.strip():
        raise UserError(f"{where}: {shown} has spaces around it", fix="remove them")
    odd = next((ch for ch in url if ch.isspace() or ord(ch) < 32 or ord(ch) == 127), None)
    if odd is not None:
        kind = "whitespace" if odd.isspace() else "a control character"
        raise UserError(
            f"{where}: {shown} contains {kind} ({odd!r})", fix="give the URL on one line, e.g. "
            "https://gw.example/api"
        )  # fmt: skip
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UserError(
            f"{where}: {shown} is not a valid URL ({exc})", fix="give e.g. https://gw.example/api"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"{where}: {shown} is not an http(s) URL with a host",
            fix="give e.g. https://gw.example/api",
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port <= 65535:
        raise UserError(
            f"{where}: {shown} has a bad port (a port is 1-65535)", fix="fix the number after ':'"
        )
    if "?" in url or "#" in url:
        raise UserError(
            f"{where}: {shown} has a query string or fragment; every client would build a broken "
            "path from it",
            fix="remove everything from '?' or '#'",
        )
    if allow_credentials:
        register_secret(parts.password)  # scrubbed from every output from now on
    elif parts.username is not None or parts.password is not None:
        raise UserError(
            f"{where}: {shown} carries a user name or password before '@'; eloledger would "
            "store it in profiles.toml and write it into every client config in clear",
            fix="remove 'user:password@' and give the secret as the key: --key-env VAR (a "
            "variable holding it) or --key-stdin (the 0600 secrets file)",
        )


def derive_base_url(root: str, client: str) -> str:
    """Turn a gateway root into the base URL one client expects (see module docstring)."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}")
    root = root.strip().rstrip("/")
    family = URL_FAMILY[client]
    if family == "openai":
        return root if root.endswith("/v1") else root + "/v1"
    for suffix in ("/v1beta", "/v1") if family == "gemini" else ("/v1",):
        if root.endswith(suffix):
            return root[: -len(suffix)]
    return root
