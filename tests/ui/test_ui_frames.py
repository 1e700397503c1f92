"""What the viewer draws per frame while a lab plays: highlights that fade on a shared beat, so
panels lit at different moments fade in one frame; a row that moves is not drawn again; a panel
that grows costs one layout, not two."""

from __future__ import annotations

import dataclasses
import time

import pytest

from awsview.ui.viewer import panel
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support import sample
from tests.support.probe import one_panel_table, settle, view

pytestmark = pytest.mark.usefixtures("utc")


@pytest.mark.parametrize("now", [1000.0, 1000.2, 1000.49, 1000.5])
@pytest.mark.parametrize("wait", [0.01, 0.3, 3.0, 2.75])
def test_a_fade_waits_for_the_next_beat(monkeypatch, now, wait):
    monkeypatch.setattr(panel, "BEAT_CLOCK", lambda: now)
    stretched = panel._on_beat(wait)
    assert wait <= stretched < wait + panel.FADE_BEAT_S
    beats = (now + stretched) / panel.FADE_BEAT_S
    assert abs(beats - round(beats)) < 1e-6  # due on the beat


async def test_highlights_lit_at_different_moments_fade_on_the_same_beat(monkeypatch):
    beat_clock = [0.0]
    monkeypatch.setattr(panel, "BEAT_CLOCK", lambda: beat_clock[0])
    profile, model = sample.sample("q05")
    options = ViewerOptions(clock=lambda: sample.NOW, highlight_seconds=0.2)
    app = AWSViewApp(model=model, profile=profile, options=options)
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        due: dict[str, float] = {}
        for ident in ("tables:labex-q05-orders", "queues"):
            shown = view(app, ident)
            set_timer = shown.set_timer

            def timer(delay, callback, ident=ident, set_timer=set_timer):
                due[ident] = beat_clock[0] + delay
                return set_timer(delay, callback)

            shown.set_timer = timer
        beat_clock[0] = 1000.05
        table = model.data("table:labex-q05-orders")
        changed = ({**table.items[0], "quantity": 7}, *table.items[1:])
        model.apply(
            [sample.ok("table:labex-q05-orders", dataclasses.replace(table, items=changed))]
        )
        await settle(pilot)
        beat_clock[0] = 1000.15  # lit a tenth of a second later
        queues = model.data("queues")
        more = tuple(dataclasses.replace(q, visible=q.visible + 3) for q in queues)
        model.apply([sample.ok("queues", more)])
        await settle(pilot)
        assert due == {"tables:labex-q05-orders": 1000.5, "queues": 1000.5}  # one beat: one frame
        deadline = time.monotonic() + 30
        while any(view(app, ident)._lit for ident in due) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert not any(view(app, ident)._lit for ident in due)  # and both faded


async def test_a_row_that_moves_keeps_its_drawn_line_with_its_new_index(monkeypatch):
    """A row added above the others moves them down: their lines are not drawn again, but what
    is on screen is exactly what DataTable draws, down to the row index the mouse reads."""
    from rich.text import Text
    from textual.widgets import DataTable

    async with one_panel_table((40, 8)) as (pilot, table):
        drawn: list[int] = []
        original = DataTable.render_line

        def counted(self, y):
            drawn.append(y)
            return original(self, y)

        monkeypatch.setattr(DataTable, "render_line", counted)
        table.add_row(Text("zero"), Text("2"), key="zero")
        table.sort(key=lambda cells: cells[0].plain != "zero")  # zero first: the others move
        await pilot.pause()
        # The new row, and alpha, which the cursor (on the first row) left; beta and gamma only
        # moved.
        assert sorted(set(drawn)) == [1, 2]
        lines = [table.render_line(y) for y in range(5)]
        assert [line.text.split() for line in lines] == [
            ["NAME", "QTY"],
            ["zero", "2"],
            ["alpha", "1"],
            ["beta", "1"],
            ["gamma", "1"],
        ]
        for y, line in enumerate(lines):
            fresh = original(table, y)
            assert [(s.text, s.style, s.style and s.style.meta) for s in line] == [
                (s.text, s.style, s.style and s.style.meta) for s in fresh
            ]
        assert [s.style.meta["row"] for s in lines[3] if s.style] == [2] * len(list(lines[3]))


async def test_the_board_scrolls_to_its_new_end_when_a_panel_grows():
    """A panel that gains rows makes the board taller without a second layout: the board's
    scrollable height and its scrollbar follow, and the last panel can be scrolled to."""
    profile, model = sample.sample("ev04")
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        board = app.board
        tall = board.virtual_size.height
        assert tall > board.size.height and board.vertical_scrollbar.window_virtual_size == tall
        runs = model.data("executions:labex-ev04-orders")
        more = tuple(
            dataclasses.replace(runs[0], name=f"more-{i}", arn=f"{runs[0].arn}-more-{i}")
            for i in range(4)
        )
        model.apply([sample.ok("executions:labex-ev04-orders", runs + more)])
        await settle(pilot)
        assert len(view(app, "executions").keys) == len(runs) + 4
        grown = board.virtual_size.height
        assert grown == tall + 4
        assert board.vertical_scrollbar.window_virtual_size == grown
        assert board.max_scroll_y == grown - board.scrollable_content_region.height
        board.scroll_end(animate=False)
        await settle(pilot)
        last = board.ordered[-1]
        assert board.scroll_y == board.max_scroll_y
        assert last.region.bottom <= board.region.bottom  # the last panel is on screen
