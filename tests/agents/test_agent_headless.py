"""The three CLIs' live event streams, parsed from the raw outputs the real programs wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.agents.claude_code import headless as claude
from eloledger.agents.codex import headless as codex
from eloledger.agents.events import LaunchRequest, SessionState
from eloledger.agents.gemini_cli import headless as gemini
from eloledger.agents.usage import CallUsage

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "agent-logs" / "samples"


def _parse(module, name: str, returncode: int = 0) -> SessionState:
    state = SessionState(agent=module.AGENT)
    parser = module.StreamParser(state)
    for line in (SAMPLES / name).read_text().splitlines():
        parser.feed(line)
    parser.finish(returncode, "")
    return state


def test_claude_stream_takes_model_usage_not_per_block_usage() -> None:
    s = _parse(claude, "claude-print-stream.jsonl")
    # modelUsage: 25 fresh + 5000 read + 500 written in, 45 out
    assert s.final == CallUsage(
        prompt_tokens=5525, completion_tokens=45, cached_tokens=5000, cache_write_tokens=500
    )
    assert (s.turns, s.tool_calls, s.error_class) == (2, 1, None)
    assert s.session_id == "45e15832-74ec-486a-934f-420d213112c8"
    assert s.result_text == "Done: hello-from-tool"


def test_claude_live_estimate_counts_each_message_once_before_the_result() -> None:
    state = SessionState(agent="claude-code")
    parser = claude.StreamParser(state)
    lines = (SAMPLES / "claude-print-stream.jsonl").read_text().splitlines()
    for line in lines[:-1]:
        parser.feed(line)
    assert state.final is None
    # two distinct message ids: prompt 12+200+2000 and 13+300+3000, plus the blocks' text
    assert 5525 <= state.est_tokens < 5525 + 100
    assert state.tokens == state.est_tokens


@pytest.mark.parametrize(
    ("result", "error_class"),
    [
        ({"subtype": "error_max_turns", "is_error": True, "num_turns": 2}, "max_turns"),
        ({"subtype": "success", "is_error": True, "result": "Invalid API key"}, "auth"),
        ({"subtype": "success", "is_error": True, "result": "Connection error."}, "api"),
    ],
)
def test_claude_is_error_is_an_error_even_with_subtype_success(result, error_class) -> None:
    state = SessionState(agent="claude-code")
    parser = claude.StreamParser(state)
    parser.feed(json.dumps({"type": "result", "modelUsage": {}, **result}))
    parser.finish(1, "")
    assert state.error_class == error_class


def test_claude_without_result_is_a_crash() -> None:
    state = SessionState(agent="claude-code")
    parser = claude.StreamParser(state)
    parser.feed('{"type":"system","subtype":"init","session_id":"x"}')
    parser.finish(-9, "killed")
    assert state.error_class == "crash" and state.final is None


def test_codex_turn_completed_is_a_running_total_not_summed() -> None:
    s = _parse(codex, "codex-exec-json.jsonl")
    assert s.final == CallUsage(
        prompt_tokens=17000, completion_tokens=170, cached_tokens=1700, reasoning_tokens=17
    )
    assert s.error_class is None  # "Reconnecting..." error events are not failures
    assert (s.tool_calls, s.turns) == (1, 2)
    assert s.result_text == "Done: mock answer"
    state = SessionState(agent="codex")
    parser = codex.StreamParser(state)
    for total in (1000, 4000):  # a second turn reports 3000 earlier + 1000
        parser.feed(json.dumps({"type": "turn.completed", "usage": {"input_tokens": total}}))
    assert state.final.prompt_tokens == 4000


def test_codex_turn_failed_is_auth_or_api() -> None:
    state = SessionState(agent="codex")
    parser = codex.StreamParser(state)
    parser.feed('{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}')
    parser.finish(1, "")
    assert state.error_class == "auth"


def test_gemini_stream_result_includes_thoughts_in_the_completion() -> None:
    s = _parse(gemini, "gemini-print-stream.jsonl")
    # total 3033 = prompt 3000 + candidates 30 + thoughts 3 (gemini-print-json.json shows 3)
    assert s.final == CallUsage(
        prompt_tokens=3000, completion_tokens=33, cached_tokens=300, reasoning_tokens=3
    )
    as_json = json.loads((SAMPLES / "gemini-print-json.json").read_text())
    tokens = as_json["stats"]["models"]["gemini-2.5-flash"]["tokens"]
    assert s.final == CallUsage.from_gemini(tokens)  # the stream agrees with -o json
    assert (s.turns, s.tool_calls) == (2, 1)


@pytest.mark.parametrize(("code", "error_class"), [(41, "auth"), (53, "max_turns"), (1, "crash")])
def test_gemini_exit_codes(code: int, error_class: str) -> None:
    state = SessionState(agent="gemini-cli")
    gemini.StreamParser(state).finish(code, "")
    assert state.error_class == error_class


def _launch(module, **kwargs):  # noqa: ANN001, ANN003, ANN202
    kwargs["args"] = tuple(kwargs.get("args", ()))
    kwargs["headers"] = tuple((kwargs.get("headers") or {}).items())
    return module.launch(LaunchRequest(**kwargs))


def test_launch_lines_follow_the_shared_invocations(tmp_path: Path) -> None:
    common = {"prompt": "fix it", "api_key": "sk-test-123", "model": "m", "workdir": str(tmp_path)}
    c = _launch(claude, root_url="http://127.0.0.1:9/", max_turns=4, effort=None, args=[], **common)
    assert c.argv[:3] == ["claude", "-p", "fix it"] and "--verbose" in c.argv
    assert c.argv[c.argv.index("--max-turns") + 1] == "4"
    assert c.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    x = _launch(
        codex, root_url="http://127.0.0.1:9", max_turns=None, effort="high", args=[], **common
    )
    assert x.argv[-1] == "fix it" and x.env == {"ELOLEDGER_AGENT_KEY": "sk-test-123"}
    assert 'base_url="http://127.0.0.1:9/v1"' in " ".join(x.argv)
    y = _launch(codex, root_url="http://h:9/v1/", max_turns=None, effort=None, args=[], **common)
    assert 'base_url="http://h:9/v1"' in " ".join(y.argv)  # a profile's codex URL has /v1
    assert 'model_reasoning_effort="high"' in x.argv
    assert "sk-test" not in " ".join(x.argv)  # the key only ever goes through the environment
    g = _launch(gemini, root_url="http://127.0.0.1:9", max_turns=3, effort=None, args=[], **common)
    settings = json.loads(g.home_files[".gemini/settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["model"]["maxSessionTurns"] == 3


def test_claude_rejected_key_retry_stops_the_session_as_auth() -> None:
    # Claude Code 2.1.197 answers a 401 with up to 10 api_retry events (~3 min) before failing
    state = SessionState(agent="claude-code")
    parser = claude.StreamParser(state)
    parser.feed(
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,'
        '"error_status":401,"error":"authentication_failed"}'
    )
    assert state.abort and state.error_class == "auth"
    parser.finish(-9, "")
    assert state.error_class == "auth"
    other = SessionState(agent="claude-code")
    claude.StreamParser(other).feed(
        '{"type":"system","subtype":"api_retry","attempt":1,"error_status":529,"error":"overloaded"}'
    )
    assert not other.abort and other.error_class is None  # a transient error is left to retry


def test_extra_headers_go_through_each_clis_own_setting(tmp_path: Path) -> None:
    common = {"prompt": "p", "api_key": "k", "model": "m", "workdir": str(tmp_path)}
    common |= {"root_url": "http://h", "max_turns": None, "effort": None, "args": []}
    headers = {"x-sim-sample": "arm|0|2"}
    c = _launch(claude, headers=headers, **common)
    assert c.env["ANTHROPIC_CUSTOM_HEADERS"] == "x-sim-sample: arm|0|2"
    g = _launch(gemini, headers=headers, **common)
    assert g.env["GEMINI_CLI_CUSTOM_HEADERS"] == "x-sim-sample: arm|0|2"
    x = _launch(codex, headers=headers, **common)
    assert any(a.endswith(',http_headers={"x-sim-sample"="arm|0|2"}}') for a in x.argv)
