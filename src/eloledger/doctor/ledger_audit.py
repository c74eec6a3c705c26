"""Audit a token ledger for rows that would make token counts or Elo-per-token wrong.

Rows are read with the ledger's own line parser (aliases and nested usage mapped), line by
line so every finding can name the lines. One finding per code, with the first few lines as
evidence: a 100k-row ledger with one systematic problem gives one line of output, not 100k.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from eloledger.doctor.findings import Finding, make
from eloledger.ledger.dedupe import DuplicateFinder
from eloledger.profiles.model import SIM_PROFILE

_LOOPBACK = ("localhost", "::1")
_SHOW = 5


def audit_ledger(
    path: str | Path, *, expect_models: Iterable[str] = (), warn=None
) -> list[Finding]:  # noqa: ANN001
    """Every ``ledger.*`` finding for one ledger file.

    ``expect_models``: the models the experiment used (from --model / the profile / the spec);
    without it, ``ledger.unknown_model`` cannot be judged and is not reported.
    """
    path = Path(path)
    target = f"ledger:{path.name}"
    expected = [m for m in expect_models if m]
    usage_missing: list[int] = []
    mismatch: list[int] = []
    unknown: dict[str, list[int]] = defaultdict(list)
    errors: list[int] = []
    error_kinds: Counter[str] = Counter()
    final_errors = 0
    estimated: list[int] = []
    disagree: list[int] = []
    finder = DuplicateFinder(ids_within_file=True)
    duplicates: list[tuple[int, int]] = []
    base_urls: dict[str, dict[str, int]] = defaultdict(dict)
    rows = 0
    for number, line, row in _rows(path, warn):
        rows += 1
        status = row.get("status")
        if row.get("usage_check") == "disagree":
            disagree.append(number)
        if status == "ok":
            if row.get("usage_source") == "estimated":
                estimated.append(number)
            elif _usage_missing(row):
                usage_missing.append(number)
            elif _mismatch(row):
                mismatch.append(number)
        else:
            errors.append(number)
            kind = row.get("error_class") or (
                f"HTTP {row['http_status']}" if row.get("http_status") else "error"
            )
            error_kinds[str(kind)] += 1
            final_errors += 0 if row.get("will_retry") else 1
        model = row.get("model")
        if expected and model and not _model_expected(str(model), expected):
            unknown[str(model)].append(number)
        first = finder.repeats(str(number), line, row)
        if first is not None:
            duplicates.append((number, int(first)))
        if row.get("base_url"):
            gateway = _gateway(str(row["base_url"]), row.get("profile"))
            base_urls[str(row.get("run_id") or "")].setdefault(gateway, number)

    findings: list[Finding] = []
    if rows == 0:
        return findings
    if usage_missing and not estimated:
        findings.append(
            make(
                "ledger.usage_missing",
                target,
                f"{len(usage_missing)} of {rows} ok rows have missing or zero token usage: they "
                "would count as free calls",
                _lines(path, usage_missing),
                "run 'eloledger doctor --profile NAME' to see whether the gateway drops usage "
                "(often only on streams); re-run those calls, or mark them usage_source = "
                '"estimated" with an estimate',
            )
        )
    if estimated:
        findings.append(_estimated_finding(target, path, rows, estimated, usage_missing))
    if disagree:
        findings.append(
            make(
                "ledger.usage_disagree",
                target,
                f"{_n(len(disagree), 'row')} whose token counts disagree with the provider's "
                "own count for the same call (usage_check = disagree)",
                _lines(path, disagree),
                "find which count the provider bills (its usage page or log): a gateway that "
                "counts tokens itself (LiteLLM does when the upstream sends none) or drops them "
                "makes the ledger's sums, and Elo per token, off by that difference",
            )
        )
    if mismatch:
        findings.append(
            make(
                "ledger.total_mismatch",
                target,
                f"{_n(len(mismatch), 'row')} with prompt_tokens + completion_tokens != total_tokens",
                _lines(path, mismatch),
                "decide which count the gateway bills; eloledger uses total_tokens: correct the "
                "rows or report the gateway's usage bug",
            )
        )
    if unknown:
        detail = "; ".join(f"{m}: {_lines(path, ln, bare=True)}" for m, ln in unknown.items())
        total = sum(len(v) for v in unknown.values())
        findings.append(
            make(
                "ledger.unknown_model",
                target,
                f"{_n(total, 'row')} for models the experiment did not use "
                f"({', '.join(sorted(unknown))}; expected {', '.join(expected)})",
                f"{path}: {detail}",
                "the gateway may have routed to a fallback model: pin the model, or pass the "
                "served names with --model to accept them",
            )
        )
    if duplicates:
        shown = ", ".join(f"line {a} repeats line {b}" for a, b in duplicates[:_SHOW])
        more = f" (+{len(duplicates) - _SHOW} more)" if len(duplicates) > _SHOW else ""
        findings.append(
            make(
                "ledger.duplicate",
                target,
                f"{_n(len(duplicates), 'duplicate row')}: each records a call already recorded",
                f"{path}: {shown}{more}",
                "keep one row per call (a resumed run appended twice?); token sums double-count "
                "them until then",
            )
        )
    if errors:
        kinds = ", ".join(f"{k} x{n}" for k, n in error_kinds.most_common(5))
        findings.append(
            make(
                "ledger.errors",
                target,
                f"{_n(len(errors), 'error row')} ({final_errors} final, {len(errors) - final_errors} "
                f"retried): {kinds}",
                _lines(path, errors),
                "run 'eloledger doctor --profile NAME' for the cause; tasks with final errors have "
                "fewer samples, which biases their arm's Elo",
            )
        )
    for run_id, urls in base_urls.items():
        if len(urls) > 1:
            listed = "; ".join(f"{u} (first at line {n})" for u, n in urls.items())
            findings.append(
                make(
                    "ledger.base_urls",
                    target,
                    f"run {run_id or '(no run_id)'} sent calls to {len(urls)} different base URLs",
                    f"{path}: {listed}",
                    "one run should use one gateway: the arms' costs are not comparable otherwise; "
                    "check for a profile switch during the run",
                )
            )
    return findings


def _estimated_finding(
    target: str, path: Path, rows: int, estimated: list[int], missing: list[int]
) -> Finding:
    """Estimated usage (and any missing usage) as one ``ledger.usage_missing`` finding.

    Estimates alone are a warning (the sums are approximate, not wrong by a whole call);
    with rows that have no usage at all it stays an error.
    """
    text = (
        f"{len(estimated)} of {rows} ok rows carry ESTIMATED usage: the gateway reported no "
        "token counts (usually on streams) and eloledger guessed from characters"
    )
    lines = estimated
    if missing:
        text += f"; {len(missing)} more have missing or zero usage"
        lines = sorted(estimated + missing)
    return make(
        "ledger.usage_missing",
        target,
        text,
        _lines(path, lines),
        "use a gateway or route that forwards usage on streams (eloledger already asks for it: "
        "stream_options.include_usage is sent on every streamed chat call, so the gateway "
        "dropped it); 'eloledger doctor --profile NAME' checks it (usage.stream_missing)",
        severity="error" if missing else "warning",
    )


def _gateway(url: str, profile: Any) -> str:
    """The gateway a base URL stands for: the simulator is one gateway whatever its port.

    The embedded simulator (profile "sim") listens on a new loopback port each time a run
    starts or resumes; a different port there is not a different gateway.
    """
    if profile != SIM_PROFILE:
        return url
    parts = urlsplit(url)
    if (parts.hostname or "") not in _LOOPBACK and not (parts.hostname or "").startswith("127."):
        return url
    return f"{parts.scheme}://{parts.hostname}:<simulator port>{parts.path}"


def _rows(path: Path, warn) -> Iterator[tuple[int, bytes, dict[str, Any]]]:  # noqa: ANN001
    """The ledger's rows with their line numbers, under the ledger reader's own rules (BOM,
    torn last line, aliases, ``file:line`` errors): the doctor audits what the views read."""
    from eloledger.ledger.reader import numbered_rows

    for number, line, row in numbered_rows(path, warn=warn):
        yield number, bytes(line), row


def _usage_missing(row: dict[str, Any]) -> bool:
    if row.get("usage_source") == "estimated":
        return False
    if row.get("usage_source") == "missing":
        return True
    # the rule of every reader (eloledger.ledger.summary.counted_usage): no total, a zero
    # total or an explicit zero prompt is missing usage; a total without a prompt count counts
    prompt, total = row.get("prompt_tokens"), row.get("total_tokens")
    return total is None or total == 0 or prompt == 0


def _mismatch(row: dict[str, Any]) -> bool:
    prompt, completion, total = (
        row.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    )
    if None in (prompt, completion, total):
        return False
    if prompt + completion == total:
        return False
    reasoning = row.get("reasoning_tokens")
    # Some gateways count reasoning outside completion_tokens: total = p + c + r is consistent.
    return not (reasoning and prompt + completion + reasoning == total)


def _model_expected(model: str, expected: list[str]) -> bool:
    """Exact, or a dated/pinned variant (gpt-4o -> gpt-4o-2024-08-06, vendor/model)."""
    low = model.lower()
    for want in expected:
        w = want.lower()
        if low == w or low.startswith(w + "-") or low.endswith("/" + w) or w.endswith("/" + low):
            return True
    return False


def _lines(path: Path, numbers: list[int], *, bare: bool = False) -> str:
    shown = ", ".join(str(n) for n in numbers[:_SHOW])
    more = f" (+{len(numbers) - _SHOW} more)" if len(numbers) > _SHOW else ""
    word = "line" if len(numbers) == 1 else "lines"
    text = f"{word} {shown}{more}"
    return text if bare else f"{path}: {text}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
