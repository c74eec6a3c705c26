"""Tell transport failures apart (TLS, DNS) from the exception chain httpx and ssl raise."""

from __future__ import annotations

import socket
import ssl


def causes(err: BaseException) -> list[BaseException]:
    chain = []
    while err is not None and len(chain) < 10:
        chain.append(err)
        err = err.__cause__ or err.__context__
    return chain


def is_tls(err: BaseException) -> bool:
    return caused_by(err, ssl.SSLError, ("ssl", "certificate", "tls"))


def is_dns(err: BaseException) -> bool:
    phrases = (
        "name or service not known",
        "nodename nor servname",
        "temporary failure in name resolution",
    )
    return caused_by(err, socket.gaierror, phrases)


def caused_by(err: BaseException, kind: type[BaseException], phrases: tuple[str, ...]) -> bool:
    """Whether ``err`` or an exception in its chain is a ``kind`` or says one of ``phrases``."""
    for e in causes(err):
        text = str(e).lower()
        if isinstance(e, kind) or any(p in text for p in phrases):
            return True
    return False
