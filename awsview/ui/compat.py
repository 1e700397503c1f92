"""Every place AWS View reaches into Textual's, Rich's or textual-serve's private parts, in one
module.

Each function names the private member it uses and why no public one does; a Textual, Rich or
textual-serve upgrade that breaks one breaks it here (the tests that use each are named). The
tested versions are pinned in pyproject.toml. Like `awsview.emulator.moto_patches` for moto.

textual-serve: `awsview.cli.serve.make_server` subclasses its `AppService` and `Server`, overriding
their private `_make_app` and `_build_environment` and using `_task`, `_process` and
`_process_messages` — the only way to stop a stuck session with a deadline, to add the guard
middleware and to name the shared rate budget to each session (tests/cli/test_serve.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._compositor import Compositor
from textual._styles_cache import StylesCache
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable


def alive(widget: object) -> bool:
    """Mounted and not being torn down. Widget.mount itself checks ``_closing`` and ``_pruning``
    (no public flag says it); is_attached alone stays true while the app closes, and an update
    then would meet half-removed children."""
    return bool(
        getattr(widget, "is_attached", False)
        and not getattr(widget, "_closing", False)
        and not getattr(widget, "_pruning", False)
    )


def action_name(app: Any, action: Any, default_namespace: Any, namespaces: Any) -> str:
    """The name of the action ``App.run_action`` is about to run: Textual parses an action string
    (``"app.quit"``, ``"focus('x')"``) only in its private ``_parse_action``, and a presenter screen
    must refuse before the action runs, whichever key, click or footer link sent it
    (tests/ui/test_ui_presenter.py)."""
    _, name, _ = app._parse_action(
        action, app if default_namespace is None else default_namespace, namespaces
    )
    return str(name)


def keymap_in_force(app: Any) -> dict[str, str]:
    """The keymap ``App.set_keymap`` last set (binding id -> keys): the help screens list the
    keys in force, and Textual keeps them only in a private mapping."""
    return dict(app._keymap)


def screen_update(app: Any) -> Any:
    """The whole current screen as one renderable (with the screens under it, for a modal), for a
    recording console: Textual's export_screenshot does this internally through the screen's
    private ``_compositor`` and the app's ``_background_screens`` (tests/capture)."""
    return app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)


def screen_strips(app: Any) -> list[Any]:
    """The current screen's lines as Textual's compositor draws them (``_compositor``), for tests
    and benchmarks that read the screen back as text."""
    return list(app.screen._compositor.render_strips())


def recorded_segments(console: Any) -> list[Any]:
    """What a recording Rich console printed, as segments: Rich keeps them in the private
    ``_record_buffer`` and offers only text, HTML and SVG exports of it (the PNG screenshot
    draws cell by cell, tests/capture/test_screenshot.py)."""
    return list(console._record_buffer)


# -- DataTable: what `awsview.ui.viewer.panel.PanelTable` caches by (Textual 8.2.8,
# textual/widgets/_data_table.py). DataTable keys its own line and cell caches by a counter that
# every update bumps, and says which row a screen line shows, which cell a drawn cell is and
# how the cursor and the hover are drawn only in private members. The panel keeps its caches;
# only these reads and the cell hook are here (tests/ui/test_compat.py draws a PanelTable
# through them). A read through a function costs ~0.03 µs more than the attribute itself, about
# 0.2 µs a line drawn: nothing beside a line's key.


def table_has_row_labels(table: DataTable) -> bool:
    """A row was added with a label (``_labelled_row_exists``): the panel's caches stand aside."""
    return bool(table._labelled_row_exists)


def table_line_row(table: DataTable, y: int) -> tuple[Any, int]:
    """The key of the row drawn at line ``y`` of the table (scroll included, the header first)
    and the line within that row (``_get_offsets``). LookupError past the last row."""
    return table._get_offsets(y)


def table_header_key(table: DataTable) -> Any:
    """The key DataTable gives its header row (``_header_row_key``)."""
    return table._header_row_key


def table_row_index(table: DataTable, row_key: Any) -> int | None:
    """Where the row ``row_key`` is shown (``_row_locations``); None for the header."""
    return table._row_locations.get(row_key)


