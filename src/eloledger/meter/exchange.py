"""One model call's answer on its way from the gateway to the agent: relayed, tapped, recorded.

An :class:`Exchange` is the gateway leg's sink (:class:`~.upstream.Sink`): the answer's head
and each piece of its body arrive as calls from the event loop's read callback, and each piece
is counted by the :class:`~.tap.Tap` and sent on to the agent at once. When the answer ends
(or breaks off) the call becomes one :class:`~.call.MeteredCall`, from the gateway's bytes,
never from the agent's. An agent that hangs up midway is still billed the whole answer: the
gateway's bytes are read to the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from http import HTTPStatus

import orjson

from eloledger.agents.usage import CallUsage
from eloledger.gateway.error_kinds import request_id
from eloledger.gateway.wire import answered_model
from eloledger.meter.agent_side import AgentConnection
from eloledger.meter.call import MeteredCall
from eloledger.meter.tap import Tap, asked_model
from eloledger.meter.upstream import Source
from eloledger.sim.http import LAST_CHUNK, Request, chunk

# Never forwarded either way: connection-level headers, and what the meter rewrites itself.
HOP = frozenset(
    {"host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
     "trailer", "transfer-encoding", "upgrade", "content-length", "content-encoding",
     "accept-encoding"}
)  # fmt: skip
_MAX_WHOLE_BODY = 64 << 20  # a non-streamed answer is relayed whole; bigger is refused


class Exchange:
    """The answer to one forwarded request (a :class:`~.upstream.Sink`)."""

    def __init__(
        self,
        req: Request,
        wire: str | None,
        agent: AgentConnection,
        record: Callable[[MeteredCall], None],
        forget: Callable[[Exchange], None],
    ) -> None:
        self.req = req
        self.wire = wire
        self.agent = agent
        self.record = record  # numbers the call in its session, in the order calls end
        self.forget = forget  # the session stops tracking it (it ended)
        self.source: Source | None = None  # what the gateway leg's send returned: to pause
        self.started, self.wall = time.perf_counter(), time.time()
        self.ended = False
        self._headed = False
        self._status = 0
        self._headers: list[tuple[str, str]] = []
        self._out: list[tuple[str, str]] = []  # the head as relayed
        self._streamed = False
        self._tap: Tap | None = None
        self._unsent_head = b""
        self._parts: list[bytes] = []
        self._sent = 0
        self._ttft: float | None = None
        self._paused = False
        agent.on_drain = self._drain
        agent.on_lost = self._agent_gone

    # ------------------------------------------------------------------- what the gateway calls
    def head(self, status: int, headers: list[tuple[str, str]]) -> None:
        self._headed, self._status, self._headers = True, status, headers
        self._streamed = "text/event-stream" in next(
            (v for k, v in headers if k == "content-type"), ""
        )
        self._tap = Tap(self.wire, self._streamed) if self.wire is not None else None
        self._out = [(k, v) for k, v in headers if k not in HOP]
        if self._streamed:
            self._unsent_head = head_bytes(status, self._out, chunked=True,
                                           keep=self.req.keep_alive)  # fmt: skip

    def piece(self, data: bytes, last: bool) -> None:
        if self.ended:
            return
        if not self._streamed:
            self._sent += len(data)
            if self._sent > _MAX_WHOLE_BODY:
                raise ConnectionError("answer too large")
            self._parts.append(data)
        else:
            self._relay(data, last)
        if last:
            self._finish(None)

    def failed(self, exc: BaseException) -> None:
        if self.ended:
            return
        if not self._headed:
            message = f"the meter could not reach the gateway: {type(exc).__name__}"
            self.agent.write(json_answer(502, {"error": {"message": message}}, close=True))
            self.ended = True
            if self.wire is not None:
                self._record(502, Tap(self.wire, False), None, message)
            self.forget(self)
            self.agent.done(False)
            return
        self._finish(f"the gateway's answer broke off: {type(exc).__name__}")

    def cancel(self) -> None:
        """The session closes: stop reading the answer (the call is not recorded)."""
        self.ended = True
        if self.source is not None:
            self.source.close()

    # ---------------------------------------------------------------------------- the answer
    def _relay(self, data: bytes, last: bool) -> None:
        """One piece of a streamed answer: counted, then sent on at once. The head goes with
        the first call (what came alongside it) and the end with the last piece, one write
        each; a stream that broke off gets no end, so the agent sees it cut."""
        out, self._unsent_head = self._unsent_head, b""
        if data:
            if self._ttft is None:
                self._ttft = (time.perf_counter() - self.started) * 1000.0
            self._sent += len(data)
            if self._tap is not None:
                self._tap.feed(data)
            out += chunk(data)
        if last:
            out += LAST_CHUNK
        if out:
            self.agent.write(out)

    def _finish(self, broken: str | None) -> None:
        self.ended = True
        body = b""
        if not self._streamed:
            body = b"".join(self._parts)
            self._parts = []
            if broken is None:
                head = [*self._out, ("content-length", str(len(body)))]
                keep = self.req.keep_alive
                self.agent.write(head_bytes(self._status, head, chunked=False, keep=keep) + body)
                if self._tap is not None:
                    self._tap.feed(body)
            else:
                self.agent.write(json_answer(502, {"error": {"message": broken}}, close=True))
        tap = self._tap
        if tap is not None:
            tap.finish()
            error = broken or tap.error
            if self._status >= 400:
                error = error or _error_of(self._status, body)
            self._record(self._status, tap, self._ttft, error)
        keep = self.req.keep_alive and not self.agent.gone and broken is None
        self.forget(self)
        self.agent.done(keep)

    def _record(self, status: int, tap: Tap, ttft: float | None, error: str | None) -> None:
        fields = dict(self._headers)
        usage, note = tap.usage, None
        if usage is None:
            note = "no_usage"
        elif usage.total_tokens == 0:
            usage, note = None, "zero_usage"  # all zeros is missing usage, not a free call
        estimate = CallUsage(
            prompt_tokens=max(1, len(self.req.body) // 4),
            completion_tokens=max(1, self._sent // (16 if self._streamed else 4)),
        )
        self.record(MeteredCall(
            index=0,
            wire=self.wire or "",
            path=self.req.path,
            model_asked=asked_model(self.wire or "", self.req.path, self.req.body),
            model_answered=answered_model(fields, {"model": tap.model}),  # the chat rows' rule
            http_status=status,
            streamed=self._streamed,
            usage=usage,
            usage_note=note if status < 400 and error is None else None,
            estimate=estimate,
            latency_ms=(time.perf_counter() - self.started) * 1000.0,
            ttft_ms=ttft,
            error=error,
            request_id=request_id(fields) if self._headed else None,
            ts=self.wall,
        ))  # fmt: skip

    # ------------------------------------------------------------------ what the agent side calls
    def _drain(self, ready: bool) -> None:
        """The agent's side filled up (pause reading the gateway) or drained (read on)."""
        if self.source is None or ready != self._paused:
            return
        self._paused = not ready
        if ready:
            self.source.resume()
        else:
            self.source.pause()

    def _agent_gone(self) -> None:
        """The agent hung up: the answer is still read to its end (it is billed)."""
        if self._paused and self.source is not None:
            self._paused = False
            self.source.resume()


_REASONS = {status.value: status.phrase for status in HTTPStatus}


def head_bytes(status: int, headers: list[tuple[str, str]], *, chunked: bool, keep: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if chunked:
        lines.append("transfer-encoding: chunked")
    lines.append("connection: " + ("keep-alive" if keep else "close"))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def json_answer(status: int, obj: object, *, close: bool) -> bytes:
    body = orjson.dumps(obj)
    head = [("content-type", "application/json"), ("content-length", str(len(body)))]
    return head_bytes(status, head, chunked=False, keep=not close) + body


def _error_of(status: int, body: bytes) -> str:
    from eloledger.gateway.error_kinds import body_of, message_of

    return f"HTTP {status}: {message_of(body_of(body), body[:300].decode('utf-8', 'replace'))}"
