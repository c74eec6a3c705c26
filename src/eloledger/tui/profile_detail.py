"""The right-hand pane of the Profiles tab: the highlighted profile, the URL each client gets,
and what each client uses now (value and source). It only shows what it is given."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from eloledger.redact import mask_url

CLIENT_LABELS = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini-cli": "Gemini CLI",
    "openai": "OpenAI SDK",
    "anthropic": "Anthropic SDK",
}


def profile_summary(profile: Any, *, preset: bool) -> str:
    """Markup: the profile and the URL each client will be given."""
    key = f"${profile.key_env}" if profile.key_env else ""
    if profile.key_in_secrets:
        key = "secrets file (0600)"
    lines = [
        f"[b]{escape(profile.name)}[/b]"
        + ("  [$text-muted](built-in preset)[/]" if preset else ""),
        escape(profile.description) if profile.description else "",
        f"root      {escape(mask_url(profile.base_url))}",
        f"key       {escape(key) or '[$warning]none set[/]'} · auth {profile.auth}",
        f"model     {escape(profile.model or '-')} · runner speaks {profile.wire_api}",
        "",
        "[b]URL each client gets[/b]",
    ]
    for client in CLIENT_LABELS:
        if profile.serves(client):
            url = mask_url(profile.client_base_url(client))
            lines.append(f"  {CLIENT_LABELS[client]:<14} {escape(url)}")
        else:
            lines.append(f"  {CLIENT_LABELS[client]:<14} [$text-muted]not served[/]")
    return "\n".join(line for line in lines if line is not None)


def effective_text(settings: dict[str, list[Any]]) -> str:
    """Markup: per client, the value it will use, where it comes from, what it shadows."""
    lines = ["[b]What each client uses now[/b] (value ← source)"]
    for client, items in settings.items():
        label = CLIENT_LABELS.get(client.split("@")[0], client)
        if "@" in client:
            label += f" ({client.split('@', 1)[1]})"
        lines.append(f"[b $accent]{escape(label)}[/]")
        if not items:
            lines.append("  [$text-muted]nothing set (the client's defaults)[/]")
        for s in items:
            value = s.value if s.value is not None else "(unset)"
            lines.append(f"  {escape(s.name)} = {escape(str(value))}")
            lines.append(f"      [$text-muted]← {escape(str(s.source))}[/]")
            for shadow in s.shadowed:
                lines.append(f"      [$warning]shadows {escape(str(shadow))}[/]")
    return "\n".join(lines)


class ProfileDetail(VerticalScroll):
    """The summary of one profile (or a hint, or an error) above the clients' effective settings."""

    def compose(self) -> ComposeResult:
        yield Static("Loading profiles …", id="profile-summary")
        yield Static("", id="profile-effective")

    def show(self, profile: Any | None, *, preset: bool, active_for: list[str]) -> None:
        """The profile's summary; ``active_for``: the client targets it is active for."""
        summary = self.query_one("#profile-summary", Static)
        if profile is None:
            summary.update("No profiles yet: press [b]n[/b] to add one.")
            return
        text = profile_summary(profile, preset=preset)
        if active_for:
            text += f"\n\n[$success]● active for: {escape(', '.join(active_for))}[/]"
        summary.update(text)

    def show_error(self, text: str) -> None:
        self.query_one("#profile-summary", Static).update(f"[$error]{escape(text)}[/]")

    def show_effective(self, settings: dict[str, list[Any]]) -> None:
        self.query_one("#profile-effective", Static).update(effective_text(settings))
