"""The terminal app: tabs Profiles | Run | Doctor | Elo, a footer, a command palette, F1 help.

Every tab is a thin face over the core (the same functions the CLI calls). Slow work (file
reads, probes, fits, the run itself) runs in workers; the UI pulls numbers on timers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from rich.segment import Segment
from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.filter import LineFilter, Monochrome, monochrome_style
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from eloledger.tui.doctor_tab import DoctorTab
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.errors import error_text
from eloledger.tui.messages import ShowTab
from eloledger.tui.palette16 import LOW_COLOUR_SYSTEMS, for_sixteen_colours
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.run_view import RunSource, RunView
from eloledger.tui.themes import DEFAULT_THEME, load_themes, save_theme, saved_theme

TABS = ("profiles", "run", "doctor", "elo")


class EloLedgerApp(App[int]):
    """The whole app. Tests build it directly; ``run_tui`` is the command-line entry point."""

    TITLE = "eloledger"
    CSS = """
    Screen { layout: vertical; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    Toast { width: auto; max-width: 100%; }  /* an export's whole path on one line */
    ToastRack { dock: top; align: right top; margin-top: 1; margin-bottom: 0; }  /* never on a plot */
    /* NO_COLOR: greys alone left focus one shade apart; reverse video shows it in any terminal */
    App:nocolor Button:focus, App:nocolor Checkbox:focus,
    App:nocolor Select:focus > SelectCurrent, App:nocolor Input:focus,
    App:nocolor Tabs:focus .-active { text-style: reverse bold; }
    App:nocolor DataTable > .datatable--cursor { text-style: reverse bold; }
    App:nocolor OptionList > .option-list--option-highlighted { text-style: reverse bold; }
    App:nocolor ListView > ListItem.-highlight { text-style: reverse bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show_tab('profiles')", "Profiles", show=False),
        Binding("2", "show_tab('run')", "Run", show=False),
        Binding("3", "show_tab('doctor')", "Doctor", show=False),
        Binding("4", "show_tab('elo')", "Elo", show=False),
        Binding("f1", "help", "Help"),
        Binding("ctrl+t", "next_theme", "Theme", show=False),
        Binding("ctrl+r", "run_demo", "Run demo", show=False),
        Binding("h", "history", "History", show=False),
        # the footer has no room for Quit next to ^p palette at 80 columns: ctrl+q is in the
        # help (F1) and the palette
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
        # q too, as in most terminal apps; not a priority, so a text field still types it
        Binding("q", "quit", "Quit", show=False),
    ]

    def __init__(
        self,
        *,
        source: RunSource | None = None,
        watch: str | Path | None = None,
        from_start: bool = True,
        spec: Any = None,
        demo: bool = False,
        initial_tab: str | None = None,
        elo_inputs: tuple[Path, Path | None] | None = None,
        theme: str | None = None,
        user_theme_dir: Path | None = None,
        clock: Any = None,
        resume: bool = False,
    ) -> None:
        super().__init__()
        self._theme_warnings: list[str] = []
        self.shipped_themes = load_themes(user_dir=user_theme_dir, warn=self._theme_warnings.append)
        for item in self.shipped_themes:
            self.register_theme(item)
        wanted = theme or os.environ.get("ELOLEDGER_THEME") or saved_theme() or DEFAULT_THEME
        if wanted not in self.available_themes:
            names = ", ".join(sorted(t.name for t in self.shipped_themes))
            self._theme_warnings.append(
                f"theme {wanted!r} not found; using {DEFAULT_THEME} (eloledger themes: {names})"
            )
            wanted = DEFAULT_THEME
        self.theme = wanted
        self._source = source
        self._watch = Path(watch) if watch else None
        self._from_start = from_start
        self._spec = spec
        self._demo = demo
        self._initial_tab = initial_tab or (
            "run" if (source or watch or spec or demo) else "profiles"
        )
        self._elo_inputs = elo_inputs
        self._clock = clock
        self._resume = resume
        self.live_source: RunSource | None = source
        self.watch_mode = watch is not None  # `eloledger watch`: one followed run, no demo
        self.ends_with_input = False  # run_tui: SIGTERM, SIGHUP or a closed input end the app

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Toasts are plain text: they carry paths, arm names and gateway messages read from
        files, where a ``[b]`` or ``[/]`` must show as typed, not be eaten as markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def get_css_variables(self) -> dict[str, str]:
        """Textual's variables; on a 16-colour terminal, those of the theme with its hues kept
        (see :mod:`eloledger.tui.palette16`: arm names would be error-red, no scrollbar)."""
        variables = super().get_css_variables()
        if not self.sixteen_colours():
            return variables
        theme = for_sixteen_colours(self.current_theme)
        variables = {**variables, **theme.to_color_system().generate(), **theme.variables}
        self.theme_variables = variables
        return variables

    def sixteen_colours(self) -> bool:
        """A real terminal of 16 colours (as Rich detects it from TERM and COLORTERM). Not
        before the driver exists, nor headless (tests, screenshots): no terminal to fit."""
        if self._driver is None or self.is_headless:
            return False
        return self.console.color_system in LOW_COLOUR_SYSTEMS

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters, with the NO_COLOR one made safe for unstyled segments."""
        return [
            _SAFE_MONOCHROME if isinstance(f, Monochrome) else f for f in super().get_line_filters()
        ]

    def compose(self) -> ComposeResult:
        kwargs = {"clock": self._clock} if self._clock else {}
        with TabbedContent(initial=self._initial_tab, id="tabs"):
            with TabPane("Profiles", id="profiles"):
                yield ProfilesTab()
            with TabPane("Run", id="run"):
                yield RunView(self._source, id="run-view", **kwargs)
            with TabPane("Doctor", id="doctor"):
                yield DoctorTab()
            with TabPane("Elo", id="elo"):
                yield EloTab(inputs=self._elo_inputs)
        yield Footer(compact=True, show_command_palette=True)

    def on_mount(self) -> None:
        if self.sixteen_colours():  # the variables were made before the terminal was known
            self.refresh_css(animate=False)
        if self.ends_with_input:
            from eloledger.tui.lifetime import end_with_input

            end_with_input(self)
        self.call_after_refresh(self.action_show_tab, self._initial_tab)
        for warning in self._theme_warnings:
            self.notify(warning, title="Theme skipped", severity="warning", timeout=8)
        if self._watch is not None:
            self.start_watch(self._watch, from_start=self._from_start)
        elif self._spec is not None:
            self.start_run(self._spec)
        elif self._demo:
            self.action_run_demo()

    # -- sources --------------------------------------------------------------------------------

    @property
    def run_view(self) -> RunView:
        return self.query_one("#run-view", RunView)

    def start_watch(self, path: Path, *, from_start: bool = True) -> None:
        from eloledger.tui.sources import LedgerWatch

        try:
            watch = LedgerWatch(path, from_start=from_start, on_finished=self._watched_run_ended)
        except ImportError:
            self.notify(
                "Following a ledger needs eloledger.ledger.follow (not installed).",
                severity="error",
            )
            return
        self.live_source = watch
        self.run_view.attach(watch)
        self.run_worker(watch.run(), name="watch", group="source", exclusive=True)

    def _watched_run_ended(self, comparisons: Path) -> None:
        """The followed run wrote its comparisons: fit them with its ledger in the Elo tab."""
        watch = self.live_source
        ledger = getattr(watch, "path", None)
        self.query_one(EloTab).load(comparisons, ledger)
        if getattr(watch, "polls", 0) <= 1:
            return  # it had ended before we attached: the status line says so, no toast
        self.notify(
            f"Run finished: {comparisons.name} loaded in the Elo tab (4).", title="Run", timeout=8
        )

    def start_run(self, spec: Any) -> None:
        from eloledger.tui.sources import LiveRun

        if isinstance(self.live_source, LiveRun) and self.live_source.state() == "running":
            self.notify(
                "A run is already going; cancel it first (x on the Run tab).", severity="warning"
            )
            return
        try:
            spec = _load_spec(spec)
        except Exception as exc:  # UserError or a missing runner: show it, keep the app
            self.notify(error_text(exc), title="Cannot start the run", severity="error", timeout=10)
            return
        live = LiveRun(spec, on_done=self._run_finished, resume=self._resume)
        self.live_source = live
        self.run_view.attach(live)
        self.action_show_tab("run")
        self.run_worker(self._drive(live), name="run", group="source", exclusive=True)

    async def _drive(self, live: Any) -> None:
        try:
            await live.run()
        except Exception as exc:
            self.notify(error_text(exc), title="Run failed", severity="error", timeout=15)

    def _run_finished(self, result: Any) -> None:
        warning = getattr(self.live_source, "index_warning", None)
        if warning:  # the run is whole; only its line in the history (h) is missing
            self.notify(warning, title="Run index", severity="warning", timeout=10)
        stopped = str(getattr(result, "stopped", "") or "done")
        ledger = getattr(result, "ledger_path", None) or getattr(result, "ledger", None)
        comparisons = getattr(result, "comparisons_path", None)
        elo = self.query_one(EloTab)
        no_verdict = sum(int(a.get("judge_no_verdict") or 0) for a in getattr(result, "arms", []))
        if no_verdict:  # the judge could not decide: those pairs are not in the Elo table
            self.notify(
                f"{no_verdict} judge call(s) gave no verdict; those pairs are not compared.",
                title="Judge",
                severity="warning",
                timeout=10,
            )
        if comparisons and getattr(result, "comparisons", 1):
            self.notify(
                f"Run {stopped}; ledger {ledger}. The Elo tab (4) fits its comparisons now.",
                title="Run finished",
                timeout=10,
            )
            spec = getattr(self.live_source, "spec", None)  # the run's anchor, as `run` sets it
            elo.load(Path(comparisons), Path(ledger) if ledger else None, spec)
            if self._demo:
                self.action_show_tab("elo")
            return
        why = (
            "the run was cancelled before its answers were judged"
            if stopped == "cancelled"
            else "the run produced no comparisons (one arm, or no call succeeded)"
        )
        elo.explain_empty(f"No Elo table for this run: {why}. Ledger: {ledger}")
        self.notify(f"Run {stopped}; ledger {ledger}. No Elo table: {why}.", timeout=10)

    # -- actions --------------------------------------------------------------------------------

    def action_show_tab(self, tab: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        tabs.active = tab
        pane = tabs.get_pane(tab)
        focusable = [w for w in pane.query("*") if w.focusable]
        if focusable:
            focusable[0].focus()
        else:
            tabs.query_one("Tabs").focus()

    async def on_show_tab(self, message: ShowTab) -> None:
        """A tab asks for a tab (a palette command, the Doctor's "n"), then one of its actions."""
        self.action_show_tab(message.tab)
        if message.action:
            pane = self.query_one("#tabs", TabbedContent).get_pane(message.tab)
            await pane.children[0].run_action(message.action)

    def action_help(self) -> None:
        from eloledger.tui.dialogs import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_history(self) -> None:  # the run index and audit
        from eloledger.tui.history_view import HistoryScreen

        if not isinstance(self.screen, HistoryScreen):
            self.push_screen(HistoryScreen())

    def action_next_theme(self) -> None:
        names = [t.name for t in self.shipped_themes] or [DEFAULT_THEME]
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]
        save_theme(self.theme)
        self.notify(f"Theme: {self.theme}", timeout=2)

    def on_key(self, event: events.Key) -> None:
        """``q`` quits from a dialog too (a modal screen hides the app's bindings); a dialog
        where q means something, or a text field that types it, handles it first."""
        if event.key == "q" and self.screen.is_modal:
            event.stop()
            self.exit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `eloledger watch` follows one run; a demo would replace it
        return not (action == "run_demo" and self.watch_mode)

    def action_run_demo(self) -> None:
        if self.watch_mode:
            return
        try:
            spec = _demo_spec()
        except Exception as exc:
            self.notify(error_text(exc), title="Demo not available", severity="error", timeout=10)
            return
        self._demo = True
        self.start_run(spec)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for index, tab in enumerate(TABS, start=1):
            yield SystemCommand(
                f"Go to {tab.title()} tab",
                f"Key {index}",
                lambda tab=tab: self.action_show_tab(tab),
            )
        if not self.watch_mode:  # `eloledger watch` has no demo (it would replace the run)
            yield SystemCommand(
                "Run the demo", "Simulator + built-in tasks, live (ctrl+r)", self.action_run_demo
            )
        yield SystemCommand(
            "Open a spec and run it", "Run tab: o", self._run_view_action("open_spec")
        )
        yield SystemCommand(
            "Watch a ledger",
            "Run tab: w (follow a file another process writes)",
            self._run_view_action("watch_ledger"),
        )
        yield SystemCommand(
            "Pause / resume the run", "Run tab: p", self._run_view_action("toggle_pause")
        )
        yield SystemCommand("Cancel the run", "Run tab: x", self._run_view_action("cancel_run"))
        yield SystemCommand(
            "Next theme", "Cycle the eloledger themes (ctrl+t)", self.action_next_theme
        )
        yield SystemCommand(
            "Run history", "Run index and cost-drift audit (h)", self.action_history
        )
        yield SystemCommand("Help", "Keys and what each tab does (F1)", self.action_help)
        yield from self.query_one(ProfilesTab).commands()
        yield from self.query_one(DoctorTab).commands()
        yield from self.query_one(EloTab).commands()

    def _run_view_action(self, name: str):
        def run() -> None:
            self.action_show_tab("run")
            getattr(self.run_view, f"action_{name}")()

        return run


class SafeMonochrome(Monochrome):
    """Textual's NO_COLOR filter, but a segment without a style stays without one.

    textual-plot's canvas returns ``Strip.blank(0)`` (style None) for lines outside its size;
    ``Monochrome`` reads ``style.color`` and crashed the app.
    """

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            Segment(text, None if style is None else monochrome_style(style), None)
            for text, style, _ in segments
        ]


