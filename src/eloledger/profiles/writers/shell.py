"""The shell: ``export`` lines for ``eval "$(eloledger env PROFILE)"``.

Decision on keys: when the profile's key lives in an environment variable, the output only
*references* it (``export OPENAI_API_KEY="$OPENROUTER_API_KEY"``), so the key never appears in
the text; when it lives in the 0600 secrets file, the literal key is exported (single-quoted),
because the output exists to be eval'ed. Variables of clients the profile does not serve are
``unset`` so a previous profile's URL or key cannot leak into this one. A TaoToken profile
also exports the two variables the guides' scripts read (:mod:`eloledger.profiles.guide_vars`);
any other profile unsets them, so a script cannot keep calling the previous gateway.
"""

from __future__ import annotations

import shlex

from eloledger.profiles.guide_vars import GUIDE_VARS, guide_vars, is_taotoken
from eloledger.profiles.model import ENV_RE, MODEL_ROLES, Profile, check_var
from eloledger.profiles.writers import codex

KNOWN_VARS = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_MODEL",
    *(f"ANTHROPIC_DEFAULT_{role.upper()}_MODEL" for role in MODEL_ROLES),
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_API_KEY",
    "GEMINI_MODEL",
    *GUIDE_VARS,
)


def variables(profile: Profile, secret_key: str | None) -> dict[str, tuple[str, bool]]:
    """{VAR: (value, is_reference)}; a reference value is the name of another variable."""
    out: dict[str, tuple[str, bool]] = {}

    def key_var(var: str) -> None:
        if secret_key:
            out[var] = (secret_key, False)
        elif profile.key_env and profile.key_env != var:
            out[var] = (profile.key_env, True)

    if profile.serves("openai"):
        out["OPENAI_BASE_URL"] = (profile.client_base_url("openai"), False)
        key_var("OPENAI_API_KEY")
    if profile.serves("anthropic") or profile.serves("claude-code"):
        out["ANTHROPIC_BASE_URL"] = (profile.client_base_url("anthropic"), False)
        key_var("ANTHROPIC_AUTH_TOKEN" if profile.auth == "bearer" else "ANTHROPIC_API_KEY")
        model = profile.client_model("claude-code")
        if model:
            out["ANTHROPIC_MODEL"] = (model, False)
        for role in MODEL_ROLES:
            if profile.models.get(role):
                out[f"ANTHROPIC_DEFAULT_{role.upper()}_MODEL"] = (profile.models[role], False)
    if profile.serves("gemini-cli"):
        out["GOOGLE_GEMINI_BASE_URL"] = (profile.client_base_url("gemini-cli"), False)
        key_var("GEMINI_API_KEY")
        model = profile.client_model("gemini-cli")
        if model:
            out["GEMINI_MODEL"] = (model, False)
    if profile.serves("codex"):
        var = codex.key_env(profile)
        if var not in out:
            key_var(var)
    if is_taotoken(profile):
        out.update({var: (url, False) for var, url in guide_vars(profile).items()})
    out["ELOLEDGER_PROFILE"] = (profile.name, False)
    return out


def export_lines(profile: Profile, secret_key: str | None) -> list[str]:
    found = variables(profile, secret_key)
    lines = []
    for var, (value, is_ref) in found.items():
        if not ENV_RE.match(var) or (is_ref and not ENV_RE.match(value)):  # printed unquoted
            check_var(value if is_ref else var, f"profile {profile.name!r}", "variable")
        lines.append(
            f'export {var}="${{{value}}}"' if is_ref else f"export {var}={shlex.quote(value)}"
        )
    stale = [var for var in KNOWN_VARS if var not in found]
    # the key variable the profile reads from is the user's own: never unset it
    stale = [var for var in stale if var != profile.key_env]
    if stale:
        lines.append("unset " + " ".join(stale))
    return lines
