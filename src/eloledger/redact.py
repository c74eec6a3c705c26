"""Keep keys out of every output: mask for display, scrub from text that may echo them.

Gateways echo the key they received in their 401 messages (sometimes only a slice of it:
``Incorrect API key provided: canary-12345****``), and exception texts may carry headers, so
every writer of user-visible text (ledger, CLI errors, TUI, logs) passes it through
:func:`scrub`. Secrets are registered once, when they are loaded.

What counts as a leak: the whole secret, or any run of at least :data:`MIN_FRAGMENT` (8)
consecutive characters of it. Eight is long enough that ordinary words rarely collide with a
random key, and short enough that a gateway's "first 8 characters" echo is caught. Only
secrets of 16 characters or more are scrubbed by slices (real keys are longer): a short
value such as the placeholder ``YOUR_API_KEY`` would otherwise mask ``_API_KEY`` inside every
variable name. Shorter secrets are scrubbed whole.

How it stays fast (the ledger writer calls it per row): from each registered secret we keep
the 5-character grams that start at offsets 0, 4, 8, ...; any run of 8 characters of the
secret contains one of them whole, so a few C-speed ``in`` tests per secret decide whether the
text needs any work at all (bench/bench_scrub.py measures it against version one's scrub).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

MIN_FRAGMENT = 8
MIN_SLICED_SECRET = 16  # shorter secrets are only scrubbed whole
_GRAM = 5
_STRIDE = MIN_FRAGMENT - _GRAM + 1  # every run of MIN_FRAGMENT holds a gram at one of these

# Shapes of common API keys, scrubbed even when the key was never registered.
_KEY_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{12,}|sk-ant-[A-Za-z0-9_\-]{12,}|AIza[0-9A-Za-z_\-]{20,})"
)
# The password part of ``scheme://user:password@host`` (a secret that is not the key).
_URL_PASSWORD = re.compile(r"(?<=://)([^/@\s:]*):[^/@\s]*@")


@dataclass(frozen=True)
class _Registry:
    """An immutable snapshot, swapped whole on registration, so :func:`scrub` needs no lock."""

    whole: tuple[str, ...] = ()  # longest first
    # gram -> (secret, offset) of every place it starts at an offset divisible by _STRIDE
    grams: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)


_lock = threading.Lock()
_secrets: set[str] = set()
_registry = _Registry()


def mask(secret: str | None) -> str:
    """First 6 characters and the length: enough to tell two keys apart, never enough to use."""
    if not secret:
        return "<unset>"
    return f"{secret[:6]}…({len(secret)} chars)"


def mask_url(url: str) -> str:
    """The URL (or text) with the password of any ``user:password@`` replaced by ``***``."""
    return _URL_PASSWORD.sub(r"\1:***@", url)


def register_secret(secret: str | None) -> None:
    """Remember a secret loaded in this process so that :func:`scrub` can remove it anywhere."""
    global _registry
    if not secret or len(secret) < 4:
        return
    with _lock:
        before = len(_secrets)
        _secrets.add(secret)
        stripped = secret.strip()
        if stripped and stripped != secret:
            _secrets.add(stripped)
        if len(_secrets) != before:
            _registry = _build(_secrets)


def _build(secrets: set[str]) -> _Registry:
    grams: dict[str, list[tuple[str, int]]] = {}
    for secret in secrets:
        if len(secret) >= MIN_SLICED_SECRET:
            for offset in range(0, len(secret) - _GRAM + 1, _STRIDE):
                grams.setdefault(secret[offset : offset + _GRAM], []).append((secret, offset))
    return _Registry(
        tuple(sorted(secrets, key=len, reverse=True)),
        {gram: tuple(places) for gram, places in grams.items()},
    )


def scrub(text: str) -> str:
    """Replace every registered secret, every run of :data:`MIN_FRAGMENT` characters of one,
    anything shaped like a key and any URL password by a mask."""
    if not text:
        return text
    registry = _registry
    for secret in registry.whole:
        if secret in text:
            text = text.replace(secret, mask(secret))
    if registry.grams:
        text = _scrub_fragments(text, registry.grams)
    text = _KEY_SHAPES.sub(lambda m: mask(m.group(0)), text)
    return mask_url(text) if "@" in text else text


def _scrub_fragments(text: str, grams: dict[str, tuple[tuple[str, int], ...]]) -> str:
    spans: list[tuple[int, int, str]] = []
    for gram, places in grams.items():
        at = text.find(gram)
        while at != -1:
            for secret, offset in places:
                start, end = _extend(text, at, secret, offset)
                if end - start >= MIN_FRAGMENT:
                    spans.append((start, end, secret))
            at = text.find(gram, at + 1)
    for start, end, secret in _merge(spans)[::-1]:
        text = f"{text[:start]}[part of {mask(secret)}]{text[end:]}"
    return text


def _extend(text: str, p: int, secret: str, offset: int) -> tuple[int, int]:
    """The longest run around text[p:p+_GRAM] that equals the secret around ``offset``."""
    start, s = p, offset
    while start > 0 and s > 0 and text[start - 1] == secret[s - 1]:
        start, s = start - 1, s - 1
    end, e = p + _GRAM, offset + _GRAM
    while end < len(text) and e < len(secret) and text[end] == secret[e]:
        end, e = end + 1, e + 1
    return start, end


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, secret in sorted(spans):
        if merged and start <= merged[-1][1]:
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2])
        else:
            merged.append((start, end, secret))
    return merged


def forget_all() -> None:
    """For tests: start from an empty registry."""
    global _registry
    with _lock:
        _secrets.clear()
        _registry = _Registry()
