"""`y`, `Y` and `o` on the focused row: copy what it is, copy the `aws …` command that reads it,
open it in the AWS console. Shared by the viewer, the replay and the class view's lab panels;
a presenter screen has none of them (awsview.ui.viewer.presenter: they are not navigation).

What is copied is the value as AWS holds it; what the notification shows of it is cleaned and
cut (awsview.model.untrusted). Copying goes through the terminal (OSC 52), which works over SSH
and inside tmux; nothing is copied that a terminal would refuse for its size.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from textual.binding import Binding

from awsview.core.rowref import RowRef, Where, refer
from awsview.model import untrusted
from awsview.model.state import LabState
from awsview.ui.viewer.board import PanelBoard

MAX_COPY = 100_000  # characters: OSC 52 payloads beyond this are cut or dropped by terminals
SHOWN = 80  # characters of the copied value the notification repeats

BINDINGS = [
    Binding("y", "copy_row", "Copy row", show=False, id="copy"),
    Binding("Y", "copy_command", "Copy aws command", show=False, id="copy-command"),
    Binding("o", "open_row", "Open in console", show=False, id="open"),
]


def _focused(board: PanelBoard, model: LabState | None) -> RowRef | None:
    view = board.focused_view() or board.current
    if model is None or view is None or view.shown is None:
        return None
    key = view.cursor_key()
    return refer(model, view.shown.panel, view.ident, key) if key is not None else None


def copy(app: Any, board: PanelBoard, model: LabState | None, where: Where, command: bool) -> None:
    """Copy the focused row (``command``: the `aws …` command that reads it) and say what."""
    ref = _focused(board, model)
    if ref is None:
        app.notify("no row to copy: pick one with tab and the arrows", timeout=3)
        return
    what, text = ref.what, ref.value
    if command:
        what, text = "aws command", ref.command(where) or ""
        if not text:
            app.notify(f"no aws command reads this {ref.what}", timeout=3)
            return
    if len(text) > MAX_COPY:
        app.notify(
            f"{what} not copied: {len(text):,} characters is more than a terminal takes "
            "(enter shows it whole)",
            severity="warning",
            timeout=5,
        )
        return
    app.copy_to_clipboard(text)
    app.notify(f"copied {what}: {untrusted.line(text, limit=SHOWN)}", timeout=4, markup=False)


def can_browse() -> bool:
    """Whether a browser can open beside the terminal: on Linux only with a display, since
    webbrowser would otherwise start a text browser inside this very terminal."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_row(app: Any, board: PanelBoard, model: LabState | None, where: Where) -> None:
    """Open the focused row in the AWS console; say the URL where no browser can open it."""
    ref = _focused(board, model)
    if ref is None:
        app.notify("no row to open: pick one with tab and the arrows", timeout=3)
        return
    if where.endpoint_url:
        app.notify(
            f"not on AWS: no console for this endpoint; it answers at "
            f"{untrusted.line(where.endpoint_url, limit=200)}",
            timeout=6,
            markup=False,
        )
        return
    url = ref.console_url(where)
    if url is None:
        app.notify(f"the AWS console has no page for this {ref.what}", timeout=3)
        return
    opened = False
    if can_browse():
        import webbrowser

        try:
            opened = webbrowser.open(url, new=2)
        except (webbrowser.Error, OSError):
            opened = False
    if opened:
        app.notify(
            f"opened in the browser: {untrusted.line(url, limit=200)}", timeout=4, markup=False
        )
    else:
        app.notify(
            f"no browser here; open {untrusted.line(url, limit=1000)}", timeout=15, markup=False
        )
