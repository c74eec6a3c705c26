"""One cause for one answer: the doctor's probe and the runner read the same gateway answers
through :func:`eloledger.gateway.causes.read_answer` and must name the same cause code.

The strict gateway answers every generation with a canned answer in the shape a real gateway
sends (LiteLLM 1.110, claude-code-router 2.0, one-api/new-api relays; docs/observed/gateways.md); the
probe (raw HTTP) and the runner's provider (the real openai SDK) both ask it.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from eloledger.doctor.probes import ProbeTarget, probe
from eloledger.runner.outcome import cause_code
from eloledger.runner.providers import Provider
from strict_gateway import GOOD_KEY, GatewayConfig, serve

_GROUP = "LiteLLM: model group 'gpt-strict' failed with the error above. No fallback was attempted."


def _openai(message: str, kind: str | None = None, code: str | None = None) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


# (id, status, content type, body, headers, the cause code both must name)
ANSWERS = [
    ("litellm-api-base-without-v1", 404, "application/json", _openai(
        "litellm.NotFoundError: NotFoundError: OpenAIException - Invalid URL (POST "
        f"/chat/completions). Received Model Group=gpt-strict {_GROUP}", None, "404"),
     {"x-litellm-model-api-base": "http://127.0.0.1:9"}, "gateway.deployment"),
    ("litellm-upstream-key", 401, "application/json", _openai(
        "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key "
        f"provided: sk-upst**** {_GROUP}", "auth_error", "401"), {}, "auth.upstream_key"),
    ("litellm-drop-params-false", 400, "application/json", _openai(
        "litellm.UnsupportedParamsError: anthropic does not support parameters: ['seed'], for "
        "model=claude-x. To drop these, set `litellm.drop_params=True` or for proxy:\n\n"
        "`litellm_settings:\n drop_params: true`\n.", None, "400"), {},
     "request.unsupported_param"),
    ("litellm-unknown-model", 400, "application/json", _openai(
        "/chat/completions: Invalid model name passed in model=gpt-strict. Call `/v1/models` to "
        "view available models for your key.", "invalid_request_error", "400"), {},
     "model.not_found"),
    ("litellm-no-database", 400, "application/json", _openai(
        "No connected db.", "no_db_connection", "400"), {}, "auth.unauthorized"),
    ("litellm-upstream-down", 500, "application/json", _openai(
        "litellm.APIConnectionError: APIConnectionError: OpenAIException - Connection error. "
        + _GROUP, None, "500"), {}, "gateway.deployment"),
    ("litellm-passthrough-upstream-key", 401, "application/json", json.dumps(
        {"type": "error", "error": {"type": "authentication_error",
                                    "message": "invalid x-api-key"}}),
     {"x-litellm-call-id": "c1", "x-litellm-model-api-base": "http://127.0.0.1:9/v1/messages"},
     "auth.upstream_key"),
    ("litellm-passthrough-stream-upstream-key", 401, "application/json", json.dumps(
        {"type": "error", "error": {"type": "authentication_error",
                                    "message": "invalid x-api-key"}}),
     {"x-litellm-call-id": "c1"}, "auth.upstream_key"),  # a stream: only the call id comes
    ("ccr-api-base-url-without-path", 404, "application/json", _openai(
        'Error from provider(sim,sim-small: 404): {"error":{"message":"Invalid URL (POST '
        '/v1)","type":"invalid_request_error"}}', "api_error", "provider_response_error"), {},
     "gateway.deployment"),
    ("ccr-provider-key", 401, "application/json", _openai(
        'Error from provider(sim,sim-small: 401): {"error":{"message":"Incorrect API key '
        'provided","type":"invalid_request_error","code":"invalid_api_key"}}', "api_error",
        "provider_response_error"), {}, "auth.upstream_key"),
    ("ccr-unknown-provider", 500, "application/json", _openai(
        "Provider 'nope' not found", "api_error", "provider_not_found"), {}, "model.not_found"),
    ("ccr-client-key", 401, "text/plain", "Invalid API key", {}, "auth.unauthorized"),
    ("new-api-no-channel", 503, "application/json", _openai(
        "当前分组 default 下对于模型 gpt-strict 无可用渠道", "new_api_error",
        "model_not_found"), {}, "model.not_found"),
    ("new-api-upstream-404", 500, "application/json", _openai(
        "bad response status code 404", "upstream_error", "bad_response_status_code"), {},
     "gateway.deployment"),
    ("one-api-quota", 403, "application/json", _openai(
        "用户额度不足, 剩余额度: ¥0.0000", "one_api_error", "insufficient_user_quota"), {},
     "rate.quota"),
    ("plain-rate-limit", 429, "application/json", _openai(
        "Rate limit reached", "requests", "rate_limit_exceeded"), {"retry-after": "1"},
     "rate.limited"),
]  # fmt: skip


def _runner_code(base: str) -> tuple[str, str]:
    async def go() -> tuple[str, str]:
        provider = Provider(
            wire_api="openai-chat", base_url=base, api_key=GOOD_KEY, model="gpt-strict",
            timeout_s=10,
        )  # fmt: skip
        try:
            res = await provider.call("Say OK.", max_tokens=8, temperature=0.0, seed=1)
        finally:
            await provider.close()
        assert res.status == "error", res
        return cause_code(res.error_class or ""), res.error or ""

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "ctype", "body", "headers", "code"),
    [a[1:] for a in ANSWERS],
    ids=[a[0] for a in ANSWERS],
)
def test_the_probe_and_the_runner_name_the_same_cause(
    status: int, ctype: str, body: str, headers: dict[str, str], code: str
) -> None:
    with serve(GatewayConfig(canned=(status, ctype, body, headers))) as gw:
        result = probe(ProbeTarget("gw", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"))
        runner, error = _runner_code(gw.v1)
    doctor = {f.code for f in result.findings if f.severity == "error"}
    assert doctor == {code}, result.findings
    assert runner == code, error


def test_behind_the_gateway_names_the_gateways_own_setting() -> None:
    named = {a[0]: a for a in ANSWERS}
    litellm, ccr = named["litellm-api-base-without-v1"], named["ccr-api-base-url-without-path"]
    for answer, key in ((litellm, "litellm_params.api_base"), (ccr, "Providers[].api_base_url")):
        with serve(GatewayConfig(canned=answer[1:5])) as gw:
            result = probe(ProbeTarget("gw", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict", None,
                                       "$GW_KEY"))  # fmt: skip
        finding = next(f for f in result.findings if f.code == "gateway.deployment")
        assert "accepts the base URL and $GW_KEY" in finding.message
        assert key in finding.fix and "need no change" in finding.fix
        assert "does not exist" not in finding.message


def _retry_after(canned: tuple[int, str, str, dict[str, str]]) -> float | None:
    async def go() -> float | None:
        with serve(GatewayConfig(canned=canned)) as gw:
            provider = Provider(wire_api="openai-chat", base_url=gw.v1, api_key=GOOD_KEY,
                                model="gpt-strict")  # fmt: skip
            try:
                res = await provider.call("hi", max_tokens=8, temperature=0.0)
            finally:
                await provider.close()
        assert res.error_class == "rate_limit", res
        return res.retry_after_s

    return asyncio.run(go())


def test_a_litellm_rate_limit_without_a_hint_waits_for_its_minute_window() -> None:
    rpm = _openai("litellm.RateLimitError: Deployment over defined rpm limit=1. "
                  "current usage=1.", None, "429")  # fmt: skip
    wait = _retry_after((429, "application/json", rpm, {"x-litellm-call-id": "c1"}))
    assert wait is not None and 1.0 <= wait <= 61.0
    plain = _openai("Rate limit reached", "requests", "rate_limit_exceeded")
    assert _retry_after((429, "application/json", plain, {})) is None  # backoff as before
