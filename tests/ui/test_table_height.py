"""A panel's table takes the height of its rows, whatever order Textual handles a show in.

Seen live: a viewer started after a lab had played showed the log panel with `24 · live` and no
row, and kept it so (at least 8 of 110 starts at 100x60). Textual caches a widget's box model
under its `_layout_updates`, which `refresh(layout=True)` raises only when no layout is pending.
One show() hides the body and shows the table with its rows; when the body's layout request is
handled first, a layout measures the table before it measured its rows (height 0), and the
table's own request, still pending when its rows change its height, raises nothing: every later
layout reads the cached 0. The steps below force that order with Textual's own handlers.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from awsview.ui.viewer.panel import PanelTable


def _app(table_class: type[DataTable]) -> App:
    class Board(App):
        CSS = """
        VerticalScroll { height: 1fr; }
        Vertical { height: auto; border: round white; }
        DataTable { height: auto; max-height: 12; }
        """

        def compose(self) -> ComposeResult:
            with VerticalScroll(), Vertical():
                yield Static("waiting for the first poll…")
                table = table_class(cursor_type="row")
                table.display = False
                yield table

    return Board()


async def _shown_height(table_class: type[DataTable]) -> tuple[int, int]:
    app = _app(table_class)
    async with app.run_test(size=(80, 40)) as pilot:
        table = app.query_one(table_class)
        body = app.query_one(Static)
        await pilot.pause()
        # One show(): the columns and rows, the body hidden, the table shown …
        table.clear(columns=True)
        table.add_column(Text("LINE"), key="line")
        for i in range(30):
            table.add_row(Text(f"line {i}"), key=str(i))
        body.display = False
        table.display = True
        assert table._layout_required  # the table's layout request is pending
        body._check_refresh()  # … the body's layout request is handled first …
        app.screen._refresh_layout()  # … a layout measures the table: no rows measured yet …
        await table._on_idle(None)  # … then the table measures its rows: 31 lines
        assert table.virtual_size.height == 31 and table._layout_required
        for _ in range(3):
            await pilot.pause()
        return table.size.height, table.virtual_size.height


async def test_a_table_shown_with_its_rows_gets_their_height():
    assert await _shown_height(PanelTable) == (12, 31)


async def test_the_race_is_textual_s():
    """A plain DataTable keeps the height measured before its rows (if this fails, Textual no
    longer caches so: `compat.forget_box_model` can go)."""
    assert await _shown_height(DataTable) == (0, 31)
