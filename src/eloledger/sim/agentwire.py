"""Tool-calling requests and replies on the three agent wires, for the simulated agent.

Anthropic messages (``tools``, ``tool_use``/``tool_result``), the Responses API
(``function_call``/``function_call_output``) and Gemini (``functionCall``/``functionResponse``):
``read_turn`` turns a request body into a :class:`Turn` (the user's words, the tool outputs so
far, the assistant's own earlier words, the offered shell tool, how much of the prompt was
already sent before), and ``render`` writes one reply (text and maybe one shell call) as a
non-stream body or as the stream events the real APIs send.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

import orjson

from eloledger.sim.protocols import sse, stream_error_openai

# Shell tools by name, as each CLI offers them (Claude Code, Codex, Gemini CLI).
SHELL_TOOLS = ("Bash", "exec_command", "shell", "shell_command", "run_shell_command")


@dataclass
class Turn:
    """What an agent request holds, whatever its wire."""

    wire: str  # anthropic | responses | gemini
    model: str
    stream: bool
    user_text: str  # the user's messages (where the task prompt is)
    assistant_text: str  # the agent's own earlier words (where its session key is)
    outputs: list[str]  # tool results so far, oldest first
    shell: tuple[str, dict] | None  # (tool name, parameter schema) of the offered shell tool
    prompt_chars: int  # the whole request
    prefix_chars: int  # the part that was already sent up to the agent's last reply
    cache_marked: bool = True  # Anthropic: the client asked for prompt caching (cache_control)
    wants_json: bool = False  # Gemini: a JSON side question (next speaker, routing)
    json_schema: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Usage:
    fresh: int  # prompt tokens neither read from nor written to the cache
    cache_read: int
    cache_write: int
    output: int  # visible output tokens
    reasoning: int


def read_turn(wire: str, model: str, body: dict, stream: bool) -> Turn:
    reader = {"anthropic": _anthropic, "responses": _responses, "gemini": _gemini}[wire]
    return reader(model, body, stream)


def has_tools(wire: str, body: dict) -> bool:
    """Whether the request offers tools (the agent path), as opposed to a plain chat call."""
    return bool(body.get("tools")) or wire == "gemini"


def _chars(value: object) -> int:
    return len(orjson.dumps(value))


def _text(value: object) -> str:
    """Text of any content shape (string, list of blocks/parts, dict with text/output)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "result", "stdout"):
            if key in value:
                return _text(value[key])
    return ""


def _pick_shell(tools: dict[str, dict]) -> tuple[str, dict] | None:
    for name in SHELL_TOOLS:
        if name in tools:
            return name, tools[name]
    return None


@dataclass
class _History:
    """A conversation read oldest first; ``last_reply`` indexes the agent's latest entry."""

    key: str  # the body field holding the conversation
    entries: list
    user: list[str] = field(default_factory=list)
    mine: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    last_reply: int = -1

    def turn(self, wire: str, model: str, body: dict, stream: bool, tools: dict, **extra) -> Turn:
        head = {k: v for k, v in body.items() if k != self.key}
        sent = self.entries[: self.last_reply + 1]
        return Turn(
            wire,
            model,
            stream,
            "\n".join(self.user),
            "\n".join(self.mine),
            self.outputs,
            _pick_shell(tools),
            _chars(body),
            _chars(head) + _chars(sent) if self.last_reply >= 0 else 0,
            **extra,
        )


def _anthropic(model: str, body: dict, stream: bool) -> Turn:
    seen = _History("messages", [m for m in body.get("messages") or [] if isinstance(m, dict)])
    tools = {t.get("name", ""): t.get("input_schema") or {} for t in body.get("tools") or []}
    for i, message in enumerate(seen.entries):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                seen.outputs.append(_text(block.get("content")))
            elif block.get("type") == "text":
                mine = message.get("role") == "assistant"
                (seen.mine if mine else seen.user).append(_text(block))
        if message.get("role") == "assistant":
            seen.last_reply = i
    marked = b"cache_control" in orjson.dumps(body)
    return seen.turn("anthropic", model, body, stream, tools, cache_marked=marked)


