"""One panel: a bordered DataTable whose rows are keyed by resource identity and diffed in place.

Rows are added, updated and removed by key, never rebuilt per tick, so the cursor stays on the
row the learner chose. New rows and changed cells are lit for a few seconds; the changed
attributes of a DynamoDB item stay marked until it changes again. Every cell is a `Text` built
from a plain string, so a value like ``[/bold]`` is shown as written.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from rich.style import Style
from rich.text import Text
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.widgets.data_table import RowDoesNotExist

from awsview.render import Row
from awsview.ui.feed import MORE_KEY, ShownPanel

HIGHLIGHT_S = 3.0
REBUILD_AT = 64  # removing more rows than this (and than half) rebuilds: remove_row is O(rows)

GOOD = frozenset({"SUCCEEDED", "Accepted", "Enabled", "ACTIVE", "RESULT", "TaskSucceeded",
                  "ExecutionSucceeded", "unchanged"})
BAD = frozenset({"FAILED", "TIMED_OUT", "ABORTED", "ERROR", "TaskFailed", "ExecutionFailed",
                 "LambdaFunctionFailed", "TaskTimedOut", "FailStateEntered", "Disabled"})
BUSY = frozenset({"RUNNING", "Creating", "Enabling", "Disabling", "Updating", "Deleting"})
_NEXT_ATTRIBUTE = re.compile(r", (?=[^,=\s]+=)")


def tone(value: str) -> str | None:
    """The meaning of a cell's value at a glance: good, bad, warn, busy or nothing."""
    if value in GOOD:
        return "good"
    if value in BAD:
        return "bad"
    if value in BUSY:
        return "busy"
    if value.startswith(("Rejected", "stale", "changed")):
        return "warn"
    return None


def attribute_spans(text: str, names: frozenset[str]) -> list[tuple[int, int]]:
    """Where ``name=value`` of each named attribute sits in an ``a=1, b=2`` cell."""
    spans = []
    for name in names:
        for match in re.finditer(rf"(?:^|, ){re.escape(name)}=", text):
            start = match.start() + (2 if match.group().startswith(", ") else 0)
            following = _NEXT_ATTRIBUTE.search(text, match.end())
            spans.append((start, following.start() if following else len(text)))
    return spans


class PanelBody(Static, can_focus=True):
    """The one line a panel without rows shows; focusable, so every panel can be visited."""


