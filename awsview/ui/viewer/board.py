"""The panel board: one PanelView per shown panel, in the profile's order, laid out by size.

Compact (under 120 columns): panels stacked, most important first, each a few rows high;
``]``/``[`` cycle them and ``z`` zooms one to the whole board. Wide: a grid of two or three
columns. The layout is only CSS classes on the board; the views never move between containers.

The first panels are mounted first: the board's first sync mounts the panels that fill the first
screen (and a grid row more), and the rest right after the first frame: styling, composing and
laying out fifteen panels is a large part of the app's first paint, half of it for panels below
the fold. Every view is made and kept in ``views`` at once, so it takes what each
sync gives it and shows it when mounted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget

from awsview.core.feed import ShownPanel
from awsview.ui.compat import store_virtual_size
from awsview.ui.viewer.cells import alive, natural_widths
from awsview.ui.viewer.panel import PanelView

WIDE_AT = 120
THREE_COLUMNS_AT = 180
# A table's height, header included, when it has more rows than it shows (app.tcss's max-height
# for the compact and the wide board): what the first screen's panels take is counted from them.
TABLE_LINES_COMPACT = 12
TABLE_LINES_WIDE = 16


def layout_for(width: int) -> str:
    """ "compact" or "wide" for a terminal this many columns wide."""
    return "wide" if width >= WIDE_AT else "compact"


class PanelBoard(VerticalScroll):
    """Holds the panel views; knows the layout, the zoomed panel and the current one."""

    # The styles of the panels' cells, read by each PanelView (one set, not one per panel).
    COMPONENT_CLASSES = {
        "panel--good",
        "panel--bad",
        "panel--warn",
        "panel--busy",
        "panel--dim",
        "panel--new",
        "panel--changed",
        "panel--mark",
        "panel--more",
    }

    DEFAULT_CSS = """
    PanelBoard {
        & > .panel--good { color: $success; }
        & > .panel--bad { color: $error; text-style: bold; }
        & > .panel--warn { color: $warning; }
        & > .panel--busy { color: $accent; text-style: italic; }
        & > .panel--dim { text-style: dim; }
        & > .panel--new { background: $success 25%; }
        & > .panel--changed { background: $warning 30%; text-style: bold; }
        & > .panel--mark { color: $warning; text-style: bold underline; }
        & > .panel--more { color: $foreground-muted; text-style: italic; }
    }
    """

    def __init__(self, highlight_seconds: float, clock: Callable[[], float], **kwargs) -> None:
        super().__init__(**kwargs)
        self.can_focus = False
        self.views: dict[str, PanelView] = {}
        self.highlight_seconds = highlight_seconds
        self.clock = clock
        self.zoomed: PanelView | None = None
        self.current: PanelView | None = None
        self.cell_width: int | None = None  # one grid cell's width when wide, else None
        self._first_screen = True  # no sync yet: the first one mounts what the screen shows
        self.kept_back: tuple[str, ...] = ()  # the panels the first sync mounted after its frame
        self._first_column: dict[PanelView, int] = {}  # the grid column each view starts in

    def validate_virtual_size(self, size: Size) -> Size:
        """The board's new scrollable size, stored without asking for another layout.

        Textual sets it while laying the screen out (and updates the scrollbar then); a new one
        asks for a second whole-screen layout in the next frame, which moves nothing: a panel
        that grows by a row changes the board's height every time (see PanelView's).
        """
        return store_virtual_size(self, size)

    @property
    def columns(self) -> int:
        """The grid's columns: 3 or 2 when wide, 1 when stacked."""
        return (3 if self.has_class("-three") else 2) if self.cell_width else 1

    def set_layout(self, width: int) -> None:
        layout = layout_for(width)
        self.set_class(layout == "wide", "-wide")
        self.set_class(layout == "compact", "-compact")
        self.set_class(width >= THREE_COLUMNS_AT, "-three")
        columns = 3 if width >= THREE_COLUMNS_AT else 2
        self.cell_width = (width - 1 - (columns - 1)) // columns if layout == "wide" else None
        self.arrange_grid()

    @property
    def ordered(self) -> list[PanelView]:
        return [child for child in self.children if isinstance(child, PanelView)]

    def sync(
        self,
        shown: list[ShownPanel],
        marks: Callable[[str], dict[str, frozenset[str]]],
        needle: str = "",
        waiting: bool = False,
    ) -> None:
        """Show these panels: new ones mounted in place, gone ones removed, the rest updated."""
        if not alive(self):
            return  # the app is closing: a last tick must not rearrange what is being torn down
        wanted = [s.id for s in shown]
        for ident in [i for i in self.views if i not in wanted]:
            view = self.views.pop(ident)
            if view is self.zoomed:
                self.zoom(None)
            if view is self.current:
                self.current = None
            if view.parent is not None:  # not one kept back below the first screen
                view.remove()
        previous: Widget | None = None
        first = self._first_screen_count(shown) if self._first_screen else len(shown)
        for index, item in enumerate(shown):
            view = self.views.get(item.id)
            if view is None:
                view = PanelView(
                    item.id, item.panel.name, self.highlight_seconds, self.clock, item.panel.health
                )
                self.views[item.id] = view
                if index >= first:
                    pass  # below the first screen: mounted after the first frame
                elif previous is not None:
                    self.mount(view, after=previous)
                elif self.ordered:
                    self.mount(view, before=0)
                else:
                    self.mount(view)
            elif view not in self.children or (
                previous is not None and previous not in self.children
            ):
                pass  # mid-mount or mid-removal (Textual finishes both later): order it next time
            elif previous is not None and self._index(view) != self._index(previous) + 1:
                self.move_child(view, after=previous)
            elif previous is None and self._index(view) != 0:
                self.move_child(view, before=0)
            if self.zoomed is not None and view is not self.zoomed:
                view.defer(item, marks(item.id), needle, waiting)  # hidden: shown when unzoomed
            else:
                view.show(item, marks(item.id), needle, waiting)
            previous = view
        self.arrange_grid()

    def _first_screen_count(self, shown: list[ShownPanel]) -> int:
        """How many panels to mount at the first sync: those the first screen shows, and the
        first one that starts below it (so the first frame is the screen the learner keeps, and
        says so); the others are mounted right after the first frame.

        The panels are placed as the grid will place them (spans as `arrange_grid` gives them),
        each at its fewest lines (borders, header, rows up to the table's height; one body
        line), so a panel counted as below the screen is. Should the count fall short, the
        rest come a frame later all the same."""
        self._first_screen = False
        if not alive(self):
            return len(shown)
        room = self.app.size.height  # the board's height is not known before its first layout
        columns = self.columns
        most = TABLE_LINES_WIDE if self.cell_width else TABLE_LINES_COMPACT
        top = height = 0  # the current grid row's top and height
        used = columns
        for count, item in enumerate(shown):
            rows = item.panel.rows
            span = 1
            if self.cell_width and rows:
                natural = natural_widths(item.panel.columns, [r.cells for r in rows])
                span = columns if sum(natural) + 2 * len(natural) + 3 > self.cell_width else 1
            if used + span > columns:
                top, height, used = top + height, 0, 0
                if top >= room:  # this panel starts below the screen, and every later one
                    self.kept_back = tuple(later.id for later in shown[count + 1 :])
                    self.call_after_refresh(self._mount_rest)
                    return count + 1
            used += span
            height = max(height, 2 + (min(len(rows) + 1 + bool(item.more), most) if rows else 1))
        return len(shown)

    def _mount_rest(self) -> None:
        """Mount the views the first sync kept back, each after the one before it."""
        if not alive(self):
            return
        previous: Widget | None = None
        for view in list(self.views.values()):
            if view.parent is None:
                if previous is not None:
                    self.mount(view, after=previous)
                else:
                    self.mount(view, before=0)
            previous = view
        self.arrange_grid()

    @property
    def held(self) -> int:
        """Views made but not mounted yet (below the first screen, before its first frame)."""
        return sum(1 for view in self.views.values() if view.parent is None)

    def expected_width(self, view: PanelView) -> int:
        """The width the board's layout will give ``view`` (for a view not laid out yet, so its
        first frame shows its rows planned as they stay): its column span's cells in the grid,
        the board less its scrollbar when stacked."""
        width = self.app.size.width - 1  # the board's, less its scrollbar's column
        if self.cell_width is None:
            return width
        columns = self.columns
        first = self._first_column.get(view, 0)
        last = min(columns, first + (view.styles.column_span or 1)) - 1
        # Textual's grid: equal fractions of the width less the gutters, edges floored.
        unit = Fraction(width - (columns - 1), columns)
        return math.floor(unit * (last + 1) + last) - math.floor(unit * first + first)

    @property
    def settling(self) -> bool:
        """Views still to be mounted, or a view whose rows were planned for another width than
        it has now (its resize is on its way): the screen is not yet the one that stays."""
        return bool(self.held) or any(
            not view.fitted for view in self.views.values() if view.parent is not None
        )

    def arrange_grid(self) -> None:
        """Column spans for the wide grid: a panel whose rows need more than one cell takes a
        whole row; a narrow panel left alone before it stretches to the end of its row (Textual's
        grid would otherwise squeeze the wide one into the last cell)."""
        columns = self.columns
        spans: list[list] = []  # [view, span] per grid row, current row last
        used = columns
        self._first_column = {}
        for view in self.ordered:
            span = columns if self.cell_width and view.natural_width > self.cell_width else 1
            if used + span > columns:
                if spans and used < columns:
                    spans[-1][-1][1] += columns - used
                spans.append([])
                used = 0
            spans[-1].append([view, span])
            self._first_column[view] = used
            used += span
        for row in spans:
            for view, span in row:
                if (view.styles.column_span or 1) != span:
                    view.styles.column_span = span
                    if not view.size.width:  # planned for the span it had: plan it again now
                        view.replan()

    def _index(self, view: Widget) -> int:
        return self.children.index(view)

    def clear_panels(self) -> None:
        self.zoom(None)
        self.current = None
        for view in self.views.values():
            if view.parent is not None:
                view.remove()
        self.views.clear()

    # -- current panel, cycling, zoom ------------------------------------------------------

    def focused_view(self) -> PanelView | None:
        focused = self.screen.focused if self.is_attached else None
        for node in focused.ancestors_with_self if focused is not None else ():
            if isinstance(node, PanelView):
                return node
        return None

    def visit(self, view: PanelView) -> None:
        """Make ``view`` current: focus its rows (or its message) and bring it into view."""
        self.current = view
        if self.zoomed is not None and self.zoomed is not view:
            self.zoom(view)
        target = view.table if view.table.display else view.query_one(".body")
        target.focus(scroll_visible=False)
        self.call_after_refresh(self.scroll_to_widget, view, animate=False, top=True)

    def cycle(self, step: int) -> None:
        views = self.ordered
        if not views:
            return
        here = self.focused_view() or self.current
        index = views.index(here) if here in views else -1 if step > 0 else 0
        self.visit(views[(index + step) % len(views)])

    def zoom(self, view: PanelView | None) -> None:
        if self.zoomed is not None:
            self.zoomed.remove_class("-zoom")
        self.zoomed = view
        self.set_class(view is not None, "-zoomed")
        if view is not None:
            view.add_class("-zoom")
            self.current = view
        for shown in [view] if view is not None else self.ordered:
            shown.flush()
