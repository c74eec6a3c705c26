"""The meter: an agent session's only way to a model, and the only source of its token counts.

Why: an agent CLI and every tool it runs are untrusted. What it prints (its final report) and
what it writes (its session log) are in its hands; the bytes the gateway sends back to eloledger
are not. So every model call of a session goes through :class:`~.proxy.Meter` on the host,
which holds the real key, accepts only the session's own token, and records one
:class:`~.call.MeteredCall` per call from the gateway's answer.

How a session reaches it (:func:`behind_meter`): in the OS sandbox the CLI has no network but a
loopback of its own; the session's meter socket is bound in, and :mod:`.relay` binds
``127.0.0.1:RELAY_PORT`` there (the CLI's base URL), hands that listening socket to the meter
over the bound socket (:mod:`.door`) and execs the CLI: the meter serves the CLI directly. Without a sandbox (``sandbox = "none"``,
run as the user, unprotected anyway) the meter listens on a 127.0.0.1 port of the host instead.
"""

from __future__ import annotations

from pathlib import Path

from eloledger.meter.call import ROLE, MeteredCall, session_usage
from eloledger.meter.proxy import Meter, MeterSession, Upstream

__all__ = [
    "RELAY_PORT", "ROLE", "Meter", "MeterSession", "MeteredCall", "Upstream", "behind_meter",
    "client_root", "session_usage",
]  # fmt: skip

RELAY = Path(__file__).with_name("relay.py")
RELAY_PORT = 47110  # inside each sandbox's own network namespace: never the host's port
_INSIDE = "/.eloledger-meter"


def client_root(session: MeterSession) -> str:
    """The base URL the CLI is given (the relay inside its sandbox, or the meter's own port)."""
    port = session.port if session.port is not None else RELAY_PORT
    return f"http://127.0.0.1:{port}"


def behind_meter(
    argv: list[str], session: MeterSession, python: str
) -> tuple[list[str], list[tuple[Path, str]]]:
    """``argv`` started by the relay, and the read-only mounts the sandbox needs for it (the
    relay script and the session's socket). Unchanged for a TCP session (no sandbox)."""
    if session.socket_path is None:
        return argv, []
    inner = [python, "-I", "-S", f"{_INSIDE}/relay.py", f"{_INSIDE}/meter.sock", str(RELAY_PORT)]
    mounts = [(RELAY, f"{_INSIDE}/relay.py"), (session.socket_path, f"{_INSIDE}/meter.sock")]
    return [*inner, "--", *argv], mounts
