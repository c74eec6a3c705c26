"""The simulator's agent: its policy, and its tool protocols through the real SDKs.

The SDK tests run a small agent loop: the simulator's shell calls are executed for real with
bash in a temporary working directory holding the task's files, their output goes back as the
tool result, and the task's own tests judge the files at the end.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest

from eloledger.sim import SimServer, running_sim
from eloledger.sim.agent import PASSED, Step, plan_session, run_tests_command, write_command
from eloledger.tasks import Task, load_tasks, lookup_task

TASKS = {t.task_id: t for t in load_tasks("builtin:agent-code")}
BASH = {
    "name": "Bash",
    "description": "run a command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
    },
}
EXEC = {
    "type": "function",
    "name": "exec_command",
    "description": "run a command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
}


def _write(folder: Path, tree: dict[str, str]) -> None:
    for rel, text in tree.items():
        (folder / rel).write_text(text, encoding="utf-8")


def _bash(command: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=30
    )
    return done.stdout + done.stderr


def _judge(task: Task, cwd: Path) -> bool:
    (cwd / "_judge.py").write_text(task.tests or "", encoding="utf-8")
    done = subprocess.run([sys.executable, "-E", "-s", "_judge.py"], cwd=cwd, capture_output=True)
    return done.returncode == 0


def _plan(task: Task, model: str, key: str, seed: int = 0) -> tuple[Step, ...]:
    return plan_session(task, model, random.Random(f"agent|{seed}|{model}|{task.task_id}|{key}"))


def _solved_within(steps: tuple[Step, ...], max_turns: int) -> bool:
    """Whether the files are right when a CLI stops after ``max_turns`` tool-calling turns."""
    writes = [s for s in steps[:max_turns] if s.kind in ("write", "write_test")]
    return bool(writes) and writes[-1].right


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with running_sim(speed=200, seed=0) as server:
        yield server


# --- the policy ---------------------------------------------------------------------------------
def test_two_turns_solve_visibly_fewer_sessions_than_eight_and_the_larger_model_more() -> None:
    def rate(model: str, max_turns: int) -> float:
        keys = [f"s{i}" for i in range(300)]
        done = [_solved_within(_plan(t, model, k), max_turns) for t in TASKS.values() for k in keys]
        return sum(done) / len(done)

    small2, small8, large8 = rate("sim-small", 2), rate("sim-small", 8), rate("sim-large", 8)
    print(f"solved: sim-small 2 turns {small2:.2f}, 8 turns {small8:.2f}; sim-large 8 {large8:.2f}")
    assert small8 - small2 > 0.2
    assert large8 > small8 + 0.03
    assert 0.3 < small2 < small8 < 0.98


def test_sessions_vary_one_turn_fixes_test_first_wrong_fixes_and_giving_up() -> None:
    plans = [_plan(t, "sim-small", f"s{i}") for t in TASKS.values() for i in range(200)]
    shapes = {tuple(s.kind for s in p) for p in plans}
    assert ("write", "finish") in shapes or ("write_test", "finish") in shapes
    assert any(p[0].kind == "test" and p[1].kind == "write" for p in plans)
    assert any(s.kind == "write" and not s.right for p in plans for s in p)
    gave_up = [p for p in plans if p[-2].kind == "test" and not _solved_within(p, 99)]
    assert gave_up
    assert max(len(p) for p in plans) <= 9  # explore + three tries


def test_a_plan_is_a_pure_function_of_seed_model_task_and_key() -> None:
    task = TASKS["agent-roman"]
    assert _plan(task, "sim-small", "s1") == _plan(task, "sim-small", "s1")
    assert len({_plan(task, "sim-small", f"s{i}") for i in range(30)}) > 3
    assert {_plan(task, "sim-small", "s1", seed=s) for s in range(30)} != {
        _plan(task, "sim-small", "s1")
    }


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_the_shell_commands_really_fix_or_fail_the_task(task_id: str, tmp_path: Path) -> None:
    task = TASKS[task_id]
    _write(tmp_path, task.files or {})
    assert PASSED not in _bash(run_tests_command(task), tmp_path)
    _bash(write_command(task, right=False), tmp_path)
    assert PASSED not in _bash(run_tests_command(task), tmp_path) and not _judge(task, tmp_path)
    _bash(write_command(task, right=True), tmp_path)
    assert PASSED in _bash(run_tests_command(task), tmp_path) and _judge(task, tmp_path)


def test_agent_tasks_are_found_inside_a_wrapped_prompt() -> None:
    task = TASKS["agent-mean"]
    assert lookup_task(f"<system-reminder>x</system-reminder>\n{task.prompt}\n") is task


# --- the wires, through the real SDKs -----------------------------------------------------------
def _anthropic_session(
    client: anthropic.Anthropic, task: Task, cwd: Path, *, max_turns: int = 10, sample: str = ""
) -> tuple[list, list]:
    """A minimal Claude-Code-like loop; returns (final messages per request, tool outputs)."""
    headers = {"x-sim-sample": sample} if sample else {}
    messages: list[dict] = [{"role": "user", "content": task.prompt}]
    replies, outputs = [], []
    for _ in range(max_turns):
        system = [
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            }
        ]
        with client.messages.stream(
            model="sim-small",
            max_tokens=2000,
            system=system,
            messages=messages,
            tools=[BASH],
            extra_headers=headers,
        ) as stream:
            reply = stream.get_final_message()
        replies.append(reply)
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            break
        output = _bash(uses[0].input["command"], cwd)
        outputs.append(output)
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": output}],
            }
        )
    return replies, outputs


def test_anthropic_agent_loop_follows_the_plan_and_the_files_are_judged(
    sim: SimServer, tmp_path: Path
) -> None:
    client = anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0)
    task = TASKS["agent-roman"]
    key = next(f"{i}" for i in range(100) if len(_plan(task, "sim-small", f"s{i}")) >= 6)
    plan = _plan(task, "sim-small", f"s{key}")
    _write(tmp_path, task.files or {})
    replies, outputs = _anthropic_session(client, task, tmp_path, sample=key)
    assert len(replies) == len(plan)  # one request per planned step, the last one the answer
    assert [r.stop_reason for r in replies] == ["tool_use"] * (len(plan) - 1) + ["end_turn"]
    assert _judge(task, tmp_path) == _solved_within(plan, 99)
    final = replies[-1].content[0].text
    assert ("tests pass" in final) == (PASSED in outputs[-1])
    # the prompt grows; after the first turn the conversation so far is read from the cache
    prompts = [
        r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens
        for r in replies
    ]
    assert prompts == sorted(prompts) and prompts[-1] > prompts[0]
    assert replies[0].usage.cache_read_input_tokens == 0
    assert all(r.usage.cache_read_input_tokens > 0 for r in replies[1:])
    assert all(r.usage.output_tokens > 5 for r in replies)


def test_a_turn_limit_of_two_cuts_a_long_session_before_its_right_fix(
    sim: SimServer, tmp_path: Path
) -> None:
    client = anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0)
    task = TASKS["agent-roman"]
    key = next(
        f"{i}"
        for i in range(200)
        if _solved_within(p := _plan(task, "sim-small", f"s{i}"), 8) and not _solved_within(p, 2)
    )
    short, long = tmp_path / "short", tmp_path / "long"
    for folder, turns in ((short, 2), (long, 8)):
        folder.mkdir()
        _write(folder, task.files or {})
        _anthropic_session(client, task, folder, max_turns=turns, sample=key)
    assert not _judge(task, short) and _judge(task, long)


def test_responses_agent_loop_with_function_calls(sim: SimServer, tmp_path: Path) -> None:
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-sim", max_retries=0)
    task = TASKS["agent-mean"]
    _write(tmp_path, task.files or {})
    instructions = "You are Codex, a coding agent. " + "Follow the repository conventions. " * 200
    items: list[dict] = [{"role": "user", "content": task.prompt}]
    responses = []
    for _ in range(10):
        with client.responses.stream(
            model="sim-large",
            instructions=instructions,
            input=items,
            tools=[EXEC],
            extra_headers={"x-sim-sample": "7"},
        ) as stream:
            response = stream.get_final_response()
        responses.append(response)
        calls = [o for o in response.output if o.type == "function_call"]
        items += [o.model_dump(exclude_none=True) for o in response.output]
        if not calls:
            break
        assert calls[0].name == "exec_command"
        output = _bash(json.loads(calls[0].arguments)["cmd"], tmp_path)
        items.append(
            {"type": "function_call_output", "call_id": calls[0].call_id, "output": output}
        )
    plan = _plan(task, "sim-large", "s7")
    assert len(responses) == len(plan) and responses[-1].output_text
    assert _judge(task, tmp_path) == _solved_within(plan, 99)
    usage = [r.usage for r in responses]
    assert all(u.output_tokens_details.reasoning_tokens > 0 for u in usage)
    assert all(u.output_tokens > u.output_tokens_details.reasoning_tokens for u in usage)
    assert usage[0].input_tokens_details.cached_tokens == 0
    assert all(
        u.input_tokens_details.cached_tokens % 128 == 0
        and u.input_tokens_details.cached_tokens >= 1024
        for u in usage[1:]
    )


def _gemini(
    sim: SimServer, path: str, body: dict, key: str = "sk-gem", sample: str = ""
) -> tuple[int, bytes]:
    import urllib.request

    request = urllib.request.Request(
        sim.base_url + path,
        json.dumps(body).encode(),
        {"x-goog-api-key": key, "content-type": "application/json", "x-sim-sample": sample},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_gemini_function_calls_stream_and_errors_in_googles_shape(tmp_path: Path) -> None:
    task = TASKS["agent-fizzbuzz"]
    _write(tmp_path, task.files or {})
    shell = {
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
    contents: list[dict] = [{"role": "user", "parts": [{"text": task.prompt}]}]
    with running_sim(speed=200, api_keys={"sk-gem"}) as sim:
        for _ in range(10):
            status, raw = _gemini(
                sim,
                "/v1beta/models/sim-small:streamGenerateContent?alt=sse",
                {"contents": contents, "tools": [shell]},
                sample="3",
            )
            assert status == 200 and raw.startswith(b"data: ")
            chunk = json.loads(raw.split(b"data: ", 1)[1])
            parts = chunk["candidates"][0]["content"]["parts"]
            contents.append({"role": "model", "parts": parts})
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            if not calls:
                break
            output = _bash(calls[0]["args"]["command"], tmp_path)
            contents.append(
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "run_shell_command",
                                "response": {"output": output},
                            }
                        }
                    ],
                }
            )
        meta = chunk["usageMetadata"]
        assert (
            meta["totalTokenCount"]
            == meta["promptTokenCount"] + meta["candidatesTokenCount"] + meta["thoughtsTokenCount"]
        )
        status, raw = _gemini(
            sim, "/v1beta/models/sim-small:generateContent", {"contents": contents[:1]}, key="bad"
        )
        assert (status, json.loads(raw)["error"]["status"]) == (401, "UNAUTHENTICATED")
        status, raw = _gemini(
            sim, "/v1beta/models/nope:generateContent", {"contents": contents[:1]}
        )
        assert (status, json.loads(raw)["error"]["status"]) == (404, "NOT_FOUND")
        status, raw = _gemini(
            sim, "/v1beta/models/sim-small:countTokens", {"contents": contents[:1]}
        )
        assert status == 200 and json.loads(raw)["totalTokens"] > 0
    plan = _plan(task, "sim-small", "s3")
    assert len(contents) == 2 * len(plan) and _judge(task, tmp_path) == _solved_within(plan, 99)


def test_sessions_without_a_header_count_up_and_a_request_without_a_task_gets_a_plain_answer(
    sim: SimServer,
) -> None:
    client = anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0)
    task = TASKS["agent-slugify"]
    keys = []
    for _ in range(2):
        reply = client.messages.create(
            model="sim-large",
            max_tokens=500,
            tools=[BASH],
            messages=[{"role": "user", "content": task.prompt}],
        )
        keys.append(reply.content[0].text.rsplit("[sim session ", 1)[1].rstrip("]"))
    assert keys[0] != keys[1] and all(k.startswith("n") for k in keys)
    other = client.messages.create(
        model="sim-large",
        max_tokens=500,
        tools=[BASH],
        messages=[{"role": "user", "content": "hi"}],
    )
    assert other.stop_reason == "end_turn" and "simulator" in other.content[0].text


def test_codex_websocket_upgrade_gets_a_quick_426_and_the_connection_closes(sim: SimServer) -> None:
    with socket.create_connection(("127.0.0.1", sim.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(
            b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            b"Authorization: Bearer sk-sim\r\nSec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 426") and time.monotonic() - started < 1.0
    assert b"connection: close" in reply.lower() and b"use HTTPS" in reply


def _agent_ask(client: anthropic.Anthropic, fault: str, **kwargs: object):
    return client.messages.create(
        model="sim-small",
        max_tokens=500,
        tools=[BASH],
        messages=[{"role": "user", "content": TASKS["agent-mean"].prompt}],
        extra_headers={"x-sim-fault": fault},
        **kwargs,
    )


def test_faults_apply_to_agent_replies_on_every_wire(sim: SimServer) -> None:
    ant = anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0)
    assert _agent_ask(ant, "zero_usage").usage.output_tokens == 0
    events = list(_agent_ask(ant, "no_usage", stream=True))
    assert getattr(next(e for e in events if e.type == "message_delta"), "usage", None) is None
    assert any(
        e.type == "content_block_start" and e.content_block.type == "tool_use" for e in events
    )
    with pytest.raises(anthropic.APIStatusError) as info:
        list(_agent_ask(ant, "sse_error", stream=True))
    assert info.value.body["error"]["type"] == "overloaded_error"
    with pytest.raises(anthropic.RateLimitError):
        _agent_ask(ant, "429")
    oai = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-sim", max_retries=0)
    ask = {"model": "sim-small", "input": TASKS["agent-mean"].prompt, "tools": [EXEC]}
    plain = oai.responses.create(**ask, extra_headers={"x-sim-fault": "no_usage"})
    assert plain.usage is None and plain.output[-1].type == "function_call"
    with pytest.raises(openai.APIConnectionError):
        list(oai.responses.create(**ask, stream=True, extra_headers={"x-sim-fault": "reset"}))
    body = {"contents": [{"role": "user", "parts": [{"text": TASKS["agent-mean"].prompt}]}]}
    status, raw = _gemini(sim, "/v1beta/models/sim-small:generateContent", body, sample="1")
    assert status == 200 and "usageMetadata" in json.loads(raw)
    import urllib.request

    request = urllib.request.Request(
        sim.base_url + "/v1beta/models/sim-small:generateContent",
        json.dumps(body).encode(),
        {"x-goog-api-key": "k", "x-sim-fault": "429", "content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as http_error:
        urllib.request.urlopen(request, timeout=10)
    error = json.loads(http_error.value.read())["error"]
    assert (http_error.value.code, error["status"]) == (429, "RESOURCE_EXHAUSTED")


def test_gemini_model_list_and_one_model() -> None:
    import urllib.request

    with running_sim(speed=200) as sim:
        headers = {"x-goog-api-key": "k"}
        with urllib.request.urlopen(
            urllib.request.Request(sim.base_url + "/v1beta/models", headers=headers), timeout=10
        ) as response:
            names = [m["name"] for m in json.loads(response.read())["models"]]
        with urllib.request.urlopen(
            urllib.request.Request(sim.base_url + "/v1beta/models/sim-large", headers=headers),
            timeout=10,
        ) as response:
            one = json.loads(response.read())
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(
                urllib.request.Request(sim.base_url + "/v1beta/models/nope", headers=headers),
                timeout=10,
            )
    assert names == ["models/sim-small", "models/sim-large"]
    assert (
        one["name"] == "models/sim-large" and "generateContent" in one["supportedGenerationMethods"]
    )
    assert json.loads(missing.value.read())["error"]["status"] == "NOT_FOUND"


def test_gemini_json_side_questions_get_json_that_fits_the_schema(sim: SimServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "next_speaker": {"type": "string", "enum": ["user", "model"]},
        },
    }
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Who speaks next?"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema},
    }
    status, raw = _gemini(sim, "/v1beta/models/sim-small:generateContent", body)
    text = json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"]
    assert status == 200 and json.loads(text) == {"reasoning": "ok", "next_speaker": "user"}
