"""``doctor --url`` takes the gateway root, as a profile does (the README's own
example), as well as the client URL; probed against a strict gateway under a prefix."""

from __future__ import annotations

import json

import pytest

from eloledger.cli import main
from strict_gateway import GOOD_KEY, GatewayConfig, serve


@pytest.mark.parametrize(
    ("wire", "form", "path"),
    [
        ("openai-chat", "root", "/api/v1/chat/completions"),
        ("openai-chat", "v1", "/api/v1/chat/completions"),
        ("anthropic", "root", "/api/v1/messages"),
        ("anthropic", "v1", "/api/v1/messages"),
    ],
)
def test_doctor_url_takes_the_root_like_a_profile(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, wire: str, form: str, path: str
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig(prefix="/api")) as gw:
        url = gw.root if form == "root" else gw.v1
        status = main(
            ["doctor", "--format", "json", "--timeout", "2", "--url", url, "--wire", wire,
             "--key-env", "GW_KEY"]
        )  # fmt: skip
        paths = [r.path for r in gw.requests]
    out = capsys.readouterr().out
    findings = json.loads(out)["findings"]
    # the probe takes the root as a profile does; the URL as typed is still named when the
    # client itself would need another form (an OpenAI SDK needs /v1, an Anthropic base none)
    named = {("openai-chat", "root"): "url.missing_v1", ("anthropic", "v1"): "url.extra_v1"}
    code = named.get((wire, form))
    assert {f["code"] for f in findings} == {"probe.ok", *([code] if code else [])}, findings
    assert status == {None: 0, "url.missing_v1": 1, "url.extra_v1": 2}[code]  # warning, error
    assert path in paths and GOOD_KEY not in out
