"""Screenshots of a running Textual app: the SVG Textual exports, or a PNG drawn cell by cell
with a real monospace font (DejaVu Sans Mono where it is installed, else the monospace font
fontconfig names), deterministic for the same screen and font."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from awsview.model.errors import FailedError

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu/DejaVuSansMono.ttf",
    "/Library/Fonts/DejaVuSansMono.ttf",
)
BOLD_CANDIDATES = tuple(
    p.replace("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf") for p in FONT_CANDIDATES
)


def screen_size(size: str) -> tuple[int, int]:
    """``120x40`` as (columns, rows); ValueError saying the expected shape otherwise."""
    try:
        width, height = (int(n) for n in size.lower().split("x"))
        if width >= 20 and height >= 10:
            return width, height
    except ValueError:
        pass
    raise ValueError(f"--size must look like 120x40, not {size!r}")


class ScreenshotError(FailedError):
    """Why a screenshot could not be made (e.g. no monospace font)."""


NO_FONT = (
    "no monospace font found for the PNG: install DejaVu Sans Mono (Debian/Ubuntu:"
    " fonts-dejavu-core, Fedora: dejavu-sans-mono-fonts, macOS: brew install --cask"
    " font-dejavu) or any monospace font fontconfig knows (fc-match monospace)"
)


def _font_path(candidates: tuple[str, ...]) -> str | None:
    return next((p for p in candidates if Path(p).is_file()), None)


def _fontconfig(pattern: str) -> str | None:
    """The font file fontconfig picks for ``pattern``, if fc-match is installed and answers."""
    fc_match = shutil.which("fc-match")
    if fc_match is None:
        return None
    try:
        done = subprocess.run(
            [fc_match, "-f", "%{file}", pattern],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.strip()
    # fc-match always answers with some font; only a TrueType/OpenType file PIL can draw will do.
    if done.returncode == 0 and found.lower().endswith((".ttf", ".otf", ".ttc")):
        return found if Path(found).is_file() else None
    return None


def fonts() -> tuple[str, str | None]:
    """(regular, bold or None): DejaVu Sans Mono at its usual paths, else fontconfig's
    monospace; ScreenshotError saying what to install when there is none."""
    regular = _font_path(FONT_CANDIDATES)
    if regular is not None:
        return regular, _font_path(BOLD_CANDIDATES)
    regular = _fontconfig("monospace")
    if regular is None:
        raise ScreenshotError(NO_FONT)
    bold = _fontconfig("monospace:bold")
    return regular, bold if bold != regular else None


def record(app: Any) -> Any:
    """A rich Console that has recorded the app's current screen."""
    from rich.console import Console

    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    from awsview.ui.compat import screen_update

    console.print(screen_update(app))
    return console


def svg(app: Any, title: str | None = None, unique_id: str | None = None) -> str:
    """The screen as SVG. ``unique_id`` prefixes the SVG's ids and classes; by default it is a
    hash of the screen, so every change of content renames all of them (noisy diffs) and two
    pages of the same screen inlined in one HTML page would share them."""
    if unique_id is None:
        return app.export_screenshot(title=title)
    # Rich escapes the title and the text but writes the id into the SVG's markup as it is, and
    # ours carry a lab's name: anything but letters, digits, `-` and `_` becomes `-`.
    unique_id = re.sub(r"[^A-Za-z0-9_-]", "-", unique_id)
    return record(app).export_svg(title=title or app.title, unique_id=unique_id)


def png(app: Any, font_size: int = 16) -> bytes:
    """The screen as a PNG: one glyph per terminal cell, colours from the styles."""
    from PIL import Image, ImageDraw, ImageFont
    from rich.segment import Segment

    regular, bold_path = fonts()
    font = ImageFont.truetype(regular, font_size)
    bold = ImageFont.truetype(bold_path, font_size) if bold_path else font
    console = record(app)
    width, height = app.size
    cell_w = round(font.getlength("M"))
    ascent, descent = font.getmetrics()
    cell_h = ascent + descent + 2
    default_fg, default_bg = (197, 200, 198), (41, 41, 41)
    image = Image.new("RGB", (width * cell_w, height * cell_h), default_bg)
    draw = ImageDraw.Draw(image)
    from awsview.ui.compat import recorded_segments

    lines = list(Segment.split_and_crop_lines(recorded_segments(console), width, pad=True))
    for row, line in enumerate(lines[:height]):
        column = 0
        for text, style, control in line:
            if control or not text:
                continue
            fg, bg = _colours(style, default_fg, default_bg)
            face = bold if style is not None and style.bold else font
            for char in text:
                span = _cell_width(char)
                x, y = column * cell_w, row * cell_h
                if bg != default_bg:
                    draw.rectangle((x, y, x + cell_w * span - 1, y + cell_h - 1), fill=bg)
                if not char.isspace():
                    draw.text((x, y + 1), char, font=face, fill=fg)
                if style is not None and style.underline:
                    draw.line((x, y + cell_h - 2, x + cell_w * span - 1, y + cell_h - 2), fill=fg)
                column += span
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _cell_width(char: str) -> int:
    from rich.cells import cell_len

    return max(1, cell_len(char))


def _colours(
    style: Any, fg: tuple[int, int, int], bg: tuple[int, int, int]
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    if style is None:
        return fg, bg
    if style.color is not None and not style.color.is_default:
        fg = tuple(style.color.get_truecolor())
    if style.bgcolor is not None and not style.bgcolor.is_default:
        bg = tuple(style.bgcolor.get_truecolor())
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = tuple((c + b) // 2 for c, b in zip(fg, bg))
    return fg, bg


def save(app: Any, path: Path, unique_id: str | None = None) -> Path:
    path = Path(path)
    if path.suffix.lower() == ".png":
        path.write_bytes(png(app))
    elif path.suffix.lower() == ".svg":
        path.write_text(svg(app, unique_id=unique_id), encoding="utf-8")
    else:
        raise ScreenshotError(f"{path.name}: the file name must end in .svg or .png")
    return path


def _frame(app: Any) -> list[Any]:
    """The screen as a recording console prints it, segment by segment: what an export draws,
    compared without drawing it (the SVG export is nine tenths of `export_screenshot`)."""
    from awsview.ui.compat import recorded_segments

    return recorded_segments(record(app))


MAX_FRAMES = 50
SAME_FRAMES = 2  # after the first: three equal frames in a row


async def still(app: Any, pilot: Any) -> None:
    """Until the screen stops changing. Every message handled and the process idle; on a busy
    machine "idle" can come early, so the screen must also stay the same over SAME_FRAMES rounds.
    Panels below the first screen are mounted after its first frame: frames count only once
    they are all mounted and every panel's rows are planned for its width (else the board's
    scrollbar, the screens below or a panel's columns are not final).
    """
    previous, same = None, 0
    for _ in range(MAX_FRAMES):
        await pilot.pause()
        board = getattr(app, "board", None)
        if board is not None and board.settling:
            previous, same = None, 0
            continue
        frame = _frame(app)
        same = same + 1 if frame == previous else 0
        if same >= SAME_FRAMES:
            return
        previous = frame
