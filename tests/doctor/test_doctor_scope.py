"""`doctor --profile NAME`: only that profile's probe and the client configs it affects, and
the passing probe shown (text and JSON); a gateway echoing a slice of the key is scrubbed from
the doctor's output and from a run's ledger."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from strict_gateway import GOOD_KEY, GatewayConfig, serve


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _claude_points_at(home: Path, url: str) -> None:
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_AUTH_TOKEN": "YOUR_API_KEY"}
    _write(home / ".claude/settings.json", json.dumps({"env": env}))


def _doctor_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    status = main(["doctor", *argv, "--format", "json"])
    return status, json.loads(capsys.readouterr().out)


def test_unrelated_live_configs_stay_out_and_the_passing_probe_shows(
    capsys: pytest.CaptureFixture[str], temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    _claude_points_at(temp_home, "https://other-gateway.example/v1")  # broken, not ours
    monkeypatch.setenv("OPENAI_BASE_URL", "https://third.example")  # ditto, and no key
    with serve(GatewayConfig()) as gw:
        save_profile(Profile("ok", gw.root, key_env="GW_KEY", model="gpt-strict"))
        status, report = _doctor_json(capsys, "--profile", "ok", "--timeout", "2")
        text_status = main(["doctor", "--profile", "ok", "--timeout", "2"])
        text = capsys.readouterr().out
    codes = [(f["code"], f["target"]) for f in report["findings"]]
    assert status == 0 and text_status == 0, codes
    assert all(t.startswith("profile:ok") for _c, t in codes), codes
    passed = [f for f in report["findings"] if f["code"] == "probe.ok"]
    # a profile for every client is probed on every wire: one probe.ok each
    assert len(passed) == 4 and {p["severity"] for p in passed} == {"info"}
    passed.sort(key=lambda p: p["message"].split()[0] != "openai-chat")
    assert "openai-chat" in passed[0]["message"] and " ms" in passed[0]["message"]
    assert "usage 9+1=10" in passed[0]["message"]
    assert "GET /v1/models" in passed[0]["evidence"]
    # 5: the four about the two unrelated configs, and that they use different hosts
    assert any("5 finding(s)" in n and "'eloledger doctor'" in n for n in report["notes"])
    assert "INFO    probe.ok  [profile:ok (openai-chat)]" in text
    assert "no problems found" in text and GOOD_KEY not in text


def test_a_live_config_that_uses_the_profile_is_in_scope(
    capsys: pytest.CaptureFixture[str], temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig()) as gw:
        profile = Profile("ok", gw.root, key_env="GW_KEY", model="gpt-strict")
        save_profile(profile)
        _claude_points_at(temp_home, profile.client_base_url("claude-code"))  # ours, bad key
        status, report = _doctor_json(capsys, "--profile", "ok", "--timeout", "2")
    codes = {(f["code"], f["target"]) for f in report["findings"]}
    assert ("auth.placeholder_key", "claude-code") in codes
    assert ("probe.ok", "profile:ok (openai-chat)") in codes
    assert status == 2


class _SliceEcho(BaseHTTPRequestHandler):
    """A gateway that quotes the first 12 characters of the key it got, as some do."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = self.headers.get("Authorization", "").removeprefix("Bearer ")
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {received[:12]}****"}}
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def _slice_echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SliceEcho)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_gateway_echoing_a_slice_of_the_key_never_reaches_the_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "canary-12345-" + "q" * 30  # not shaped like any known key: only the registry helps
    monkeypatch.setenv("GW_KEY", key)
    with _slice_echo() as root:
        save_profile(Profile("echo", root, key_env="GW_KEY", model="m"))
        status = main(["doctor", "--profile", "echo", "--timeout", "2", "--format", "json"])
    out, err = capsys.readouterr()
    assert status == 2 and "auth.unauthorized" in out
    assert "canary-1" not in out + err
    assert "Incorrect API key provided" in out


SPEC = """\
[experiment]
name = "slice"
profile = "echo"
model = "m"
wire_api = "openai-chat"

[tasks]
source = "builtin:arith"
limit = 2

[[arms]]
name = "one"
kind = "single"
"""


def test_a_slice_of_the_key_echoed_to_a_run_never_reaches_the_ledger(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "canary-12345-" + "r" * 30
    monkeypatch.setenv("GW_KEY", key)
    spec, ledger = tmp_path / "spec.toml", tmp_path / "runs" / "slice.jsonl"
    spec.write_text(SPEC)
    with _slice_echo() as root:
        save_profile(Profile("echo", root, key_env="GW_KEY", model="m"))
        main(["run", str(spec), "--headless", "--format", "json", "--ledger", str(ledger)])
    out, err = capsys.readouterr()
    rows = ledger.read_text()
    assert "Incorrect API key provided" in rows  # the gateway's message is kept...
    assert "part of canary" in rows  # ...with the slice replaced
    for text in (rows, out, err):
        assert "canary-1" not in text
