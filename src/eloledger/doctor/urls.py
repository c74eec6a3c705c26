"""Pure checks of one base URL for one client or wire protocol (no network).

Each client joins paths differently (docs/observed/clients.md): OpenAI-style clients append
``/chat/completions`` or ``/responses`` to a base that must carry the version (``/v1``);
Anthropic-style clients append ``/v1/messages`` to the root; Gemini CLI appends
``/v1beta/models/...`` to the root. The TUI calls :func:`check_url` as the user types, so it
must stay fast and side-effect free.
"""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from eloledger.clientfacts import URL_FAMILY
from eloledger.doctor.findings import Finding, make
from eloledger.redact import mask, scrub

WIRES = ("openai-chat", "openai-responses", "anthropic", "gemini")

_LABEL = {
    "openai-chat": "an OpenAI chat-completions client",
    "openai-responses": "an OpenAI responses client",
    "openai": "the OpenAI SDK",
    "codex": "Codex CLI",
    "anthropic": "an Anthropic-style client",
    "claude-code": "Claude Code",
    "gemini": "Gemini CLI",  # the wire protocol; only Gemini CLI speaks it
    "gemini-cli": "Gemini CLI",
}
_APPENDS = {
    "openai": "/chat/completions or /responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/<model>:generateContent",
}
# Endpoints people paste whole, per family; longest first (/chat/completions before
# /completions). OpenAI-style bases keep their /v1, Anthropic-style ones lose it.
_ENDPOINTS = {
    "openai": (
        "/chat/completions",
        "/responses",
        "/completions",
        "/embeddings",
        "/models",
        "/messages",
    ),
    "anthropic": (
        "/v1/messages",
        "/messages",
        "/v1/models",
        "/v1/chat/completions",
        "/chat/completions",
        "/v1/responses",
        "/responses",
    ),
    "gemini": ("/v1beta/models", "/models"),
}
_GEMINI_ENDPOINT = re.compile(r"(/v1beta|/v1)?/models/[^/]+:(stream)?[gG]enerateContent$")
# A profile root is shared by every client: a version segment followed by an API path, or
# Gemini's /v1beta, means an endpoint was pasted (the root is what comes before it).
_ROOT_ENDPOINT = re.compile(
    r"/v1/(chat|completions|messages|responses|embeddings|models)(/.*)?$|/v1beta(/.*)?$",
    re.IGNORECASE,
)
_VERSION_SEGMENT = re.compile(r"^v\d+(alpha|beta)?\d*$")
# OpenAI-style base URLs that are right without a version segment, as their providers document
# them: (host suffixes, path). Azure OpenAI's Codex form is ``https://NAME.openai.azure.com/openai``
# with ``query_params = { api-version = ... }`` (Codex's docs, "Azure"); the version travels in
# the query, so "add /v1" would break it.
DOCUMENTED_FORMS: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"), "/openai"),
)


def _appends(wire: str) -> str:
    """What this client appends to the base URL (docs/observed/clients.md)."""
    return {
        "openai-chat": "/chat/completions",
        "openai-responses": "/responses",
        "codex": "/responses",
    }.get(wire) or _APPENDS[family(wire)]


def family(wire: str) -> str:
    """'openai' | 'anthropic' | 'gemini' for a wire protocol or client name."""
    try:
        return URL_FAMILY[wire]
    except KeyError:
        raise ValueError(
            f"unknown wire or client {wire!r}; expected one of {', '.join(URL_FAMILY)}"
        ) from None


