"""`eloledger env [PROFILE]`: export lines for the shell, for eval "$(eloledger env)"."""

from __future__ import annotations

import argparse
import os

from eloledger.cli.warn import warn
from eloledger.errors import UserError

_EPILOG = """\
examples:
  eval "$(eloledger env openrouter)"
  eval "$(eloledger env)"            # the profile last switched to with --to shell
  eloledger env deepseek             # just look

When the profile's key is an environment variable, the output only references it
(export OPENAI_API_KEY="${OPENROUTER_API_KEY}"), so the key never appears in the text. When it
is in eloledger's 0600 secrets file, the key itself is exported: the output is meant for eval,
not for logs. Variables of clients the profile does not serve are unset.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "env",
        help="print export lines for a profile (eval them in your shell)",
        description="Print export lines that point the OpenAI/Anthropic SDKs, Codex and Gemini "
        "CLI at a profile's gateway.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("profile", nargs="?", help="profile name (default: the shell's active one)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.profiles import ownership
    from eloledger.profiles.store import get_profile, stored_secret
    from eloledger.profiles.writers.shell import export_lines

    name = args.profile or ownership.load_state().active.get("shell")
    if not name:
        raise UserError(
            "no profile given and none is active for the shell",
            fix="run 'eloledger env NAME' or 'eloledger profile use NAME --to shell --yes'",
        )
    profile = get_profile(name)
    profile.validate(f"profile {name!r}")  # e.g. a password in a stored URL is not exported
    secret = stored_secret(profile.name) if profile.key_in_secrets else None
    if profile.key_in_secrets and not secret:
        raise UserError(
            f"profile {name!r} keeps its key in the secrets file, but none is stored",
            fix=f"run 'eloledger profile edit {name} --key-stdin'",
        )
    if not secret and profile.key_env and not os.environ.get(profile.key_env):
        warn(f"${profile.key_env} is not set in this shell")
    print("\n".join(export_lines(profile, secret)))
    return 0
