"""Small text formatters shared by the tabs (numbers, gauges, durations)."""

from __future__ import annotations

import math

from rich.cells import cell_len, set_cell_size
from textual.content import Content
from textual.markup import escape

from eloledger.textsafe import visible

BAR_FULL = "█"
BAR_EMPTY = "░"


def count(n: float | int | None) -> str:
    """12345 -> '12,345'; None -> '-'."""
    if n is None:
        return "-"
    if isinstance(n, float) and not math.isfinite(n):
        return "-"
    return f"{int(round(n)):,}"


def compact(n: float | int | None) -> str:
    """Short human number for narrow columns: 950, 12.3k, 4.56M."""
    if n is None or (isinstance(n, float) and not math.isfinite(n)):
        return "-"
    value = float(n)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            scaled = value / limit
            return f"{scaled:.3g}{suffix}" if abs(scaled) < 100 else f"{scaled:.0f}{suffix}"
    return f"{value:.0f}"


def gauge(fraction: float | None, width: int) -> str:
    """A text bar of ``width`` cells; unknown fraction (nothing planned) -> blank, not 0%."""
    width = max(0, width)
    if fraction is None or not math.isfinite(fraction):
        return " " * width
    filled = int(round(min(1.0, max(0.0, fraction)) * width))
    return BAR_FULL * filled + BAR_EMPTY * (width - filled)


def millis(ms: float | None) -> str:
    if ms is None or not math.isfinite(ms):
        return "-"
    if ms >= 10_000:
        return f"{ms / 1000:.0f}s"
    if ms >= 1000:
        return f"{ms / 1000:.1f}s"
    return f"{ms:.0f}ms"


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def fit(text: str, width: int) -> str:
    """Pad or cut to exactly ``width`` terminal cells (with an ellipsis when cut).

    Names come from files (ledgers, agent logs): control characters are shown as escapes
    (:func:`eloledger.textsafe.visible`) so none reaches the terminal, and wide characters
    count two cells so the columns after them stay aligned.
    """
    if width <= 0:
        return ""
    text = visible(text)
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…"


def middle(text: str, width: int) -> str:
    """Cut ``text`` in the middle to at most ``width`` cells (a path keeps its start and, with
    twice the room, its end: the file name), with an ellipsis where it was cut."""
    text = visible(text)
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 3  # the end (a file's name) says more than the start
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def markup(text: object) -> str:
    """Text from a file or a gateway, safe inside Rich markup: no control characters, no
    markup tags. Line breaks stay line breaks (the widget lays them out; none reaches the
    terminal as a byte)."""
    return "\n".join(escape(visible(part)) for part in str(text).split("\n"))


def fit_parts(head: str, parts: list[str], width: int, sep: str = " · ") -> str:
    """One line of markup at most ``width`` cells: ``head`` then ``parts`` joined by ``sep``.

    The parts come most useful first; those that do not fit are dropped from the end (an
    ellipsis says something was), so a number is never cut in two and the line never wraps.
    A line still too long (a very narrow screen) is cut at its end.
    """
    def cells(markup_text: str) -> int:
        return Content.from_markup(markup_text).cell_length

    kept = list(parts)
    line = head + sep.join(kept)
    while len(kept) > 1 and cells(line) > width:
        kept.pop()
        line = head + sep.join([*kept, "…"])
    if cells(line) <= width:
        return line
    return Content.from_markup(line).truncate(max(0, width), ellipsis=True).markup
