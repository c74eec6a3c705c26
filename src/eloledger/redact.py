"""Keep keys out of every output: mask for display, scrub from text that may echo them.

Gateways echo the key they received in their 401 messages, and exception texts may carry
headers, so every writer of user-visible text (ledger, CLI errors, TUI, logs) passes it
through :func:`scrub`. Secrets are registered once, when they are loaded.
"""

from __future__ import annotations

import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()

# Shapes of common API keys, scrubbed even when the key was never registered.
_KEY_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{12,}|sk-ant-[A-Za-z0-9_\-]{12,}|AIza[0-9A-Za-z_\-]{20,})"
)


# The password part of ``scheme://user:password@host`` (a secret that is not the key).
_URL_PASSWORD = re.compile(r"(?<=://)([^/@\s:]*):[^/@\s]*@")


def mask_url(url: str) -> str:
    """The URL with the password of any ``user:password@`` replaced by ``***``."""
    return _URL_PASSWORD.sub(r"\1:***@", url)


def mask(secret: str | None) -> str:
    """First 6 characters and the length: enough to tell two keys apart, never enough to use."""
    if not secret:
        return "<unset>"
    return f"{secret[:6]}…({len(secret)} chars)"


def register_secret(secret: str | None) -> None:
    """Remember a secret loaded in this process so that :func:`scrub` can remove it anywhere."""
    if secret and len(secret) >= 4:
        with _lock:
            _secrets.add(secret)
            stripped = secret.strip()
            if stripped and stripped != secret:
                _secrets.add(stripped)


def scrub(text: str) -> str:
    """Replace every registered secret (and anything shaped like a key) by its mask."""
    if not text:
        return text
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, mask(secret))
    return mask_url(_KEY_SHAPES.sub(lambda m: mask(m.group(0)), text))


def forget_all() -> None:
    """For tests: start from an empty registry."""
    with _lock:
        _secrets.clear()