def check_url(
    url: str, wire: str, *, target: str | None = None, evidence: str = ""
) -> list[Finding]:
    """Every ``url.*`` (and ``gemini.extra_v1beta``) finding for this base URL.

    Each finding's fix names the full URL to use instead, with all problems corrected at once.
    """
    fam = family(wire)
    who = _LABEL[wire]
    target = target or wire
    evidence = evidence or f"base URL {shown_url(url)!r}"
    findings: list[tuple[str, str]] = []  # (code, message); the fix is filled in at the end

    text = url
    if text != text.strip() or re.search(r"\s", text):
        findings.append(("url.whitespace", f"the base URL for {who} contains whitespace"))
        text = re.sub(r"\s+", "", text)
    if not text:
        return [
            make(
                "url.scheme",
                target,
                f"the base URL for {who} is empty",
                evidence,
                "set a full URL such as https://gateway.example/v1",
            )
        ]
    if "://" not in text:
        findings.append(("url.scheme", f"the base URL for {who} has no http:// or https:// scheme"))
        text = "https://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        findings.append(("url.scheme", f"scheme {parts.scheme!r} is not http or https"))
        scheme = "https"
    if not parts.netloc:
        return [
            make(
                "url.scheme",
                target,
                f"the base URL for {who} has no host",
                evidence,
                "set a full URL such as https://gateway.example/v1",
            )
        ]
    if parts.query:
        findings.append(
            (
                "url.query_string",
                f"the query string ?{_masked_query(parts.query)} breaks the path {who} appends "
                f"({_appends(wire)} lands inside the query)",
            )
        )
    if parts.fragment:
        findings.append(
            (
                "url.fragment",
                f"the fragment #{parts.fragment} is not sent and swallows the path {who} appends",
            )
        )

    path = parts.path
    if path.endswith("/") and path != "/":
        findings.append(
            ("url.trailing_slash", f"trailing slash: harmless for {who}, but write it without one")
        )
    elif path == "/":
        findings.append(("url.trailing_slash", f"trailing slash: harmless for {who}"))
    path = path.rstrip("/")

    endpoint = _strip_endpoint(path, fam)
    if endpoint is not None:
        findings.append(
            (
                "url.endpoint_path",
                f"{path!r} is a full endpoint; {who} appends {_appends(wire)} itself",
            )
        )
        path = endpoint

    segments = [s for s in path.split("/") if s]
    if fam == "openai":
        while len(segments) >= 2 and segments[-1] == segments[-2] == "v1":
            findings.append(
                (
                    "url.extra_v1",
                    f"the base URL ends in /v1/v1: {who} appends {_appends(wire)} to it, so "
                    "every request goes to a doubled /v1",
                )
            )
            path = path[: -len("/v1")]
            segments.pop()
        if not any(_VERSION_SEGMENT.match(s) for s in segments) and not documented_form(
            parts.hostname or "", path
        ):
            findings.append(
                (
                    "url.missing_v1",
                    f"{who} appends {_appends(wire)} directly (never /v1), so this base "
                    "needs its version segment",
                )
            )
            path += "/v1"
    elif fam == "anthropic":
        if segments and segments[-1] == "v1":
            findings.append(
                ("url.extra_v1", f"{who} appends /v1/messages, so this base gives /v1/v1/messages")
            )
            path = path[: -len("/v1")]
    else:
        if segments and segments[-1] == "v1beta":
            findings.append(
                (
                    "gemini.extra_v1beta",
                    "Gemini CLI appends /v1beta/models/..., so this base gives /v1beta/v1beta/...",
                )
            )
            path = path[: -len("/v1beta")]
        elif segments and segments[-1] == "v1":
            findings.append(
                (
                    "url.extra_v1",
                    "Gemini CLI appends /v1beta/models/..., so this base gives /v1/v1beta/...",
                )
            )
            path = path[: -len("/v1")]

    suggested = urlunsplit((scheme, parts.netloc, path, "", ""))
    fix = f"use {suggested}"
    return [make(code, target, message, evidence, fix) for code, message in findings]


def documented_form(host: str, path: str) -> bool:
    """Whether (host, path) is a provider's documented OpenAI-style base without ``/v1``."""
    host = host.lower()
    return any(
        host.endswith(suffixes) and path.rstrip("/").lower() == form
        for suffixes, form in DOCUMENTED_FORMS
    )


