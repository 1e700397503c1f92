"""One learner's lab panels inside the class view: the viewer's board fed by that learner's model.

The model is the one `ClassMonitor` keeps for the learner (`monitor.lab(name)`); the class app
calls `refresh_panels` when that learner's status changes and once a second for freshness.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static

from awsview.classroom.monitor import ClassMonitor, Learner, LearnerStatus
from awsview.core.changes import ItemChanges
from awsview.core.details import describe
from awsview.core.feed import PanelFeed
from awsview.core.rowref import Where
from awsview.labspec import LabSpec
from awsview.model.state import LabState
from awsview.ui.classview.cards import ago, reason, state
from awsview.ui.viewer import presenter, rowkeys
from awsview.ui.viewer.board import PanelBoard
from awsview.ui.viewer.cells import alive, plain
from awsview.ui.viewer.panel import HIGHLIGHT_S, PanelView
from awsview.ui.viewer.screens import DetailScreen


class LearnerScreen(Screen[None]):
    """One learner's lab panels, exactly as the viewer shows them; escape goes back."""

    AUTO_FOCUS = ""  # the first panel's rows, once shown (`_visit_first`), not its placeholder
    BINDINGS = [
        Binding("escape", "back", "Back to the class", id="back"),
        Binding("right_square_bracket", "cycle(1)", "Next panel", show=False, id="next-panel"),
        Binding(
            "left_square_bracket", "cycle(-1)", "Previous panel", show=False, id="previous-panel"
        ),
        *rowkeys.BINDINGS,
    ]

    def __init__(self, learner: Learner, monitor: ClassMonitor, clock: Callable[[], float]) -> None:
        super().__init__()
        self.learner = learner
        self.monitor = monitor
        self.clock = clock
        self.status: LearnerStatus | None = None
        self.feed = PanelFeed()
        self.changes = ItemChanges()
        self.board = PanelBoard(HIGHLIGHT_S, time.monotonic, id="board")
        self._visited = False

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Static(id="unread")
        yield self.board
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#unread").display = False
        self.board.set_layout(self.app.size.width)
        self.refresh_panels()

    def on_resize(self) -> None:
        if alive(self.board):
            self.board.set_layout(self.size.width)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return presenter.allows(self.app, action)

    def _row_keys(self) -> tuple[LabState | None, Where]:
        lab = self.monitor.lab(self.learner.name)
        learner = self.learner
        return (lab[1] if lab else None), Where(
            learner.region, learner.endpoint_url, learner.profile
        )

    def action_copy_row(self) -> None:
        model, where = self._row_keys()
        rowkeys.copy(self.app, self.board, model, where, command=False)

    def action_copy_command(self) -> None:
        model, where = self._row_keys()
        rowkeys.copy(self.app, self.board, model, where, command=True)

    def action_open_row(self) -> None:
        model, where = self._row_keys()
        rowkeys.open_row(self.app, self.board, model, where)

    def refresh_panels(self, status: LearnerStatus | None = None) -> None:
        if status is not None:
            self.status = status
        if not alive(self.board):
            return
        lab = self.monitor.lab(self.learner.name)
        self._show_status(lab[0] if lab else None)
        look = state(self.status)
        unread = look == "error" and (lab is None or not lab[1].snapshots)
        self._show_unread(unread)
        if lab is None or unread:
            return  # nothing was ever read: say so, rather than panels "waiting for the first poll"
        profile, model = lab
        self.changes.update(model)
        shown = self.feed.panels(model, profile, self.clock())
        with self.app.batch_update():
            self.board.sync(shown, self.changes.for_panel, waiting=not model.snapshots)
        if not self._visited and self.board.ordered:
            self._visited = True
            self.call_after_refresh(self._visit_first)

    def _visit_first(self, tries: int = 10) -> None:
        """Arrows move in the first panel from the start, once it is composed and shows its rows."""
        views = self.board.ordered
        if not views or self.focused is not None or not alive(views[0]):
            return
        if views[0].shown is None and tries:
            self.call_after_refresh(self._visit_first, tries - 1)
            return
        with suppress(NoMatches):
            self.board.visit(views[0])

    def _show_unread(self, unread: bool) -> None:
        message = self.query_one("#unread", Static)
        message.display = unread
        self.board.display = not unread
        if unread:
            message.update(
                plain(
                    f"Nothing read from {self.learner.endpoint_url or 'AWS'} yet: "
                    f"{reason(self.status.error or '')}. Asked again every few seconds."
                )
            )

    def _show_status(self, profile: LabSpec | None) -> None:
        status = self.status
        lab = (
            f"{profile.name}: {profile.title}"
            if profile
            else (status.lab if status else None) or "lab ?"
        )
        parts = ["AWS View", self.learner.name, lab, self.learner.endpoint_url or "AWS"]
        look = state(status)
        if look == "waiting":
            parts.append("connecting…")
        elif look == "error":
            parts.append(f"error — {reason(status.error or '')}")
        elif look == "stale":
            parts.append(
                f"stale {ago(self.clock() - (status.updated_at or 0))} — "
                f"{reason(status.error or '')}"
            )
        elif status is not None and status.updated_at is not None:
            parts.append(f"updated {ago(self.clock() - status.updated_at)} ago")
        line = self.query_one("#status", Static)
        line.update(plain(" · ".join(p for p in parts if p)))
        line.set_class(look in ("error", "stale"), "-error")

    def action_back(self) -> None:
        self.dismiss(None)

    def action_cycle(self, step: int) -> None:
        self.board.cycle(step)

    def on_panel_view_row_chosen(self, event: PanelView.RowChosen) -> None:
        lab = self.monitor.lab(self.learner.name)
        if lab is not None and event.view.shown is not None:
            self.app.push_screen(
                DetailScreen(describe(lab[1], event.view.shown.panel, event.view.ident, event.key))
            )
