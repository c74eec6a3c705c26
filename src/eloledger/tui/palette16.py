"""A theme as a 16-colour terminal can show it (TERM=screen, TERM=linux, an old console).

Rich maps each colour to the nearest of the 16 by RGB distance. For the shipped dark theme
that turns the orange accent (arm names, footer keys) and the warning into the same bright
red as errors, and the scrollbar's track into the background (black on black: no scrollbar).
Here the theme's named colours keep their hue instead (the palette colour of the nearest hue;
the bright ones on a dark theme, the normal ones on a light one), and the scrollbar gets a
grey track one step off the background with a thumb one step further. Greys are left alone.
"""

from __future__ import annotations

import dataclasses

from rich.color import STANDARD_PALETTE
from textual.color import Color
from textual.theme import Theme

LOW_COLOUR_SYSTEMS = ("standard", "windows")  # what Rich detects for TERM=screen, linux, ...
_NAMED = ("primary", "secondary", "accent", "warning", "error", "success")
# hue (degrees) -> palette index of the normal colour; the bright one is 8 further
_HUES = ((0, 1), (50, 3), (120, 2), (180, 6), (240, 4), (300, 5))
_GREY_SATURATION = 0.2


def _palette_hex(index: int) -> str:
    return STANDARD_PALETTE[index].hex


def keep_hue(colour: str, dark: bool) -> str:
    """The 16-colour palette entry of ``colour``'s hue (``colour`` itself if it is a grey or
    not a plain colour)."""
    try:
        parsed = Color.parse(colour)
    except Exception:  # "auto", "transparent 50%" and the like: Textual resolves those itself
        return colour
    hue, saturation, _ = parsed.hsl
    if saturation < _GREY_SATURATION:
        return colour
    degrees = hue * 360
    index = min(_HUES, key=lambda h: min(abs(degrees - h[0]), 360 - abs(degrees - h[0])))[1]
    return _palette_hex(index + 8 if dark else index)


def for_sixteen_colours(theme: Theme) -> Theme:
    """``theme`` with the hue of its named colours kept and a visible scrollbar."""
    named = {
        field: keep_hue(getattr(theme, field), theme.dark)
        for field in _NAMED
        if getattr(theme, field)
    }
    variables = {
        name: keep_hue(value, theme.dark) if name.endswith("-foreground") else value
        for name, value in theme.variables.items()
    }
    track, thumb, hover = (8, 7, 15) if theme.dark else (7, 8, 0)
    scrollbar = {
        "scrollbar-background": _palette_hex(track),
        "scrollbar-background-hover": _palette_hex(track),
        "scrollbar-background-active": _palette_hex(track),
        "scrollbar": _palette_hex(thumb),
        "scrollbar-hover": _palette_hex(hover),
        "scrollbar-active": named.get("primary", _palette_hex(hover)),
    }
    return dataclasses.replace(theme, **named, variables={**scrollbar, **variables})
