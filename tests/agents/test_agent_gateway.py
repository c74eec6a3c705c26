"""The agent gateway (tests/agent_gateway.py) is what the real CLIs need, and bills what it says.

Fast tests drive it through the real ``anthropic`` and ``openai`` SDKs and plain HTTP (Gemini);
the slow ones run Claude Code, Codex and Gemini CLI headless inside ``unshare -n`` and check that
each finishes a tool-using session and that the CLI's own token report equals what was billed.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

from agent_gateway import (
    GOOD_KEY,
    AgentGatewayConfig,
    Reply,
    Tokens,
    canonical_invocation,
    missing_reason,
    run_agent,
    serve,
)
from eloledger.agents.usage import CallUsage

BASH = {
    "name": "Bash",
    "description": "run a command",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}
SHELL_FN = {
    "type": "function",
    "name": "shell",
    "description": "run a command",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}}},
    },
}
GEMINI_SHELL = {
    "functionDeclarations": [
        {
            "name": "run_shell_command",
            "parametersJsonSchema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
            },
        }
    ]
}


# --- protocol, through the real SDKs --------------------------------------------------------------
def test_anthropic_stream_calls_the_bash_tool_then_answers_after_its_result() -> None:
    with serve() as gw:
        client = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        ask = [{"role": "user", "content": "run echo hello"}]
        with client.messages.stream(
            model="m", max_tokens=100, messages=ask, tools=[BASH]
        ) as stream:
            first = stream.get_final_message()
        use = next(b for b in first.content if b.type == "tool_use")
        assert (use.name, use.input["command"], first.stop_reason) == (
            "Bash",
            "echo hello",
            "tool_use",
        )
        result = {"type": "tool_result", "tool_use_id": use.id, "content": "hello"}
        follow = [*ask, {"role": "assistant", "content": first.content}]
        follow.append({"role": "user", "content": [result]})
        with client.messages.stream(
            model="m", max_tokens=100, messages=follow, tools=[BASH]
        ) as stream:
            second = stream.get_final_message()
    assert second.content[0].text == "Done: hello" and second.stop_reason == "end_turn"
    assert [b.reply for b in gw.billed] == ["tool", "text"]
    assert gw.billed[1].tool_results == ["hello"]
    for message, billed in zip((first, second), gw.billed, strict=True):
        assert CallUsage.from_claude(message.usage.model_dump()) == billed.canonical
    assert gw.billed[1].canonical.cached_tokens > 0 and gw.billed[0].canonical.cache_write_tokens


def test_responses_stream_calls_the_shell_function_then_answers_after_its_output() -> None:
    with serve() as gw:
        client = openai.OpenAI(base_url=gw.root + "/v1", api_key=GOOD_KEY, max_retries=0)
        with client.responses.stream(model="m", input="run echo hello", tools=[SHELL_FN]) as s:
            first = s.get_final_response()
        call = first.output[0]
        assert call.type == "function_call" and call.name == "shell"
        assert json.loads(call.arguments) == {"command": ["bash", "-lc", "echo hello"]}
        follow = [
            {"role": "user", "content": "run echo hello"},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": "shell",
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "hello\n"},
        ]
        with client.responses.stream(model="m", input=follow, tools=[SHELL_FN]) as s:
            second = s.get_final_response()
    assert second.output_text == "Done: hello"
    assert gw.billed[1].tool_results == ["hello\n"]
    for response, billed in zip((first, second), gw.billed, strict=True):
        u = response.usage
        got = CallUsage(
            u.input_tokens,
            u.output_tokens,
            u.input_tokens_details.cached_tokens,
            billed.usage["input_tokens_details"]["cache_write_tokens"],
            u.output_tokens_details.reasoning_tokens,
        )
        assert got == billed.canonical and u.total_tokens == billed.canonical.total_tokens


def _post(url: str, body: dict, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {**headers}, method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_gemini_stream_calls_run_shell_command_then_answers_after_its_response() -> None:
    with serve() as gw:
        url = f"{gw.root}/v1beta/models/gem:streamGenerateContent?alt=sse"
        ask = {"role": "user", "parts": [{"text": "run echo hello"}]}
        status, text = _post(
            url, {"contents": [ask], "tools": [GEMINI_SHELL]}, {"x-goog-api-key": GOOD_KEY}
        )
        chunk = json.loads(text.split("data: ", 1)[1])
        call = chunk["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert status == 200 and call == {
            "name": "run_shell_command",
            "args": {"command": "echo hello", "description": "run a shell command"},
        }
        answer = {
            "functionResponse": {"name": "run_shell_command", "response": {"output": "hello"}}
        }
        contents = [
            ask,
            {"role": "model", "parts": [{"functionCall": call}]},
            {"role": "user", "parts": [answer]},
        ]
        _, text = _post(
            url, {"contents": contents, "tools": [GEMINI_SHELL]}, {"x-goog-api-key": GOOD_KEY}
        )
    final = json.loads(text.split("data: ", 1)[1])
    assert final["candidates"][0]["content"]["parts"][0]["text"] == "Done: hello"
    assert gw.billed[1].tool_results == ["hello"]
    meta = final["usageMetadata"]
    tokens = {
        "prompt": meta["promptTokenCount"],
        "candidates": meta["candidatesTokenCount"],
        "cached": meta["cachedContentTokenCount"],
        "thoughts": meta["thoughtsTokenCount"],
    }
    assert CallUsage.from_gemini(tokens) == gw.billed[1].canonical
    assert meta["totalTokenCount"] == gw.billed[1].canonical.total_tokens


def test_a_wrong_key_is_a_401_in_each_wire_format_and_nothing_is_billed() -> None:
    with serve() as gw:
        claude = anthropic.Anthropic(base_url=gw.root, api_key="sk-wrong", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError) as caught:
            claude.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
        assert caught.value.body["error"]["type"] == "authentication_error"
        oai = openai.OpenAI(base_url=gw.root + "/v1", api_key="sk-wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as caught_oai:
            oai.responses.create(model="m", input="x")
        assert caught_oai.value.code == "invalid_api_key"
        url = f"{gw.root}/v1beta/models/gem:generateContent"
        status, text = _post(url, {"contents": []}, {"x-goog-api-key": "sk-wrong"})
        assert (status, json.loads(text)["error"]["status"]) == (401, "UNAUTHENTICATED")
        # The Responses wire takes Bearer only: the right key in x-api-key is still refused.
        status, _ = _post(gw.root + "/v1/responses", {"model": "m"}, {"x-api-key": GOOD_KEY})
        assert status == 401
    assert gw.billed == [] and [s.status for s in gw.seen] == [401, 401, 401, 401]


def test_codex_websocket_upgrade_gets_a_plain_404_at_once() -> None:
    with serve() as gw, socket.create_connection(("127.0.0.1", gw.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(
            b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 404") and b"Connection: close" in reply and elapsed < 1.0
    assert gw.billed == []


def test_usage_varies_per_request_and_an_explicit_plan_is_billed_as_given() -> None:
    plan = (
        Tokens(fresh=1, output=2),
        Tokens(fresh=3, cache_read=4, cache_write=5, output=6, reasoning=7),
    )
    with serve(AgentGatewayConfig(plan=plan, script=(Reply(text="hi"),))) as gw:
        client = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        for _ in range(3):
            client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
    assert [b.usage["input_tokens"] for b in gw.billed] == [1, 3, 1]
    assert gw.billed[1].canonical == CallUsage(12, 6, 4, 5, 0)  # Anthropic has no reasoning field
    assert gw.total() == CallUsage(14, 10, 4, 5, 0)
    with serve() as gw:
        client = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        for _ in range(3):
            client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
    assert len({b.canonical for b in gw.billed}) == 3


def test_a_request_without_a_shell_tool_gets_the_text_and_is_still_billed() -> None:
    with serve() as gw:
        client = anthropic.Anthropic(base_url=gw.root, api_key=GOOD_KEY, max_retries=0)
        message = client.messages.create(
            model="haiku", max_tokens=5, messages=[{"role": "user", "content": "title?"}]
        )
    assert message.content[0].text == "I will run it." and message.stop_reason == "end_turn"
    assert [(b.model, b.reply) for b in gw.billed] == [("haiku", "text")]


# --- the real CLIs, offline -----------------------------------------------------------------------
AGENTS = ("claude-code", "codex", "gemini-cli")
PROMPT = "Run `echo hello` in the shell, then say done."


def _skip_unless_runnable(agent: str) -> None:
    reason = missing_reason(agent)
    if reason:
        pytest.skip(reason)


def _generation_posts(run) -> list:  # noqa: ANN001 - AgentRun
    return [s for s in run.seen if s.method == "POST" and "count" not in s.path.lower()]


def _reported_usage(agent: str, events: list[dict]) -> CallUsage:
    """The CLI's own final token report, on the canonical mapping."""
    if agent == "claude-code":
        result = next(e for e in events if e.get("type") == "result")
        total = CallUsage()
        for usage in result["modelUsage"].values():
            total = total + CallUsage.from_claude(usage)
        return total
    if agent == "codex":
        done = [e for e in events if e.get("type") == "turn.completed"]
        return CallUsage.from_codex(done[-1]["usage"])
    stats = next(e for e in events if e.get("type") == "result")["stats"]
    # stream-json stats: input_tokens = prompt; output_tokens excludes thoughts, total has them
    return CallUsage(
        prompt_tokens=stats["input_tokens"],
        completion_tokens=stats["total_tokens"] - stats["input_tokens"],
        cached_tokens=stats["cached"],
    )


