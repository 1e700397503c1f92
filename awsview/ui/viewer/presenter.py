"""Presenter mode: a read-only screen (`awsview serve`, `watch --presenter`, a served class view).

One mode object, not a flag read everywhere: what a presenter may do (`NAVIGATION`: look around,
open, go back — never quit, switch lab or theme, type a filter), and what it does by itself (keep
the newest execution and the newest write decision in sight). The viewer, the class view and its
learner screens ask `allows`; the viewer's `run_action` asks it too, before any action runs, so no
key, click or footer link gets past it.
"""

from __future__ import annotations

from typing import Any

from awsview.model import keys
from awsview.model.state import LabState

# The one list of what a presenter screen may still do: the viewer's actions and the class view's.
NAVIGATION = frozenset(
    {
        "cycle",
        "zoom",
        "back",
        "help",
        "close",
        "focus_next",
        "focus_previous",
        "select_cursor",
        "cursor_up",
        "cursor_down",
        "cursor_left",
        "cursor_right",
        "page_up",
        "page_down",
        "page_left",
        "page_right",
        "scroll_top",
        "scroll_bottom",
        "scroll_home",
        "scroll_end",
        "scroll_up",
        "scroll_down",
        "scroll_left",
        "scroll_right",
        "earlier_runs",
        "move",
        "page",
        "edge",
        "open",  # the class view's cards
    }
)


def allows(app: Any, action: str) -> bool:
    """May ``action`` run on ``app``: always, unless the app is a presenter screen."""
    return getattr(app, "presenter", None) is None or not app.presenter or action in NAVIGATION


def newest_execution_key(model: LabState | None) -> str | None:
    """The ARN of the execution started last, across every state machine."""
    newest = None
    for snapshot in model.with_prefix(keys.EXECUTIONS_PREFIX) if model is not None else ():
        for execution in snapshot.data or ():
            if execution.started is not None and (
                newest is None or execution.started > newest.started
            ):
                newest = execution
    return newest.arn if newest is not None else None


class Presenter:
    """The viewer in presenter mode; truthy, so ``if app.presenter`` reads as it says."""

    def __init__(self) -> None:
        self._followed: dict[str, str] = {}  # the newest row each panel was moved to

    @staticmethod
    def allows(action: str) -> bool:
        return action in NAVIGATION

    def follow_newest(self, app: Any) -> None:
        """Keep the newest execution and the newest decision in sight.

        Only when there is a newer one: in between, whoever watches may look elsewhere.
        """
        newest = {}
        for view in app.board.ordered:
            if view.shown is None or not view.shown.rows:
                continue
            name = view.shown.panel.name
            if name == "executions":
                newest[view] = newest_execution_key(app.model)
            elif name == "decisions":
                newest[view] = view.shown.rows[-1].key
        for view, key in newest.items():
            if key is None or self._followed.get(view.ident) == key or key not in view.keys:
                continue
            self._followed[view.ident] = key
            view.table.move_cursor(row=view.keys.index(key), scroll=True)
            if view.shown.panel.name == "executions":
                self._bring_history_into_view(app, key)
            elif app.board.zoomed is None:
                app.board.scroll_to_widget(view, animate=False)

    @staticmethod
    def _bring_history_into_view(app: Any, execution_arn: str) -> None:
        for view in app.board.ordered:
            rows = view.shown.rows if view.shown is not None else ()
            if (
                view.shown is not None
                and view.shown.panel.name == "history"
                and rows
                and rows[0].key.startswith(f"{execution_arn}#")
            ):
                if app.board.zoomed is None:
                    app.board.scroll_to_widget(view, animate=False)
                return
