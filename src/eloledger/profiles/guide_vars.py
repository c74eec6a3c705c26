"""The variables the guides' scripts read for their gateway: ``TAOTOKEN_BASE_URL``, ``TAOTOKEN_BASE``.

Why both, and which form each holds (see docs/guide-conventions.md): the scripts hand
``TAOTOKEN_BASE_URL`` to the OpenAI SDK as ``base_url``, like ``OPENAI_BASE_URL``, and the
OpenAI SDK appends ``/chat/completions`` with no ``/v1`` of its own (docs/observed/clients.md), so it
holds the OpenAI-family URL, ``https://taotoken.net/api/v1``. ``TAOTOKEN_BASE`` is the gateway
root the scripts join their own paths to, and what the Anthropic SDK and Claude Code take (they
append ``/v1/messages``): ``https://taotoken.net/api``, without ``/v1``. Both derive from the
profile, so ``eloledger env`` and the doctor agree on them by construction.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from eloledger.profiles.model import Profile, derive_base_url

TAOTOKEN_HOST = "taotoken.net"
# variable -> what it holds, in words (for the doctor's message and the notes)
GUIDE_VARS = {
    "TAOTOKEN_BASE_URL": "the OpenAI-family base URL, with /v1",
    "TAOTOKEN_BASE": "the gateway root, without /v1",
}


def is_taotoken(profile: Profile) -> bool:
    """A profile whose gateway is TaoToken: the preset's name, or its host."""
    if profile.name == "taotoken":
        return True
    try:
        host = (urlsplit(profile.base_url).hostname or "").lower()
    except ValueError:
        return False
    return host == TAOTOKEN_HOST or host.endswith("." + TAOTOKEN_HOST)


def guide_vars(profile: Profile) -> dict[str, str]:
    """``{TAOTOKEN_BASE_URL, TAOTOKEN_BASE}`` as this profile's gateway gives them."""
    return {
        "TAOTOKEN_BASE_URL": profile.client_base_url("openai").rstrip("/"),
        "TAOTOKEN_BASE": derive_base_url(profile.base_url, "anthropic"),
    }
