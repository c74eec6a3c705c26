"""What a gateway's error answer means, read from its body as well as its status.

Why apart: gateways eloledger did not write (the LiteLLM proxy, one-api/new-api relays, key
resellers) do not follow OpenAI's statuses. LiteLLM without a database answers a wrong key
with ``400 No connected db.``, an unknown model with 400, its own upstream's rejected key with
401, and after any upstream failure ``429 ... in cooldown``; relays answer a bad token with
401, 403 or 400 (``无效的令牌``), exhausted credit with 401/402/403 (``额度已用尽``), and a model
no channel serves with 503 ``无可用渠道``. The doctor's probes and the runner's classifier
both read answers through :func:`read_error`, so the two always give the same cause.

Pure functions of (status, body text, headers, timing): no network, no findings.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Any

import orjson

# Reading kinds, in the order they are tried (the first that matches wins).
QUOTA, UPSTREAM_AUTH, AUTH, MODEL, COOLDOWN, GATEWAY_TIMEOUT = (
    "quota",
    "upstream_auth",
    "auth",
    "model",
    "cooldown",
    "gateway_timeout",
)

# Credit or quota used up: retrying cannot help. At 401/402/403 relays say it in words; a 429
# that says quota, billing or credit is the same (OpenAI's insufficient_quota).
_QUOTA = re.compile(
    r"insufficient_quota|insufficient_user_quota|pre_consume_token_quota_failed|"
    r"quota[ _]?(is )?not[ _]?enough|quota exceeded|exceeded your current quota|out of credits|"
    r"insufficient (balance|credit)|credit balance is too low|billing|"
    r"quota (is )?(exhausted|used up)|TokenStatusExhausted|"
    r"余额不足|额度不足|额度已用尽|额度用尽|欠费",
    re.IGNORECASE,
)
_QUOTA_429 = re.compile(r"quota|billing|credit", re.IGNORECASE)
# The user's key is refused (whatever the status): OpenAI, Anthropic, Gemini, one-api/new-api,
# LiteLLM without its database (it can only check the master key then).
_BAD_KEY = re.compile(
    r"invalid[ _-]?(api[ _-]?)?(key|token)|incorrect api key|api[ _]key[ _](is )?invalid|"
    r"api_key_invalid|authentication_error|unauthori[sz]ed|no connected db|no_db_connection|"
    r"missing (api )?key|no api key|invalid authentication|token (is )?expired|"
    r"无效的令牌|未提供令牌|令牌已过期|令牌状态不可用|令牌不存在|无效的密钥",
    re.IGNORECASE,
)
# The gateway's call to its own upstream was refused: LiteLLM wraps the provider's exception
# ("litellm.AuthenticationError: ... OpenAIException - Incorrect API key ... model group").
_UPSTREAM = re.compile(r"litellm\.|\b[A-Za-z]+Exception - |model group '|upstream", re.IGNORECASE)
_AUTH_WORDS = re.compile(r"authenticat|api key|unauthori[sz]ed|invalid.{0,12}key", re.IGNORECASE)
# The model is unknown to the gateway, or no channel serves it.
_MODEL = re.compile(
    r"invalid model name|model_not_found|no available channel|无可用渠道|模型不存在|"
    r"unknown model|model (\S+ )?(is )?not (found|supported|available|exist)|"
    r"model[` '\"]?[^ ]* does not exist|the model .{0,80} does not exist|not a valid model",
    re.IGNORECASE,
)
_COOLDOWN = re.compile(r"cooldown|cool[ -]down|in_cooldown", re.IGNORECASE)
_TIMEOUT_WORDS = re.compile(r"litellm\.Timeout|request timed out|upstream timed out", re.I)
_INVALID_URL = re.compile(r"invalid url", re.IGNORECASE)

# Gateways name the wait differently: retry-after(-ms) (OpenAI, Anthropic, LiteLLM's cooldown);
# LiteLLM forwards the upstream's as llm_provider-retry-after(-ms) and uses that name for its
# own rpm limit.
RETRY_AFTER_HEADERS = (
    ("retry-after-ms", 0.001),
    ("llm_provider-retry-after-ms", 0.001),
    ("retry-after", 1.0),
    ("llm_provider-retry-after", 1.0),
    ("x-ratelimit-reset-after", 1.0),
)
# Request ids a gateway puts on its answers, most specific first.
REQUEST_ID_HEADERS = ("x-request-id", "x-litellm-call-id", "request-id", "x-oneapi-request-id")

# A 408/504 that arrives before this share of the client's own timeout is the gateway's.
_EARLY = 0.8


def body_of(text: str | bytes | None) -> Any:
    """The parsed JSON body, or None (plain text, HTML, empty)."""
    if not text:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def message_of(body: Any, text: str = "") -> str:
    """The gateway's own error message (type: message), whatever shape it came in."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            message = str(err.get("message") or err.get("msg") or "")
            kind = err.get("type") or err.get("code") or err.get("status")
            if message and kind and str(kind) not in message:
                return f"{kind}: {message}"
            return message or str(kind or "")
        if isinstance(err, str):
            return err
        return str(body.get("message") or body.get("msg") or "")
    return " ".join(str(text or "").split())[:300]


