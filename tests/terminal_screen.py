"""A small model of a terminal's screen, fed the bytes an app wrote: which character and
which colours each cell shows. Enough for Textual's output (cursor moves, SGR colours and
reverse video, text); other escape sequences are read past. For tests that need the colours
a user's terminal shows, which Pilot (in the app's own colour model) cannot tell."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_TOKEN = re.compile(
    r"\x1b\[([0-9;:?<=>]*)([ -/]*[@-~])"  # CSI: cursor moves, SGR, modes
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, clipboard
    r"|\x1b[P^_][^\x1b]*\x1b\\"  # DCS and friends
    r"|\x1b[()#][0-9A-Za-z]|\x1b[^\[\]P^_()#]"  # charset and other two-byte escapes
    r"|[^\x1b]",
    re.S,
)


@dataclass(frozen=True)
class Pen:
    """The SGR state: foreground and background as the codes that set them ("" = default)."""

    fg: str = ""
    bg: str = ""
    reverse: bool = False


def _apply_sgr(pen: Pen, params: str) -> Pen:
    codes = [int(p) if p else 0 for p in params.replace(":", ";").split(";")] if params else [0]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            pen = Pen()
        elif code == 7:
            pen = replace(pen, reverse=True)
        elif code == 27:
            pen = replace(pen, reverse=False)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            pen = replace(pen, fg=str(code))
        elif code == 39:
            pen = replace(pen, fg="")
        elif 40 <= code <= 47 or 100 <= code <= 107:
            pen = replace(pen, bg=str(code))
        elif code == 49:
            pen = replace(pen, bg="")
        elif code in (38, 48):  # 38;5;N or 38;2;R;G;B
            size = 3 if i + 1 < len(codes) and codes[i + 1] == 5 else 5
            value = ";".join(str(c) for c in codes[i : i + size])
            pen = replace(pen, fg=value) if code == 38 else replace(pen, bg=value)
            i += size - 1
        i += 1
    return pen


@dataclass(frozen=True)
class Cell:
    char: str = " "
    pen: Pen = Pen()


class TerminalScreen:
    """``cols``×``rows`` cells; :meth:`feed` applies output to them."""

    def __init__(self, cols: int = 80, rows: int = 24) -> None:
        self.cols, self.rows = cols, rows
        self.cells = [[Cell() for _ in range(cols)] for _ in range(rows)]
        self.x = self.y = 0
        self.pen = Pen()

    def feed(self, data: bytes | str) -> TerminalScreen:
        text = data.decode(errors="replace") if isinstance(data, bytes) else data
        for match in _TOKEN.finditer(text):
            token = match.group(0)
            if match.group(2) is not None:
                self._csi(match.group(1), match.group(2))
            elif token == "\r":
                self.x = 0
            elif token == "\n":
                self.y = min(self.rows - 1, self.y + 1)
            elif not token.startswith("\x1b") and token >= " ":
                if self.x < self.cols:
                    self.cells[self.y][self.x] = Cell(token, self.pen)
                self.x += 1
        return self

    def _csi(self, params: str, final: str) -> None:
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        if final == "m" and not params.startswith(("?", ">", "<", "=")):
            self.pen = _apply_sgr(self.pen, params)
        elif final in "Hf":
            row = numbers[0] if numbers else 1
            col = numbers[1] if len(numbers) > 1 else 1
            self.y, self.x = max(0, min(self.rows - 1, row - 1)), max(0, col - 1)
        elif final == "G":
            self.x = max(0, (numbers[0] if numbers else 1) - 1)
        elif final in "ABCD":
            n = max(1, numbers[0] if numbers else 1)
            dy = {"A": -n, "B": n}.get(final, 0)
            dx = {"C": n, "D": -n}.get(final, 0)
            self.y = max(0, min(self.rows - 1, self.y + dy))
            self.x = max(0, self.x + dx)

    def line(self, y: int) -> str:
        return "".join(cell.char for cell in self.cells[y]).rstrip()

    def find(self, text: str) -> tuple[int, int]:
        """(row, column) of the first cell of ``text`` on the screen."""
        for y in range(self.rows):
            x = self.line(y).find(text)
            if x >= 0:
                return y, x
        raise AssertionError(f"{text!r} is not on the screen:\n{self.text()}")

    def text(self) -> str:
        return "\n".join(self.line(y) for y in range(self.rows))
