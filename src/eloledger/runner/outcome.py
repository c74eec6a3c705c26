"""Whether a run produced something usable, and if not, why, in the doctor's words.

A run whose calls all fail is not a result: every arm that has no successful call is named
with its error classes and the fix the doctor would give for them (``auth.unauthorized`` for a
401, ``rate.quota`` for exhausted credit, ...). The CLI turns these causes into exit status 1
("ran but produced nothing usable"; 2 stays for the user's own input errors).

:class:`Breaker` stops a run early after :data:`BREAK_AFTER` consecutive failures that will
fail the same way again (a rejected key, exhausted quota, an unknown model): the rest of the
task list would only burn time and produce more error rows.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from eloledger.gateway.causes import config_key, unsupported_params, which_gateway
from eloledger.ledger.row import AnyRow
from eloledger.words import plural

BREAK_AFTER = 5
PERSISTENT = frozenset(
    {
        "auth",
        "permission",
        "quota",
        "not_found",
        "path",
        "upstream_auth",
        "unsupported_param",
        "deployment",
    }
)
# A 400 fails the same way again when the gateway says the same words each time.
REPEATED = frozenset({"bad_request", "client_error"})

# error_class -> (doctor code, what it means, the fix); {key}, {host}, {model} are filled in
_ADVICE: dict[str, tuple[str, str, str]] = {
    "auth": (
        "auth.unauthorized",
        "the gateway rejects the key from {key}",
        "check the value of {key} (it must be a key for {host})",
    ),
    "upstream_auth": (
        "auth.upstream_key",
        "the gateway's upstream rejects the gateway's own key for {model} (your key is fine)",
        "fix the gateway's config (its provider key for {model}: {detail}); {key} needs no "
        "change",
    ),
    "cooldown": (
        "rate.limited",
        "the gateway put {model} in cooldown after an upstream failure",
        "find the upstream error before the cooldown (the ledger's first non-429 error row, or "
        "the gateway's log); lowering concurrency will not help",
    ),
    "gateway_timeout": (
        "net.gateway_timeout",
        "the gateway timed out on its upstream, well inside timeout_s",
        "raise the gateway's own timeout for {model} (LiteLLM: timeout in litellm_params); "
        "raising timeout_s will not help",
    ),
    "permission": (
        "auth.forbidden",
        "the key is accepted but not allowed to use {model}",
        "grant the key in {key} access to {model} (or use a key/plan that has it)",
    ),
    "not_found": (
        "model.not_found",
        "the gateway does not know the model {model}",
        "set a model the gateway serves (eloledger doctor lists them)",
    ),
    "path": (
        "path.not_found",
        "the gateway answers 404 for the path: the profile's base URL does not serve this API",
        "correct the profile's base URL (eloledger doctor tries the neighbouring forms)",
    ),
    "unsupported_param": (
        "request.unsupported_param",
        "the gateway's deployment of {model} rejects a parameter the run sends ({detail})",
        "set `drop_params: true` on the gateway (LiteLLM: litellm_settings), or use a model "
        "whose deployment takes {detail}",
    ),
    "deployment": (
        "gateway.deployment",
        "the gateway accepts your base URL and key, but its deployment/upstream for {model} "
        "fails",
        "fix the gateway's config for {model} ({detail}); the profile's base URL and {key} "
        "need no change",
    ),
    "quota": (
        "rate.quota",
        "quota or credit exhausted: retrying will not help",
        "add credit or raise the quota for this key",
    ),
    "rate_limit": (
        "rate.limited",
        "rate limited on every attempt",
        "lower [experiment] concurrency or raise [retry] max_attempts",
    ),
    "server": ("server.error", "the gateway answers 5xx", "retry later (--resume)"),
    "overloaded": ("server.error", "the gateway is overloaded", "retry later (--resume)"),
    "connection": (
        "net.unreachable",
        "connection refused, DNS failure or no route",
        "check the base URL and that the gateway is running",
    ),
    "timeout": (
        "net.timeout",
        "no answer within timeout_s",
        "raise [experiment] timeout_s, or check the gateway",
    ),
    "bad_response": (
        "response.not_json",
        "the answers are not the API's (a login page or a proxy?)",
        "check the profile's base URL",
    ),
    "bad_request": (
        "request.rejected",
        "the gateway rejects the request",
        "check max_tokens, the model and wire_api against the gateway's limits",
    ),
}


@dataclass
class Where:
    """What the advice needs to name: the profile, its key's source, the host, the model."""

    profile: str
    key_label: str
    base_url: str | None
    model: str
    error: str = ""  # the failing row's message: names the parameter or the gateway's key


