"""End to end: `profile use … --yes`, then the real Claude Code, Codex and Gemini CLIs.

Each CLI runs non-interactively with the temp HOME, inside its own network namespace
(``unshare -n`` with only loopback up) together with a logging gateway on 127.0.0.1, so
nothing can leave the machine. The gateway sits under a path prefix (``/gw``) so the test
also proves each client joins the derived base URL correctly. We assert each request arrives
on the right path with the key in the right header, and that the CLI printed the answer.

Install the CLIs with ``scripts/install_clients.sh``; the test skips (with the reason) when
node, the CLIs or network namespaces are missing. This file is also the in-namespace helper:
``python test_e2e_real_clients.py LOG PORT -- CMD…`` starts the gateway, runs CMD, logs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

PORT = 18555
PREFIX = "/gw"
KEY = "sk-e2e-0123456789abcdefghij"
ANSWER = "pong-from-the-e2e-gateway"
CLIENT_TIMEOUT = 120

pytestmark = pytest.mark.e2e


# --- the in-namespace gateway -----------------------------------------------------------------


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def _anthropic(body: dict) -> tuple[str, bytes]:
    usage = {"input_tokens": 12, "output_tokens": 5}
    message = {
        "id": "msg_e2e",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    if not body.get("stream"):
        message.update(
            content=[{"type": "text", "text": ANSWER}], stop_reason="end_turn", usage=usage
        )
        return "application/json", json.dumps(message).encode()
    return "text/event-stream", _sse(
        [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": ANSWER},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": usage,
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def _responses(body: dict) -> tuple[str, bytes]:
    item = {
        "type": "message",
        "id": "msg_e2e",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    usage = {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 17,
    }
    response = {
        "id": "resp_e2e",
        "object": "response",
        "status": "in_progress",
        "model": body.get("model"),
        "output": [],
    }
    done = dict(response, status="completed", output=[item], usage=usage)
    return "text/event-stream", _sse(
        [
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": dict(item, status="in_progress", content=[]),
                },
            ),
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": "msg_e2e",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": ANSWER,
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            ("response.completed", {"type": "response.completed", "response": done}),
        ]
    )


def _gemini(path: str) -> tuple[str, bytes]:
    chunk = {
        "candidates": [
            {
                "content": {"parts": [{"text": ANSWER}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17},
        "modelVersion": "e2e-model",
    }
    if ":streamGenerateContent" in path:
        return "text/event-stream", _sse([(None, chunk)])
    if ":countTokens" in path:
        return "application/json", json.dumps({"totalTokens": 12}).encode()
    return "application/json", json.dumps(chunk).encode()


class _Gateway(BaseHTTPRequestHandler):
    log_path: Path

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _record(self, body: bytes) -> None:
        entry = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body_size": len(body),
        }
        with open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")

    def _reply(self, status: int, ctype: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def do_HEAD(self) -> None:  # noqa: N802
        self._record(b"")
        self._reply(200, "text/plain", b"")

    def do_GET(self) -> None:  # noqa: N802
        self._record(b"")
        if self.path.startswith(f"{PREFIX}/v1/models"):
            self._reply(
                200,
                "application/json",
                json.dumps({"object": "list", "data": [], "models": []}).encode(),
            )
        else:
            self._reply(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self._record(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path == f"{PREFIX}/v1/messages":
            self._reply(200, *_anthropic(body))
        elif path == f"{PREFIX}/v1/responses":
            self._reply(200, *_responses(body))
        elif path.startswith(f"{PREFIX}/v1beta/models/"):
            self._reply(200, *_gemini(self.path))
        else:
            self._reply(404, "application/json", b'{"error":{"message":"no such path"}}')


def serve_and_run(log: Path, port: int, command: list[str]) -> int:
    """Start the gateway, run the client, stop: the in-namespace half of the test."""
    _Gateway.log_path = log
    server = ThreadingHTTPServer(("127.0.0.1", port), _Gateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return subprocess.run(command, timeout=CLIENT_TIMEOUT, stdin=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        print(f"e2e: client timed out after {CLIENT_TIMEOUT}s", file=sys.stderr)
        return 124
    finally:
        server.shutdown()


# --- the test -------------------------------------------------------------------------------


def _gateway() -> Any:
    """tests/agent_gateway.py: the shared lookup of the installed CLIs and the skip rule."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import agent_gateway

    return agent_gateway


def _skip(reason: str) -> None:
    """Skip, or fail where the real-CLI tests are required (ELOLEDGER_REQUIRE_CLIENTS=1)."""
    _gateway().require(reason)
    pytest.skip(reason)


