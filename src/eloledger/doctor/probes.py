"""Live probes: a few minimal requests per wire protocol, classified into findings.

Per target: the model list, one streamed request (1 output token, usage requested) and, when
the stream carries no usage, one non-streamed request. After a 401 the other header form is
tried once; after a path 404 the neighbouring URL forms (with/without ``/v1``, without the
query string). At most :data:`MAX_REQUESTS` requests per target, all to the configured host,
redirects never followed. Raw HTTP (httpx2, the SDKs' own transport) gives exact control of
status, headers and body; the tests show the SDKs experience the same thing.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2
import orjson

from eloledger.doctor.findings import Finding, make
from eloledger.doctor.urls import family, neighbour_urls
from eloledger.gateway.answers import (
    error_message,
    has_tokens,
    is_key_rejection,
    is_quota,
    mentions_model,
    parse_sse,
    stream_error,
    usage_from_body,
    usage_from_stream,
    usage_where,
)
from eloledger.gateway.causes import Cause, read_answer
from eloledger.gateway.error_kinds import (
    AUTH,
    COOLDOWN,
    GATEWAY_TIMEOUT,
    MODEL,
    QUOTA,
    UPSTREAM_AUTH,
    from_upstream,
    message_of,
    retry_after_hint,
)
from eloledger.gateway.neterrors import is_dns, is_tls
from eloledger.gateway.wire import answered_model, same_model
from eloledger.redact import register_secret, scrub

# the names tests/gateway/test_wire_usage.py imports from here
_usage_from_body, _usage_from_stream = usage_from_body, usage_from_stream

MAX_REQUESTS = 8
# The parameters the runner's requests carry on each wire besides model, prompt, max_tokens and
# stream (runner/providers.py): a gateway that rejects one of them (LiteLLM with
# drop_params: false on a deployment without `seed`) fails every call of a run, so the probe
# sends them too. Gemini is not a wire the runner speaks.
RUN_PARAMS: dict[str, dict[str, Any]] = {
    "openai-chat": {"temperature": 0.0, "seed": 1},
    "openai-responses": {"temperature": 0.0},
    "anthropic": {"temperature": 0.0},
    "gemini": {},
}
DEFAULT_TIMEOUT = 8.0
_BODY_LIMIT = 256 * 1024
_PROMPT = "Reply with OK."
ANTHROPIC_VERSION = "2023-06-01"


@dataclass
class ProbeTarget:
    """One (base URL, wire, key) to probe; ``key_label`` names where the key comes from."""

    name: str
    base_url: str
    wire: str  # openai-chat | openai-responses | anthropic | gemini
    key: str | None
    model: str | None = None
    auth: str | None = None  # bearer | x-api-key | x-goog-api-key; None: the wire's usual form
    key_label: str = "the key"  # e.g. "$GW_KEY": named in findings, never the value

    def __post_init__(self) -> None:
        if self.auth is None:
            self.auth = "x-goog-api-key" if self.wire == "gemini" else "bearer"


@dataclass
class Exchange:
    """One request and what came back (body scrubbed and cut short)."""

    method: str
    url: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str = ""
    events: list[Any] = field(default_factory=list)  # parsed SSE data payloads
    error: BaseException | None = None
    elapsed_ms: float = 0.0

    def json(self) -> Any:
        try:
            return orjson.loads(self.text)
        except orjson.JSONDecodeError:
            return None

    def summary(self) -> str:
        if self.error is not None:
            return f"{self.method} {self.url} -> {type(self.error).__name__}: {self.error}"
        snippet = " ".join(self.text[:160].split())
        return f"{self.method} {self.url} -> HTTP {self.status}: {snippet}"


@dataclass
class ProbeResult:
    target: ProbeTarget
    findings: list[Finding] = field(default_factory=list)
    usage: dict[str, int] | None = None  # from the streamed (or else non-streamed) answer
    requests: int = 0
    models: list[str] | None = None
    model: str | None = None  # the model the generation requests used
    answered: str | None = None  # the model that answered (gateway header, else the body)
    exchanges: list[str] = field(default_factory=list)  # "POST /v1/messages 200 (41 ms)"
    elapsed_ms: float = 0.0  # the slowest single request: what a client would wait
    generated: bool = False  # a generation request answered 2xx with a usable answer

    @property
    def ok(self) -> bool:
        """Passed: a generation answered and no finding is an error.

        Why the generation: "no error finding" alone called a probe whose only generation was
        refused (400, 408, 429) a pass, which a run then contradicted on every call.
        """
        return self.generated and not any(f.severity == "error" for f in self.findings)

    def passed_finding(self) -> Finding | None:
        """A ``probe.ok`` finding saying what was checked, or None when the probe failed.

        Why a finding and not only a line: the JSON output and the TUI show findings, and a
        passing probe is the answer to "is this gateway fine?"
        """
        if not self.ok or not self.exchanges:
            return None  # ok needs an answered generation: see :attr:`ok`
        t = self.target
        usage = ""
        if self.usage:
            u = self.usage
            usage = f", usage {u['prompt_tokens']}+{u['completion_tokens']}={u['total_tokens']}"
        warned = sum(f.severity == "warning" for f in self.findings)
        caveat = f" with {warned} warning(s) below" if warned else ""
        who = f"model {self.model or '(listing only)'} answered"
        if self.answered and self.answered != self.model:
            same = same_model(self.model, self.answered)
            who = f"model {self.model} asked, {self.answered} answered" + (
                "" if same else " (ANOTHER model)"
            )
        return make(
            "probe.ok",
            f"{t.name} ({t.wire})",
            f"{t.wire} probe passed{caveat}: key accepted, path found, {who} (slowest request "
            f"{self.elapsed_ms:.0f} ms){usage}",
            f"{t.base_url}: " + "; ".join(self.exchanges),
            "nothing to fix",
        )


def probe(target: ProbeTarget, *, timeout: float = DEFAULT_TIMEOUT) -> ProbeResult:
    """Probe one target; never raises for a network or gateway problem (they are findings)."""
    register_secret(target.key)
    # Like the SDKs, honour the proxy and CA variables (HTTPS_PROXY, SSL_CERT_FILE): the probe
    # must see what the clients see. Redirects are never followed (they may leave the host).
    with httpx2.Client(timeout=timeout, follow_redirects=False) as client:
        return _Prober(target, client, timeout).run()


def probe_all(
    targets: list[ProbeTarget], *, timeout: float = DEFAULT_TIMEOUT, workers: int = 4
) -> list[ProbeResult]:
    """Probe several targets at once (each one sequentially), results in the targets' order.

    Threads, not asyncio, so the TUI can call this from a worker thread as well as the CLI.
    """
    if len(targets) <= 1:
        return [probe(t, timeout=timeout) for t in targets]
    with ThreadPoolExecutor(max_workers=min(workers, len(targets))) as pool:
        return list(pool.map(lambda t: probe(t, timeout=timeout), targets))


class _Prober:
    def __init__(self, target: ProbeTarget, client: httpx2.Client, timeout: float) -> None:
        self.t = target
        self.client = client
        self.timeout = timeout
        self.result = ProbeResult(target)
        self.host = urlsplit(target.base_url.strip()).netloc

    # --- the flow -------------------------------------------------------------------------
    def run(self) -> ProbeResult:
        t = self.t
        if not t.key:
            self._add(
                "auth.missing_key",
                f"no key to probe {t.wire} with",
                f"{t.key_label} is unset or empty",
                f"set {t.key_label}",
            )
            return self.result
        listing = self._send("GET", self._models_url(t.base_url))
        if self._transport_failed(listing):
            return self.result
        self.result.models = _model_ids(listing)
        model = t.model or (self.result.models[0] if self.result.models else None)
        self.result.model = model
        if not model:
            if self._http_ok(listing, listing, None):
                self._add(
                    "model.not_found",
                    "no model configured and the gateway lists none",
                    listing.summary(),
                    "set the model (--model M, or model in the profile)",
                )
            return self.result
        stream = self._send("POST", *self._generate(t.base_url, model, stream=True))
        if self._transport_failed(stream) or not self._http_ok(stream, listing, model):
            return self.result
        if stream.events:
            usage = usage_from_stream(t.wire, stream.events)
        else:  # the gateway ignored stream=true and answered one JSON body
            usage = usage_from_body(t.wire, stream.json())
        self.result.generated = True
        self._answered_by(stream, model)
        if has_tokens(usage):
            self.result.usage = usage
            return self.result
        plain = self._send("POST", *self._generate(t.base_url, model, stream=False))
        if self._transport_failed(plain) or not self._http_ok(plain, listing, model):
            self.result.generated = False
            return self.result
        plain_usage = usage_from_body(t.wire, plain.json())
        self.result.usage = plain_usage or usage
        self._judge_usage(stream, usage, plain, plain_usage)
        return self.result

    def _answered_by(self, ex: Exchange, model: str) -> None:
        """Which model answered the probe; a warning when it is not the one asked for."""
        answered = answered_model(ex.headers, None)
        for event in ex.events or [ex.json()]:
            answered = answered or answered_model(None, event)
        self.result.answered = answered
        if answered and not same_model(model, answered):
            fallbacks = ex.headers.get("x-litellm-attempted-fallbacks")
            said = f"; x-litellm-attempted-fallbacks: {fallbacks}" if fallbacks else ""
            self._add(
                "model.substituted",
                f"the probe asked for {model!r} but {answered!r} answered (HTTP {ex.status}"
                f"{said}): a gateway fallback or default route serves another model, and a run "
                f"would record {answered!r}'s answers as {model!r}'s",
                ex.summary(),
                f"fix the gateway's deployment of {model!r} (or remove its fallback/route), or "
                f"set the model to {answered!r}",
            )

    def _judge_usage(
        self,
        stream: Exchange,
        usage: dict[str, int] | None,
        plain: Exchange,
        plain_usage: dict[str, int] | None,
    ) -> None:
        wire = self.t.wire
        consequence = "token counts and every Elo-per-token curve would be wrong"
        if usage is not None:  # present, but zero
            self._add(
                "usage.zero",
                f"the streamed {wire} answer reports zero tokens",
                f"{stream.summary()} (usage {usage})",
                f"the gateway must forward real usage; otherwise {consequence}",
            )
            if plain_usage is None:
                self._add(
                    "usage.missing",
                    f"non-streamed {wire} answers carry no usage",
                    plain.summary(),
                    f"use a route that reports usage; otherwise {consequence}",
                )
        elif plain_usage is None:
            self._add(
                "usage.missing",
                f"{wire} answers carry no token usage, streamed or not",
                f"{stream.summary()}; {plain.summary()}",
                f"use a gateway or route that reports usage; otherwise {consequence}",
            )
        elif has_tokens(plain_usage):
            self._add(
                "usage.stream_missing",
                f"streamed {wire} answers carry no usage ({usage_where(wire)}); "
                "non-streamed answers do",
                f"stream: {stream.summary()}; non-stream usage {plain_usage}",
                "use non-streamed requests with this gateway (they carry usage), or ask "
                "the gateway to forward stream usage; streamed calls would be recorded with "
                "usage missing",
            )
        else:
            self._add(
                "usage.zero",
                f"{wire} answers report zero tokens",
                f"{plain.summary()} (usage {plain_usage})",
                f"the gateway must forward real usage; otherwise {consequence}",
            )

    # --- classification -------------------------------------------------------------------
    def _transport_failed(self, ex: Exchange) -> bool:
        err = ex.error
        if err is None:
            return False
        evidence = scrub(f"{ex.method} {ex.url}: {type(err).__name__}: {err}")
        if isinstance(err, _BudgetExhausted):
            return True
        if isinstance(err, httpx2.TimeoutException):
            self._add(
                "net.timeout",
                f"no answer from {self.host} within {self.timeout:g} s",
                evidence,
                "check the host and port, VPN or proxy; the gateway may be down",
            )
        elif isinstance(err, (httpx2.UnsupportedProtocol, httpx2.InvalidURL)):
            self._add(
                "url.scheme",
                f"the URL cannot be requested: {err}",
                evidence,
                "use a full http:// or https:// base URL",
            )
        elif is_tls(err):
            self._add(
                "net.tls",
                f"TLS failed talking to {self.host}",
                evidence,
                "check https vs http for this port, the certificate, or SSL_CERT_FILE "
                "for a corporate CA",
            )
        elif is_dns(err):
            self._add(
                "net.unreachable",
                f"DNS lookup of {self.host} failed",
                evidence,
                "check the host name in the base URL",
            )
        elif isinstance(err, (httpx2.ConnectError, OSError)):
            self._add(
                "net.unreachable",
                f"cannot connect to {self.host} (refused or no route)",
                evidence,
                "check the host and port in the base URL, and that the gateway is running",
            )
        else:
            self._add(
                "server.error",
                f"the connection to {self.host} broke: {err}",
                evidence,
                "retry; if it persists check the scheme (http vs https) and the gateway",
            )
        return True

    def _again(self, base: str, model: str | None, auth: str | None = None) -> Exchange:
        """The same kind of request on another base URL or header form (no stream)."""
        if model is None:
            return self._send("GET", self._models_url(base), auth=auth)
        url, payload = self._generate(base, model, stream=False)
        return self._send("POST", url, payload, auth=auth)

    def _http_ok(self, ex: Exchange, listing: Exchange, model: str | None) -> bool:
        """Classify a non-2xx (or a 2xx that is not the API); True when the answer is usable.

        The body is read before the status (:func:`~eloledger.gateway.error_kinds.read_error`):
        gateways answer a wrong key with 400, an unknown model with 400 or 503, exhausted
        credit with 401 or 403. A refused generation is always an error: the run would fail.
        """
        t = self.t
        status = ex.status or 0
        body = ex.json()
        if not 200 <= status < 400 and self._gateway_said(ex, listing, model, body):
            return False
        if 300 <= status < 400:
            self._add(
                "response.not_json",
                f"{ex.url} redirects instead of answering",
                f"{ex.summary()} Location: {ex.headers.get('location', '?')}",
                "the URL points at a web front end (often a login), not the API: use "
                "the gateway's API base URL",
            )
            return False
        if 200 <= status < 300:
            if not ex.events and body is None:
                kind = ex.headers.get("content-type", "?")
                self._add(
                    "response.not_json",
                    f"HTTP {status} but the body is {kind}, not JSON",
                    ex.summary(),
                    "the URL serves a web page (often a login or portal), "
                    "not the API: use the gateway's API base URL",
                )
                return False
            if isinstance(body, dict) and body.get("error") and not ex.events:
                if not self._gateway_said(ex, listing, model, body):
                    self._add(
                        "server.error",
                        f"HTTP {status} with an error body: {message_of(body, ex.text)[:200]}",
                        ex.summary(),
                        "the gateway reports an error under 200: read its message above",
                    )
                return False
            mid = stream_error(ex.events)
            if mid is not None:
                self._add(
                    "server.error",
                    f"the stream failed mid-way with: {mid}",
                    ex.summary(),
                    "retry later; if it persists report it to the gateway",
                )
                return False
            return True
        if status == 401 or is_key_rejection(status, body):
            self._unauthorised(ex, model)
            return False
        generation = ex.method == "POST"
        severity = "error" if generation else None
        if status == 403:
            what = repr(model) if model else "this endpoint"
            self._add(
                "auth.forbidden",
                "the key is accepted but not allowed to do this",
                ex.summary(),
                f"grant the key in {t.key_label} access to {what} (or use a key/plan that has it)",
            )
            return False
        if status == 404:
            self._not_found(ex, listing, model, body)
            return False
        if status == 429:
            if is_quota(body, ex.text):
                self._add(
                    "rate.quota",
                    "quota or credit exhausted: retrying will not help",
                    ex.summary(),
                    "add credit or raise the quota for this key; do not start the evaluation",
                )
            else:
                hint = retry_after_hint(ex.headers)
                self._add(
                    "rate.limited",
                    f"rate limited ({hint})" + (": the probe's generation failed" * generation),
                    f"{ex.summary()} [{hint}]",
                    "lower the run's concurrency or wait; the runner honours Retry-After "
                    "(also LiteLLM's llm_provider-retry-after)",
                    severity=severity,
                )
            return False
        if status >= 500:
            self._add(
                "server.error",
                f"the gateway answers HTTP {status}",
                ex.summary(),
                "retry later; if it persists report it to the gateway",
            )
            return False
        said = message_of(body, ex.text)
        self._add(
            "request.rejected",
            f"the minimal probe request was rejected (HTTP {status})"
            + (f": {said[:160]}" if said else ""),
            ex.summary(),
            "check the model name and the wire protocol for this gateway",
            severity=severity,
        )
        return False

    def _gateway_said(self, ex: Exchange, listing: Exchange, model: str | None, body: Any) -> bool:
        """Findings for what the error body says (not only its status); True when it did."""
        t = self.t
        status = ex.status or 0
        cause = read_answer(
            status,
            body,
            ex.text,
            ex.headers,
            elapsed_s=ex.elapsed_ms / 1000,
            timeout_s=self.timeout,
        )
        kind = _KIND_OF.get(cause.error_class) if cause is not None else None
        said = message_of(body, ex.text)[:200]
        listed = self.result.models
        if cause is not None and cause.code in _BEHIND_THE_GATEWAY:
            self._behind(ex, cause, model, said)
        elif kind == QUOTA:
            self._add(
                "rate.quota",
                f"quota or credit exhausted (HTTP {status}: {said}): retrying will not help",
                ex.summary(),
                "add credit or raise the quota for this key; do not start the evaluation",
            )
        elif kind == UPSTREAM_AUTH:
            where = f"{cause.gateway}: {cause.detail}" if cause and cause.gateway else "its"
            self._add(
                "auth.upstream_key",
                "the gateway accepts your key, but the gateway's upstream rejects its own key "
                f"for this model (HTTP {status}: {said})",
                ex.summary(),
                f"fix the gateway's config ({where} provider key for {model or 'this model'}); "
                f"nothing to change in {t.key_label} or in the clients' headers",
            )
        elif kind == AUTH and status != 401:
            self._unauthorised(ex, model, said)
        elif kind == MODEL or (
            model is not None
            and status != 401
            and listing.status == 200
            and listed
            and model not in listed
        ):
            choices = ", ".join(listed[:6]) if listed else "a model the gateway lists"
            if from_upstream(body, ex.text) and listed and model in listed:
                what = (
                    f"the gateway lists {model!r} but its upstream does not know the model its "
                    f"config maps it to (HTTP {status})"
                )
                fix = f"fix the gateway's model mapping for {model!r}, or use another: {choices}"
            else:
                what = f"the gateway does not know the model {model!r} (HTTP {status}: {said})"
                fix = f"set the model to one it serves: {choices}"
            self._add("model.not_found", what, ex.summary(), fix)
        elif kind == COOLDOWN:
            self._add(
                "rate.limited",
                "the gateway has put the model in cooldown after an earlier upstream failure "
                f"(HTTP 429; {retry_after_hint(ex.headers)}): the probe's generation failed",
                ex.summary(),
                "the cause is the upstream error before the cooldown (look at the gateway's log, "
                "or probe again after the cooldown to see it); lowering concurrency will not help",
                severity="error",
            )
        elif kind == GATEWAY_TIMEOUT:
            self._add(
                "net.gateway_timeout",
                f"the gateway timed out on its upstream after {ex.elapsed_ms / 1000:.1f} s "
                f"(HTTP {status}; the probe would have waited {self.timeout:g} s)",
                ex.summary(),
                "raise the gateway's own timeout for this model (LiteLLM: timeout in "
                "litellm_params), or use a faster model; raising timeout_s will not help",
            )
        else:
            return False
        return True

    def _behind(self, ex: Exchange, cause: Cause, model: str | None, said: str) -> None:
        """A fault behind the gateway: the user's URL and key were accepted."""
        t = self.t
        gateway = cause.gateway or "the gateway"
        if cause.code == "request.unsupported_param":
            named = ", ".join(f"`{p}`" for p in cause.params) or "a parameter"
            self._add(
                cause.code,
                f"the gateway's deployment of {model!r} rejects {named}, which the run sends "
                f"(HTTP {ex.status}: {said})",
                ex.summary(),
                f"set `drop_params: true` on the gateway ({gateway}), or use a model whose "
                f"deployment takes {named}; every call of a run would fail the same way",
            )
            return
        self._add(
            cause.code,
            f"the gateway accepts the base URL and {t.key_label}, but its deployment/upstream "
            f"for {model!r} fails (HTTP {ex.status}: {said})",
            ex.summary(),
            f"fix the gateway's config for {model!r} ({gateway}: {cause.detail}); the profile's "
            f"base URL and {t.key_label} need no change",
        )

    def _unauthorised(self, ex: Exchange, model: str | None, said: str = "") -> None:
        t = self.t
        alternate = _ALTERNATE.get(t.auth)
        if alternate:
            retry = self._again(t.base_url, model, alternate)
            # Only a 2xx proves the other header works: a 429 (LiteLLM's cooldown) or a 400
            # says nothing about the key.
            answered = retry.json()
            if (
                retry.error is None
                and 200 <= (retry.status or 0) < 300
                and not (isinstance(answered, dict) and answered.get("error"))
            ):
                self._add(
                    "auth.header_form",
                    f"the gateway rejects the key as {_HEADER[t.auth]} but accepts it as "
                    f"{_HEADER[alternate]}",
                    f"{ex.summary()}; with {_HEADER[alternate]}: HTTP {retry.status}",
                    _header_fix(t, alternate),
                )
                return
        said = said or message_of(ex.json(), ex.text)[:200]
        hint = ""
        if "no connected db" in said.lower() or "no_db_connection" in said.lower():
            hint = " (LiteLLM without a database accepts only its master key)"
        self._add(
            "auth.unauthorized",
            f"the gateway rejects the key from {t.key_label} (HTTP {ex.status}"
            + (f": {said}" if said else "")
            + f"){hint}",
            ex.summary(),
            f"check the value of {t.key_label} (it must be a key for "
            f"{self.host}); sent as {_HEADER[t.auth]}",
        )

    def _not_found(self, ex: Exchange, listing: Exchange, model: str | None, body: Any) -> None:
        t = self.t
        listed = self.result.models
        message = error_message(body) or ex.text[:200]
        says_model = (
            model is not None
            and mentions_model(body, model)
            and ("invalid url" not in message.lower())
        )
        if says_model or (
            model is not None and listing.status == 200 and listed and model not in listed
        ):
            choices = ", ".join(listed[:6]) if listed else "a model the gateway lists"
            self._add(
                "model.not_found",
                f"the gateway does not know the model {model!r}",
                ex.summary(),
                f"set the model to one it serves: {choices}",
            )
            return
        for candidate in neighbour_urls(t.base_url, t.wire):
            if urlsplit(candidate).netloc != self.host:
                continue
            tried = self._again(candidate, model)
            if isinstance(tried.error, _BudgetExhausted):
                break
            if tried.error is None and tried.status not in (404, None):
                self._add(
                    "path.not_found",
                    f"{ex.url} does not exist on the gateway",
                    f"{ex.summary()}; {candidate} answers HTTP {tried.status}",
                    f"use the base URL {candidate}",
                )
                return
        fix = (
            "none of the neighbouring URL forms answer either: check the gateway's "
            "documented base URL for this protocol"
        )
        if model is None:
            fix += (
                "; if the gateway simply has no model list, set a model (--model M or the "
                "profile's model) so the doctor can probe a real request"
            )
        self._add("path.not_found", f"{ex.url} does not exist on the gateway", ex.summary(), fix)

    # --- requests -------------------------------------------------------------------------
    def _send(
        self, method: str, url: str, payload: Any = None, *, auth: str | None = None
    ) -> Exchange:
        ex = Exchange(method, url)
        if self.result.requests >= MAX_REQUESTS:
            ex.error = _BudgetExhausted("probe request budget spent")
            return ex
        if urlsplit(url).netloc != self.host:  # never leave the configured host
            ex.error = _BudgetExhausted("refusing to probe another host")
            return ex
        self.result.requests += 1
        headers = self._headers(auth or self.t.auth)
        started = time.monotonic()
        deadline = started + self.timeout
        try:
            request = self.client.build_request(
                method,
                url,
                headers=headers,
                content=None if payload is None else orjson.dumps(payload),
            )
            response = self.client.send(request, stream=True)
            try:
                ex.status = response.status_code
                ex.headers = {k.lower(): v for k, v in response.headers.items()}
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw.extend(chunk)
                    if len(raw) > _BODY_LIMIT or time.monotonic() > deadline:
                        break
                ex.text = scrub(raw.decode("utf-8", errors="replace"))
            finally:
                response.close()
        except (httpx2.HTTPError, OSError, ValueError) as exc:
            ex.error = exc
        ex.elapsed_ms = (time.monotonic() - started) * 1000
        ex.url = scrub(ex.url)
        self.result.elapsed_ms = max(self.result.elapsed_ms, ex.elapsed_ms)
        outcome = ex.status if ex.error is None else type(ex.error).__name__
        self.result.exchanges.append(
            f"{method} {urlsplit(ex.url).path or '/'} {outcome} ({ex.elapsed_ms:.0f} ms)"
        )
        if "event-stream" in ex.headers.get("content-type", ""):
            ex.events = parse_sse(ex.text)
        return ex

    def _headers(self, auth: str) -> dict[str, str]:
        key = self.t.key or ""
        headers = {"content-type": "application/json", "accept": "application/json"}
        if family(self.t.wire) == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
        if auth == "x-api-key":
            headers["x-api-key"] = key
        elif auth == "x-goog-api-key":
            headers["x-goog-api-key"] = key
        else:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def _models_url(self, base: str) -> str:
        fam = family(self.t.wire)
        suffix = {"openai": "/models", "anthropic": "/v1/models", "gemini": "/v1beta/models"}[fam]
        return _join(base, suffix)

    def _generate(self, base: str, model: str, *, stream: bool) -> tuple[str, dict[str, Any]]:
        """(url, body) the way the real clients build them: plain string joins."""
        wire = self.t.wire
        if wire == "openai-chat":
            body: dict[str, Any] = {
                "model": model,
                "max_tokens": 1,
                "messages": [{"role": "user", "content": _PROMPT}],
                **RUN_PARAMS[wire],
            }
            if stream:
                body |= {"stream": True, "stream_options": {"include_usage": True}}
            return _join(base, "/chat/completions"), body
        if wire == "openai-responses":
            # The Responses API rejects max_output_tokens below 16.
            body = {
                "model": model,
                "input": _PROMPT,
                "max_output_tokens": 16,
                "store": False,
                **RUN_PARAMS[wire],
            }
            if stream:
                body["stream"] = True
            return _join(base, "/responses"), body
        if wire == "anthropic":
            body = {
                "model": model,
                "max_tokens": 1,
                "messages": [{"role": "user", "content": _PROMPT}],
                **RUN_PARAMS[wire],
            }
            if stream:
                body["stream"] = True
            return _join(base, "/v1/messages"), body
        verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
        body = {
            "contents": [{"role": "user", "parts": [{"text": _PROMPT}]}],
            "generationConfig": {"maxOutputTokens": 1},
        }
        return _join(base, f"/v1beta/models/{model}:{verb}"), body

    def _add(
        self, code: str, message: str, evidence: str, fix: str, *, severity: str | None = None
    ) -> None:
        target = f"{self.t.name} ({self.t.wire})"
        self.result.findings.append(make(code, target, message, evidence, fix, severity=severity))