class PanelView(Vertical):
    """A titled panel: border title, freshness in the subtitle, rows or a one-line body."""

    COMPONENT_CLASSES = {"panel--good", "panel--bad", "panel--warn", "panel--busy", "panel--new",
                         "panel--changed", "panel--mark", "panel--more"}

    DEFAULT_CSS = """
    PanelView {
        height: auto;
        border: round $foreground 30%;
        border-title-color: $foreground;
        border-title-style: bold;
        border-subtitle-color: $foreground-muted;
        padding: 0;
        & > DataTable { height: auto; max-height: 100%; background: transparent; }
        & > .body { padding: 0 1; color: $foreground-muted; }
        &:focus-within { border: round $primary; border-title-color: $primary; }
        &.-stale { border: round $warning; border-subtitle-color: $warning; }
        &.-error, &.-absent-error { border: round $error; border-subtitle-color: $error; }
        &.-error > .body { color: $error; text-style: bold; }
        &.-stale > .body { color: $warning; }
        & > .panel--good { color: $success; }
        & > .panel--bad { color: $error; text-style: bold; }
        & > .panel--warn { color: $warning; }
        & > .panel--busy { color: $accent; text-style: italic; }
        & > .panel--new { background: $success 25%; }
        & > .panel--changed { background: $warning 30%; text-style: bold; }
        & > .panel--mark { color: $warning; text-style: bold underline; }
        & > .panel--more { color: $foreground-muted; text-style: italic; }
    }
    """

    class RowChosen(Message):
        """Enter (or a second click) on a row."""

        def __init__(self, view: PanelView, key: str) -> None:
            super().__init__()
            self.view = view
            self.key = key

    def __init__(self, ident: str, kind: str, highlight_seconds: float = HIGHLIGHT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.ident = ident
        self.kind = kind
        self.shown: ShownPanel | None = None
        self.highlight_seconds = highlight_seconds
        self._clock = clock
        self._cells: dict[str, tuple[str, ...]] = {}
        self._columns: tuple[str, ...] | None = None
        self._lit: dict[str, tuple[float, frozenset[int] | None]] = {}  # key → until, cells (None: all)
        self._marks: dict[str, frozenset[str]] = {}
        self._styles: dict[str, Style] = {}
        self._seeded = False
        self._fade_timer = None

    def compose(self):
        yield PanelBody(Content("waiting for the first poll…"), classes="body")
        table: DataTable = DataTable(cursor_type="row", zebra_stripes=False)
        table.display = False
        yield table

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._restyle, init=False)

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

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

    def show(self, shown: ShownPanel, marks: dict[str, frozenset[str]] | None = None,
             needle: str = "") -> None:
        """Make the panel show ``shown``: title, freshness, health and rows (diffed by key)."""
        panel = shown.panel
        self.shown = shown
        self.border_title = Content(panel.title)
        count = f"{len(panel.rows)}{'+' if shown.more else ''} · " if panel.rows else ""
        self.border_subtitle = Content(f"{count}{panel.freshness}")
        for health in ("ok", "stale", "error", "absent", "none"):
            self.set_class(panel.health == health, f"-{health}")
        rows = list(panel.rows)
        if shown.more:
            more = Row(MORE_KEY, (_more_text(shown),) + ("",) * (len(panel.columns) - 1))
            rows = [more] + rows if shown.tail else rows + [more]
        table = self.table
        table.display = bool(rows)
        body = self.query_one(PanelBody)
        body.display = not rows
        if not rows:
            body.update(Content(self._body_text(shown, needle)))
        if self._columns != panel.columns:
            self._columns = panel.columns
            table.clear(columns=True)
            self._cells.clear()
            for i, label in enumerate(panel.columns):
                table.add_column(Text(label), key=f"c{i}")
        self._apply(rows, marks or {})
        if panel.health in ("ok", "stale") or rows:
            self._seeded = True

    def _body_text(self, shown: ShownPanel, needle: str) -> str:
        panel = shown.panel
        if needle and shown.total:
            return f"no rows match “{needle}” ({shown.total} hidden)"
        if panel.health == "none":
            return "waiting for the first poll…"
        if panel.health == "stale" and not panel.rows:
            return f"{panel.empty_text} at the last good poll; now {panel.freshness}"
        return panel.body_text or panel.empty_text

    def _apply(self, rows: list[Row], marks: dict[str, frozenset[str]]) -> None:
        table = self.table
        now = self._clock()
        cursor = self.cursor_key()
        at_end = table.row_count > 0 and table.cursor_row >= table.row_count - 1
        new: dict[str, tuple[str, ...]] = {}
        for row in rows:
            key = row.key
            while key in new:  # renderers give unique keys; stay safe if one does not
                key += "#"
            new[key] = row.cells
        old = self._cells
        removed = [k for k in old if k not in new]
        if len(removed) > REBUILD_AT and len(removed) > len(old) // 2:
            table.clear()  # a filter change or a cleanup: cheaper than hundreds of remove_row
            old = {}
        else:
            for key in removed:
                try:
                    table.remove_row(key)
                except RowDoesNotExist:
                    pass
        self._lit = {k: v for k, v in self._lit.items() if k in new}
        remarked = {k for k in set(marks) | set(self._marks) if marks.get(k) != self._marks.get(k)}
        self._marks = dict(marks)
        for key, cells in new.items():
            before = old.get(key)
            if before is None:
                if self._seeded and key != MORE_KEY:
                    self._lit[key] = (now + self.highlight_seconds, None)
                table.add_row(*self._texts(key, cells), key=key)
                continue
            changed = frozenset(i for i, (a, b) in enumerate(zip(before, cells)) if a != b)
            if not changed and key not in remarked:
                continue
            if changed and key != MORE_KEY:
                self._lit[key] = (now + self.highlight_seconds, changed)
            for i, text in enumerate(self._texts(key, cells)):
                if i in changed or key in remarked:
                    table.update_cell(key, f"c{i}", text, update_width=i in changed)
        self._cells = new
        self._order(list(new))
        self._keep_cursor(cursor, at_end)
        if self._lit and self._fade_timer is None:
            self._fade_timer = self.set_timer(self.highlight_seconds, self._fade)

    def _order(self, wanted: list[str]) -> None:
        table = self.table
        if self.keys == wanted:
            return
        position = {id(table.get_cell(k, "c0")): i for i, k in enumerate(wanted)}
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
            self._styles[name] = self.get_component_rich_style(f"panel--{name}", partial=True)
        return self._styles[name]

    def _texts(self, key: str, cells: tuple[str, ...]) -> list[Text]:
        if key == MORE_KEY:
            return [Text(c, style=self._style("more")) for c in cells]
        lit = self._lit.get(key)
        marks = self._marks.get(key)
        texts = []
        for i, value in enumerate(cells):
            text = Text(value, no_wrap=True, end="")
            meaning = tone(value)
            if meaning:
                text.stylize(self._style(meaning))
            if lit is not None and (lit[1] is None or i in lit[1]):
                text.stylize(self._style("new" if lit[1] is None else "changed"))
            if marks and self._columns and i < len(self._columns) and self._columns[i] == "ATTRIBUTES":
                for start, end in attribute_spans(value, marks):
                    text.stylize(self._style("mark"), start, end)
            texts.append(text)
        return texts

    def _fade(self) -> None:
        self._fade_timer = None
        now = self._clock()
        done = [k for k, (until, _) in self._lit.items() if until <= now]
        for key in done:
            del self._lit[key]
            if key in self._cells:
                for i, text in enumerate(self._texts(key, self._cells[key])):
                    self.table.update_cell(key, f"c{i}", text)
        if self._lit:
            wait = max(0.05, min(until for until, _ in self._lit.values()) - now)
            self._fade_timer = self.set_timer(wait, self._fade)

    def _restyle(self, *_: object) -> None:
        self._styles.clear()
        self.call_after_refresh(self._repaint_all)

    def _repaint_all(self) -> None:
        self._styles.clear()
        for key, cells in self._cells.items():
            for i, text in enumerate(self._texts(key, cells)):
                self.table.update_cell(key, f"c{i}", text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value and event.row_key.value != MORE_KEY:
            self.post_message(self.RowChosen(self, event.row_key.value))


def _more_text(shown: ShownPanel) -> str:
    where = "earlier" if shown.tail else "more"
    return f"… {shown.more:,} {where} — / filters them all"
