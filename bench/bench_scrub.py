"""Benchmark: redact.scrub on a 1,000-character gateway error body, µs per call.

The ledger writer scrubs every text field of every row, so scrub must stay cheap. Side by side
on the same bodies: the named baseline is version one's scrub (whole registered secrets and
key shapes only, copied below unchanged) against today's (also any run of 8+ characters of a
registered secret and URL passwords). Three cases: a clean body (the common case), a body
echoing the whole key, and one echoing a 12-character slice of it.

    .venv/bin/python bench/bench_scrub.py [--calls 20000] [--secrets 3]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from eloledger import redact

# --- baseline: eloledger v1's scrub, verbatim ------------------------------------------------
_V1_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{12,}|sk-ant-[A-Za-z0-9_\-]{12,}|AIza[0-9A-Za-z_\-]{20,})"
)


def v1_scrub(text: str, secrets: set[str]) -> str:
    if not text:
        return text
    known = sorted(secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, redact.mask(secret))
    return _V1_SHAPES.sub(lambda m: redact.mask(m.group(0)), text)


def body(echo: str) -> str:
    head = '{"error": {"type": "authentication_error", "message": "Incorrect API key provided: '
    filler = "The request could not be authorised by the upstream gateway; " * 20
    text = f"{head}{echo}. {filler}"
    return (text[:997] + '"}}') if len(text) > 1000 else text.ljust(1000)


def leaked(text: str, key: str) -> str:
    """The longest run of the key's characters (8 or more) still in the text, or "none"."""
    runs = [
        key[a:b] for a in range(len(key)) for b in range(a + 8, len(key) + 1) if key[a:b] in text
    ]
    return repr(max(runs, key=len)) if runs else "none"


def per_call_us(fn: Callable[[str], str], text: str, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(text)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--secrets", type=int, default=3, help="registered secrets")
    args = parser.parse_args()
    redact.forget_all()
    secrets = {
        f"canary-{n}2345-" + "k7Qx9PzR2mWv8LtY4nBc"[n:] + f"{n:04d}" for n in range(args.secrets)
    }
    for secret in secrets:
        redact.register_secret(secret)
    key = sorted(secrets)[0]
    cases = {
        "clean body": body("<hidden>"),
        "whole key": body(key),
        "12-char slice": body(key[:12]),
    }
    print(f"scrub, 1,000-char body, {len(secrets)} secrets, {args.calls} calls (µs/call)")
    print(f"{'case':<15}{'v1 scrub':>10}{'scrub':>10}{'ratio':>8}  key text left (v1 / now)")
    for name, text in cases.items():
        base = per_call_us(lambda t: v1_scrub(t, secrets), text, args.calls)
        new = per_call_us(redact.scrub, text, args.calls)
        left = f"{leaked(v1_scrub(text, secrets), key)} / {leaked(redact.scrub(text), key)}"
        print(f"{name:<15}{base:>10.1f}{new:>10.1f}{new / base:>7.2f}x  {left}")


if __name__ == "__main__":
    main()
