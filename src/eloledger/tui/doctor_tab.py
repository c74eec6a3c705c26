"""The Doctor tab: findings grouped by target and severity, probe now, the fix for each, and
one key to apply a fix that is a profile change (diff first, then the profile store writes it)
or a one-key edit of a live config file (diff first, backup, then ``doctor.fixes`` writes it).

It calls ``eloledger.doctor.run.run_doctor`` — the function behind ``eloledger doctor`` — in a
thread worker: offline checks on open, live probes on ``P``.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import time
from collections.abc import Iterable
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from eloledger.tui import fmt
from eloledger.tui.errors import error_text
from eloledger.tui.messages import ShowTab
from eloledger.words import plural

SEVERITY_MARK = {
    "error": ("✗", "$error"),
    "warning": ("!", "$warning"),
    "info": ("i", "$text-muted"),
}
PROBE_TIMEOUT_S = 5.0
_USE_URL = re.compile(r"\buse (https?://\S+)")


def group_findings(findings: list[Any]) -> list[tuple[str, list[Any]]]:
    """Findings by target (targets with errors first), each group by severity."""
    from eloledger.doctor.findings import SEVERITIES

    groups: dict[str, list[Any]] = {}
    for f in findings:
        groups.setdefault(f.target, []).append(f)
    for items in groups.values():
        items.sort(key=lambda f: (SEVERITIES.index(f.severity), f.code))
    return sorted(
        groups.items(), key=lambda kv: (min(SEVERITIES.index(f.severity) for f in kv[1]), kv[0])
    )


def profile_fix(finding: Any, profiles: dict[str, Any]) -> tuple[Any, Any] | None:
    """(old, new) profile when the fix is "use <URL>" for a stored profile's URL, else None."""
    if not finding.target.startswith("profile:") or not finding.code.startswith("url."):
        return None
    match = _USE_URL.search(finding.fix or "")
    if match is None:
        return None
    name, _, client = finding.target[len("profile:") :].partition("/")
    old = profiles.get(name)
    if old is None:
        return None
    url = match.group(1).rstrip(".,;")
    if client:
        from eloledger.profiles.model import ClientOverride

        overrides = dict(old.overrides)
        current = overrides.get(client) or ClientOverride()
        overrides[client] = dataclasses.replace(current, base_url=url)
        new = dataclasses.replace(old, overrides=overrides)
    else:
        new = dataclasses.replace(old, base_url=url)
    return old, new


def profile_diff(old: Any, new: Any) -> str:
    """Unified diff of the profile's table in the profiles file."""
    import tomlkit

    from eloledger.profiles.store import profiles_path

    def dump(profile: Any) -> list[str]:
        return tomlkit.dumps({"profiles": {profile.name: profile.to_table()}}).splitlines(True)

    path = str(profiles_path())
    return "".join(difflib.unified_diff(dump(old), dump(new), path, path))