def _tool_seen(agent: str, events: list[dict]) -> bool:
    if agent == "claude-code":
        return any(
            b.get("type") == "tool_use" and b.get("name") == "Bash"
            for e in events
            if e.get("type") == "assistant"
            for b in e["message"]["content"]
        )
    if agent == "codex":
        return any(
            e.get("type") == "item.completed"
            and e["item"].get("type") == "command_execution"
            and e["item"].get("aggregated_output", "").strip() == "hello"
            for e in events
        )
    return any(e.get("type") == "tool_result" and e.get("output") == "hello" for e in events)


def _final_answer(agent: str, events: list[dict]) -> str:
    if agent == "claude-code":
        return next(e for e in events if e.get("type") == "result")["result"]
    if agent == "codex":
        return [
            e
            for e in events
            if e.get("type") == "item.completed" and e["item"]["type"] == "agent_message"
        ][-1]["item"]["text"]
    return "".join(
        e["content"] for e in events if e.get("type") == "message" and e.get("role") == "assistant"
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_real_cli_finishes_a_tool_session_and_reports_what_was_billed(
    agent: str, tmp_path: Path
) -> None:
    _skip_unless_runnable(agent)
    work = tmp_path / "work"
    work.mkdir()
    argv, env = canonical_invocation(agent, PROMPT, home=tmp_path / "home", workdir=work)
    run = run_agent(argv, env=env, cwd=work, timeout=180)
    events = run.events()
    assert run.returncode == 0 and not run.timed_out, run.stderr[-2000:]
    assert _tool_seen(agent, events)
    assert "Done: hello" in _final_answer(agent, events)
    # one billed entry per model request, and the tool's output went back to the model
    assert len(run.billed) == len(_generation_posts(run))
    assert all(s.status == 200 for s in _generation_posts(run))
    assert any(b.reply == "tool" for b in run.billed)
    assert any("hello" in out for b in run.billed for out in b.tool_results)
    billed = CallUsage()
    for entry in run.billed:
        billed = billed + entry.canonical
    reported = _reported_usage(agent, events)
    if agent == "gemini-cli":  # its stream-json stats carry no cache-write or reasoning split
        billed = CallUsage(billed.prompt_tokens, billed.completion_tokens, billed.cached_tokens)
    assert reported == billed
    print(f"{agent}: {len(run.billed)} requests, {run.wall_s:.1f}s wall, billed {billed}")


def test_codex_websocket_attempt_404_costs_retries_and_426_falls_back_at_once(
    tmp_path: Path,
) -> None:
    """Codex only tries WebSockets when the provider says ``supports_websockets=true``."""
    _skip_unless_runnable("codex")
    runs = {}
    for status in (404, 426):
        work = tmp_path / f"work{status}"
        work.mkdir()
        argv, env = canonical_invocation(
            "codex",
            PROMPT,
            home=tmp_path / f"home{status}",
            workdir=work,
            extra_provider=",supports_websockets=true",
        )
        run = run_agent(argv, env=env, cwd=work, config=AgentGatewayConfig(ws_status=status))
        assert run.returncode == 0, run.stderr[-2000:]
        assert _tool_seen("codex", run.events()) and len(run.billed) == 2
        upgrades = [s for s in run.seen if s.method == "GET" and s.path == "/v1/responses"]
        assert {s.status for s in upgrades} == {status}
        runs[status] = (len(upgrades), run.wall_s)
    print(f"codex websocket answer -> (upgrade attempts, wall s): {runs}")
    assert runs[404][0] > 3 and runs[426][0] == 1
    assert runs[404][1] > runs[426][1] + 3  # the 404 retries cost seconds of backoff


WRONG = "sk-wrong-0000000000000000"


@pytest.mark.parametrize("agent", AGENTS)
def test_real_cli_with_a_wrong_key_fails_with_the_401(agent: str, tmp_path: Path) -> None:
    _skip_unless_runnable(agent)
    work = tmp_path / "work"
    work.mkdir()
    argv, env = canonical_invocation(agent, PROMPT, home=tmp_path / "home", workdir=work, key=WRONG)
    if agent == "claude-code":  # else Claude Code retries a 401 ten times (minutes)
        env["CLAUDE_CODE_MAX_RETRIES"] = "0"
    run = run_agent(argv, env=env, cwd=work, timeout=120)
    events = run.events()
    assert run.returncode != 0 and not run.timed_out
    assert run.billed == [] and {s.status for s in _generation_posts(run)} == {401}
    if agent == "claude-code":
        result = next(e for e in events if e.get("type") == "result")
        assert result["is_error"] and result["api_error_status"] == 401
    elif agent == "codex":
        failed = next(e for e in events if e.get("type") == "turn.failed")
        assert "401" in failed["error"]["message"]
    else:
        result = next(e for e in events if e.get("type") == "result")
        assert result["status"] == "error" and "401" in result["error"]["message"]
    assert WRONG not in run.stdout  # none of the gateways' messages echo the key
