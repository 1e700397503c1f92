"""Reading the running viewer back: what each panel holds and what the screen shows.

For the Pilot tests and the benchmark; nothing here changes the app.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from awsview.core.feed import MORE_KEY
from awsview.ui.compat import screen_strips
from awsview.ui.viewer.panel import PanelTable, PanelView


def views(app: App) -> dict[str, PanelView]:
    return dict(app.board.views)


def view(app: App, ident: str) -> PanelView:
    """The panel whose id is ``ident`` or starts with it ("executions",
    "tables:labex-q05-orders")."""
    found = app.board.views.get(ident) or next(
        (v for i, v in app.board.views.items() if i.startswith(ident)), None
    )
    if found is None:
        raise KeyError(f"no panel {ident!r}; panels: {', '.join(app.board.views)}")
    return found


def rows(app: App, ident: str) -> list[tuple[str, ...]]:
    """The rows the panel's table holds, in screen order, as the plain text of each cell.

    Every cell must be a `Text` (a str would be parsed as markup); this fails loudly if not.
    """
    panel = view(app, ident)
    if not _composed(panel) or not panel.table.display:
        return []
    found = []
    for key in panel.keys:
        if key == MORE_KEY:
            continue
        cells = panel.table.get_row(key)
        assert all(isinstance(c, Text) for c in cells), f"{ident} row {key!r} has a non-Text cell"
        found.append(tuple(c.plain for c in cells))
    return found


def full_rows(app: App, ident: str) -> list[tuple[str, ...]]:
    """Like `rows`, but each cell whole (the table may show it cut to fit the panel)."""
    panel = view(app, ident)
    if not _composed(panel) or not panel.table.display:
        return []
    return [panel.cells(k) for k in panel.keys if k != MORE_KEY]


def _composed(panel: PanelView) -> bool:
    """A panel just added to the board has no children until Textual has composed and mounted
    them (the panel makes its table and body up front, so asking for them says nothing)."""
    return bool(panel.children)


def body(app: App, ident: str) -> str:
    """The one line a panel without rows shows ("no items", "error — …"), or ""."""
    panel = view(app, ident)
    if not _composed(panel):
        return ""
    widget = panel.query_one(".body")
    return str(widget.render()) if widget.display else ""


def screen_lines(app: App) -> list[str]:
    """The text of every line on the screen, as the terminal would draw it."""
    return [strip.text for strip in screen_strips(app)]


def screen_styles(app: App) -> list[tuple[str, object]]:
    """(text, rich style) of every segment on the screen."""
    return [(segment.text, segment.style) for strip in screen_strips(app) for segment in strip]


def _waiting(app) -> bool:
    """A change round is due, panels below the first screen are not mounted yet (they are
    mounted after the first frame: on a busy machine a few pauses can come before it), or a
    panel's rows still wait to be planned for its new width. An app that has exited waits for
    nothing: its timers stopped with it (a round put off just before `q` never comes)."""
    if not app.is_running:
        return False
    board = getattr(app, "board", None)
    return getattr(app, "round_pending", False) or bool(board is not None and board.settling)


async def settle(pilot, rounds: int = 3) -> None:
    """Let the viewer handle what it was told (a model change is a message, then a render; a
    change that came just after a key waits for its round, under a second)."""
    deadline = time.monotonic() + 30
    while True:
        while _waiting(pilot.app) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        for _ in range(rounds):
            await pilot.pause()
        # A change message handled in those pauses, still within the second after a key, waits
        # for a round of its own (seen on a loaded machine): wait for that one too.
        if not _waiting(pilot.app) or time.monotonic() >= deadline:
            return


@asynccontextmanager
async def one_panel_table(size: tuple[int, int]) -> AsyncIterator[tuple[Any, PanelTable]]:
    """(pilot, table): an app holding one PanelTable with columns NAME and QTY and the rows
    alpha, beta, gamma (each QTY 1), drawn once."""

    class One(App):
        def compose(self) -> ComposeResult:
            yield PanelTable(cursor_type="row")

    app = One()
    async with app.run_test(size=size) as pilot:
        table = app.query_one(PanelTable)
        table.add_column(Text("NAME"), key="name")
        table.add_column(Text("QTY"), key="qty")
        for name in ("alpha", "beta", "gamma"):
            table.add_row(Text(name), Text("1"), key=name)
        await pilot.pause()
        yield pilot, table