class DoctorTab(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "check", "Check (offline)"),
        Binding("P", "probe", "Probe now"),
        Binding("a", "apply_fix", "Apply fix"),
        Binding("n", "add_profile", "Add profile", show=False),
    ]
    DEFAULT_CSS = """
    DoctorTab { height: 1fr; }
    DoctorTab #doctor-status { height: auto; padding: 0 1; }
    DoctorTab #doctor-list { height: 1fr; min-height: 5; }
    DoctorTab #doctor-detail { height: auto; max-height: 9; padding: 0 1;
                               border-top: solid $primary; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[Any] = []
        self.profiles: dict[str, Any] = {}
        self.running = ""
        self.last_run = ""

    def compose(self) -> ComposeResult:
        yield Static("Checking (offline) …", id="doctor-status")
        yield OptionList(id="doctor-list")
        with VerticalScroll(id="doctor-detail"):
            yield Static("", id="doctor-fix")

    def on_mount(self) -> None:
        self.action_check()

    # -- running the doctor ---------------------------------------------------------------------

    def action_check(self) -> None:
        self._run(offline=True)

    def action_probe(self) -> None:
        self._run(offline=False)

    @work(thread=True, exclusive=True, group="doctor")
    def _run(self, offline: bool) -> None:
        self.running = "checking (offline)" if offline else "probing the gateways (live requests)"
        self.app.call_from_thread(self._status, f"[$accent]{self.running} …[/]")
        try:
            from eloledger.doctor.run import run_doctor

            report = run_doctor(offline=offline, timeout=PROBE_TIMEOUT_S)
            profiles: dict[str, Any] = {}
            try:
                from eloledger.profiles.store import load_profiles

                profiles = load_profiles()
            except Exception:  # a broken profiles file is itself a finding
                profiles = {}
            if not offline:  # also each stored profile's gateway (the CLI: --profile NAME)
                report.findings += self._probe_profiles(profiles, report)
        except Exception as exc:
            self.app.call_from_thread(self._status, f"[$error]{fmt.markup(error_text(exc))}[/]")
            return
        finally:
            self.running = ""
        from eloledger.doctor.run import NOTHING_CONFIGURED

        kind = "offline checks" if offline else f"probes ({plural(len(report.probes), 'gateway')})"
        when = f"{kind} at {time.strftime('%H:%M:%S')}"
        empty = NOTHING_CONFIGURED in report.notes
        self.app.call_from_thread(self._show, report.findings, profiles, when, empty)

    @staticmethod
    def _probe_profiles(profiles: dict[str, Any], report: Any) -> list[Any]:
        from eloledger.doctor.findings import sort_key
        from eloledger.doctor.probes import probe_all
        from eloledger.doctor.run import profile_targets

        seen = {(f.code, f.target, f.message) for f in report.findings}
        found = []
        for profile in profiles.values():
            targets = [t for t in profile_targets(profile) if t.key]
            for result in probe_all(targets, timeout=PROBE_TIMEOUT_S):
                report.probes.append(result)
                for f in result.findings:
                    if (f.code, f.target, f.message) not in seen:
                        seen.add((f.code, f.target, f.message))
                        found.append(f)
        return sorted(found, key=sort_key)

    def _status(self, text: str) -> None:
        self.query_one("#doctor-status", Static).update(text)

    def _show(
        self, findings: list[Any], profiles: dict[str, Any], when: str, empty: bool = False
    ) -> None:
        """``empty``: nothing is configured (no profile, no client at a gateway) to check."""
        self.findings, self.profiles, self.last_run = findings, profiles, when
        counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITY_MARK}
        summary = (
            f"[$error]{plural(counts['error'], 'error')}[/] · "
            f"[$warning]{plural(counts['warning'], 'warning')}[/] · "
            f"{counts['info']} info — {when} · [b]P[/b] probe now"
        )
        if not findings:
            summary = f"[$success]✓ nothing wrong found[/] — {when} · [b]P[/b] probe now"
        if not findings and empty:
            summary = (
                "Nothing configured yet: no profile, and no client points at a gateway — "
                "add a profile ([b]n[/b]) · [b]P[/b] probe now"
            )
        self._status(summary)
        option_list = self.query_one("#doctor-list", OptionList)
        option_list.clear_options()
        for target, items in group_findings(findings):
            option_list.add_option(Option(f"[b]── {fmt.markup(target)}[/b]", disabled=True))
            for f in items:
                option_list.add_option(Option(self._prompt(f), id=str(findings.index(f))))
        first = next(
            (
                i
                for i in range(option_list.option_count)
                if not option_list.get_option_at_index(i).disabled
            ),
            None,
        )
        option_list.highlighted = first
        self._detail()
        self.refresh_bindings()

    def _prompt(self, f: Any) -> Table:
        """Mark | code, message: wrapped lines hang under the text, not under the mark."""
        mark, colour = SEVERITY_MARK.get(f.severity, ("?", "$text"))
        colour = {"$error": "red", "$warning": "yellow"}.get(colour, "")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=1, no_wrap=True)
        grid.add_column(ratio=1)
        body = Text.assemble((f.code, f"bold {colour}".strip()))
        if self.fixable(f):
            body.append(" a: apply", style="green")
        body.append(" " + f.message)
        grid.add_row(Text(mark, style=colour), body)
        return grid

    def fixable(self, finding: Any) -> bool:
        """True when ``a`` can apply this finding's fix (a config edit or a profile change)."""
        return finding.action is not None or profile_fix(finding, self.profiles) is not None

    def selected(self) -> Any | None:
        option_list = self.query_one("#doctor-list", OptionList)
        if option_list.highlighted is None or not option_list.option_count:
            return None
        option = option_list.get_option_at_index(option_list.highlighted)
        return self.findings[int(option.id)] if option.id is not None else None

    @on(OptionList.OptionHighlighted, "#doctor-list")
    def _detail(self) -> None:
        f = self.selected()
        box = self.query_one("#doctor-fix", Static)
        if f is None:
            box.update("")
            return
        if f.action is not None:
            how = f"\n[b]a[/b] applies this fix: {fmt.markup(f.action.summary)} (diff first)"
        elif profile_fix(f, self.profiles) is not None:
            how = "\n[b]a[/b] applies this fix to the profile (diff first)"
        else:
            how = ""
        # the fix first: it is what the user came for; enter shows everything in a dialog
        box.update(
            (f"[$success]fix:[/] {fmt.markup(f.fix)}" if f.fix else "[$text-muted]no fix given[/]")
            + how
            + (f"\n[$text-muted]evidence:[/] {fmt.markup(f.evidence)}" if f.evidence else "")
            + "\n[$text-muted]enter: the whole finding[/]"
        )
        option_list = self.query_one("#doctor-list", OptionList)
        self.call_after_refresh(option_list.scroll_to_highlight)

    @on(OptionList.OptionSelected, "#doctor-list")
    def _open(self) -> None:
        """Enter: the finding, its evidence and its fix in full, in a scrollable dialog."""
        from eloledger.tui.dialogs import TextScreen

        f = self.selected()
        if f is None:
            return
        self.app.push_screen(
            TextScreen(
                f"[b]{fmt.markup(f.code)}[/b] ({f.severity}) on {fmt.markup(f.target)}\n\n"
                f"{fmt.markup(f.message)}\n\n"
                + (f"[$text-muted]evidence:[/] {fmt.markup(f.evidence)}\n\n" if f.evidence else "")
                + (f"[$success]fix:[/] {fmt.markup(f.fix)}" if f.fix else "no fix given")
            )
        )

    # -- applying a fix -------------------------------------------------------------------------

    def action_apply_fix(self) -> None:
        f = self.selected()
        if f is None:
            return
        if f.action is not None:
            self._confirm_config_fix(f)
            return
        change = profile_fix(f, self.profiles)
        if change is None:
            self.notify(
                "This fix is not a profile change eloledger can make here: follow the fix text, "
                "or switch the client to a profile (Profiles tab, u) so eloledger writes its "
                "config.",
                severity="warning",
                timeout=8,
            )
            return
        old, new = change
        from eloledger.tui.dialogs import DiffScreen

        def answer(apply: bool | None) -> None:
            if apply:
                self._apply(new, f"{f.code} in profile {old.name}")

        self.app.push_screen(
            DiffScreen(
                f"Fix {f.code} in profile {old.name}", [("profiles file", profile_diff(old, new))]
            ),
            answer,
        )

    def _confirm_config_fix(self, finding: Any) -> None:
        from eloledger.doctor.fixes import apply_fix, plan_fix
        from eloledger.tui.dialogs import DiffScreen

        action = finding.action
        try:
            old, new, diff = plan_fix(action)
        except Exception as exc:
            self.notify(error_text(exc), title="Cannot apply", severity="error", timeout=10)
            return
        if old == new:
            self.notify("Already fixed in the file; checking again.", timeout=5)
            self.action_check()
            return

        def answer(apply: bool | None) -> None:
            if not apply:
                return
            try:
                backup_id = apply_fix(action, old)
            except Exception as exc:
                self.notify(error_text(exc), title="Not applied", severity="error", timeout=10)
                return
            self.notify(
                f"{action.summary}. Undo: eloledger profile restore {backup_id}. Checking again.",
                title="Fix applied",
                timeout=8,
            )
            self.action_check()

        self.app.push_screen(
            DiffScreen(f"Fix {finding.code}: {action.summary}", [(str(action.path), diff)]),
            answer,
        )

    def _apply(self, profile: Any, summary: str) -> None:
        from eloledger.doctor.fixes import apply_profile_fix

        try:
            backup_id = apply_profile_fix(profile, summary)
        except Exception as exc:
            self.notify(error_text(exc), title="Not applied", severity="error", timeout=10)
            return
        self.notify(
            f"Profile {profile.name} updated. Undo: eloledger profile restore {backup_id}. "
            "Checking again.",
            timeout=8,
        )
        self.action_check()

    def action_add_profile(self) -> None:
        """``n``: the Profiles tab's new-profile form (what the empty Doctor suggests)."""
        self.post_message(ShowTab("profiles", "new"))

    def commands(self) -> Iterable[SystemCommand]:
        def go(action: str):
            def run() -> None:
                self.post_message(ShowTab("doctor", action))

            return run

        yield SystemCommand(
            "Doctor: check now (offline)", "r: configs, profiles, keys", go("check")
        )
        yield SystemCommand(
            "Doctor: probe now", "P: live requests to the configured gateways", go("probe")
        )
        yield SystemCommand(
            "Doctor: apply the selected fix",
            "a: profile or config changes, diff first",
            go("apply_fix"),
        )