def _isolation() -> list[str] | None:
    """A command prefix that runs in a private network namespace with loopback up."""
    if not shutil.which("unshare") or not shutil.which("ip"):
        return None
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        probe = subprocess.run([*prefix, "ip", "link", "set", "lo", "up"], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return None


def _bin(name: str) -> Path:
    if not shutil.which("node"):
        _skip("node is not installed (needed by the real CLIs)")
    gw = _gateway()
    path = gw.cli_path(name)
    if path is None:
        _skip(f"{name} not installed in {gw.LOOKED_IN} or on PATH: run scripts/install_clients.sh")
    return Path(str(path))


@pytest.fixture
def gateway_profile(temp_home: Path) -> Path:
    """A profile pointing at the in-namespace gateway, switched to with the real CLI."""
    env = dict(os.environ, E2E_GW_KEY=KEY)
    add = [
        sys.executable, "-m", "eloledger", "profile", "add", "e2e",
        "--base-url", f"http://127.0.0.1:{PORT}{PREFIX}", "--key-env", "E2E_GW_KEY",
        "--model", "e2e-model",
    ]  # fmt: skip
    subprocess.run(add, check=True, env=env, capture_output=True, timeout=60)
    use = [
        sys.executable,
        "-m",
        "eloledger",
        "profile",
        "use",
        "e2e",
        "--to",
        "claude-code,codex,gemini-cli",
        "--yes",
    ]
    result = subprocess.run(use, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return temp_home


def _run_client(
    home: Path, tmp_path: Path, argv: list[str], extra_env: dict[str, str]
) -> tuple[int, str, list[dict]]:
    isolation = _isolation()
    if isolation is None:
        _skip("cannot create a network namespace (unshare -n / -rn) to keep the CLIs offline")
    log = tmp_path / "requests.jsonl"
    out = tmp_path / "client.out"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "GEMINI_CLI_NO_RELAUNCH": "1",
        **extra_env,
    }
    helper = [sys.executable, str(Path(__file__).resolve()), str(log), str(PORT), "--", *argv]
    shell = 'ip link set lo up && exec "$@" > ' + str(out) + " 2>&1"
    result = subprocess.run(
        [*isolation, "sh", "-c", shell, "sh", *helper],
        env=env,
        cwd=home,
        timeout=CLIENT_TIMEOUT + 30,
    )
    requests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    dump = os.environ.get("ELOLEDGER_E2E_DUMP")  # a folder: keep each run's request log
    if dump:
        Path(dump).mkdir(parents=True, exist_ok=True)
        name = Path(argv[0]).name if argv[0] != "bash" else "shell-route"
        (Path(dump) / f"{name}.jsonl").write_text(log.read_text() if log.exists() else "")
    return result.returncode, out.read_text(errors="replace"), requests


def _posts(requests: list[dict]) -> list[dict]:
    return [r for r in requests if r["method"] == "POST"]


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_claude_code_reaches_the_gateway_with_bearer_key(
    gateway_profile: Path, tmp_path: Path
) -> None:
    claude = _bin("claude")
    settings = json.loads((gateway_profile / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{PORT}{PREFIX}"
    status, output, requests = _run_client(
        gateway_profile, tmp_path, [str(claude), "-p", "say pong", "--output-format", "json"], {}
    )
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1/messages")]
    assert posts, f"no /v1/messages request; exit {status}; log {requests}; output {output[-2000:]}"
    for post in posts:
        assert post["headers"].get("authorization") == f"Bearer {KEY}"
        assert "x-api-key" not in post["headers"]  # never both headers
    assert all(r["path"].startswith(PREFIX) for r in requests), requests
    assert status == 0, output[-2000:]
    assert ANSWER in output


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_claude_code_with_x_api_key_profile(gateway_profile: Path, tmp_path: Path) -> None:
    """auth = x-api-key writes ANTHROPIC_API_KEY (and removes AUTH_TOKEN): only x-api-key sent."""
    claude = _bin("claude")
    env = dict(os.environ, E2E_GW_KEY=KEY)
    for cmd in (
        ["profile", "edit", "e2e", "--auth", "x-api-key"],
        ["profile", "use", "e2e", "--to", "claude-code", "--yes"],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "eloledger", *cmd], env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
    argv = [str(claude), "-p", "say pong", "--output-format", "json"]
    status, output, requests = _run_client(gateway_profile, tmp_path, argv, {})
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1/messages")]
    assert posts, f"no /v1/messages request; exit {status}; log {requests}; output {output[-2000:]}"
    for post in posts:
        assert post["headers"].get("x-api-key") == KEY
        assert "authorization" not in post["headers"]
    assert status == 0 and ANSWER in output, output[-2000:]


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_codex_reaches_the_gateway_on_v1_responses(gateway_profile: Path, tmp_path: Path) -> None:
    codex = _bin("codex")
    argv = [str(codex), "exec", "--skip-git-repo-check", "say pong"]
    status, output, requests = _run_client(gateway_profile, tmp_path, argv, {"E2E_GW_KEY": KEY})
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1/responses")]
    assert posts, (
        f"no /v1/responses request; exit {status}; log {requests}; output {output[-2000:]}"
    )
    for post in posts:
        assert post["headers"].get("authorization") == f"Bearer {KEY}"
    assert status == 0, output[-2000:]
    assert ANSWER in output


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_codex_profile_file_is_layered_by_codex_profile(temp_home: Path, tmp_path: Path) -> None:
    """`--codex-profile-file` leaves config.toml alone; `codex exec -p e2e` reaches the gateway."""
    codex = _bin("codex")
    env = dict(os.environ, E2E_GW_KEY=KEY)
    base = f"http://127.0.0.1:{PORT}{PREFIX}"
    cmds = [
        ["profile", "add", "e2e", "--base-url", base, "--key-env", "E2E_GW_KEY", "--model", "m"],
        ["profile", "use", "e2e", "--to", "codex", "--codex-profile-file", "--yes"],
    ]
    for cmd in cmds:
        result = subprocess.run(
            [sys.executable, "-m", "eloledger", *cmd], env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
    assert not (temp_home / ".codex" / "config.toml").exists()
    argv = [str(codex), "exec", "-p", "e2e", "--skip-git-repo-check", "say pong"]
    status, output, requests = _run_client(temp_home, tmp_path, argv, {"E2E_GW_KEY": KEY})
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1/responses")]
    assert posts, (
        f"no /v1/responses request; exit {status}; log {requests}; output {output[-2000:]}"
    )
    assert all(r["headers"].get("authorization") == f"Bearer {KEY}" for r in posts)
    assert status == 0 and ANSWER in output, output[-2000:]


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_gemini_cli_reaches_the_gateway_with_goog_key(
    gateway_profile: Path, tmp_path: Path
) -> None:
    """In a trusted folder Gemini CLI reads ~/.gemini/.env (as eloledger wrote it)."""
    gemini = _bin("gemini")
    trusted = gateway_profile / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(gateway_profile): "TRUST_FOLDER"}))
    status, output, requests = _run_client(
        gateway_profile, tmp_path, [str(gemini), "-p", "say pong"], {}
    )
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1beta/models/")]
    assert posts, (
        f"no /v1beta/models request; exit {status}; log {requests}; output {output[-2000:]}"
    )
    assert any("e2e-model:" in r["path"] for r in posts), posts
    for post in posts:
        assert post["headers"].get("x-goog-api-key") == KEY
    assert status == 0, output[-2000:]
    assert ANSWER in output


@pytest.mark.timeout(CLIENT_TIMEOUT + 60)
def test_gemini_cli_through_eloledger_env_alone(gateway_profile: Path, tmp_path: Path) -> None:
    """The shell route: no ~/.gemini/.env at all, only `eval "$(eloledger env e2e)"`.

    Gemini CLI 0.61 refuses headless runs in an untrusted folder (exit 55) unless
    --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust is what scripts use.
    """
    gemini = _bin("gemini")
    (gateway_profile / ".gemini" / ".env").unlink()
    script = f'eval "$({sys.executable} -m eloledger env e2e)" && exec {gemini} --skip-trust -p "say pong"'
    status, output, requests = _run_client(
        gateway_profile, tmp_path, ["bash", "-c", script], {"E2E_GW_KEY": KEY}
    )
    posts = [r for r in _posts(requests) if r["path"].startswith(f"{PREFIX}/v1beta/models/")]
    assert posts, (
        f"no /v1beta/models request; exit {status}; log {requests}; output {output[-2000:]}"
    )
    assert all(r["headers"].get("x-goog-api-key") == KEY for r in posts)
    assert status == 0, output[-2000:]
    assert ANSWER in output


if __name__ == "__main__":
    # python test_e2e_real_clients.py LOG PORT -- CMD...
    args = sys.argv[1:]
    split = args.index("--")
    sys.exit(serve_and_run(Path(args[0]), int(args[1]), args[split + 1 :]))