class Breaker:
    """Counts consecutive persistent failures; trips at :data:`BREAK_AFTER`."""

    def __init__(self, limit: int = BREAK_AFTER) -> None:
        self.limit = limit
        self.streak: Counter[tuple[str, int | None]] = Counter()
        self.run = 0
        self.tripped: tuple[str, int | None] | None = None  # (error_class, http_status)
        self.model: str | None = None  # the model of the call that tripped it
        # the first failure retries cannot fix: when the gateway then answers with cooldown
        # 429s (LiteLLM after an upstream 404/401) it is the cause, and the run stops on it
        self.cause: tuple[str, int | None, str | None] | None = None
        self.after_cooldown = False
        self.error = ""  # the message of the last failure counted

    def record(self, row: AnyRow) -> None:
        if row.get("status") == "ok":
            self.run = 0
            self.streak.clear()
            return
        cls = str(row.get("error_class") or "")
        if cls in PERSISTENT and self.cause is None:
            self.cause = (cls, row.get("http_status"), row.get("model"))
        if cls == "cooldown":  # caused by an earlier failure: neither resets nor extends it
            if self.cause is not None and self.tripped is None:
                self.tripped, self.model = self.cause[:2], self.cause[2]
                self.after_cooldown = True
            return
        error = str(row.get("error") or "")
        repeated = cls in REPEATED and (self.run == 0 or error == self.error)
        if (cls not in PERSISTENT and not repeated) or row.get("will_retry"):
            self.run = 0
            self.streak.clear()
            return
        self.error = error
        self.run += 1
        self.streak[(cls, row.get("http_status"))] += 1
        if self.run >= self.limit and self.tripped is None:
            self.tripped = self.streak.most_common(1)[0][0]
            self.model = row.get("model")

    def message(self, skipped: int, where: Where) -> str | None:
        if self.tripped is None:
            return None
        cls, status = self.tripped
        http = f" (HTTP {status})" if status else ""
        where = replace(where, model=self.model or where.model, error=self.error)
        if self.after_cooldown:
            return (
                f"stopped: a {cls} failure{http} that retries cannot fix, then the gateway "
                f"answered with cooldown 429s: {plural(skipped, 'call')} skipped: "
                f"{advice(cls, where)}"
            )
        return (
            f"stopped after {self.limit} consecutive {cls} failures{http}: "
            f"{plural(skipped, 'call')} skipped: {advice(cls, where)}"
        )


def arm_failures(arms: list[dict[str, Any]], where: Where) -> list[str]:
    """One cause per arm that has calls but no successful one, and per arm with calls that
    failed for good (after every retry): those tasks have no answer, so the run's comparisons
    and Elo leave them out. Empty when every call of every arm worked in the end."""
    causes = []
    for arm in arms:
        if arm["calls"] == 0 or arm["errors"] == 0:
            continue
        classes: Counter[tuple[str, Any]] = arm["error_classes"]
        parts = ", ".join(
            f"{n} {cls}" + (f" HTTP {status}" if status else "")
            for (cls, status), n in classes.most_common()
        )
        if arm["ok"] > 0:
            line = (
                f"arm {arm['arm']}: {arm['errors']} of {plural(arm['calls'], 'call')} failed for "
                f"good after retries ({parts}); their tasks have no answer"
            )
        else:
            line = (
                f"arm {arm['arm']}: no successful call ({arm['errors']} of {arm['calls']} "
                f"failed: {parts})"
            )
        if classes:
            # the persistent cause behind cooldown 429s, not the 429s, is what to fix
            ranked = [c for (c, _), _n in classes.most_common() if c in PERSISTENT]
            line += ": " + advice(ranked[0] if ranked else classes.most_common(1)[0][0][0], where)
        causes.append(line)
    return causes


def fix_once(failures: list[str]) -> list[str]:
    """Each doctor fix said once: a later cause with the same advice (four arms out of quota,
    after the stop that names it) points back to it instead of repeating it."""
    said: set[str] = set()
    out = []
    for line in failures:
        found = _ADVICE_START.search(line)
        if found is None:
            out.append(line)
            continue
        tail = line[found.start() + 2 :]
        if tail in said:
            line = f"{line[: found.start()]}: {found.group(1)}, same fix as above"
        said.add(tail)
        out.append(line)
    return out


_ADVICE_START = re.compile(
    ": ("
    + "|".join(re.escape(code) for code in sorted({c for c, _, _ in _ADVICE.values()}))
    + "|run\\.errors): "
)


def cause_code(error_class: str) -> str:
    """The doctor's finding code for a row's error class (the code its advice starts with)."""
    return _ADVICE.get(error_class, ("run.errors",))[0]


def _detail(error_class: str, error: str) -> str:
    """The parameter a 400 names, or the gateway's config key the provider put in brackets."""
    if error_class == "unsupported_param":
        params = unsupported_params(error.split("To drop these")[0])
        return ", ".join(f"`{p}`" for p in params) or "the parameter it names"
    gateway = which_gateway(error)
    part = "key" if error_class == "upstream_auth" else "base"
    return f"{gateway}: {config_key(gateway, part)}" if gateway else config_key(None, part)


def advice(error_class: str, where: Where) -> str:
    """The doctor's code, meaning and fix for an error class, filled in for this run."""
    code, what, fix = _ADVICE.get(
        error_class, ("run.errors", "the calls fail", "look at the error rows in the ledger")
    )
    host = urlsplit(where.base_url or "").netloc or "the gateway"
    values = {
        "key": where.key_label,
        "host": host,
        "model": where.model,
        "detail": _detail(error_class, where.error),
    }
    text = f"{code}: {what.format(**values)}; fix: {fix.format(**values)}"
    if where.profile != "sim":
        text += f" (eloledger doctor --profile {where.profile} probes it)"
    if error_class in PERSISTENT:
        text += "; then --resume redoes the failed calls"
    return text
