"""Fault modes the simulator can inject, server-wide or per request (``x-sim-fault`` header).

Error bodies follow what real gateways send (docs/observed/clients.md, "Error bodies"):
OpenAI-compatible ``{"error": {message, type, param, code}}`` and Anthropic-compatible
``{"type": "error", "error": {type, message}}``.
"""

from __future__ import annotations

FAULT_MODES: tuple[str, ...] = (
    "401",
    "403",
    "404_path",
    "404_model",
    "429",
    "429_quota",
    "500",
    "529",
    "reset",
    "no_usage",
    "zero_usage",
    "html",
    "slow",
    "sse_error",
)
# Faults answered with an HTTP error before any generation.
STATUS_FAULTS = {
    "401": 401,
    "403": 403,
    "404_path": 404,
    "404_model": 404,
    "429": 429,
    "429_quota": 429,
    "500": 500,
    "529": 529,
}

# (OpenAI type, OpenAI code, Anthropic type, message)
_ERRORS: dict[str, tuple[str, str | None, str, str]] = {
    "401": (
        "invalid_request_error",
        "invalid_api_key",
        "authentication_error",
        "Incorrect API key provided.",
    ),
    "403": (
        "permission_error",
        "permission_denied",
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    "404_model": (
        "invalid_request_error",
        "model_not_found",
        "not_found_error",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    "429": (
        "requests",
        "rate_limit_exceeded",
        "rate_limit_error",
        "Rate limit reached for requests. Please try again later.",
    ),
    "429_quota": (
        "insufficient_quota",
        "insufficient_quota",
        "rate_limit_error",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    "500": (
        "server_error",
        None,
        "api_error",
        "The server had an error while processing your request.",
    ),
    "529": ("overloaded_error", "overloaded", "overloaded_error", "Overloaded"),
}
_TAG = " (eloledger simulator)"

HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body>\n"
    b"<h1>Sign in to continue</h1>\n<form method='post' action='/login'>\n"
    b"<input name='user'><input name='password' type='password'>\n"
    b"<button>Sign in</button></form>\n"
    b"<p>eloledger simulator: injected 'html' fault (a gateway login page).</p>\n"
    b"</body></html>\n"
)


def error_body(mode: str, protocol: str, *, method: str, path: str, model: str = "") -> dict:
    """The JSON error body for a status fault, in the protocol's own shape."""
    if mode == "404_path" and protocol == "gemini":
        return gemini_error(404, f"Invalid URL ({method} {path})")
    if mode == "404_path":
        if protocol == "anthropic":
            return {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}
        return {
            "error": {
                "message": f"Invalid URL ({method} {path})",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
    oa_type, oa_code, an_type, message = _ERRORS[mode]
    message = message.format(model=model) + _TAG
    if protocol == "gemini":
        return gemini_error(STATUS_FAULTS[mode], message)
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": an_type, "message": message}}
    return {"error": {"message": message, "type": oa_type, "param": None, "code": oa_code}}


def bad_request_body(protocol: str, message: str) -> dict:
    if protocol == "gemini":
        return gemini_error(400, message)
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


def gemini_error(status: int, message: str) -> dict:
    """Google's error shape (Gemini CLI prints ``error.message``)."""
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}
    names |= {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "INTERNAL")}}