def _responses(model: str, body: dict, stream: bool) -> Turn:
    items = body.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items or []
    seen = _History("input", items)
    tools = {
        t.get("name", ""): t.get("parameters") or {}
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "function"
    }
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output"):
            seen.outputs.append(_text(item.get("output")))
        elif kind == "message" and item.get("role") == "assistant":
            seen.mine.append(_text(item.get("content")))
            seen.last_reply = i
        elif kind == "message" and item.get("role") == "user":
            seen.user.append(_text(item.get("content")))
        elif kind in ("function_call", "reasoning", "custom_tool_call"):
            seen.last_reply = i
    return seen.turn("responses", model, body, stream, tools)


def _gemini(model: str, body: dict, stream: bool) -> Turn:
    seen = _History("contents", [c for c in body.get("contents") or [] if isinstance(c, dict)])
    tools: dict[str, dict] = {}
    for tool in body.get("tools") or []:
        for decl in tool.get("functionDeclarations") or []:
            schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
            tools[decl.get("name", "")] = schema
    for i, content in enumerate(seen.entries):
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                seen.outputs.append(_text(part["functionResponse"].get("response")))
            elif "text" in part and not part.get("thought"):
                mine = content.get("role") == "model"
                (seen.mine if mine else seen.user).append(str(part["text"]))
        if content.get("role") == "model":
            seen.last_reply = i
    config = body.get("generationConfig") or {}
    return seen.turn(
        "gemini",
        model,
        body,
        stream,
        tools,
        wants_json=config.get("responseMimeType") == "application/json",
        json_schema=config.get("responseJsonSchema") or config.get("responseSchema") or {},
    )


def shell_arguments(shell: tuple[str, dict], command: str) -> dict:
    """Arguments for the offered shell tool (their schemas differ per CLI)."""
    props = shell[1].get("properties") or {}
    if "cmd" in props:
        return {"cmd": command}
    if (props.get("command") or {}).get("type") == "array":
        return {"command": ["bash", "-lc", command]}
    args: dict = {"command": command}
    if "description" in props:
        args["description"] = "run a shell command"
    return args


def json_answer(schema: dict) -> str:
    """A plausible answer to Gemini CLI's JSON side questions."""
    answer: dict = {}
    for name, spec in (schema.get("properties") or {}).items():
        choices = spec.get("enum") if isinstance(spec, dict) else None
        answer[name] = "user" if name == "next_speaker" else (choices[0] if choices else "ok")
    return orjson.dumps(answer or {"reasoning": "done", "next_speaker": "user"}).decode()


# --- rendering -----------------------------------------------------------------------------------
def wire_usage(wire: str, u: Usage) -> dict:
    """The usage object each wire sends (see agents/usage.py for what each field means)."""
    if wire == "anthropic":
        return {
            "input_tokens": u.fresh,
            "cache_creation_input_tokens": u.cache_write,
            "cache_read_input_tokens": u.cache_read,
            "output_tokens": u.output,
        }
    prompt = u.fresh + u.cache_read + u.cache_write
    if wire == "responses":
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": u.cache_read},
            "output_tokens": u.output + u.reasoning,
            "output_tokens_details": {"reasoning_tokens": u.reasoning},
            "total_tokens": prompt + u.output + u.reasoning,
        }
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": u.output,
        "cachedContentTokenCount": u.cache_read,
        "thoughtsTokenCount": u.reasoning,
        "totalTokenCount": prompt + u.output + u.reasoning,
    }


def render(turn: Turn, text: str, call: dict | None, usage: Usage | None) -> tuple[bytes, bool]:
    """(bytes, is_stream) of the reply: ``call`` is the shell tool's arguments, if any.

    ``usage`` None drops it as the gateways that lose usage do (the ``no_usage`` fault).
    """
    renderer = {"anthropic": _render_anthropic, "responses": _render_responses}
    sent = None if usage is None else wire_usage(turn.wire, usage)
    return renderer.get(turn.wire, _render_gemini)(turn, text, call, sent)