def table_row_cells(table: DataTable, row_key: Any) -> tuple[Any, ...]:
    """The cell objects of a row as stored (``_data``), in column order: no copy of a value, so
    the panel can tell an unchanged cell by identity (``get_row`` copies them into a list)."""
    return tuple(table._data.get(row_key, {}).values())


def table_cell_at(table: DataTable, row_index: int, column_index: int) -> Any:
    """The cell object drawn at (``row_index``, ``column_index``), the header's label at row -1,
    through ``_row_locations``, ``_column_locations``, ``_header_row_key`` and ``_data``: what
    ``_render_cell`` itself looks up. KeyError or AttributeError for a row label or a row gone."""
    if row_index < 0:
        return table.columns[table._column_locations.get_key(column_index)].label
    row_key = table._row_locations.get_key(row_index)
    return table._data[row_key][table._column_locations.get_key(column_index)]


def table_hover_shown(table: DataTable) -> bool:
    """Whether the hover cursor is drawn (``_show_hover_cursor``: the mouse is over the table)."""
    return bool(table._show_hover_cursor)


def table_pseudo_classes(table: DataTable) -> Any:
    """The focus and hover state the table drew with (``_pseudo_class_state``, a hashable
    tuple that DataTable puts in its own cache keys)."""
    return table._pseudo_class_state


def forget_box_model(widget: Any) -> None:
    """Drop the widget's cached box models (``_box_model_cache``), so the next layout measures it
    again. Textual keys them by the widget's ``_layout_updates``, which a ``refresh(layout=True)``
    raises only when no layout was pending yet: a table whose rows came while one was pending,
    measured by a layout in between (no rows: height 0), kept that height after it, whatever
    layout came later (about one viewer start in ten, a 24-line log panel showed no row)."""
    widget._box_model_cache.clear()


def store_virtual_size(widget: Any, size: Any) -> Any:
    """Store a widget's new virtual size without the layout its setter would ask for; returns
    the size before, for a ``validate_virtual_size`` to give back (the setter then sees no
    change)."""
    before = widget.virtual_size
    if size != before:
        widget.set_reactive(Widget.virtual_size, size)
    return before


def scroll_area_resized(widget: Any, size: Any) -> None:
    """What a widget does when its virtual size is set, but the layout: the scrollbars' ranges
    and the scroll offsets kept within them (``Widget._scroll_update``, which the virtual size's
    watcher calls)."""
    widget._scroll_update(size)


class CellDrawingTable(DataTable):
    """A DataTable that draws each cell through ``draw_cell``: DataTable draws every cell in its
    private ``_render_cell(row_index, column_index, base_style, width, cursor, hover)``, which
    returns the cell's lines of segments; no public hook reaches it. A subclass overrides
    ``draw_cell`` and calls ``super().draw_cell`` for the table's own drawing.

    A one-line `Text` cell (every panel cell, the header's labels) is drawn by `text_cell_line`,
    with the styles DataTable would give it (``_get_row_renderables``, ``rows``,
    ``_get_styles_to_render_cell``, ``_show_hover_cursor``, ``_header_row_key``); any other cell
    by DataTable's ``_render_cell`` (tests/ui/test_compat.py compares the two)."""

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list:
        return self.draw_cell(row_index, column_index, base_style, width, cursor, hover)

    def draw_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list:
        lines = self._text_cell(row_index, column_index, base_style, width, cursor, hover)
        if lines is None:
            lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        return lines

    def _text_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool,
        hover: bool,
    ) -> list | None:
        """DataTable's drawing of a one-line `Text` cell (``_render_cell``), or None for a cell
        it does not cover: a row label, a row of another height, anything but `Text`."""
        header = row_index == -1
        if column_index < 0 or (header and self.header_height != 1):
            return None
        if not header:
            row = self.rows.get(self._row_locations.get_key(row_index))
            if row is None or row.height != 1 or row.auto_height:
                return None
        cells = self._get_row_renderables(row_index).cells
        cell = cells[column_index] if column_index < len(cells) else None
        if type(cell) is not Text:
            return None
        fixed = not header and (row_index < self.fixed_rows or column_index < self.fixed_columns)
        component_style, post_style = self._get_styles_to_render_cell(
            header,
            False,
            fixed,
            hover,
            cursor,
            self.show_cursor,
            self._show_hover_cursor,
            self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css",
        )
        pre_style = base_style + Style.from_meta({"row": row_index, "column": column_index})
        options = self.app.console_options.update_dimensions(width, 1).update(no_wrap=True)
        return text_cell_line(
            self.app.console,
            options,
            cell,
            self.cell_padding,
            pre_style + component_style,
            post_style,
        )


