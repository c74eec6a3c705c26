"""One Line-API widget for any list that grows with a run (requests, arms).

Measured (docs/observed/textual.md): one ``ScrollView`` + ``render_line`` that refreshes only the lines
whose content changed costs a fraction of a widget-per-row table at 20k events/s. The widget
never subscribes to anything: its owner calls :meth:`LineList.sync` from a timer, the widget
compares what each visible line shows with what it would show now, and refreshes only those
lines. Rows come from a plain sequence (a ``deque`` ring buffer is fine).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from eloledger.textsafe import visible

# A row formatter returns cells as (text, component-class or "") pairs for a given width.
Cells = list[tuple[str, str]]
Formatter = Callable[[Any, int], Cells]
KeyFn = Callable[[Any], Hashable]


class LineList(ScrollView, can_focus=True):
    """Draws ``rows[i]`` on line ``i`` with ``formatter``; follows the tail like ``tail -f``."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--ok",
        "line-list--error",
        "line-list--warn",
        "line-list--dim",
        "line-list--accent",
    }
    DEFAULT_CSS = """
    LineList { height: 1fr; overflow-x: hidden; }
    LineList > .line-list--ok { color: $success; }
    LineList > .line-list--error { color: $error; text-style: bold; }
    LineList > .line-list--warn { color: $warning; }
    LineList > .line-list--dim { color: $text-muted; }
    LineList > .line-list--accent { color: $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow tail", show=False),
        Binding("home", "scroll_home", "Top", show=False),
    ]

    def __init__(
        self,
        rows: Sequence[Any],
        formatter: Formatter,
        *,
        key: KeyFn | None = None,
        follow: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows = rows
        self.formatter = formatter
        self.key = key or (lambda row: row)
        self.follow = follow
        self._shown: dict[int, Hashable] = {}
        self.lines_rendered = 0  # for tests and the benchmark: proves only dirty lines redraw

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.rows = rows
        self._shown.clear()
        self.sync()
        self.refresh()

    def sync(self) -> int:
        """Catch up with ``rows``; refresh changed visible lines only. Returns lines refreshed."""
        count = len(self.rows)
        width = self.scrollable_content_region.width
        if self.virtual_size.height != count or self.virtual_size.width != width:
            self.virtual_size = Size(width, count)
        tail = count - self.scrollable_content_region.height
        if self.follow and tail > 0 and round(self.scroll_y) != tail:
            # only when the tail moved: scrolling in place repaints the scrollbar every tick,
            # bytes an idle view would send over SSH forever
            self.scroll_to(y=tail, animate=False, immediate=True)
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height
        refreshed = 0
        for y in range(top, min(count, top + height)):
            try:
                key = self.key(self.rows[y])
            except IndexError:
                break
            if self._shown.get(y) != key:
                self._shown[y] = key  # a repaint is queued: do not count it twice
                self.refresh_line(y)
                refreshed += 1
        return refreshed

    def render_line(self, y: int) -> Strip:
        index = y + int(self.scroll_y)
        width = self.scrollable_content_region.width
        base = self.rich_style
        try:
            row = self.rows[index]
        except IndexError:
            self._shown.pop(index, None)
            return Strip.blank(width, base)
        self._shown[index] = self.key(row)
        self.lines_rendered += 1
        segments = []
        for text, component in self.formatter(row, width):
            style = self.get_component_rich_style(component) if component else Style()
            segments.append(Segment(visible(text), base + style))  # last guard: no raw control
        return Strip(segments).adjust_cell_length(width, base)

    def on_resize(self) -> None:
        self._shown.clear()
        if self.follow:  # a followed tail stays the tail when the layout gives another height
            height = self.scrollable_content_region.height
            self.scroll_to(y=max(0, len(self.rows) - height), animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self._shown.clear()

    def action_follow(self) -> None:
        self.follow = True
        self.scroll_end(animate=False)

    def action_scroll_home(self) -> None:
        self.follow = False
        self.scroll_home(animate=False)

    def action_scroll_up(self) -> None:
        self.follow = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.follow = False
        super().action_page_up()

    def _on_mouse_scroll_up(self, event) -> None:
        self.follow = False
        super()._on_mouse_scroll_up(event)
