"""From the model to what each panel shows: render's rows, filtered, windowed and capped.

`awsview.core.render` decides every row's text; this module only decides which of those rows a
screen can afford. Big collections (log lines, table items) are cut to a
window *before* rendering, because rendering 100,000 log lines takes half a second; smaller
ones are rendered whole and cut after. Either way a panel says how many rows it does not show.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from awsview import kinds
from awsview.core import render
from awsview.core.render import Panel, Row
from awsview.labspec import LabSpec
from awsview.model import keys
from awsview.model.items import format_value
from awsview.model.resources import LogFeed, Table
from awsview.model.snapshot import Health
from awsview.model.state import LabState

DEFAULT_CAP = 200  # rows per table; a panel shows a dozen, the rest is for scrolling
MORE_KEY = "\x00more"  # the "… N more" row; no renderer key starts with NUL


@dataclass(frozen=True)
class ShownPanel:
    """One panel as the screen shows it."""

    id: str  # stable identity across refreshes, e.g. "history:retry-order"
    panel: Panel  # render's panel; its rows are the ones to show, in order
    more: int = 0  # rows neither shown nor filtered out
    total: int = 0  # rows before filtering, window and cap (window included)

    @property
    def tail(self) -> bool:
        return self.panel.name in kinds.TAIL

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.panel.rows


def panel_id(panel: Panel) -> str:
    """A panel kind plus what it is about ("history:retry-order"), as its renderer said."""
    return keys.panel_id(panel.name, panel.subject)


def _panel_id_of_snapshot(key: str) -> str | None:
    """The panel a windowed snapshot feeds."""
    if key.startswith(keys.LOGS_PREFIX):
        return keys.panel_id("logs", keys.name_of(key))
    if key.startswith(keys.EXECUTIONS_PREFIX):
        return keys.panel_id("executions")
    if key.startswith(keys.TABLE_PREFIX):
        return keys.panel_id("tables", keys.name_of(key))
    return None


def matches(cells: tuple[str, ...], needle: str) -> bool:
    return any(needle in c.lower() for c in cells)


@dataclass
class _Window:
    source: Any  # the snapshot's data this window was cut from
    data: Any  # the trimmed data given to the renderer
    hidden: int  # records cut off
    line_keys: tuple[str, ...] | None = None  # log lines: a stable key for each kept line
    total: int = 0  # records before the filter


class PanelFeed:
    """Renders the model's panels with at most ``cap`` rows each.

    A window is kept while its snapshot's data is the same object, so a freshness tick between
    polls costs little. A renderer's panels are kept while the snapshots it reads are the same
    objects and none of them reads the clock (an age, a running execution's duration): a change
    renders one panel kind again, not all twelve (the model keeps unchanged data as the same
    object).
    """

    def __init__(self, cap: int = DEFAULT_CAP):
        self.cap = cap
        self._windows: dict[str, _Window] = {}
        self._anchors: dict[str, str | None] = {}  # log feeds: the first line shown
        self._needle = ""
        # renderer → (what it read, [(panel id before numbering, panel)])
        self._rendered: dict[str, tuple[tuple, list[tuple[str, ShownPanel]]]] = {}

    def panels(
        self,
        model: LabState,
        profile: LabSpec,
        now: float,
        needle: str = "",
        all_runs: bool = False,
    ) -> list[ShownPanel]:
        needle = needle.lower()
        if needle != self._needle:
            self._needle = needle
            self._windows.clear()
        lite = self._lite(model)
        shown: list[ShownPanel] = []
        seen: dict[str, int] = {}
        for name in profile.panels:
            if name not in kinds.KINDS:
                continue
            inputs = _inputs(model, name, (profile.name, needle, all_runs))
            cached = self._rendered.get(name)
            if inputs is not None and cached is not None and _same(cached[0], inputs):
                idents = [_numbered(base, seen) for base, _ in cached[1]]
                if idents == [item.id for _, item in cached[1]]:
                    shown += [item for _, item in cached[1]]
                    continue
                for base, _ in cached[1]:
                    seen[base] -= 1  # numbered differently this time: render it again
            # Only the renderers whose input is windowed read the lite model; all others (newer
            # kinds too) read the full one, so a window never silently shortens them.
            source = lite if name in kinds.WINDOWED else model
            made = []
            for panel in render.render(name, source, profile, now, all_runs):
                base = panel_id(panel)
                made.append((base, self._finish(_numbered(base, seen), panel, needle)))
            shown += [item for _, item in made]
            if inputs is None:
                self._rendered.pop(name, None)
            else:
                self._rendered[name] = (inputs, made)
        return shown

    # -- windows ---------------------------------------------------------------------------

    def _lite(self, model: LabState) -> LabState:
        snapshots = {}
        for key, snapshot in model.snapshots.items():
            window = self._windows.get(key)
            if window is None or window.source is not snapshot.data:
                window = self._window(snapshot.data, key)
                self._windows[key] = window
            snapshots[key] = (
                snapshot if window.data is snapshot.data else replace(snapshot, data=window.data)
            )
        for key in [k for k in self._windows if k not in model.snapshots]:
            del self._windows[key]
        return LabState(snapshots=snapshots)

    def _window(self, data: Any, key: str = "") -> _Window:
        needle = self._needle
        if isinstance(data, LogFeed):
            return self._log_window(data, key, needle)
        if isinstance(data, Table):
            items = data.items
            if needle:
                items = tuple(i for i in items if needle in _item_text(i, data.key_names))
            if len(items) <= self.cap:
                return _Window(
                    data,
                    data if items is data.items else replace(data, items=items),
                    0,
                    total=len(data.items),
                )
            return _Window(
                data,
                replace(data, items=items[: self.cap]),
                len(items) - self.cap,
                total=len(data.items),
            )
        if (
            isinstance(data, tuple)
            and len(data) > self.cap
            and not needle
            and key.startswith(keys.EXECUTIONS_PREFIX)
        ):
            # Newest first already: the first `cap` are the rows the panel would keep anyway.
            return _Window(data, data[: self.cap], len(data) - self.cap, total=len(data))
        return _Window(data, data, 0)

    def _log_window(self, data: LogFeed, key: str, needle: str) -> _Window:
        """The newest lines. Unfiltered, the window's start stays put while it grows from `cap`
        to twice that, then jumps: a table drops its oldest rows in one go now and then rather
        than a few on every poll (each remove_row costs the whole table)."""
        lines = data.lines
        if needle:
            positions = [
                i
                for i, e in enumerate(lines)
                if needle in f"{e.line.kind} {' '.join(e.line.text.split())}".lower()
            ]
            kept = positions[-self.cap :]
            return _Window(
                data,
                replace(data, lines=tuple(lines[i] for i in kept)),
                len(positions) - len(kept),
                _line_keys(lines, kept),
                len(lines),
            )
        low = max(0, len(lines) - 2 * self.cap)
        keys = _line_keys(lines, range(low, len(lines)))
        anchor = self._anchors.get(key)
        start = low + keys.index(anchor) if anchor in keys else max(0, len(lines) - self.cap)
        self._anchors[key] = keys[start - low] if start < len(lines) else None
        trimmed = data if start == 0 else replace(data, lines=lines[start:])
        return _Window(data, trimmed, start, keys[start - low :], len(lines))

    # -- filter and cap --------------------------------------------------------------------

    def _finish(self, ident: str, panel: Panel, needle: str) -> ShownPanel:
        rows = list(panel.rows)
        windows = [
            w
            for k, w in self._windows.items()
            if (w.data is not w.source or w.line_keys is not None)
            and _panel_id_of_snapshot(k) == ident
        ]
        hidden = sum(w.hidden for w in windows)
        keys = windows[0].line_keys if len(windows) == 1 and panel.name == "logs" else None
        if keys is not None:
            rows = [replace(r, key=keys[i]) if i < len(keys) else r for i, r in enumerate(rows)]
        total = max(len(rows) + hidden, sum(w.total for w in windows))
        if needle:
            rows = [r for r in rows if matches(r.cells, needle)]
        cut = max(0, len(rows) - (2 * self.cap if panel.name == "logs" else self.cap))
        if cut:
            rows = rows[cut:] if panel.name in kinds.TAIL else rows[: len(rows) - cut]
        return ShownPanel(ident, replace(panel, rows=tuple(rows)), more=hidden + cut, total=total)


def _numbered(ident: str, seen: dict[str, int]) -> str:
    """The second panel with the same id gets "#2", and so on."""
    seen[ident] = seen.get(ident, 0) + 1
    return ident if seen[ident] == 1 else f"{ident}#{seen[ident]}"


def _inputs(model: LabState, name: str, context: tuple) -> tuple | None:
    """What renderer ``name`` reads of the model, to recognise it unchanged; None if its output
    depends on the clock (or it reads keys it does not declare), so it must be rendered again."""
    prefixes = kinds.READS.get(name)
    if prefixes is None:
        return None
    found: list[Any] = [context]
    for key, snapshot in model.snapshots.items():
        if not key.startswith(prefixes):
            continue
        if snapshot.health is Health.STALE or (snapshot.health is Health.OK and not snapshot.live):
            return None  # its freshness is an age
        if name == "executions" and any(e.running for e in snapshot.data or ()):
            return None  # a running execution's duration
        found.append((key, snapshot.data, snapshot.health, snapshot.error, snapshot.note))
    return tuple(found)


def _same(a: tuple, b: tuple) -> bool:
    """Equal inputs: same keys, states and notes, and the very same data objects."""
    return (
        len(a) == len(b)
        and a[0] == b[0]
        and all(x[0] == y[0] and x[1] is y[1] and x[2:] == y[2:] for x, y in zip(a[1:], b[1:]))
    )


def _line_keys(lines: tuple[Any, ...], kept: Any) -> tuple[str, ...]:
    """render.line_keys for the kept lines (ascending positions) without keying the whole feed:
    a line's key depends only on the lines after it."""
    kept = list(kept)
    if not kept:
        return ()
    keys = render.line_keys(lines[kept[0] :])
    return tuple(keys[position - kept[0]] for position in kept)


def _item_text(item: dict[str, Any], names: tuple[str, ...]) -> str:
    key = keys.item_row_key(item, names)
    rest = ", ".join(f"{k}={format_value(v)}" for k, v in sorted(item.items()) if k not in names)
    return " ".join(f"{key} {rest}".split()).lower()
