"""Run the whole doctor: static checks, live probes and the ledger audit -> one report.

This is the function the CLI and the TUI's Doctor tab call. Which gateways get probed:
with a profile, each wire protocol that profile is used with; without one, every live client
config that points at an explicit base URL (Claude Code, Codex custom provider, Gemini CLI,
the shell's OPENAI_BASE_URL / ANTHROPIC_BASE_URL).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eloledger.doctor.effective import Effective, collect
from eloledger.doctor.findings import Finding, exit_status, make, sort_key
from eloledger.doctor.ledger_audit import audit_ledger
from eloledger.doctor.probes import (
    DEFAULT_TIMEOUT,
    ProbeResult,
    ProbeTarget,
    probe,
    probe_all,
)
from eloledger.doctor.static import key_findings, live_config_findings, profile_findings
from eloledger.doctor.urls import check_url

# Said (as a note) when there is nothing for the doctor to look at: "no problems found" would
# read as "all set" to someone who has not configured anything yet.
NOTHING_CONFIGURED = "nothing to check yet: no profile is stored and no client points at a gateway"
ADD_A_PROFILE = "add a gateway profile: eloledger profile add NAME --base-url URL --key-env VAR"

# The wire protocol each client speaks.
CLIENT_WIRE = {
    "claude-code": "anthropic",
    "anthropic": "anthropic",
    "codex": "openai-responses",
    "gemini-cli": "gemini",
    "openai": "openai-chat",
}
WIRE_CLIENT = {
    "anthropic": "anthropic",
    "openai-chat": "openai",
    "openai-responses": "openai",
    "gemini": "gemini-cli",
}
# The folder each client keeps its settings in, as it appears in a finding's evidence.
_CLIENT_FOLDERS = {".claude": "claude-code", ".codex": "codex", ".gemini": "gemini-cli"}


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    probes: list[ProbeResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. a torn ledger line skipped
    notes: list[str] = field(default_factory=list)  # e.g. what a scoped run left out

    @property
    def exit_status(self) -> int:
        return exit_status(self.findings)

    def add_probes(self, results: Iterable[ProbeResult]) -> None:
        """Each probe's findings, and a ``probe.ok`` finding for each one that passed."""
        for result in results:
            self.probes.append(result)
            self.findings += result.findings
            passed = result.passed_finding()
            if passed is not None:
                self.findings.append(passed)

    def to_json(self) -> dict:
        return {"findings": [f.to_dict() for f in self.findings], "notes": list(self.notes)}


