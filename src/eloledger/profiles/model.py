"""The profile model and how each client's base URL derives from one gateway root.

The derivation follows facts/clients.md: Anthropic-style clients (Claude Code, the Anthropic
SDK) append ``/v1/messages`` so they take the root; the OpenAI SDK and Codex append
``/chat/completions`` or ``/responses`` so they need ``/v1``; Gemini CLI appends
``/v1beta/models/...`` so it takes the root. Per-client overrides win over the derivation
because real gateways often serve each protocol under a different root.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CLIENTS = ("claude", "codex", "gemini", "openai", "anthropic")
AUTH_FORMS = ("bearer", "x-api-key")
WIRE_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")

# Which clients take the root as is and which append /v1.
_ROOT_CLIENTS = {"claude", "anthropic", "gemini"}
_V1_CLIENTS = {"codex", "openai"}


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


def derive_base_url(root: str, client: str) -> str:
    """Turn a gateway root into the base URL one client expects (see module docstring)."""
    root = root.strip().rstrip("/")
    if client in _V1_CLIENTS:
        return root if root.endswith("/v1") else root + "/v1"
    if client in _ROOT_CLIENTS:
        return root[: -len("/v1")] if root.endswith("/v1") else root
    raise ValueError(f"unknown client {client!r}")
