"""The doctor and runner against a one-api/new-api style relay (tests/relay_emulator.py): the doctor and the
runner read the relay's error body, in Chinese or English, not only its status.

Each case goes through real HTTP on 127.0.0.1: the doctor's probe, and the runner's provider
(the real openai SDK). The doctor and the runner must name the same cause.
"""

from __future__ import annotations

import asyncio

import pytest

from eloledger.doctor.probes import ProbeTarget, probe
from eloledger.runner.providers import Provider
from relay_emulator import EXHAUSTED, GOOD, NO_USER_QUOTA, RelayConfig, serve


def _probe(relay, key: str = GOOD, model: str = "gpt-4o-mini", timeout: float = 5.0):  # noqa: ANN001
    return probe(
        ProbeTarget("relay", relay.v1, "openai-chat", key, model, "bearer", "$K"), timeout=timeout
    )


def _call(relay, key: str = GOOD, model: str = "gpt-4o-mini", max_tokens: int = 16):  # noqa: ANN001
    async def go():  # noqa: ANN202
        provider = Provider(
            wire_api="openai-chat", base_url=relay.v1, api_key=key, model=model, timeout_s=20
        )
        try:
            return await provider.call("Say OK.", max_tokens=max_tokens, temperature=0.0)
        finally:
            await provider.close()

    return asyncio.run(go())


def _codes(result) -> set[str]:  # noqa: ANN001
    return {f.code for f in result.findings}


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("status", [401, 403, 400])
def test_a_bad_token_is_a_key_problem_whatever_the_status(lang: str, status: int) -> None:
    with serve(RelayConfig(lang=lang, auth_status=status)) as relay:
        result = _probe(relay, key="sk-not-a-relay-token")
        row = _call(relay, key="sk-not-a-relay-token")
    assert "auth.unauthorized" in _codes(result), result.findings
    assert not result.ok and result.passed_finding() is None
    finding = next(f for f in result.findings if f.code == "auth.unauthorized")
    assert ("无效的令牌" if lang == "zh" else "Invalid token") in finding.message
    assert "request.rejected" not in _codes(result) and "auth.forbidden" not in _codes(result)
    assert row.status == "error" and row.error_class == "auth", row
    assert ("无效的令牌" if lang == "zh" else "Invalid token") in (row.error or "")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_unrouted_model_is_named_with_the_listed_ones(lang: str) -> None:
    """503 无可用渠道 / "No available channel" is model.not_found, not a server error."""
    with serve(RelayConfig(lang=lang)) as relay:
        result = _probe(relay, model="unrouted")
        row = _call(relay, model="unrouted")
    assert _codes(result) == {"model.not_found"}, result.findings
    finding = result.findings[0]
    assert "gpt-4o-mini" in finding.fix and "unrouted" in finding.message
    assert row.error_class == "not_found" and row.http_status == 503


@pytest.mark.parametrize(
    ("key", "status"), [(EXHAUSTED, 401), (NO_USER_QUOTA, 403)], ids=["token", "user"]
)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_exhausted_quota_is_quota_not_a_bad_key(key: str, status: int, lang: str) -> None:
    with serve(RelayConfig(lang=lang)) as relay:
        result = _probe(relay, key=key)
        row = _call(relay, key=key)
    assert _codes(result) == {"rate.quota"}, result.findings
    assert f"HTTP {status}" in result.findings[0].message
    assert row.error_class == "quota" and row.http_status == status


def test_a_408_inside_the_timeout_is_the_gateways_own_timeout() -> None:
    with serve(RelayConfig(timeout_after=0.2)) as relay:
        result = _probe(relay, model="slow-upstream")
        row = _call(relay, model="slow-upstream")
    assert _codes(result) == {"net.gateway_timeout"}, result.findings
    assert "raising timeout_s will not help" in result.findings[0].fix
    assert row.error_class == "gateway_timeout", row
    assert "well inside timeout_s = 20" in (row.error or "")


def test_a_json_answer_to_a_stream_request_is_accepted_by_doctor_and_runner_alike() -> None:
    """Doctor passed such a route while every run call was bad_response."""
    with serve() as relay:
        result = _probe(relay, model="json-stream")
        row = _call(relay, model="json-stream")
    assert result.ok and "probe.ok" in {result.passed_finding().code}
    assert row.status == "ok", row
    assert row.content == "OK" and row.usage_source == "server"
    assert (row.prompt_tokens, row.completion_tokens, row.total_tokens) == (9, 1, 10)
    assert row.response_id and row.response_id.startswith("chatcmpl-relay")


def test_a_good_token_and_model_pass_and_keep_the_relays_request_id() -> None:
    with serve() as relay:
        result = _probe(relay)
        row = _call(relay)
    assert result.ok and result.generated
    assert row.status == "ok" and row.usage_source == "server"
    fields = row.ledger_fields()
    assert fields["request_id"].endswith("relay") and fields["call_id"].startswith("chatcmpl-")


def test_an_error_row_keeps_the_relays_message_and_request_id() -> None:
    with serve(RelayConfig(lang="zh")) as relay:
        row = _call(relay, model="unrouted")
    assert "无可用渠道" in (row.error or "") and "request id" in (row.error or "")
    assert row.request_id and row.request_id.endswith("relay")


def test_a_cut_streams_estimate_never_exceeds_max_tokens() -> None:
    """40 deltas of ' answer' for max_tokens 32 were estimated at 80."""
    with serve() as relay:
        row = _call(relay, model="cut-upstream", max_tokens=32)
    assert row.status == "error" and row.error_class == "stream_error", row
    assert row.usage_source == "estimated"
    assert 0 < row.completion_tokens <= 32, row.completion_tokens


@pytest.mark.parametrize(
    ("key", "code", "cls"),
    [("sk-nope-000", "auth.unauthorized", "auth"), (EXHAUSTED, "rate.quota", "quota")],
)
def test_token_errors_under_http_200_are_read_from_the_body(key: str, code: str, cls: str) -> None:
    """Classic one-api's TokenAuth answers a bad or exhausted token with HTTP 200 + error body."""
    with serve(RelayConfig(ok_status_errors=True, kind="one_api_error")) as relay:
        result = _probe(relay, key=key)
        row = _call(relay, key=key)
    assert code in _codes(result) and not result.ok, result.findings
    assert "auth.header_form" not in _codes(result) and "usage.missing" not in _codes(result)
    assert (row.status, row.error_class, row.http_status) == ("error", cls, 200), row
