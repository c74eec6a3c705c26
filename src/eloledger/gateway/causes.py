"""One cause for one failed answer, whoever reads it: the doctor's probe or the runner.

Why one module: the probe and the run read the same answers, and when they named different
causes ("the path does not exist" from one, "correct the base URL" from the other) neither was
believed. Both call :func:`read_answer`; its ``code`` is the doctor's finding code and its
``error_class`` the runner's row class (mapped to the same code by the runner's advice).

Beyond :func:`eloledger.gateway.error_kinds.read_error` (quota, keys, models, cooldown, timeouts) it
knows what the gateways wrap from BEHIND them, when the user's URL and key were accepted:

* LiteLLM: ``litellm.NotFoundError: … OpenAIException - Invalid URL (POST /chat/completions) …
  model group 'X' failed`` (a deployment ``api_base`` without ``/v1``), ``x-litellm-model-api-base``
  naming the upstream, ``litellm.UnsupportedParamsError: … ['seed']`` (``drop_params: false``),
  ``litellm.APIConnectionError`` (an upstream that does not answer).
* claude-code-router: ``Error from provider(NAME,MODEL: STATUS): {…}`` (its
  ``Providers[].api_base_url`` or ``api_key``), ``Provider 'nope' not found`` (an unknown
  ``provider,model``).
* one-api/new-api relays: ``upstream_error`` / ``bad_response_status_code`` bodies (a channel's
  base URL or key).

Pure functions of (status, body, text, headers, timing).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eloledger.gateway import error_kinds
from eloledger.gateway.wire import is_quota_error

LITELLM, CCR, RELAY = "LiteLLM", "claude-code-router", "one-api/new-api"

# The gateway's own config key for each part of a deployment, by gateway.
CONFIG_KEYS: dict[str, dict[str, str]] = {
    LITELLM: {
        "base": "model_list[].litellm_params.api_base (OpenAI-compatible upstreams need /v1)",
        "key": "model_list[].litellm_params.api_key; for its /anthropic pass-through, the "
        "proxy's ANTHROPIC_API_KEY",
        "model": "model_list[].litellm_params.model",
        "params": "litellm_settings.drop_params: true",
    },
    CCR: {
        "base": "Providers[].api_base_url (the FULL upstream URL, …/v1/chat/completions)",
        "key": "Providers[].api_key",
        "model": "Providers[].models and Router (as provider,model)",
        "params": "a transformer that drops it",
    },
    RELAY: {
        "base": "the channel's base URL (渠道 代理/Base URL)",
        "key": "the channel's key (渠道 密钥)",
        "model": "the channel's model list (渠道 模型)",
        "params": "the channel's parameter override",
    },
}

_CCR = re.compile(r"Error from provider\(([^,)]*),?([^:)]*):?\s*(\d{3})?\)", re.IGNORECASE)
_CCR_NO_PROVIDER = re.compile(r"Provider '([^']*)' not found", re.IGNORECASE)
_UNSUPPORTED = re.compile(
    r"UnsupportedParamsError|does not support (the )?param(eter)?s?|unsupported param(eter)?|"
    r"unknown (request )?param(eter)?|unrecognized request argument|"
    r"extra (inputs|fields) (are )?not permitted|"
    r"(?P<q>['\"`])(?P<name>seed|temperature|stream_options|top_p|max_tokens|tools)(?P=q)"
    r".{0,40}(not (supported|allowed|permitted)|unsupported|unknown)",
    re.IGNORECASE,
)
_PARAM_NAMES = re.compile(
    r"\b(seed|temperature|stream_options|top_p|max_tokens|max_output_tokens|tools|tool_choice|"
    r"logprobs|presence_penalty|frequency_penalty|stop|n)\b"
)
_UPSTREAM_404 = re.compile(r"invalid url|not found|404", re.IGNORECASE)
_UPSTREAM_DOWN = re.compile(
    r"APIConnectionError|connection (error|refused)|ECONNREFUSED|fetch failed|"
    r"ENOTFOUND|getaddrinfo|socket hang up|connect ETIMEDOUT|upstream connect error",
    re.IGNORECASE,
)
_RELAY_UPSTREAM = re.compile(
    r"upstream_error|bad_response_status_code|do_request_failed|one_api_error|new_api_error",
    re.IGNORECASE,
)
_RELAYED_STATUS = re.compile(r"status code (\d{3})", re.IGNORECASE)
_ANTHROPIC_REFUSALS = ("error", "authentication_error", "permission_error")
_PATH_404 = re.compile(r"invalid url|no route|cannot (post|get)|route .* not found", re.I)


@dataclass(frozen=True)
class Cause:
    """What an error answer means, for a finding and for a ledger row alike."""

    code: str  # the doctor's finding code (request.unsupported_param, gateway.deployment, ...)
    error_class: str  # the runner's row class (unsupported_param, deployment, ...)
    gateway: str | None = None  # which gateway wrapped it, when it says so
    detail: str = ""  # the part of the gateway's setup to change, or the parameter named
    params: tuple[str, ...] = ()  # the parameters a 400 quotes


# read_error's kinds -> (code, runner class)
_KINDS = {
    error_kinds.QUOTA: ("rate.quota", "quota"),
    error_kinds.UPSTREAM_AUTH: ("auth.upstream_key", "upstream_auth"),
    error_kinds.AUTH: ("auth.unauthorized", "auth"),
    error_kinds.MODEL: ("model.not_found", "not_found"),
    error_kinds.COOLDOWN: ("rate.limited", "cooldown"),
    error_kinds.GATEWAY_TIMEOUT: ("net.gateway_timeout", "gateway_timeout"),
}


def read_answer(
    status: int | None,
    body: Any,
    text: str = "",
    headers: Mapping[str, str] | None = None,
    *,
    elapsed_s: float | None = None,
    timeout_s: float | None = None,
) -> Cause | None:
    """The cause of a failed answer (status >= 400, or an error body under 200); None for a
    success. The first rule that matches wins: what the body says beats what the status says.
    """
    status = status or 0
    blob = error_kinds._blob(body, text)  # noqa: SLF001 - the same text read_error reads
    if status < 400 and not (isinstance(body, dict) and body.get("error")):
        return None
    gateway = which_gateway(blob, headers)
    wrapped = _wrapped(status, body, blob, headers, gateway)
    if wrapped is not None:
        return wrapped
    kind = error_kinds.read_error(status, body, text, elapsed_s=elapsed_s, timeout_s=timeout_s)
    if kind == error_kinds.UPSTREAM_AUTH:
        return Cause("auth.upstream_key", "upstream_auth", gateway, config_key(gateway, "key"))
    if kind is not None:
        code, cls = _KINDS[kind]
        return Cause(code, cls, gateway)
    if status < 400:
        return Cause("server.error", "stream_error", gateway)
    return _by_status(status, body, blob, gateway)


def rate_window_wait(gateway: str | None, now: float | None = None) -> float | None:
    """Seconds to wait out a gateway's rate window when its 429 carries no retry hint.

    LiteLLM's ``rpm``/``tpm`` limits count per wall-clock minute and its 429 on ``/v1/messages``
    says nothing of when to come back (docs/observed/gateways.md): the default backoff (~3.5 s over
    four attempts) gave up inside the window and failed tasks for good. Waiting for the next
    minute (plus a second) gets through. None for gateways whose window is unknown.
    """
    if gateway != LITELLM:
        return None
    now = time.time() if now is None else now
    return 60.0 - (now % 60.0) + 1.0


def which_gateway(blob: str, headers: Mapping[str, str] | None = None) -> str | None:
    """The gateway that wrapped an answer, by its own words or headers (None: cannot tell)."""
    names = {k.lower() for k in headers} if headers else set()
    if any(n.startswith("x-litellm-") for n in names) or "litellm" in blob.lower():
        return LITELLM
    if _CCR.search(blob) or _CCR_NO_PROVIDER.search(blob):
        return CCR
    if _RELAY_UPSTREAM.search(blob) or "x-oneapi-request-id" in names or "new-api" in blob:
        return RELAY
    return None


def unsupported_params(blob: str) -> tuple[str, ...]:
    """The request parameters a 400 names (``['seed']``), in order, each once."""
    found: list[str] = []
    for name in _PARAM_NAMES.findall(blob):
        if name not in found:
            found.append(name)
    return tuple(found)


def _wrapped(
    status: int, body: Any, blob: str, headers: Mapping[str, str] | None, gateway: str | None
) -> Cause | None:
    """Faults behind the gateway: the user's URL and key were accepted, its upstream failed."""
    refused = error_kinds._AUTH_WORDS.search(blob)  # noqa: SLF001
    if status in (401, 403) and refused and _litellm_forwarded(headers, body):
        return Cause("auth.upstream_key", "upstream_auth", LITELLM, config_key(LITELLM, "key"))
    if status in (400, 422) and _UNSUPPORTED.search(blob):
        params = unsupported_params(blob.split("To drop these")[0])
        return Cause("request.unsupported_param", "unsupported_param", gateway, ", ".join(params),
                     params)  # fmt: skip
    if gateway == CCR and _CCR_NO_PROVIDER.search(blob):
        return Cause("model.not_found", "not_found", CCR, config_key(CCR, "model"))
    ccr = _CCR.search(blob)
    relayed = _RELAYED_STATUS.search(blob) if gateway == RELAY else None
    upstream = ccr.group(3) if ccr else relayed.group(1) if relayed else None
    litellm_group = gateway == LITELLM and "model group" in blob.lower()
    if litellm_group or ccr or (gateway == RELAY and _RELAY_UPSTREAM.search(blob)):
        upstream_status = int(upstream) if upstream else status
        if _UPSTREAM_DOWN.search(blob):
            return Cause("gateway.deployment", "deployment", gateway, config_key(gateway, "base"))
        if upstream_status == 404 and _UPSTREAM_404.search(blob) and not _model_said(blob):
            return Cause("gateway.deployment", "deployment", gateway, config_key(gateway, "base"))
        if upstream_status in (401, 403) and error_kinds._AUTH_WORDS.search(blob):  # noqa: SLF001
            return Cause("auth.upstream_key", "upstream_auth", gateway, config_key(gateway, "key"))
    if gateway == LITELLM and _UPSTREAM_DOWN.search(blob) and status >= 500:
        return Cause("gateway.deployment", "deployment", gateway, config_key(gateway, "base"))
    return None


