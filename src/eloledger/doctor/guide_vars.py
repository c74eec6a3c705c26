"""Do the guides' gateway variables agree with the active profile?

The guides' scripts read ``TAOTOKEN_BASE_URL`` and ``TAOTOKEN_BASE`` from the environment
(:mod:`eloledger.profiles.guide_vars` says which form each holds). Left over from another
shell, set by hand to the root where the OpenAI SDK needs ``/v1``, or pointing at a gateway the
user has since switched away from, they send the scripts' calls somewhere the clients are not
going; nothing else would say so before the tokens are spent.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from eloledger.doctor.findings import Finding, make
from eloledger.profiles.guide_vars import GUIDE_VARS, guide_vars, is_taotoken
from eloledger.profiles.model import Profile


def active_profile_name(env: Mapping[str, str]) -> str | None:
    """The profile this shell is on: ``ELOLEDGER_PROFILE`` (set by ``eloledger env``), else
    the one the last ``profile use --to shell`` recorded, else the one every client is on."""
    from eloledger.errors import UserError
    from eloledger.profiles.active import active_profile, active_targets

    if env.get("ELOLEDGER_PROFILE"):
        return env["ELOLEDGER_PROFILE"]
    try:
        return active_targets().get("shell") or active_profile()
    except UserError:
        return None


def guide_var_findings(profile: Profile, env: Mapping[str, str]) -> list[Finding]:
    """One ``env.guide_var_mismatch`` finding per guide variable set to something other than
    what ``eloledger env`` gives for ``profile`` (or set at all, for a non-TaoToken profile)."""
    wanted = guide_vars(profile) if is_taotoken(profile) else {}
    findings = []
    for var, holds in GUIDE_VARS.items():
        if var not in env:
            continue
        have = env[var].strip().rstrip("/")
        want = wanted.get(var)
        if want is not None and have == want:
            continue
        if want is None:
            message = (
                f"${var} points the guides' scripts at {env[var]!r}, but the active profile "
                f"{profile.name!r} is not TaoToken: the scripts and the clients use different "
                "gateways"
            )
            fix = f'unset {var}, or eval "$(eloledger env {profile.name})"'
        else:
            message = (
                f"${var} is {env[var]!r}, but profile {profile.name!r} gives {want!r} ({holds}): "
                "the guides' scripts would call another URL than the clients"
            )
            fix = f"export {var}={shlex.quote(want)}  (or eval \"$(eloledger env {profile.name})\")"
        findings.append(
            make("env.guide_var_mismatch", "shell", message, f"environment variable {var}", fix)
        )
    return findings