def stream_error(wire: str) -> bytes:
    """The mid-stream error event of each wire (the ``sse_error`` fault)."""
    message = "Overloaded (eloledger simulator: injected mid-stream error)"
    if wire == "anthropic":
        error = {"type": "overloaded_error", "message": message}
        return sse({"type": "error", "error": error}, "error")
    if wire == "responses":
        error = stream_error_openai()
        return sse({"type": "error", "code": error["code"], "message": error["message"]}, "error")
    return sse({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})


def _render_anthropic(
    turn: Turn, text: str, call: dict | None, usage: dict | None
) -> tuple[bytes, bool]:
    ident = uuid.uuid4().hex[:24]
    blocks: list[dict] = [{"type": "text", "text": text}]
    if call is not None and turn.shell is not None:
        tool = {"type": "tool_use", "id": f"toolu_sim{ident}", "name": turn.shell[0]}
        blocks.append({**tool, "input": call})
    stop = "tool_use" if len(blocks) > 1 else "end_turn"
    message = {
        "id": f"msg_sim{ident}",
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
    }
    if usage is not None:
        message["usage"] = usage
    if not turn.stream:
        return orjson.dumps(message), False
    zeros = {"input_tokens": 0, "output_tokens": 0}
    start_usage = {**usage, "output_tokens": 1} if usage is not None else zeros
    start = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    out = [sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            empty, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": text}
        else:
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": orjson.dumps(call).decode()}
        out += [
            sse(
                {"type": "content_block_start", "index": index, "content_block": empty},
                "content_block_start",
            ),
            sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            ),
            sse({"type": "content_block_stop", "index": index}, "content_block_stop"),
        ]
    final = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    if usage is not None:
        final["usage"] = usage
    out += [
        sse(final, "message_delta"),
        sse({"type": "message_stop"}, "message_stop"),
    ]
    return b"".join(out), True


def _render_responses(
    turn: Turn, text: str, call: dict | None, usage: dict | None
) -> tuple[bytes, bool]:
    ident = uuid.uuid4().hex[:24]
    message = {
        "type": "message",
        "id": f"msg_sim{ident}",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    items = [message]
    if call is not None and turn.shell is not None:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_sim{ident}",
                "call_id": f"call_sim{ident}",
                "name": turn.shell[0],
                "arguments": orjson.dumps(call).decode(),
                "status": "completed",
            }
        )
    response = {
        "id": f"resp_sim{ident}",
        "object": "response",
        "created_at": int(time.time()),
        "model": turn.model,
        "status": "completed",
        "output": items,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }
    if not turn.stream:
        return orjson.dumps(response), False
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(items):
        events += _responses_item_events(index, item)
    events.append({"type": "response.completed", "response": response})
    return b"".join(
        sse({**event, "sequence_number": n}, event["type"]) for n, event in enumerate(events)
    ), True


def _responses_item_events(index: int, item: dict) -> list[dict]:
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "function_call":
        args = item["arguments"]
        return [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "arguments": "", "status": "in_progress"},
            },
            {"type": "response.function_call_arguments.delta", **where, "delta": args},
            {"type": "response.function_call_arguments.done", **where, "arguments": args},
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ]
    part = item["content"][0]
    text = part["text"]
    at = {**where, "content_index": 0}
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "content": [], "status": "in_progress"},
        },
        {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **at, "delta": text, "logprobs": []},
        {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": part},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _render_gemini(
    turn: Turn, text: str, call: dict | None, usage: dict | None
) -> tuple[bytes, bool]:
    parts: list[dict] = [{"text": text}]
    if call is not None and turn.shell is not None:
        parts.append({"functionCall": {"name": turn.shell[0], "args": call}})
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "modelVersion": turn.model,
        "responseId": uuid.uuid4().hex[:20],
    }
    if usage is not None:
        chunk["usageMetadata"] = usage
    if not turn.stream:
        return orjson.dumps(chunk), False
    return sse(chunk), True
