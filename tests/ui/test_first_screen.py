"""The board mounts the panels of the first screen first and the others right after the first
frame: none of those kept back is on the first screen, every panel shows its data once the
screen settles, in the profile's order, and a panel mounted late is visited like any other."""

from __future__ import annotations

import pytest

from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support import sample
from tests.support.probe import body, full_rows, settle, view

pytestmark = pytest.mark.usefixtures("utc")  # times on screen read the same everywhere


def _app(which: str) -> AWSViewApp:
    profile, model = sample.big() if which == "big" else sample.sample(which)
    return AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))


@pytest.mark.parametrize(
    "which,size", [("ev04", (160, 50)), ("ev04", (80, 24)), ("big", (160, 50))]
)
async def test_panels_kept_back_are_below_the_first_screen_and_all_show_their_data(which, size):
    app = _app(which)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        board = app.board
        assert board.kept_back, "every panel was mounted before the first frame"
        assert len(board.kept_back) < len(board.views)
        assert board.held == 0
        assert [v.ident for v in board.ordered] == list(board.views)  # the profile's order
        bottom = board.region.bottom
        for ident in board.kept_back:
            assert view(app, ident).region.y >= bottom, f"{ident} was kept back but is on screen"
        shown = {s.id: s for s in app.feed.panels(app.model, app.profile, sample.NOW)}
        for ident, item in shown.items():
            panel = view(app, ident)
            assert panel.shown is not None and panel.is_mounted, ident
            if item.panel.rows:
                got = full_rows(app, ident)
                assert got and set(got) <= {r.cells for r in item.panel.rows}, ident
            else:
                assert body(app, ident), ident


async def test_a_panel_mounted_after_the_first_frame_is_visited_like_any_other():
    app = _app("ev04")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        last = app.board.kept_back[-1]
        for _ in range(len(app.board.views)):
            await pilot.press("right_square_bracket")
            await settle(pilot)
            if app.board.focused_view() is view(app, last):
                break
        panel = view(app, last)
        assert app.board.focused_view() is panel
        await settle(pilot)
        assert panel.region.y < app.board.region.bottom  # scrolled into view
        assert panel.region.y >= app.board.region.y


# Which frame is the first full paint depends on how the layouts interleave: seen to differ on a
# machine busy with parallel workers, so it runs alone.
@pytest.mark.serial
@pytest.mark.parametrize("which,size", [("ev04", (160, 50)), ("q05", (80, 24)), ("q05", (200, 60))])
async def test_the_first_full_paint_shows_every_panel_planned_for_its_width(which, size):
    """The first frame that shows every panel's data is the screen that stays: a panel drawn
    before its first layout planned its rows for the width the board gives it, not for none
    (every column shown and cut at the edge, planned again a frame later)."""
    from tests.benchmarks.bench_ui import first_screen_shown

    app = _app(which)
    unfitted: list[list[str]] = []
    original = app._display

    def display(screen, renderable):  # type: ignore[no-untyped-def]
        drawn = original(screen, renderable)
        if not unfitted and renderable is not None and first_screen_shown(app):
            laid_out = [v for v in app.board.views.values() if v.parent is not None]
            unfitted.append([v.ident for v in laid_out if not v.fitted])
        return drawn

    app._display = display  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
    assert unfitted == [[]]


def test_the_viewer_imports_no_aws_session_before_it_polls(starts_processes):
    """The first frame needs no AWS session: importing the viewer (and a polling module, whose
    connections are only annotations) leaves out the session, botocore's configuration and
    urllib's HTTP stack, which only a target to poll, a profile or region switch, or the
    palette's lists of them import."""
    import json
    import subprocess
    import sys

    code = (
        "import sys, json, awsview.ui.viewer.app, awsview.polling.pollers.journal\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in "
        "{'awsview.aws.session', 'awsview.aws.endpoints', 'urllib.request', 'http.client'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
