"""`eloledger doctor`: name the cause of a 401, 404 or empty usage, and the fix."""

from __future__ import annotations

import argparse

from eloledger.cli.options import add_format_option
from eloledger.cli.warn import warn

EPILOG = """\
examples:
  eloledger doctor                          # live client configs + env, probe what they point at
  eloledger doctor --offline                # static checks only, no network
  eloledger doctor --profile openrouter     # one profile: static checks + live probes
  eloledger doctor --ledger runs/exp1.jsonl --offline --model gpt-4o-mini
  eloledger doctor --url https://gw.example/api/v1 --wire openai-chat --key-env GW_KEY
  eloledger doctor --format json | jq '.findings[] | select(.severity == "error")'

exit status: 0 clean (or info only), 1 warnings, 2 errors (or bad arguments).
"""

WIRES = ("openai-chat", "openai-responses", "anthropic", "gemini")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "doctor",
        help="find misconfigured base URLs, keys and missing token usage",
        description=(
            "Check the live client configs (Claude Code, Codex, Gemini CLI, the shell) and the\n"
            "profiles without network, probe the gateways with a few minimal requests, and\n"
            "audit a token ledger. Every finding names its evidence (file:line or variable)\n"
            "and a concrete fix. Keys are never printed."
        ),
        epilog=EPILOG,
    )
    parser.add_argument("--profile", metavar="NAME", help="check and probe this profile")
    parser.add_argument("--offline", action="store_true", help="static checks only (no probes)")
    parser.add_argument("--ledger", metavar="FILE", help="audit this JSONL token ledger")
    add_format_option(parser)
    parser.add_argument("--url", metavar="URL", help="ad-hoc: probe this base URL (no profile)")
    parser.add_argument(
        "--wire",
        choices=WIRES,
        action="append",
        default=[],
        help="ad-hoc: the URL's wire protocol; with --profile: also probe this wire (repeatable)",
    )
    parser.add_argument("--key-env", metavar="VAR", help="ad-hoc: variable holding the key")
    parser.add_argument(
        "--auth",
        choices=("bearer", "x-api-key"),
        help="ad-hoc: key header form (default: Bearer; Gemini: x-goog-api-key)",
    )
    parser.add_argument(
        "--model",
        metavar="M",
        action="append",
        default=[],
        help="ad-hoc: model to probe; with --ledger: a model the experiment used (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=8.0,
        metavar="S",
        help="per-request probe timeout in seconds (default 8)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.errors import UserError
    from eloledger.tables import terminal_width, to_json

    if args.timeout <= 0:
        raise UserError(f"--timeout {args.timeout:g}: must be positive", fix="e.g. --timeout 5")
    if args.url is not None:
        if args.profile:
            raise UserError(
                "--url and --profile exclude each other",
                fix="probe a profile with --profile, or a bare URL with --url",
            )
        if len(args.wire) > 1:
            raise UserError(
                "--url takes one --wire",
                fix="probe one wire per --url, or add the gateway as a profile",
            )
        if not args.wire or not args.key_env:
            raise UserError(
                "--url needs --wire and --key-env",
                fix="e.g. --url URL --wire openai-chat --key-env GW_KEY",
            )
        from eloledger.doctor.run import run_adhoc

        probed = _client_url(args.url, args.wire[0])
        report = run_adhoc(
            probed,
            args.wire[0],
            args.key_env,
            auth=args.auth,
            model=args.model[0] if args.model else None,
            offline=args.offline,
            timeout=args.timeout,
        )
        report.findings = _as_typed(args.url, probed, args.wire[0], report.findings)
    else:
        if args.key_env or args.auth:
            raise UserError(
                "--key-env and --auth go with --url", fix="add --url URL --wire WIRE, or drop them"
            )
        from eloledger.doctor.run import run_doctor

        report = run_doctor(
            profile=args.profile,
            offline=args.offline,
            ledger=args.ledger,
            expect_models=args.model,
            wires=args.wire,
            timeout=args.timeout,
        )
    for warning in report.warnings:
        warn(warning)
    if args.format == "json":
        print(to_json(report.to_json()))
    else:
        print(render_text(report, terminal_width()))
    return report.exit_status


def render_text(report, width: int | None = None) -> str:  # noqa: ANN001
    """Findings as blocks (severity, code, target; message; evidence; fix) and a summary.

    On a terminal (``width``) every line wraps between words, each field under its own
    indent, so a long gateway message stays readable at 80 columns and a URL or a command is
    never cut; piped output (without COLUMNS) keeps one line per field for grep.
    """
    from eloledger.doctor.run import ADD_A_PROFILE, NOTHING_CONFIGURED
    from eloledger.tables import fill
    from eloledger.words import plural

    width = width if width is not None and width >= 40 else None

    def field(text: str, label: str = "") -> str:
        return fill(text, width, " " * 8 + label, " " * 10)

    lines: list[str] = []
    for f in report.findings:
        lines.append(fill(f"{f.severity.upper():<7} {f.code}  [{f.target}]", width, "", " " * 8))
        lines.append(field(f.message))
        if f.evidence:
            lines.append(field(f.evidence, "evidence: "))
        if f.fix:
            lines.append(field(f.fix, "fix: "))
    for result in report.probes:
        if not result.ok:  # a passing probe is a probe.ok finding above
            t = result.target
            requests = plural(result.requests, "request")
            text = f"probe FAILED: {t.name} {t.wire} {t.base_url} ({requests})"
            lines.append(fill(text, width, "", "  "))
    for note in report.notes:
        lines.append(fill(note, width, "note: "))
    counts = {
        s: sum(f.severity == s for f in report.findings) for s in ("error", "warning", "info")
    }
    if not any(f.severity in ("error", "warning") for f in report.findings):
        lines.append(ADD_A_PROFILE if NOTHING_CONFIGURED in report.notes else "no problems found")
    lines.append(
        f"{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}, "
        f"{counts['info']} info"
    )
    return "\n".join(lines)


def _client_url(url: str, wire: str) -> str:
    """The URL the probe uses: the typed one as this client would need it (a gateway root gets
    /v1 for an OpenAI wire, a pasted endpoint loses its path, an Anthropic base its /v1), so
    the probe never doubles a path. A URL with a query or fragment is probed as given."""
    from eloledger.doctor.urls import suggested_url

    if "?" in url or "#" in url or not url.strip():
        return url
    return suggested_url(url, wire)


def _as_typed(typed: str, probed: str, wire: str, findings: list) -> list:  # noqa: ANN001
    """The URL findings of the URL as typed (what the user would paste into a client), in place
    of those of the corrected URL the probe used: mending first hid ``url.missing_v1`` and
    ``url.extra_v1``, and a pasted endpoint read "no problems found"."""
    from eloledger.doctor.findings import sort_key
    from eloledger.doctor.urls import check_url

    if typed == probed:
        return findings
    own = check_url(typed, wire, target="adhoc", evidence=f"--url {typed}")
    rest = [f for f in findings if f.evidence != f"--url {probed}"]
    return sorted([*own, *rest], key=sort_key)