def read_error(
    status: int | None,
    body: Any,
    text: str = "",
    *,
    elapsed_s: float | None = None,
    timeout_s: float | None = None,
) -> str | None:
    """What an error answer means: one of the kinds above, or None (go by the status)."""
    status = status or 0
    blob = _blob(body, text)
    if 200 <= status < 300 and isinstance(body, dict) and body.get("error"):
        # classic one-api answers token errors with HTTP 200 and an error body
        for kind, pattern in ((QUOTA, _QUOTA), (AUTH, _BAD_KEY), (MODEL, _MODEL)):
            if pattern.search(blob):
                return kind
        return None
    if status < 400:
        return None
    if status == 429 and _COOLDOWN.search(blob):
        return COOLDOWN
    if status in (401, 402, 403) and _QUOTA.search(blob):
        return QUOTA
    if status == 429 and (_QUOTA.search(blob) or _QUOTA_429.search(blob)):
        return QUOTA
    if status == 402:
        return QUOTA
    if _UPSTREAM.search(blob) and _AUTH_WORDS.search(blob) and status in (401, 403, 500, 502):
        return UPSTREAM_AUTH
    if status == 401 or (status in (400, 403) and _BAD_KEY.search(blob)):
        return AUTH
    if status == 500 and blob.strip().lower() == "internal server error" and not body:
        return None
    if _MODEL.search(blob) and not _INVALID_URL.search(blob):
        return MODEL
    if status in (408, 504) or _TIMEOUT_WORDS.search(blob):
        early = elapsed_s is not None and timeout_s is not None and elapsed_s < timeout_s * _EARLY
        if early or _TIMEOUT_WORDS.search(blob):
            return GATEWAY_TIMEOUT
    return None


def from_upstream(body: Any, text: str = "") -> bool:
    """The gateway relays its own upstream's failure (LiteLLM's ``model group 'x' failed``)."""
    return bool(_UPSTREAM.search(_blob(body, text)))


def retry_after_s(headers: Mapping[str, str] | Any) -> float | None:
    """Seconds to wait, from any of the names gateways use (seconds, ms or an HTTP date)."""
    for name, scale in RETRY_AFTER_HEADERS:
        value = headers.get(name)
        if not value:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        if scale == 1.0:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                continue
            return max(0.0, when.timestamp() - time.time())
    return None


def retry_after_hint(headers: Mapping[str, str] | Any) -> str:
    """How the wait was named, for a finding: 'llm_provider-retry-after: 60 s' or 'no ...'."""
    for name, scale in RETRY_AFTER_HEADERS:
        value = headers.get(name)
        if value:
            unit = "ms" if scale != 1.0 else "s"
            shown = "Retry-After" if name == "retry-after" else name
            return f"{shown}: {value} {unit}"
    return "no Retry-After header (under any of its names)"


def request_id(headers: Mapping[str, str] | Any) -> str | None:
    """The gateway's id for this request (to quote to its operator), if it sent one."""
    for name in REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return str(value)[:120]
    return None


def _blob(body: Any, text: str) -> str:
    if isinstance(body, (dict, list)):
        return orjson.dumps(body).decode("utf-8", "replace")[:4000]
    return str(text or "")[:4000]