_NO_STYLE = Style.null()
_NEW_LINE = Text("\n")


def text_cell_line(
    console: Any, options: Any, cell: Text, padding: int, pre_style: Style, post_style: Style
) -> list | None:
    """The lines DataTable draws for a one-line cell: what ``console.render_lines(Styled(
    Padding(cell, (0, padding)), pre_style, post_style), options)`` gives (``options``: the
    cell's width, height 1, no wrap), without the padding's and the styling's own passes
    through the console (a third of the time). None for text it does not cover: a line break,
    a tab, a justified cell, no room inside the padding."""
    inner = options.max_width - 2 * padding
    plain = cell.plain
    if (
        inner < 1
        or "\n" in plain
        or "\t" in plain
        or (cell.justify or options.justify) not in (None, "default")
    ):
        return None
    line = cell.copy()
    line.truncate(inner, overflow=cell.overflow or options.overflow or "fold")
    # Joined as Text renders its lines: Text.render alone leaves out the base style of a text
    # without spans.
    segments = Segment.adjust_line_length(
        list(_NEW_LINE.join((line,)).render(console, end="")), inner, style=_NO_STYLE, pad=True
    )
    if padding:
        space = Segment(" " * padding, _NO_STYLE)
        segments = [space, *segments, space]
    return [list(Segment.apply_style(segments, pre_style, post_style or None))]


class CroppingCompositor(Compositor):
    """Textual's compositor, whose partial updates draw only the lines they show.

    A partial update (a key that moves a table's cursor, a changed row) asks every widget
    whose clip meets the changed lines for all of its visible lines (``_get_renders``), and
    keeps only the changed ones: on a board of fifteen panels, all of their lines, mostly from
    their caches, for the two lines a cursor changed. This asks each widget for the lines
    within the update's rows only, the whole width of its clip, so each chop starts where it
    did; full updates (a layout, a screenshot) are Textual's own (tests/ui/test_compat.py
    compares the two)."""

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        top, bottom = crop.y, crop.bottom
        overlaps = crop.overlaps
        for widget, (region, clip) in self.visible_widgets.items():
            if not overlaps(clip):
                continue
            x, y, width, height = region.intersection(clip)
            first, end = max(y, top), min(y + height, bottom)
            if width and end > first:
                yield (
                    region,
                    Region(x, first, width, end - first),
                    widget.render_lines(Region(x - region.x, first - region.y, width, end - first)),
                )


def crop_partial_updates(screen: Screen) -> Screen:
    """Give ``screen`` the `CroppingCompositor` (its private ``_compositor``, made when the
    screen is and still empty then: no public way to choose it)."""
    screen._compositor.__class__ = CroppingCompositor
    return screen


def mend_styles_cache_leak() -> None:
    """Textual's ``StylesCache.get_inner_outer`` is an ``lru_cache`` on a method without
    ``@classmethod``: its key holds the widget's StylesCache, so up to 1,024 of them, with every
    line each one rendered, outlive their widgets (Textual issue 6665). Kept by the colours
    alone, as meant. The viewer, the class view and an instructor screen run for hours and mount
    rows and panels as labs change (tests/ui/test_compat.py). Nothing to mend once Textual
    caches it without the instance."""
    if isinstance(vars(StylesCache).get("get_inner_outer"), staticmethod):
        return  # mended already
    cached = StylesCache.get_inner_outer
    body = getattr(cached, "__wrapped__", None)
    if body is None or not hasattr(cached, "cache_clear"):
        return

    @lru_cache(1024)
    def inner_outer(base_background: Any, background: Any) -> Any:
        return body(StylesCache, base_background, background)  # the body never reads its first

    StylesCache.get_inner_outer = staticmethod(inner_outer)  # type: ignore[method-assign, assignment]


mend_styles_cache_leak()
