"""One panel: a bordered DataTable whose rows are keyed by resource identity and diffed in place.

Rows are added, updated and removed by key, never rebuilt per tick, so the cursor stays on the
row the learner chose. New rows and changed cells are lit for a few seconds; the changed
attributes of a DynamoDB item stay marked until it changes again. Every cell is a `Text` built
from a plain string, so a value like ``[/bold]`` is shown as written.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import RowDoesNotExist

from awsview.core.feed import MORE_KEY, ShownPanel
from awsview.core.render import Row
from awsview.ui.compat import (
    CellDrawingTable,
    forget_box_model,
    scroll_area_resized,
    store_virtual_size,
    table_cell_at,
    table_has_row_labels,
    table_header_key,
    table_hover_shown,
    table_line_row,
    table_pseudo_classes,
    table_row_cells,
    table_row_index,
)
from awsview.ui.viewer.cells import (
    ColumnPlan,
    alive,
    attribute_spans,
    natural_widths,
    plain,
    plan_columns,
    still_fits,
    tone,
)

HIGHLIGHT_S = 3.0
SEED_AFTER_S = 3.0
# Highlights fade on a shared beat: each panel's fade timer fires on the next multiple of this
# (real monotonic time), so panels lit at different moments fade in one frame, not one each
# (every frame costs CPU while a lab plays). A highlight lasts its 3 s plus up to this.
FADE_BEAT_S = 0.5
BEAT_CLOCK = time.monotonic  # the beat's time (real: Textual's timers keep it)
REBUILD_AT = 64  # removing more rows than this (and than half) rebuilds: remove_row is O(rows)


class PanelTable(CellDrawingTable):
    """A DataTable whose Enter says what it does in the footer, and whose unchanged cells are
    not drawn again.

    DataTable keys its line, row and cell caches by a counter that every ``update_cell``,
    ``add_row`` and ``remove_row`` bumps, so one changed cell (a log line added, an item's
    quantity) draws every visible line of the table again through Rich: most of a frame's CPU
    while a lab plays, and of the keypress that lands behind it. This table keeps its own
    caches keyed by the cell objects themselves (a panel replaces the `Text` of a changed cell
    and keeps the others): a line by its row, the row's cells, the column widths, the horizontal
    scroll and whether the cursor or the mouse is on it; a cell by where it is drawn (row and
    column: the segments carry them for the mouse) and how. A style change (a theme) drops
    both. What it reads of DataTable's private parts, and the cell hook, are in
    `awsview.ui.compat` (``table_*``, `CellDrawingTable`, `scroll_area_resized`).
    """

    BINDINGS = [Binding("enter", "select_cursor", "Details", id="details")]
    DRAWN_CELLS = 4096  # a few screens of cells; a full cache is dropped whole
    DRAWN_LINES = 512

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._drawn: dict[tuple, tuple[object, list]] = {}
        self._lines: dict[tuple, tuple[tuple, Strip, int | None]] = {}
        self._style_epoch = 0  # bumped by a style change: what the line keys say of the style

    def render_line(self, y: int) -> Strip:
        if (
            self.fixed_rows
            or self.fixed_columns
            or self.show_row_labels
            and table_has_row_labels(self)
        ):
            return super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        header = self.header_height if self.show_header else 0
        try:
            row_key, offset = table_line_row(self, y if y < header else y + scroll_y)
        except LookupError:
            return super().render_line(y)
        if row_key is table_header_key(self):
            index, cells = -1, tuple(column.label for column in self.ordered_columns)
        else:
            index = table_row_index(self, row_key)
            cells = table_row_cells(self, row_key)
        columns = self.ordered_columns
        cursor, hover = self.cursor_coordinate, self.hover_coordinate
        hover_shown = table_hover_shown(self)
        key = (
            row_key,  # not its index: a row moved up or down is the same line (below)
            offset,
            tuple(map(id, cells)),
            scroll_x,
            self.size.width,
            tuple(c.get_render_width(self) for c in columns),
            self.cursor_type,
            self.show_cursor,
            cursor.row == index,
            cursor.column if self.cursor_type != "row" else 0,
            hover_shown and hover.row == index,
            hover.column if hover_shown else 0,
            table_pseudo_classes(self),
            self._style_epoch,
            self.zebra_stripes and index is not None and index % 2,
        )
        drawn = self._lines.get(key)
        if drawn is not None and all(a is b for a, b in zip(drawn[0], cells)):
            if drawn[2] == index:
                return drawn[1]
            # The row moved (a row added above it, a log tail's oldest line dropped): the same
            # line, but its segments carry the row's index for the mouse. Stamping the new
            # index is far cheaper than drawing the line again, and executions and log tails
            # shift their rows every round.
            moved = Style.from_meta({"row": index})  # after each segment's own: it wins
            strip = Strip(Segment.apply_style(drawn[1], post_style=moved), drawn[1].cell_length)
        else:
            strip = super().render_line(y)
        if len(self._lines) >= self.DRAWN_LINES:
            self._lines.clear()
        self._lines[key] = (cells, strip, index)
        return strip

    def draw_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list:
        try:
            cell = table_cell_at(self, row_index, column_index)
        except (KeyError, AttributeError):  # a row label, or a row already gone: no second cache
            return super().draw_cell(row_index, column_index, base_style, width, cursor, hover)
        key = (
            id(cell),
            row_index,
            column_index,
            base_style,
            width,
            cursor,
            hover,
            self.show_cursor,
            table_hover_shown(self),
            table_pseudo_classes(self),
        )
        drawn = self._drawn.get(key)
        if drawn is not None and drawn[0] is cell:
            return drawn[1]
        lines = super().draw_cell(row_index, column_index, base_style, width, cursor, hover)
        if len(self._drawn) >= self.DRAWN_CELLS:
            self._drawn.clear()
        self._drawn[key] = (cell, lines)
        return lines

    def validate_virtual_size(self, size: Size) -> Size:
        """A new row count without a whole-screen layout, when the table's height stays put.

        Textual lays the whole screen out again whenever a table's virtual size changes (every
        widget is placed again: 10-25 ms with fifteen panels), though a table taller than its
        panel's maximum height keeps that height whatever its row count: a log tail grows by
        a poll's lines every change round. Then the new size is stored without a layout and
        only the table (its scrollbar included) is drawn again; a table whose height could
        change still gets its layout.
        """
        before, height = self.virtual_size, self.size.height
        if (
            size != before
            and size.width == before.width
            and height
            and min(size.height, before.height) > height
        ):
            store_virtual_size(self, size)
            scroll_area_resized(self, size)
            self.refresh()
            return before  # what the setter compares with: equal, so it asks for no layout
        if size.height != before.height:
            forget_box_model(self)  # its height may change: the layout this asks for measures it
        return size

    def notify_style_update(self) -> None:
        self._drawn.clear()  # a theme or CSS change restyles the cursor and the header
        self._lines.clear()
        self._style_epoch += 1
        super().notify_style_update()


class PanelBody(Static, can_focus=True):
    """The one line a panel without rows shows; focusable, so every panel can be visited."""


class PanelView(Vertical):
    """A titled panel: border title, freshness in the subtitle, rows or a one-line body."""

    # The cells' styles (panel--good, panel--new, …) are the board's component classes: one set
    # for every panel, as Textual styles each component class of each widget, twice before the
    # first paint.

    DEFAULT_CSS = """
    PanelView {
        height: auto;
        border: round $foreground 30%;
        border-title-color: $foreground;
        border-title-style: bold;
        border-subtitle-color: $foreground-muted;
        padding: 0;
        & > DataTable {
            height: auto;
            max-height: 100%;
            background: transparent;
            scrollbar-size-vertical: 1;
            scrollbar-size-horizontal: 0;
        }
        & > .body { padding: 0 1; color: $foreground-muted; }
        & > .caption, & > .note { padding: 0 1; color: $foreground-muted; text-style: italic;
                                 text-wrap: nowrap; text-overflow: ellipsis; }
        &:focus-within { border: round $primary; border-title-color: $primary; }
        &.-stale { border: round $warning; border-subtitle-color: $warning; }
        &.-error { border: round $error; border-subtitle-color: $error; }
        &.-error > .body { color: $error; text-style: bold; }
        &.-stale > .body { color: $warning; }
    }
    """

    class RowChosen(Message):
        """Enter (or a second click) on a row."""

        def __init__(self, view: PanelView, key: str) -> None:
            super().__init__()
            self.view = view
            self.key = key

    def __init__(
        self,
        ident: str,
        kind: str,
        highlight_seconds: float = HIGHLIGHT_S,
        clock: Callable[[], float] = time.monotonic,
        health: str = "none",
    ) -> None:
        # Born with its health's class: changing a class restyles the panel and its children,
        # which for fifteen panels was a third of the time to the first paint.
        super().__init__(classes=f"-{health}")
        self._health = health
        self.ident = ident
        self.kind = kind
        self.shown: ShownPanel | None = None
        self.highlight_seconds = highlight_seconds
        self.natural_width = 0  # what the rows need to show whole (borders included)
        self._clock = clock
        self._cells: dict[str, tuple[str, ...]] = {}  # key → every cell, whole, in screen order
        self._columns: tuple[str, ...] | None = None
        self._plan = ColumnPlan((), ())
        self._fitted_to = 0  # the width the plan was made for
        self._lit: dict[
            str, tuple[float, frozenset[int] | None]
        ] = {}  # key → until, cells (None: all)
        self._marks: dict[str, frozenset[str]] = {}
        self._styles: dict[str, Style] = {}
        self._seeded = False
        self._since: float | None = None  # first shown with something polled
        self._fade_timer = None
        self._pending: tuple | None = None  # what to show once mounted
        self._last: tuple | None = None  # the last show() arguments, to refit on resize
        self._ready = False
        self._refit_asked = False
        self._showing = False  # in show(): the board's replan must not start it again
        # Children kept by reference (a query per show costs more than the diff) and the text
        # each line shows: Static.update lays the whole screen out again even for the same text,
        # the costliest part of a poll.
        self._body = PanelBody(Content("waiting for the first poll…"), classes="body")
        # The caption and the note are made when a panel first has one to show: most panels
        # never do, and each widget mounted is styled and laid out before the first paint.
        self._line_widgets: dict[str, Static] = {}
        self._table = PanelTable(cursor_type="row", zebra_stripes=False)
        self._texts_shown: dict[Static, str] = {}

    def compose(self):
        yield self._body
        self._table.display = False
        yield self._table

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._restyle, init=False)
        self._ready = True
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.show(*pending)

    def validate_virtual_size(self, size: Size) -> Size:
        """The panel's new size, stored without asking for another layout.

        Textual sets a widget's virtual size while it lays the screen out, and a new one asks
        for a layout of the whole screen again: a panel that grew or shrank by a row would cost
        a second layout in the next frame that moves nothing. The panel does not scroll, so its
        virtual size is only its size: nothing else needs to know.
        """
        before = store_virtual_size(self, size)
        # Textual sets this after the panel's new size, whether or not it sends a Resize (it
        # sends one only when its own map of the screen changed): rows planned for another
        # width are planned again, once, after this layout.
        if not self.fitted and not self._refit_asked:
            self._refit_asked = True
            self.call_later(self._refit)
        return before  # what the setter compares with: equal, so no layout

    @property
    def fitted(self) -> bool:
        """False while the rows shown were planned for another width than the panel has."""
        return (
            self._last is None
            or not self._ready
            or self.size.width == 0  # not laid out, or hidden (another panel zoomed)
            or self.content_size.width - 1 == self._fitted_to
        )

    def _refit(self) -> None:
        self._refit_asked = False
        self.on_resize()

    @property
    def table(self) -> PanelTable:
        return self._table

    @property
    def keys(self) -> list[str]:
        """Row keys in screen order (the "… more" row included)."""
        return [row.key.value for row in self.table.ordered_rows]

    def cells(self, key: str) -> tuple[str, ...] | None:
        return self._cells.get(key)

    def cursor_key(self) -> str | None:
        table = self.table
        if not table.row_count or not table.is_valid_row_index(table.cursor_row):
            return None
        return table.ordered_rows[table.cursor_row].key.value

    # -- showing a panel -------------------------------------------------------------------

    def show(
        self,
        shown: ShownPanel,
        marks: dict[str, frozenset[str]] | None = None,
        needle: str = "",
        waiting: bool = False,
    ) -> None:
        """Make the panel show ``shown``: title, freshness, health and rows (diffed by key).

        ``waiting``: nothing has been polled yet, so an empty panel must not claim "none".
        """
        if not self._ready:
            self._pending = (shown, marks, needle, waiting)
            return
        if not alive(self):
            return  # removed (a lab switch, the app closing) while an update was on its way
        self._showing = True
        try:
            self._show(shown, marks, needle, waiting)
        finally:
            self._showing = False

    def _show(
        self,
        shown: ShownPanel,
        marks: dict[str, frozenset[str]] | None,
        needle: str,
        waiting: bool,
    ) -> None:
        arguments = (shown, marks, needle, waiting)
        if arguments == self._last and self._available() == self._fitted_to:
            # The same panel at the same width: nothing to diff and nothing to repaint. Most
            # refreshes change one panel of fifteen; comparing the others costs ~0.05 ms each.
            self._seed(shown.panel.health, waiting)
            return
        panel = shown.panel
        self.shown = shown
        self._last = arguments
        self._set_border(panel.title, "_title_shown", "border_title")
        count = f"{len(panel.rows)}{'+' if shown.more else ''} · " if panel.rows else ""
        freshness = panel.freshness
        if not panel.rows and panel.body_text == freshness and " — " in freshness:
            freshness = freshness.split(" — ", 1)[0]  # the body says the rest; say it once
        self._set_border(f"{count}{freshness}", "_subtitle_shown", "border_subtitle")
        if panel.health != self._health:
            self.remove_class(f"-{self._health}")
            self.add_class(f"-{panel.health}")
            self._health = panel.health
        rows = list(panel.rows)
        if shown.more:
            more = Row(MORE_KEY, (_more_text(shown),) + ("",) * (len(panel.columns) - 1))
            rows = [more] + rows if shown.tail else rows + [more]
        table = self.table
        table.display = bool(rows)
        self._body.display = not rows
        if not rows:
            self._update(self._body, self._body_text(shown, needle, waiting))
        self._set_line("note", getattr(panel, "note", ""))  # which evidence the panel stands on
        cursor = self.cursor_key()
        at_end = table.row_count > 0 and table.cursor_row >= table.row_count - 1
        data = [r.cells for r in panel.rows]
        natural = natural_widths(panel.columns, data)
        width = sum(natural) + 2 * len(natural) + 3
        if width != self.natural_width:
            self.natural_width = width
            arrange = getattr(self.parent, "arrange_grid", None)
            if arrange is not None:
                arrange()  # a wide grid gives a panel with more to show a whole row
        available = self._available()
        if (
            self._columns == panel.columns
            and available == self._fitted_to
            and still_fits(self._plan, panel.columns, data, available, natural)
        ):
            plan = self._plan  # keep it: a new plan means rebuilding the table
        elif available > 0:
            plan = plan_columns(panel.columns, data, available, natural)
        else:
            plan = ColumnPlan(tuple(range(len(panel.columns))), tuple(None for _ in panel.columns))
        self._fitted_to = available
        self._set_line("caption", plan.caption if rows else "")
        rebuilt = self._columns != panel.columns or plan != self._plan
        if rebuilt:
            # Columns only ever widen as rows come; a new plan needs fresh columns to narrow.
            self._columns, self._plan = panel.columns, plan
            table.clear(columns=True)
            for i in plan.shown:
                table.add_column(Text(panel.columns[i]), key=f"c{i}")
        self._apply(rows, marks or {}, rebuilt)
        self._order(list(self._cells))
        self._keep_cursor(cursor, at_end)
        if self._lit and self._fade_timer is None:
            self._fade_timer = self.set_timer(_on_beat(self.highlight_seconds), self._fade)
        self._seed(panel.health, waiting)

    def _available(self) -> int:
        """The width the rows are planned for: the panel's content less the table's scrollbar;
        before the first layout, the width the board will give it less the borders too (rows
        planned for no width showed every column in the first frame, planned again a frame
        later)."""
        expected = getattr(self.parent, "expected_width", None)
        if self.size.width == 0 and expected is not None:
            return expected(self) - 3
        return self.content_size.width - 1

    def _seed(self, health: str, waiting: bool) -> None:
        """From now on, rows that appear are new (lit); before, they are the first sight of the
        lab. A known state (rows, empty, absent, an error) seeds a panel; so does being shown for
        a few seconds with nothing to read (executions before any state machine)."""
        if self._seeded or waiting:
            return
        now = self._clock()
        if self._since is None:
            self._since = now
        self._seeded = health != "none" or now - self._since >= SEED_AFTER_S

    def _set_border(self, text: str, memo: str, attribute: str) -> None:
        """Border texts repaint the whole panel when set, even to the same text."""
        if getattr(self, memo, None) != text:
            setattr(self, memo, text)
            setattr(self, attribute, plain(text))

    @property
    def seeded(self) -> bool:
        return self._seeded

    def defer(self, *args) -> None:
        """Keep the newest ``show`` arguments for when the panel is seen again (zoomed away)."""
        self._pending = args

    def flush(self) -> None:
        if self._ready and self._pending is not None:
            pending, self._pending = self._pending, None
            self.show(*pending)

    def _set_line(self, kind: str, text: str) -> None:
        """Show ``text`` in the panel's caption (above the rows) or note (below them)."""
        line = self._line_widgets.get(kind)
        if line is None:
            if not text:
                return
            line = self._line_widgets[kind] = Static(classes=kind)
            if kind == "caption":
                self.mount(line, before=self._table)
            else:
                self.mount(line)
        line.display = bool(text)
        if text:
            self._update(line, text)

    def _update(self, line: Static, text: str) -> None:
        if self._texts_shown.get(line) != text:
            self._texts_shown[line] = text
            line.update(plain(text))

    def _body_text(self, shown: ShownPanel, needle: str, waiting: bool) -> str:
        panel = shown.panel
        if needle and shown.total:
            return f"no rows match “{needle}” ({shown.total} hidden)"
        if waiting:
            return "waiting for the first poll…"
        if panel.health == "none":
            return "none yet"  # nothing this panel reads exists yet; not a claim that it is empty
        if panel.health == "stale" and not panel.rows:
            return f"{panel.empty_text} at the last good poll; now {panel.freshness}"
        return panel.body_text or panel.empty_text

    def on_resize(self) -> None:
        if self._last is not None and self._ready and alive(self):
            self.show(*self._last)

    def replan(self) -> None:
        """Plan the rows again for the width the board gives the panel now (its column span
        changed before its first layout), unless that is what it is doing."""
        if not self._showing:
            self.on_resize()

    def _apply(self, rows: list[Row], marks: dict[str, frozenset[str]], rebuilt: bool) -> None:
        """Diff ``rows`` into the table by key: remove, add, update only the changed cells."""
        table = self.table
        now = self._clock()
        new: dict[str, tuple[str, ...]] = {}
        for row in rows:
            key = row.key
            while key in new:  # renderers give unique keys; stay safe if one does not
                key += "#"
            new[key] = row.cells
        previous = self._cells
        removed = [k for k in previous if k not in new]
        if not rebuilt and len(removed) > REBUILD_AT and len(removed) > len(previous) // 2:
            table.clear()  # a filter change or a cleanup: cheaper than hundreds of remove_row
            rebuilt = True
        self._lit = {k: v for k, v in self._lit.items() if k in new}
        remarked = {k for k in set(marks) | set(self._marks) if marks.get(k) != self._marks.get(k)}
        self._marks = dict(marks)
        for key, cells in new.items():
            before = previous.get(key)
            changed = (
                frozenset(i for i, (a, b) in enumerate(zip(before, cells)) if a != b)
                if before
                else None
            )
            if key != MORE_KEY:
                if before is None and self._seeded:
                    self._lit[key] = (now + self.highlight_seconds, None)
                elif changed:
                    self._lit[key] = (now + self.highlight_seconds, changed)
            if rebuilt or before is None:
                table.add_row(*self._texts(key, cells), key=key)
            elif changed or key in remarked:
                for i, text in zip(self._plan.shown, self._texts(key, cells)):
                    if i in changed or key in remarked:
                        # Only a wider cell widens its column: narrowing one re-measures the whole
                        # column (Textual), which costs a 500-row table dearly on every tick.
                        grew = i in changed and cell_len(cells[i]) > cell_len(before[i])
                        table.update_cell(key, f"c{i}", text, update_width=grew)
        if not rebuilt:
            # Removed after the additions, so the cursor's row index stays valid meanwhile: a
            # clamped cursor makes every remove_row re-measure the table (a log tail drops rows
            # from its start on every poll).
            for key in removed:
                try:
                    table.remove_row(key)
                except RowDoesNotExist:
                    pass
        self._cells = new

    def _order(self, wanted: list[str]) -> None:
        table = self.table
        if self.keys == wanted or not self._plan.shown:
            return
        first = f"c{self._plan.shown[0]}"
        position = {id(table.get_cell(k, first)): i for i, k in enumerate(wanted)}
        table.sort(key=lambda cells: position.get(id(cells[0]), len(position)))

    def _keep_cursor(self, key: str | None, at_end: bool) -> None:
        table = self.table
        if not table.row_count:
            return
        if self.shown is not None and self.shown.tail and (at_end or key is None):
            table.move_cursor(row=table.row_count - 1, scroll=True)  # follow the tail
        elif key is not None and key in self._cells:
            index = table.get_row_index(key)
            if index != table.cursor_row:
                table.move_cursor(row=index, scroll=False)

    # -- styles ----------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        if name not in self._styles:
            board = self.parent  # where the cells' component styles are (PanelBoard)
            source = board if isinstance(board, Widget) else self
            self._styles[name] = source.get_component_rich_style(f"panel--{name}", partial=True)
        return self._styles[name]

    def _texts(self, key: str, cells: tuple[str, ...]) -> list[Text]:
        """The shown cells of a row as styled, cut-to-fit `Text` (never markup)."""
        plan = self._plan
        if key == MORE_KEY:  # its message may run across the columns it leaves empty
            return [
                Text(cells[i] if n == 0 else "", style=self._style("more"), no_wrap=True)
                for n, i in enumerate(plan.shown)
            ]
        lit = self._lit.get(key)
        marks = self._marks.get(key)
        texts = []
        for i, limit in zip(plan.shown, plan.limits):
            value = cells[i] if i < len(cells) else ""
            text = Text(value, no_wrap=True, end="")
            meaning = tone(value)
            if meaning:
                text.stylize(self._style(meaning))
            if lit is not None and (lit[1] is None or i in lit[1]):
                text.stylize(self._style("new" if lit[1] is None else "changed"))
            if marks and self._columns and self._columns[i] == "ATTRIBUTES":
                for start, end in attribute_spans(value, marks):
                    text.stylize(self._style("mark"), start, end)
            if limit is not None:
                text.truncate(limit, overflow="ellipsis")
            texts.append(text)
        return texts

    def _fade(self) -> None:
        self._fade_timer = None
        if not alive(self):
            return
        now = self._clock()
        done = [k for k, (until, _) in self._lit.items() if until <= now]
        for key in done:
            del self._lit[key]
            self._repaint(key)
        if self._lit:
            wait = max(0.05, min(until for until, _ in self._lit.values()) - now)
            self._fade_timer = self.set_timer(_on_beat(wait), self._fade)

    def _repaint(self, key: str) -> None:
        if key in self._cells:
            for i, text in zip(self._plan.shown, self._texts(key, self._cells[key])):
                self.table.update_cell(key, f"c{i}", text)

    def _restyle(self, *_: object) -> None:
        self.call_after_refresh(self._repaint_all)

    def _repaint_all(self) -> None:
        if not alive(self):
            return
        self._styles.clear()
        for key in self._cells:
            self._repaint(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value and event.row_key.value != MORE_KEY:
            self.post_message(self.RowChosen(self, event.row_key.value))


def _on_beat(wait: float) -> float:
    """``wait`` stretched to end on the fade beat (at most FADE_BEAT_S longer)."""
    due = BEAT_CLOCK() + wait
    return wait + (-due) % FADE_BEAT_S


def _more_text(shown: ShownPanel) -> str:
    where = "earlier" if shown.tail else "more"
    return f"… {shown.more:,} {where} — / filters them all"