def _litellm_forwarded(headers: Mapping[str, str] | None, body: Any) -> bool:
    """LiteLLM called its upstream and forwarded the upstream's own answer (its /anthropic
    pass-through): ``x-litellm-model-api-base`` says so on whole answers; on streams only
    ``x-litellm-call-id`` comes, beside the upstream's verbatim Anthropic error body. LiteLLM's
    own refusals of the user's key carry neither header (observed with 1.108.7)."""
    if headers is None:
        return False
    if headers.get("x-litellm-model-api-base"):
        return True
    # the whole body ({"type": "error", ...}), or its inner error as the openai SDK keeps it
    verbatim = isinstance(body, dict) and body.get("type") in _ANTHROPIC_REFUSALS
    return bool(headers.get("x-litellm-call-id")) and verbatim


def _model_said(blob: str) -> bool:
    return bool(error_kinds._MODEL.search(blob)) and not error_kinds._INVALID_URL.search(blob)  # noqa: SLF001


def config_key(gateway: str | None, part: str) -> str:
    """The gateway's own setting for one part of a deployment (base, key, model, params)."""
    if gateway is None:
        return {"base": "the upstream base URL", "key": "the upstream key",
                "model": "the model mapping", "params": "drop_params"}[part]  # fmt: skip
    return CONFIG_KEYS[gateway][part]


def _by_status(status: int, body: Any, blob: str, gateway: str | None) -> Cause:
    """Nothing in the body said more: the status decides (the same for probe and run)."""
    if status == 401:
        return Cause("auth.unauthorized", "auth", gateway)
    if status == 402:
        return Cause("rate.quota", "quota", gateway)
    if status == 403:
        return Cause("auth.forbidden", "permission", gateway)
    if status == 404:  # read_error found no model words: a model only when the body says so
        if "model" in blob.lower() and not _PATH_404.search(blob):
            return Cause("model.not_found", "not_found", gateway)
        return Cause("path.not_found", "path", gateway)
    if status == 408:
        return Cause("net.timeout", "timeout", gateway)
    if status == 429:
        quota = is_quota_error(status, blob)
        return Cause("rate.quota" if quota else "rate.limited",
                     "quota" if quota else "rate_limit", gateway)  # fmt: skip
    if status == 529 or (status == 503 and "overload" in blob.lower()):
        return Cause("server.error", "overloaded", gateway)
    if status >= 500:
        return Cause("server.error", "server", gateway)
    if status in (400, 413, 422):
        return Cause("request.rejected", "bad_request", gateway)
    return Cause("request.rejected", "client_error", gateway)
