"""Static checks on a stored profile: its URLs, its hosts and where its key comes from."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from eloledger.doctor.findings import Finding, make
from eloledger.doctor.keys import key_findings
from eloledger.doctor.urls import check_root, check_url


def profile_findings(profile, env: Mapping[str, str] | None = None) -> list[Finding]:  # noqa: ANN001
    """URL, key and host checks for one eloledger profile."""
    from eloledger.profiles.model import CLIENTS

    target = f"profile:{profile.name}"
    findings = check_root(
        profile.base_url, target=target, evidence=f"profile {profile.name!r} base_url"
    )
    for client, override in profile.overrides.items():
        if override.base_url:
            findings += check_url(
                override.base_url,
                client,
                target=f"{target}/{client}",
                evidence=f"profile {profile.name!r} [{client}] base_url",
            )
    findings += _profile_key(profile, target)
    hosts: dict[str, list[str]] = {}
    for client in CLIENTS:
        if not profile.serves(client):
            continue
        try:
            host = urlsplit(profile.client_base_url(client).strip()).netloc.lower()
        except ValueError:
            continue
        hosts.setdefault(host, []).append(client)
    if len(hosts) > 1:
        detail = "; ".join(f"{h}: {', '.join(c)}" for h, c in hosts.items())
        findings.append(
            make(
                "hosts.inconsistent",
                target,
                f"profile {profile.name!r} sends its clients to different hosts",
                detail,
                "point every client override at the same gateway, or split the profile in two",
            )
        )
    return findings


def _profile_key(profile, target: str) -> list[Finding]:  # noqa: ANN001
    from eloledger.profiles.store import resolve_key

    key = resolve_key(profile)
    label = f"${profile.key_env}" if profile.key_env else "the secrets file"
    if not key:
        if profile.key_in_secrets or profile.key_env:
            fix = (
                f"export {profile.key_env}=<your key>"
                if profile.key_env and not profile.key_in_secrets
                else f"eloledger profile edit {profile.name} (set the key)"
            )
            return [
                make(
                    "auth.missing_key",
                    target,
                    f"profile {profile.name!r} has no key: {label} is unset or empty",
                    label,
                    fix,
                )
            ]
        return [
            make(
                "auth.missing_key",
                target,
                f"profile {profile.name!r} names no key",
                f"profile {profile.name!r}",
                f"eloledger profile edit {profile.name} --key-env VAR",
            )
        ]
    return key_findings(key, target, label, label.lstrip("$"))
