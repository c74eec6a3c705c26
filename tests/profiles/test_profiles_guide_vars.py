"""TAOTOKEN_BASE_URL and TAOTOKEN_BASE, the variables the guides' scripts read.

``eloledger env`` exports them for a TaoToken profile (``TAOTOKEN_BASE_URL`` the OpenAI-family
URL with ``/v1``, ``TAOTOKEN_BASE`` the root) and unsets them for any other, and the real SDKs
given them reach the gateway's routes; the doctor says when they disagree with the active
profile (``env.guide_var_mismatch``, with the export line that fixes it).
"""

from __future__ import annotations

import os
import subprocess
import sys

import anthropic
import openai

from eloledger.doctor.run import run_doctor
from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from strict_gateway import GOOD_KEY, GatewayConfig, serve

ENV = f"{sys.executable} -m eloledger env"


def _bash(script: str, **env: str) -> str:
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_env_exports_them_for_taotoken_and_unsets_them_after() -> None:
    out = _bash(f'eval "$({ENV} taotoken)"; echo "$TAOTOKEN_BASE_URL|$TAOTOKEN_BASE"',
                TAOTOKEN_API_KEY="sk-tt-0123456789")  # fmt: skip
    assert out == "https://taotoken.net/api/v1|https://taotoken.net/api"
    out = _bash(
        f'eval "$({ENV} taotoken)"; eval "$({ENV} openrouter)"; '
        'echo "${TAOTOKEN_BASE_URL-unset}|${TAOTOKEN_BASE-unset}"',
        TAOTOKEN_API_KEY="sk-tt-0123456789", OPENROUTER_API_KEY="sk-or-0123456789",
    )  # fmt: skip
    assert out == "unset|unset"


def test_the_sdks_given_them_reach_the_gateway() -> None:
    """A TaoToken-like gateway under /api: the OpenAI SDK takes TAOTOKEN_BASE_URL as it is, the
    Anthropic SDK takes TAOTOKEN_BASE, and both calls land on real routes (no 404)."""
    with serve(GatewayConfig(prefix="/api")) as gw:
        save_profile(Profile("taotoken", gw.root, key_env="TAOTOKEN_API_KEY"))
        out = _bash(f'eval "$({ENV} taotoken)"; echo "$TAOTOKEN_BASE_URL|$TAOTOKEN_BASE"',
                    TAOTOKEN_API_KEY=GOOD_KEY)  # fmt: skip
        base_url, base = out.split("|")
        assert (base_url, base) == (gw.root + "/v1", gw.root)
        chat = openai.OpenAI(base_url=base_url, api_key=GOOD_KEY, max_retries=0)
        chat.chat.completions.create(model="gpt-strict", messages=[{"role": "user", "content": "hi"}])
        msgs = anthropic.Anthropic(base_url=base, api_key=GOOD_KEY, max_retries=0)
        msgs.messages.create(model="claude-strict", max_tokens=8,
                             messages=[{"role": "user", "content": "hi"}])  # fmt: skip
        paths = [r.path for r in gw.requests]
    assert "/api/v1/chat/completions" in paths and "/api/v1/messages" in paths


def _doctor(**env: str) -> list[dict]:
    report = run_doctor(offline=True, env={**os.environ, **env})
    return [f.to_dict() for f in report.findings if f.code == "env.guide_var_mismatch"]


def test_doctor_flags_them_when_they_disagree_with_the_active_profile() -> None:
    key = {"TAOTOKEN_API_KEY": "sk-tt-0123456789", "ELOLEDGER_PROFILE": "taotoken"}
    assert _doctor(**key, TAOTOKEN_BASE_URL="https://taotoken.net/api/v1/",
                   TAOTOKEN_BASE="https://taotoken.net/api") == []  # fmt: skip
    # the root where the OpenAI SDK needs /v1 (the guides' most common slip)
    (root,) = _doctor(**key, TAOTOKEN_BASE_URL="https://taotoken.net/api")
    assert root["severity"] == "warning" and "TAOTOKEN_BASE_URL" in root["evidence"]
    assert root["fix"].startswith("export TAOTOKEN_BASE_URL=https://taotoken.net/api/v1")
    (doubled,) = _doctor(**key, TAOTOKEN_BASE="https://taotoken.net/api/v1")
    assert doubled["fix"].startswith("export TAOTOKEN_BASE=https://taotoken.net/api")
    # left over from TaoToken while this shell is on another gateway
    (stale,) = _doctor(ELOLEDGER_PROFILE="openrouter", OPENROUTER_API_KEY="sk-or-0123456789",
                       TAOTOKEN_BASE_URL="https://taotoken.net/api/v1")  # fmt: skip
    assert "not TaoToken" in stale["message"] and stale["fix"].startswith("unset TAOTOKEN_BASE_URL")
