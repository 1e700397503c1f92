"""Presenter mode (`awsview serve`, `watch --presenter`): a read-only kiosk that only navigates
and keeps the newest execution and the newest write decision in sight."""

from __future__ import annotations

import dataclasses

import pytest
from textual.binding import Binding

from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.panel import PanelTable
from awsview.ui.viewer.presenter import NAVIGATION, Presenter
from awsview.ui.viewer.screens import DetailScreen, HelpScreen
from tests.support import sample
from tests.support.probe import settle, view

pytestmark = pytest.mark.timeout(120)


def presenter(name: str = "ev04", **options) -> AWSViewApp:
    profile, model = sample.sample(name)
    return AWSViewApp(
        model=model,
        profile=profile,
        presenter=Presenter(),
        options=ViewerOptions(clock=lambda: sample.NOW, **options),
    )


def _keys_and_actions() -> list[tuple[str, str]]:
    """Every binding the viewer has anywhere: app, screens, panels, Textual's own."""
    found = []
    sources = [AWSViewApp, PanelTable, DetailScreen, HelpScreen]
    for source in sources:
        for cls in source.__mro__:
            for binding in getattr(cls, "BINDINGS", []) or []:
                if isinstance(binding, Binding):
                    for key in binding.key.split(","):
                        found.append((key.strip(), binding.action))
    found.append((AWSViewApp.COMMAND_PALETTE_BINDING, "command_palette"))
    return sorted(set(found))


def _refused() -> list[tuple[str, str]]:
    return [
        (k, a)
        for k, a in _keys_and_actions()
        if a.rsplit(".", 1)[-1].split("(")[0] not in NAVIGATION
    ]


def test_the_list_of_refused_bindings_is_not_empty():
    refused = {a.rsplit(".", 1)[-1] for _, a in _refused()}
    assert {"quit", "filter", "next_theme", "command_palette", "help_quit"} <= refused


async def test_every_binding_that_is_not_navigation_is_refused():
    app = presenter()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = (app.theme, app.needle, app.board.zoomed, len(app.screen_stack))
        for key, action in _refused():
            await pilot.press(key)
            await pilot.pause()
            assert app.is_running, f"{key} ({action}) ended the presenter screen"
            assert (app.theme, app.needle, app.board.zoomed, len(app.screen_stack)) == before, (
                key,
                action,
            )
            assert not app.query_one("#filter").display
        # ctrl+c in Textual is "help_quit": no notification about quitting either.
        assert not app._notifications
        # The footer offers none of them.
        shown = {
            b.binding.action
            for b in app.active_bindings.values()
            if app.check_action(b.binding.action, ())
        }
        assert not {"quit", "filter", "next_theme", "command_palette"} & shown


async def test_navigation_still_works():
    app = presenter()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket")
        first = app.board.current
        assert first is not None
        await pilot.press("z")
        assert app.board.zoomed is first
        await pilot.press("escape")
        assert app.board.zoomed is None
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        app.board.visit(view(app, "executions"))
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_the_status_line_says_presenter():
    app = presenter()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "presenter (read-only)" in str(app.query_one("#status").render())


async def test_follows_the_newest_execution_and_the_newest_decision():
    app = presenter(highlight_seconds=0.05)
    model = app.model
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        app.refresh_panels()  # the first refresh after the panels are composed follows
        await settle(pilot)
        executions = view(app, "executions")
        runs = model.data("executions:labex-ev04-orders")
        newest_start = max(runs, key=lambda e: e.started)
        assert executions.cursor_key() == newest_start.arn  # the newest, not the first listed
        # The watcher looks elsewhere: the screen does not pull the cursor back on every refresh.
        executions.table.move_cursor(row=executions.keys.index(runs[-1].arn))
        app.refresh_panels()
        await settle(pilot)
        assert executions.cursor_key() == runs[-1].arn
        # A new execution starts: the cursor goes to it.
        again = dataclasses.replace(
            newest_start,
            name="again-order",
            arn=newest_start.arn.rsplit(":", 1)[0] + ":again-order",
            status="RUNNING",
            started=sample.at(20),
            stopped=None,
        )
        model.apply([sample.ok("executions:labex-ev04-orders", (again,) + runs)])
        await settle(pilot)
        assert executions.cursor_key() == again.arn
        decisions = view(app, "decisions")
        if decisions.keys:
            assert decisions.cursor_key() == decisions.keys[-1]


async def test_follows_the_newest_decision_q05():
    app = presenter("q05")
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        app.refresh_panels()
        await settle(pilot)
        decisions = view(app, "decisions")
        assert decisions.keys, "the q05 sample has write decisions"
        assert decisions.cursor_key() == decisions.keys[-1]
