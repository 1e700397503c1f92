"""Plain text laid out in terminal cells: widths, cutting, wrapping and a grid to draw on.

Pure and UI-free, for the state machine graph (`awsview.core.graph`). Strings are cleaned of
control, zero-width and combining characters first, so a line's width is the sum of its
characters' widths (2 for East Asian wide and full-width characters, 1 for the rest), as
terminals and Rich count them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from awsview.model import untrusted

GLUE = "\u00a0"  # joins words that a wrap must keep on one line; drawn as a space


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of a line's text mean `kind`: a state status, "taken", "muted"."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class GraphLine:
    text: str
    spans: tuple[Span, ...] = ()


# -- cells ---------------------------------------------------------------------------------------


# Characters whose width terminals and Rich do not agree on, dropped by clean(): spacing
# combining marks (category Mc: 0 cells to Rich, 1 or more to terminals), and what only joins a
# neighbour (the Hangul fillers and vowel and final jamo, the emoji skin tones).
_DROPPED = ("Mn", "Me", "Mc", "Cf", "Cc", "Zl", "Zp", "Cs", "Co", "Cn")
_JOINERS = (
    (0x1160, 0x11FF),
    (0x3164, 0x3164),
    (0xD7B0, 0xD7FF),
    (0xFFA0, 0xFFA0),
    (0x1F3FB, 0x1F3FF),
)
# Wide since Unicode 16 (Rich counts them so), narrow in the tables of Pythons before 3.14:
# trigrams, monograms, hexagrams, Tai Xuan Jing symbols, counting rod numerals.
_WIDE_SINCE_16 = ((0x2630, 0x2637), (0x268A, 0x268F), (0x4DC0, 0x4DFF), (0x1D300, 0x1D376))


def _within(ch: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    point = ord(ch)
    return any(low <= point <= high for low, high in ranges)


def clean(value: object) -> str:
    """One line, no control, zero-width or combining characters: its width is predictable."""
    cleaned = untrusted.clean(str(value))
    kept = (
        ch
        for ch in cleaned
        if unicodedata.category(ch) not in _DROPPED
        and not ("\u1160" <= ch and _within(ch, _JOINERS))
    )
    return " ".join("".join(kept).split())


def _char_width(ch: str) -> int:
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 2 if "\u2630" <= ch and _within(ch, _WIDE_SINCE_16) else 1


def cells(value: str) -> int:
    """Terminal cells a cleaned string takes."""
    return sum(_char_width(ch) for ch in value)


def wrap(value: str, limit: int, most: int) -> list[str]:
    """Words in lines of at most `limit` cells, at most `most` lines (the last one cut with …)."""
    if limit <= 0 or most <= 0:
        return []
    lines: list[str] = []
    rest = [word for word in value.split(" ") if word]
    while rest:
        if len(lines) == most - 1:
            lines.append(cut(" ".join(rest), limit))
            break
        line = ""
        while rest:
            joined = f"{line} {rest[0]}" if line else rest[0]
            if cells(joined) <= limit:
                line = joined
                rest.pop(0)
            elif not line:  # a word wider than a line is split where the line ends
                line = head(rest[0], limit)
                rest[0] = rest[0][len(line) :]
                break
            else:
                break
        lines.append(line)
    return lines


def head(value: str, limit: int) -> str:
    """The longest start of `value` within `limit` cells, at least one character."""
    used = 0
    for i, ch in enumerate(value):
        used += _char_width(ch)
        if used > limit:
            return value[: max(i, 1)]
    return value


def cut(value: str, limit: int) -> str:
    """At most `limit` cells; a cut string ends with …."""
    if limit <= 0:
        return ""
    if cells(value) <= limit:
        return value
    out, used = [], 0
    for ch in value:
        w = _char_width(ch)
        if used + w > limit - 1:
            break
        out.append(ch)
        used += w
    return "".join(out).rstrip() + "…"


class Canvas:
    """Rows of cells; a wide character takes its cell and an empty one after it."""

    def __init__(self, width: int):
        self.width = width
        self.rows: list[list[str]] = []
        self.spans: list[list[tuple[int, int, str]]] = []

    def row(self) -> int:
        self.rows.append([" "] * self.width)
        self.spans.append([])
        return len(self.rows) - 1

    def put(self, row: int, col: int, value: str, kind: str | None = None) -> int:
        """Writes from `col`, clipped at the width; returns the column after the text."""
        start = col
        cells_ = self.rows[row]
        for ch in value:
            w = _char_width(ch)
            if col < 0 or col + w > self.width:
                break
            self._place(cells_, col, " " if ch == GLUE else ch, w)
            col += w
        if kind and col > start:
            self.spans[row].append((start, col, kind))
        return col

    def get(self, row: int, col: int) -> str:
        return self.rows[row][col] if 0 <= col < self.width else ""

    def set(self, row: int, col: int, ch: str) -> None:
        """One narrow character (a line or corner) at a cell."""
        if 0 <= col < self.width:
            self._place(self.rows[row], col, ch, 1)

    def _place(self, cells_: list[str], col: int, ch: str, w: int) -> None:
        """Writes a character of width `w`; a wide character it cuts in half becomes a space, so
        every row keeps exactly `width` cells."""
        if cells_[col] == "" and col > 0:
            cells_[col - 1] = " "
        after = col + w
        if after < self.width and cells_[after] == "":
            cells_[after] = " "
        cells_[col] = ch
        if w == 2:
            cells_[col + 1] = ""

    def embed(self, other: Canvas, row: int, col: int) -> None:
        for cells_, spans in zip(other.rows, other.spans):
            self.rows[row][col : col + other.width] = cells_[: max(0, self.width - col)]
            self.spans[row].extend((s + col, e + col, k) for s, e, k in spans)
            row += 1

    def lines(self) -> Iterable[GraphLine]:
        for cells_, spans in zip(self.rows, self.spans):
            offsets, at = [], 0
            for ch in cells_:
                offsets.append(at)
                at += len(ch)
            offsets.append(at)
            line = "".join(cells_).rstrip()
            found = []
            for s, e, kind in sorted(spans):
                start, end = offsets[s], min(offsets[e], len(line))
                if end > start:
                    found.append(Span(start, end, kind))
            yield GraphLine(line, tuple(found))