def run_doctor(
    *,
    profile: str | None = None,
    offline: bool = False,
    ledger: str | Path | None = None,
    expect_models: Iterable[str] = (),
    wires: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> DoctorReport:
    """Static checks always; probes unless ``offline``; the ledger audit when ``ledger``."""
    report = DoctorReport()
    eff = collect(env, cwd)
    live = eff.problems + live_config_findings(eff)
    chosen = None
    if profile is not None:
        from eloledger.profiles.store import get_profile

        chosen = get_profile(profile)
        report.findings += scoped_to_profile(live, chosen, eff, report.notes)
        report.findings += profile_findings(chosen, eff.env)
    else:
        report.findings += live
        report.findings += _all_profile_findings(report, eff)
    report.findings += _guide_var_findings(chosen, eff.env)
    if not offline:
        targets = profile_targets(chosen, wires) if chosen else live_targets(eff)
        report.add_probes(probe_all(targets, timeout=timeout))
        report.findings = confirmed_by_probes(report.findings, report.probes, report.notes)
    if ledger is not None:
        expected = list(expect_models)
        if chosen is not None and not expected:
            expected = _profile_models(chosen)
        report.findings += audit_ledger(ledger, expect_models=expected, warn=report.warnings.append)
    report.findings = _dedupe(report.findings)
    report.findings.sort(key=sort_key)
    return report


def run_adhoc(
    url: str,
    wire: str,
    key_env: str,
    *,
    auth: str | None = None,
    model: str | None = None,
    offline: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> DoctorReport:
    """The doctor for a URL that has no profile yet (``eloledger doctor --url ...``)."""
    env = os.environ if env is None else env
    report = DoctorReport()
    target = "adhoc"
    report.findings += check_url(url, wire, target=target, evidence=f"--url {url}")
    key = env.get(key_env)
    label = f"${key_env}"
    if not key:
        report.findings.append(
            make(
                "auth.missing_key",
                target,
                f"{label} is unset or empty",
                label,
                f"export {key_env}=<your key>",
            )
        )
    else:
        report.findings += key_findings(key, target, label, key_env)
    if not offline and key:
        result = probe(
            ProbeTarget(target, url, wire, key, model, auth or _default_auth(wire), label),
            timeout=timeout,
        )
        report.add_probes([result])
        report.findings = confirmed_by_probes(report.findings, report.probes, report.notes)
    report.findings = _dedupe(report.findings)
    report.findings.sort(key=sort_key)
    return report


def confirmed_by_probes(
    findings: list[Finding], probes: list[ProbeResult], notes: list[str]
) -> list[Finding]:
    """Drop ``url.missing_v1`` for a base URL at which a probe's generation just succeeded.

    Why: gateways such as LiteLLM serve ``/chat/completions`` at the root as well as under
    ``/v1``; a warning that the probe has just disproved sends users to "fix" a working URL.
    """
    proven: dict[str, str] = {}
    for result in probes:
        t = result.target
        if result.generated and t.wire.startswith("openai-"):
            for f in check_url(t.base_url, t.wire):
                if f.code == "url.missing_v1":
                    proven[f.fix] = t.base_url
    kept = [f for f in findings if not (f.code == "url.missing_v1" and f.fix in proven)]
    for url in dict.fromkeys(proven[f.fix] for f in findings if f not in kept):
        notes.append(
            f"url.missing_v1 left out for {url}: the probe's generation succeeded there "
            "(this gateway also serves the path without /v1)"
        )
    return kept


def scoped_to_profile(
    live: list[Finding], profile, eff: Effective, notes: list[str]
) -> list[Finding]:  # noqa: ANN001
    """The live-config findings that concern ``profile``; a note counts the others.

    A client config concerns the profile when the profile is active for that client in
    eloledger's record, or when the config points at the URL the profile gives that client.
    A config file that does not parse concerns it when the profile serves that client (a
    switch would have to edit it).
    """
    ours = clients_using(profile, eff)
    kept: list[Finding] = []
    for finding in live:
        client = _client_of(finding)
        if client in ours or (finding.code == "config.unreadable" and profile.serves(client)):
            kept.append(finding)
    left_out = len(live) - len(kept)
    if left_out:
        notes.append(
            f"{left_out} finding(s) about client configs that do not use profile "
            f"{profile.name!r} left out; 'eloledger doctor' shows everything"
        )
    return kept


def clients_using(profile, eff: Effective) -> set[str]:  # noqa: ANN001
    """Clients whose live config is on ``profile`` (by eloledger's record or by URL)."""
    from eloledger.errors import UserError
    from eloledger.profiles.active import active_targets

    try:
        active = active_targets()
    except UserError:
        active = {}
    using: set[str] = set()
    for where, name in active.items():
        if name == profile.name:
            client = where.split(":")[0]
            using |= {"openai", "anthropic"} if client == "shell" else {client}
    for target in live_targets(eff):
        client = "codex" if target.name.startswith("codex") else target.name
        if client in CLIENT_WIRE and _same_url(target.base_url, profile.client_base_url(client)):
            using.add(client)
    return using


def _client_of(finding: Finding) -> str:
    """The client a live-config finding is about (its target, or the file's folder)."""
    head = finding.target.split(":")[0].split(" ")[0]
    if head.startswith("codex"):
        return "codex"
    if head in CLIENT_WIRE:
        return head
    for folder, client in _CLIENT_FOLDERS.items():
        if folder in finding.target or folder in finding.evidence:
            return client
    return head


def _same_url(a: str, b: str) -> bool:
    return a.strip().rstrip("/") == b.strip().rstrip("/")


def profile_targets(profile, wires: Iterable[str] = ()) -> list[ProbeTarget]:  # noqa: ANN001
    """One probe target per wire the profile is used with: the runner's wire, each client's
    (every client when the profile names none), and ``wires`` (a spec's, ``--wire``).

    Each target takes the URL and model of the client that speaks that wire, so the anthropic
    probe uses Claude Code's model (``[profiles.X.claude-code] model``), not the OpenAI default.
    """
    from eloledger.profiles.model import CLIENTS
    from eloledger.profiles.store import resolve_key

    runner_client = WIRE_CLIENT.get(profile.wire_api, "openai")
    wanted: list[tuple[str, str]] = [(profile.wire_api, runner_client)]
    for client in getattr(profile, "clients", None) or CLIENTS:
        wire = CLIENT_WIRE.get(client)
        if client == "openai" and profile.wire_api.startswith("openai-"):
            wire = profile.wire_api
        if wire:
            wanted.append((wire, client))
    wanted += [(wire, WIRE_CLIENT[wire]) for wire in wires]
    key = resolve_key(profile)
    label = f"${profile.key_env}" if profile.key_env else "the profile's stored key"
    targets: list[ProbeTarget] = []
    seen: set[tuple[str, str, str | None]] = set()
    named: set[str] = set()
    for wire, client in wanted:
        url, model = profile.client_base_url(client), profile.client_model(client)
        if (wire, url, model) in seen:
            continue
        seen.add((wire, url, model))
        name = f"profile:{profile.name}" + (f"/{client}" if wire in named else "")
        named.add(wire)
        auth = profile.auth if wire == "anthropic" else _default_auth(wire)
        targets.append(ProbeTarget(name, url, wire, key, model, auth, label))
    return targets


def live_targets(eff: Effective) -> list[ProbeTarget]:
    """Probe targets for the live client configs that point at an explicit base URL."""
    targets: list[ProbeTarget] = []

    def raw(client: str, name: str) -> str | None:
        setting = eff.get(client, name)
        return setting.raw if setting else None

    def label(client: str, name: str) -> str:
        setting = eff.get(client, name)
        return setting.source.label if setting else f"${name}"

    base = raw("claude-code", "ANTHROPIC_BASE_URL")
    if base:
        token = raw("claude-code", "ANTHROPIC_AUTH_TOKEN")
        api_key = raw("claude-code", "ANTHROPIC_API_KEY")
        key, auth, name = (
            (token, "bearer", "ANTHROPIC_AUTH_TOKEN")
            if token
            else (api_key, "x-api-key", "ANTHROPIC_API_KEY")
        )
        model = raw("claude-code", "ANTHROPIC_MODEL") or raw("claude-code", "model")
        targets.append(
            ProbeTarget(
                "claude-code", base, "anthropic", key, model, auth, label("claude-code", name)
            )
        )
    for client, settings in eff.settings.items():
        if not client.startswith("codex"):
            continue
        values = {s.name: s for s in settings}
        if "env_key" in values and "base_url" in values:
            key_setting = values.get("key")
            targets.append(
                ProbeTarget(
                    client,
                    values["base_url"].raw or "",
                    "openai-responses",
                    key_setting.raw if key_setting else None,
                    values["model"].raw if "model" in values else None,
                    "bearer",
                    f"${values['env_key'].raw}",
                )
            )
    gbase = raw("gemini-cli", "GOOGLE_GEMINI_BASE_URL")
    if gbase:
        targets.append(
            ProbeTarget(
                "gemini-cli",
                gbase,
                "gemini",
                raw("gemini-cli", "GEMINI_API_KEY"),
                raw("gemini-cli", "GEMINI_MODEL"),
                "x-goog-api-key",
                label("gemini-cli", "GEMINI_API_KEY"),
            )
        )
    obase = eff.env.get("OPENAI_BASE_URL")
    if obase:
        targets.append(
            ProbeTarget(
                "openai",
                obase,
                "openai-chat",
                eff.env.get("OPENAI_API_KEY"),
                None,
                "bearer",
                "$OPENAI_API_KEY",
            )
        )
    abase = eff.env.get("ANTHROPIC_BASE_URL")
    if abase and abase != base:
        key = eff.env.get("ANTHROPIC_API_KEY") or eff.env.get("ANTHROPIC_AUTH_TOKEN")
        targets.append(
            ProbeTarget("anthropic", abase, "anthropic", key, None, "bearer", "$ANTHROPIC_API_KEY")
        )
    seen: set[tuple] = set()
    unique = []
    for t in targets:
        ident = (t.base_url, t.wire, t.key, t.auth)
        if t.base_url.strip() and ident not in seen:
            seen.add(ident)
            unique.append(t)
    return unique


def _guide_var_findings(chosen, env: Mapping[str, str]) -> list[Finding]:  # noqa: ANN001
    """The guides' TAOTOKEN_* variables against the profile asked for, else the active one."""
    from eloledger.doctor.guide_vars import active_profile_name, guide_var_findings
    from eloledger.errors import UserError
    from eloledger.profiles.store import get_profile

    if chosen is None:
        name = active_profile_name(env)
        if name is None:
            return []
        try:
            chosen = get_profile(name)
        except UserError:
            return []  # a profile removed since: nothing to compare with
    return guide_var_findings(chosen, env)


def _default_auth(wire: str) -> str:
    return "x-goog-api-key" if wire == "gemini" else "bearer"


def _profile_models(profile) -> list[str]:  # noqa: ANN001
    models = [profile.model, *profile.models.values()]
    models += [o.model for o in profile.overrides.values() if o.model]
    return [m for m in models if m]


def _all_profile_findings(report: DoctorReport, eff: Effective) -> list[Finding]:
    from eloledger.errors import UserError
    from eloledger.profiles.store import load_profiles, profiles_path

    try:
        profiles = load_profiles()
    except UserError as exc:
        return [
            make(
                "config.unreadable",
                "profiles",
                exc.message,
                str(profiles_path()),
                exc.fix or "fix the profiles file",
            )
        ]
    if not profiles and not report.findings and not live_targets(eff):
        report.notes.append(NOTHING_CONFIGURED)
    findings = []
    for p in profiles.values():
        findings += profile_findings(p)
    return findings


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str, str, str]] = set()
    unique = []
    for f in findings:
        ident = (f.code, f.target, f.message, f.evidence)
        if ident not in seen:
            seen.add(ident)
            unique.append(f)
    return unique
