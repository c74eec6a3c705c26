"""Live probes against the strict gateway, and proof the real SDKs experience the same thing.

Each test puts the doctor's raw probe and the real ``openai``/``anthropic`` SDK in front of the
same strict server: where the doctor says "path 404, use URL X", the SDK raises NotFoundError
on the old URL and succeeds on X.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from eloledger.doctor.probes import MAX_REQUESTS, ProbeTarget, probe
from eloledger.gateway.neterrors import is_dns as _is_dns
from strict_gateway import GOOD_KEY, GatewayConfig, serve

MSG = [{"role": "user", "content": "hi"}]


def _codes(result) -> set[str]:  # noqa: ANN001
    return {f.code for f in result.findings}


def _one(result, code: str):  # noqa: ANN001, ANN202
    matching = [f for f in result.findings if f.code == code]
    assert matching, f"{code} not in {[f.code for f in result.findings]}"
    return matching[0]


def test_healthy_gateway_every_wire_ok_with_usage() -> None:
    with serve(GatewayConfig(prefix="/api")) as gw:
        for wire, base, model in [
            ("openai-chat", gw.v1, "gpt-strict"),
            ("openai-responses", gw.v1, "gpt-strict"),
            ("anthropic", gw.root, "claude-strict"),
            ("gemini", gw.root, "gemini-strict"),
        ]:
            result = probe(ProbeTarget("t", base, wire, GOOD_KEY, model), timeout=2)
            assert result.findings == [], (wire, result.findings)
            assert result.ok
            assert result.usage == {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}
            assert result.requests == 2  # model list + one streamed request
        streamed = [r for r in gw.requests if r.body and r.body.get("stream")]
        chat = next(r for r in streamed if r.path.endswith("/chat/completions"))
        assert chat.body["max_tokens"] == 1
        assert chat.body["stream_options"] == {"include_usage": True}
        gemini = [r for r in gw.requests if "streamGenerateContent" in r.path]
        assert gemini and gemini[0].query == "alt=sse"
        assert gemini[0].headers["x-goog-api-key"] == GOOD_KEY


def test_missing_v1_openai_sdk_404s_and_the_doctors_fix_works() -> None:
    with serve(GatewayConfig(prefix="/api")) as gw:
        with pytest.raises(openai.NotFoundError):
            openai.OpenAI(
                base_url=gw.root, api_key=GOOD_KEY, max_retries=0
            ).chat.completions.create(model="gpt-strict", messages=MSG, max_tokens=1)
        result = probe(ProbeTarget("t", gw.root, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        finding = _one(result, "path.not_found")
        assert finding.fix == f"use the base URL {gw.v1}"
        fixed = finding.fix.removeprefix("use the base URL ")
        reply = openai.OpenAI(
            base_url=fixed, api_key=GOOD_KEY, max_retries=0
        ).chat.completions.create(model="gpt-strict", messages=MSG, max_tokens=1)
        assert reply.usage.total_tokens == 10


def test_extra_v1_anthropic_sdk_404s_and_the_fix_works() -> None:
    with serve(GatewayConfig(prefix="/api")) as gw:
        with pytest.raises(anthropic.NotFoundError):
            anthropic.Anthropic(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0).messages.create(
                model="claude-strict", messages=MSG, max_tokens=1
            )
        result = probe(ProbeTarget("t", gw.v1, "anthropic", GOOD_KEY, "claude-strict"), timeout=2)
        assert _one(result, "path.not_found").fix == f"use the base URL {gw.root}"
        assert gw.requests[-1].path == "/api/v1/messages"  # the neighbour it tried, and it worked


def test_tracking_query_string_breaks_sdk_and_doctor_names_the_clean_url() -> None:
    with serve(GatewayConfig()) as gw:
        dirty = gw.v1 + "?utm_source=newsletter"
        with pytest.raises(openai.NotFoundError):
            openai.OpenAI(base_url=dirty, api_key=GOOD_KEY, max_retries=0).chat.completions.create(
                model="gpt-strict", messages=MSG, max_tokens=1
            )
        result = probe(ProbeTarget("t", dirty, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        assert _one(result, "path.not_found").fix == f"use the base URL {gw.v1}"


def test_model_404_is_told_from_path_404_and_lists_served_models() -> None:
    with serve(GatewayConfig()) as gw:
        with pytest.raises(openai.NotFoundError):
            openai.OpenAI(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0).chat.completions.create(
                model="gpt-typo", messages=MSG, max_tokens=1
            )
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-typo"), timeout=2)
        assert _codes(result) == {"model.not_found"}
        assert "gpt-strict" in _one(result, "model.not_found").fix


def test_header_form_x_api_key_only_gateway() -> None:
    """anthropic-python >= 2.0 sends Bearer: 401 here; the doctor finds that x-api-key works."""
    with serve(GatewayConfig(header_forms=frozenset({"x-api-key"}))) as gw:
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0).messages.create(
                model="claude-strict", messages=MSG, max_tokens=1
            )
        result = probe(
            ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict", "bearer", "$GW_KEY"),
            timeout=2,
        )
        finding = _one(result, "auth.header_form")
        assert "ANTHROPIC_API_KEY" in finding.fix and 'auth = "x-api-key"' in finding.fix
        # the fix works with the real SDK
        client = anthropic.Anthropic(
            base_url=gw.root,
            api_key=GOOD_KEY,
            max_retries=0,
            default_headers={"x-api-key": GOOD_KEY},
        )
        assert (
            client.messages.create(
                model="claude-strict", messages=MSG, max_tokens=1
            ).usage.input_tokens
            == 9
        )


def test_header_form_bearer_only_gateway_for_x_api_key_profile() -> None:
    with serve(GatewayConfig(header_forms=frozenset({"bearer"}))) as gw:
        result = probe(
            ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict", "x-api-key"),
            timeout=2,
        )
        assert "ANTHROPIC_AUTH_TOKEN" in _one(result, "auth.header_form").fix


def test_unauthorized_key_echoed_by_gateway_is_masked() -> None:
    bad = "sk-wrong-ABCDEFGHIJKLMNOP"
    with serve(GatewayConfig()) as gw:
        with pytest.raises(openai.AuthenticationError) as info:
            openai.OpenAI(base_url=gw.v1, api_key=bad, max_retries=0).chat.completions.create(
                model="gpt-strict", messages=MSG, max_tokens=1
            )
        assert bad in str(info.value)  # the SDK shows what the gateway echoed...
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", bad, "gpt-strict"), timeout=2)
    finding = _one(result, "auth.unauthorized")
    text = json.dumps([f.to_dict() for f in result.findings])
    assert bad not in text  # ...the doctor never does
    assert "sk-wro…(25 chars)" in finding.evidence
    assert "Incorrect API key" in finding.evidence


def test_gemini_bad_key_400_api_key_invalid_is_unauthorized() -> None:
    with serve(GatewayConfig()) as gw:
        result = probe(
            ProbeTarget("t", gw.root, "gemini", "AIzaWrongWrongWrongWrong00", "gemini-strict"),
            timeout=2,
        )
    assert _codes(result) == {"auth.unauthorized"}
    assert "x-goog-api-key" in _one(result, "auth.unauthorized").fix


def test_stream_without_usage_matches_sdk_experience() -> None:
    with serve(GatewayConfig(mode="stream_no_usage")) as gw:
        client = openai.OpenAI(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0)
        chunks = list(
            client.chat.completions.create(
                model="gpt-strict",
                messages=MSG,
                max_tokens=1,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        assert all(c.usage is None for c in chunks)  # silently nothing, no exception
        assert (
            client.chat.completions.create(
                model="gpt-strict", messages=MSG, max_tokens=1
            ).usage.total_tokens
            == 10
        )
        sdk = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        # anthropic-python raises on a message_delta without usage
        with (
            pytest.raises(AttributeError),
            sdk.messages.stream(model="claude-strict", messages=MSG, max_tokens=1) as stream,
        ):
            stream.get_final_message()
        chat = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        msgs = probe(ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict"), timeout=2)
    assert _codes(chat) == {"usage.stream_missing"}
    assert chat.usage["total_tokens"] == 10 and chat.requests == 3
    assert "AttributeError" in _one(msgs, "usage.stream_missing").message


def test_usage_missing_everywhere_is_an_error() -> None:
    with serve(GatewayConfig(mode="usage_missing")) as gw:
        reply = openai.OpenAI(
            base_url=gw.v1, api_key=GOOD_KEY, max_retries=0
        ).chat.completions.create(model="gpt-strict", messages=MSG, max_tokens=1)
        assert reply.usage is None
        result = probe(
            ProbeTarget("t", gw.v1, "openai-responses", GOOD_KEY, "gpt-strict"), timeout=2
        )
    assert _codes(result) == {"usage.missing"}
    assert not result.ok


def test_quota_vs_rate_limit_as_the_sdk_sees_them() -> None:
    with serve(GatewayConfig(mode="quota")) as gw:
        with pytest.raises(openai.RateLimitError) as info:
            openai.OpenAI(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0).chat.completions.create(
                model="gpt-strict", messages=MSG, max_tokens=1
            )
        assert info.value.code == "insufficient_quota"
        quota = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
    with serve(GatewayConfig(mode="rate_limited", retry_after="12")) as gw:
        limited = probe(
            ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict"), timeout=2
        )
    assert _codes(quota) == {"rate.quota"}
    assert _codes(limited) == {"rate.limited"}
    assert "Retry-After: 12" in _one(limited, "rate.limited").message


def test_login_page_is_not_json() -> None:
    with serve(GatewayConfig(mode="html")) as gw:
        # Both SDKs hand back the page as a plain str under HTTP 200: no exception at all.
        reply = openai.OpenAI(
            base_url=gw.v1, api_key=GOOD_KEY, max_retries=0
        ).chat.completions.create(model="gpt-strict", messages=MSG, max_tokens=1)
        assert isinstance(reply, str) and "Sign in" in reply
        reply = anthropic.Anthropic(
            base_url=gw.root, api_key=GOOD_KEY, max_retries=0
        ).messages.create(model="claude-strict", messages=MSG, max_tokens=1)
        assert isinstance(reply, str)
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
    finding = _one(result, "response.not_json")
    assert "text/html" in finding.message and "Sign in" in finding.evidence


def test_timeout_is_bounded_by_the_probe_timeout() -> None:
    with serve(GatewayConfig(mode="slow", delay=2.0)) as gw:
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=0.3)
    assert _codes(result) == {"net.timeout"}
    assert result.requests == 1  # stops after the first timeout


def test_request_budget_and_host_are_bounded() -> None:
    """A path 404 on a gateway that 404s everything: neighbours tried, all on the same host."""
    with serve(GatewayConfig(prefix="/nowhere")) as gw:
        base = f"http://127.0.0.1:{gw.port}/api/v1?x=1"
        result = probe(ProbeTarget("t", base, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        assert result.requests <= MAX_REQUESTS
        assert len(gw.requests) == result.requests
        assert {r.headers["host"] for r in gw.requests} == {f"127.0.0.1:{gw.port}"}
    finding = _one(result, "path.not_found")
    assert "none of the neighbouring URL forms" in finding.fix


def test_missing_key_makes_no_request() -> None:
    with serve(GatewayConfig()) as gw:
        result = probe(
            ProbeTarget("t", gw.v1, "openai-chat", None, "gpt-strict", None, "$GW"), timeout=2
        )
        assert gw.requests == []
    assert _one(result, "auth.missing_key").fix == "set $GW"


def test_model_taken_from_the_list_when_none_configured() -> None:
    with serve(GatewayConfig(models=("only-model",))) as gw:
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, None), timeout=2)
        assert result.ok and result.models == ["only-model"]
        assert gw.requests[-1].body["model"] == "only-model"


def test_dns_failure_is_classified_from_the_real_exception_type() -> None:
    import socket

    import httpx2

    try:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    except socket.gaierror as cause:
        try:
            raise httpx2.ConnectError("[Errno -2] Name or service not known") from cause
        except httpx2.ConnectError as err:
            assert _is_dns(err)
    assert not _is_dns(ConnectionRefusedError(111, "Connection refused"))


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    import shutil
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
         cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_self_signed_certificate_is_tls_and_ssl_cert_file_fixes_both(
    self_signed: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(GatewayConfig(tls=self_signed)) as gw:
        with pytest.raises(openai.APIConnectionError):
            openai.OpenAI(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0).models.list()
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        assert _codes(result) == {"net.tls"}
        assert "CERTIFICATE_VERIFY_FAILED" in _one(result, "net.tls").evidence
        assert "SSL_CERT_FILE" in _one(result, "net.tls").fix
        monkeypatch.setenv("SSL_CERT_FILE", self_signed[0])
        assert probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2).ok
        models = openai.OpenAI(base_url=gw.v1, api_key=GOOD_KEY, max_retries=0).models.list()
        assert models.data[0].id == "gpt-strict"


def test_redirect_to_a_login_page_is_not_followed() -> None:
    with serve(GatewayConfig(mode="redirect")) as gw:
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"), timeout=2)
        assert len(gw.requests) == 2  # nothing went to sso.example
    finding = _one(result, "response.not_json")
    assert "redirects" in finding.message and "https://sso.example/login" in finding.evidence


def test_error_event_under_http_200_is_a_server_error() -> None:
    with serve(GatewayConfig(mode="midstream_error")) as gw:
        result = probe(ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict"), timeout=2)
    finding = _one(result, "server.error")
    assert "Overloaded" in finding.message


def test_input_tokens_only_in_message_delta_is_real_usage() -> None:
    """Some gateways send input_tokens 0 at message_start and the count in message_delta."""
    with serve(GatewayConfig(mode="late_input_usage")) as gw:
        sdk = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        with sdk.messages.stream(model="claude-strict", messages=MSG, max_tokens=1) as stream:
            assert stream.get_final_message().usage.input_tokens == 9
        result = probe(ProbeTarget("t", gw.root, "anthropic", GOOD_KEY, "claude-strict"), timeout=2)
    assert result.findings == []
    assert result.usage == {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}


def test_login_page_on_the_model_list_without_a_model_is_not_json() -> None:
    with serve(GatewayConfig(mode="html")) as gw:
        result = probe(ProbeTarget("t", gw.v1, "openai-chat", GOOD_KEY, None), timeout=2)
    assert _codes(result) == {"response.not_json"}
