"""Modal screens: confirm, help (F1), text diff preview. All keyboard-driven."""

from __future__ import annotations

from typing import ClassVar

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Markdown, Select, Static


class EnterSubmits:
    """Enter submits a form dialog from any field; space ticks a box or opens a list.

    Without this, enter on a checkbox toggles it and on a list opens it, so a button labelled
    "(enter)" could only be reached with several tabs. While a list is open, enter picks from it.
    Dialogs mixing this in define ``action_submit``.
    """

    ENTER = Binding("enter", "submit", "Submit", show=False, priority=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit":
            return not any(select.expanded for select in self.query(Select))  # type: ignore[attr-defined]
        return True


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no question; ``y``/``enter`` confirm, ``n``/``escape`` decline."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface;
        padding: 1 2;
    }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, question: str, *, yes: str = "Yes (y)", no: str = "No (n)") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            with Horizontal():
                yield Button(self.no, id="no")
                yield Button(self.yes, id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TextScreen(ModalScreen[None]):
    """A block of text (markup) to read and scroll; escape or enter closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,enter,q", "close", "Close")]
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 100%;
                                  border: thick $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self.text + "\n\n[$text-muted]escape/enter: close[/]")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class PathScreen(ModalScreen["Path | None"]):
    """Ask for one file path; enter accepts it when the file exists (or ``must_exist`` is off)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back")]
    DEFAULT_CSS = """
    PathScreen { align: center middle; }
    PathScreen > Vertical { width: 76; max-width: 100%; height: auto; border: thick $primary;
                            background: $surface; padding: 1 2; }
    PathScreen #path-help { height: auto; }
    PathScreen #path-error { color: $error; height: auto; }
    """

    def __init__(self, question: str, placeholder: str, *, must_exist: bool = True) -> None:
        super().__init__()
        self.question = question
        self.placeholder = placeholder
        self.must_exist = must_exist

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"{self.question}\n[b]enter[/b] accept · [b]escape[/b] back", id="path-help"
            )
            yield Input(placeholder=self.placeholder, id="path-input", compact=True)
            yield Static("", id="path-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from pathlib import Path

        text = event.value.strip()
        path = Path(text).expanduser()
        if not text:
            self.query_one("#path-error", Static).update("type a path")
        elif path.is_dir():
            self.query_one("#path-error", Static).update(f"{text}: is a folder; give a file")
        elif self.must_exist and not path.is_file():
            self.query_one("#path-error", Static).update(f"{text}: no such file")
        elif not path.parent.is_dir():
            self.query_one("#path-error", Static).update(f"{path.parent}: no such folder")
        else:
            self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)


class DiffScreen(ModalScreen[bool]):
    """Show unified diffs before a change; ``a``/``y`` applies, ``escape`` backs out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,y", "answer(True)", "Apply"),
        Binding("escape,n", "answer(False)", "Back"),
    ]
    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > Vertical {
        width: 95%; height: 90%; border: thick $primary; background: $surface; padding: 0 1;
    }
    DiffScreen VerticalScroll { height: 1fr; }
    DiffScreen .diff-title { text-style: bold; color: $accent; }
    DiffScreen #diff-help { height: 1; color: $text-muted; }
    """

    def __init__(self, title: str, diffs: list[tuple[str, str]], *, can_apply: bool = True) -> None:
        super().__init__()
        self.title_text = title
        self.diffs = diffs
        self.can_apply = can_apply

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="diff-title")
            with VerticalScroll(id="diff-body"):
                if not self.diffs:
                    yield Static("No file changes: everything is already as this would set it.")
                for path, diff in self.diffs:
                    yield Static(f"── {path}", classes="diff-title")
                    text = diff or "(unchanged)"
                    yield Static(Syntax(text, "diff", theme="ansi_dark", word_wrap=True))
            keys = "a apply all · escape back" if self.can_apply else "escape back"
            yield Static(keys, id="diff-help")

    def on_mount(self) -> None:
        self.query_one("#diff-body").focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(bool(value and self.can_apply))


HELP_TEXT = """\
# eloledger

**escape** (or `F1`) closes this help. Four tabs, all usable by keyboard alone (over SSH
too); `ctrl+p` opens the command palette (every action by name), the footer each tab's keys.

| key | does |
|---|---|
| `1` `2` `3` `4` | Profiles, Run, Doctor, Elo tab |
| `q` `ctrl+q` | quit, from any screen (in a text field `q` types: use `ctrl+q`) |
| `h` | run history and its cost-drift audit (`a` per week/run, `r` reload, `escape` back) |
| `F1` | this help |
| `ctrl+p` | command palette: every action by name |
| `tab` / `shift+tab` | move focus |
| `ctrl+t` | next theme |
| `escape` | close this help (or a dialog) |

**Profiles**: `n` new profile, `e` edit, `u` use (switch: shows the diff of every file, then
applies all or nothing), `b` backups and restore, `r` reload. The right side shows, per client,
the value it will actually use and where it comes from.

**Run**: `ctrl+r` run the demo (not under `eloledger watch`, which follows one run), `o` open a
spec and run it, `w` watch a ledger, `p` pause/resume
(no new calls start; calls in flight finish; the clock stops), `x` cancel (calls in flight are
aborted; `eloledger run SPEC --resume` redoes them), `f` follow the newest requests
(`home`/`end` in the list). Numbers refresh 10×/s; nothing is drawn per token.

**Doctor**: `r` run the checks offline, `P` probe now (live requests to the configured gateways),
`enter` on a finding shows evidence and fix, `a` applies a fix when it is a profile or config
change (diff first), `n` adds a profile for a gateway it found.

**Elo**: `s` cycle the sort column, `S` reverse, `t` set the "worth it" marginal Elo per 1K
threshold, `o` open comparisons + ledger, `e` the shipped example (before anything is
open), `c` export CSV (as `eloledger elo --format csv`),
`m` export Markdown (the table in its current sort), `v` budget curves (each arm's Elo against its
session budget, with the +400 Elo per 10× tokens reference; `r` there draws the next arm's
reference, `e` exports SVG and PNG), `f`
the budget-fairness verdict (old/new × 1/N samples). Exports go next to the comparisons file, or
(for the shipped example or a read-only folder) to `$ELOLEDGER_EXPORTS`, else the `exports`
folder in eloledger's data folder. The plot shows Elo against tokens on a log axis: arms as
letters (one letter per arm, the table's), the frontier as a braille line, the best-of-k
reference (+400·log10 k) dotted.

`eloledger watch LEDGER` opens the Run tab following a ledger written by another process.
Themes: data files in `themes/` and in your config folder's `themes/`; `NO_COLOR` is honoured.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1", "dismiss", "Close help"),  # q quits, as everywhere
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: 90%; border: thick $primary; background: $surface;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP_TEXT)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