def check_root(url: str, *, target: str | None = None, evidence: str = "") -> list[Finding]:
    """Checks for a profile's gateway root, from which every client's URL is derived.

    The root may carry ``/v1`` or not (the derivation adds or strips it per client), so only
    problems that survive the derivation are reported: scheme, whitespace, query, fragment,
    a pasted endpoint, a trailing slash.
    """
    target = target or "profile"
    evidence = evidence or f"base URL {shown_url(url)!r}"
    parts = urlsplit(re.sub(r"\s+", "", url))
    match = _ROOT_ENDPOINT.search(parts.path.rstrip("/"))
    if match is None or not parts.netloc:
        findings = check_url(url, "anthropic", target=target, evidence=evidence)
        return [f for f in findings if f.code != "url.extra_v1"]
    # Caught here, not by check_url: /v1/chat and /v1beta/... are no endpoint of any one
    # family, yet each client would append its own path after them (.../v1/chat/v1).
    root = urlunsplit(parts._replace(path=parts.path[: match.start()]))
    rest = [
        f
        for f in check_url(root, "anthropic", target=target, evidence=evidence)
        if f.code not in ("url.extra_v1", "url.trailing_slash")
    ]
    fix = f"use {suggested_url(root, 'anthropic')}"
    pasted = make(
        "url.endpoint_path",
        target,
        f"{match.group(0)!r} is a full endpoint path; the profile takes the gateway root and each "
        "client appends its own path",
        evidence,
        fix,
    )
    return [pasted, *(replace(f, fix=fix) for f in rest)]


def suggested_url(url: str, wire: str) -> str:
    """The corrected URL check_url would propose (the URL itself when nothing is wrong)."""
    for finding in check_url(url, wire):
        if finding.fix.startswith("use "):
            return finding.fix[4:]
    return url


def neighbour_urls(url: str, wire: str) -> list[str]:
    """The URL forms a probe tries after a path 404: with/without /v1, without the query.

    The corrected URL :func:`check_url` proposes comes first; the original is never included.
    """
    fam = family(wire)
    parts = urlsplit(re.sub(r"\s+", "", url))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return []
    bases = [parts._replace(fragment="")]
    if parts.query:
        bases.append(parts._replace(query="", fragment=""))
    candidates = [suggested_url(url, wire)]
    for base in bases:
        path = base.path.rstrip("/")
        stripped = _strip_endpoint(path, fam)
        path = path if stripped is None else stripped
        for variant in (path, *_version_variants(path)):
            candidates.append(urlunsplit(base._replace(path=variant)))
    seen = {url}
    return [c for c in candidates if not (c in seen or seen.add(c))]


_SECRET_PARAM = re.compile(r"key|token|secret|password|^sig$", re.IGNORECASE)


def shown_url(url: str) -> str:
    """The URL for display, with a key in its query string masked."""
    head, sep, query = url.partition("?")
    return head + sep + _masked_query(query) if sep else url


def _masked_query(query: str) -> str:
    """The query as shown in a finding: a ``?key=`` (or token, signature) value is masked."""
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(_SECRET_PARAM.search(name) for name, _ in pairs):
        return scrub(query)
    return "&".join(f"{n}={mask(v) if _SECRET_PARAM.search(n) else v}" for n, v in pairs)


def _version_variants(path: str) -> list[str]:
    for suffix in ("/v1beta", "/v1"):
        if path.endswith(suffix):
            return [path[: -len(suffix)]]
    return [path + "/v1"]


def _strip_endpoint(path: str, fam: str) -> str | None:
    match = _GEMINI_ENDPOINT.search(path)
    if match:
        return path[: match.start()]
    lowered = path.lower()
    for suffix in _ENDPOINTS[fam]:
        if lowered.endswith(suffix):
            return path[: -len(suffix)]
    return None