class _BudgetExhausted(Exception):
    pass


# the runner's error class of a cause -> the reading kind the probe's findings are keyed by
_KIND_OF = {
    "quota": QUOTA,
    "upstream_auth": UPSTREAM_AUTH,
    "auth": AUTH,
    "not_found": MODEL,
    "cooldown": COOLDOWN,
    "gateway_timeout": GATEWAY_TIMEOUT,
}
_BEHIND_THE_GATEWAY = frozenset({"request.unsupported_param", "gateway.deployment"})


_ALTERNATE = {"bearer": "x-api-key", "x-api-key": "bearer", "x-goog-api-key": "bearer"}
_HEADER = {
    "bearer": "Authorization: Bearer",
    "x-api-key": "x-api-key",
    "x-goog-api-key": "x-goog-api-key",
}


def _header_fix(t: ProbeTarget, works: str) -> str:
    fam = family(t.wire)
    if fam == "anthropic" and works == "x-api-key":
        return (
            "this gateway reads x-api-key: for Claude Code set ANTHROPIC_API_KEY (not "
            'ANTHROPIC_AUTH_TOKEN); in the profile set auth = "x-api-key"; with the '
            "anthropic SDK >= 2.0 (which sends Bearer) pass default_headers={'x-api-key': key}"
        )
    if fam == "anthropic":
        return (
            "this gateway reads Authorization: Bearer: for Claude Code set "
            'ANTHROPIC_AUTH_TOKEN (not ANTHROPIC_API_KEY); in the profile set auth = "bearer"'
        )
    if fam == "openai":
        return (
            "this gateway reads x-api-key but OpenAI clients send Bearer: for Codex add "
            f'env_http_headers = {{ "x-api-key" = "{t.key_label.lstrip("$")}" }} to the '
            "provider; with the openai SDK pass default_headers={'x-api-key': key}"
        )
    return (
        "this gateway reads Authorization: Bearer but Gemini CLI sends x-goog-api-key: "
        "use a route of the gateway that accepts x-goog-api-key"
    )


def _join(base: str, suffix: str) -> str:
    """Join like the clients do: trim one trailing slash, append (a query stays in the middle)."""
    base = base.strip()
    return (base[:-1] if base.endswith("/") else base) + suffix


def _model_ids(ex: Exchange) -> list[str] | None:
    if ex.status != 200:
        return None
    body = ex.json()
    if not isinstance(body, dict):
        return None
    items = body.get("data") if isinstance(body.get("data"), list) else body.get("models")
    if not isinstance(items, list):
        return None
    ids = []
    for item in items:
        if isinstance(item, dict):
            name = item.get("id") or item.get("name") or ""
            ids.append(str(name).removeprefix("models/"))
    return [i for i in ids if i]