_SAFE_MONOCHROME = SafeMonochrome()


def _load_spec(spec: Any, ledger: str | Path | None = None) -> Any:
    """A spec object passes through; a path is parsed by the runner's spec loader."""
    if not isinstance(spec, (str, os.PathLike)):
        return spec
    from eloledger.runner.spec import load_spec

    return load_spec(Path(spec), ledger=ledger)


def _demo_spec() -> Any:
    """The runner's built-in demo experiment, writing to a fresh folder (like `eloledger demo`).

    Profile "sim" makes the runner start the embedded simulator in-process.
    """
    from eloledger.runner.demo import demo_spec_path, fresh_demo_ledger
    from eloledger.runner.spec import load_spec

    return load_spec(demo_spec_path(), ledger=fresh_demo_ledger())


def run_tui(
    *,
    spec_path: str | Path | None = None,
    spec: Any = None,
    demo: bool = False,
    watch: str | Path | None = None,
    from_start: bool = True,
    theme: str | None = None,
) -> int:
    """Open the app (blocking). ``eloledger``, ``run``, ``demo`` and ``watch`` all come here."""
    app = EloLedgerApp(
        spec=spec if spec is not None else spec_path,
        demo=demo,
        watch=watch,
        from_start=from_start,
        theme=theme,
    )
    app.ends_with_input = True
    app.run()
    return int(app.return_code or 0)
