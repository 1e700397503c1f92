"""Snapshot tests: the hand-built ev04 and q05 models (fixed names, times and ids, UTC) drawn
compact and wide, in two themes, plus a detail screen. Review the SVGs under
tests/ui/__snapshots__/ before accepting changes with ``pytest --snapshot-update``."""

from __future__ import annotations

import pytest

from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support import sample
from tests.support.probe import settle

pytestmark = pytest.mark.usefixtures("utc")  # times on screen read the same everywhere


def frozen_app(lab: str, theme: str) -> AWSViewApp:
    profile, model = sample.sample(lab)
    return AWSViewApp(
        model=model, profile=profile, options=ViewerOptions(theme=theme, clock=lambda: sample.NOW)
    )


@pytest.mark.parametrize(
    "lab,theme,size",
    [
        ("ev04", "dark", (80, 24)),
        ("ev04", "dark", (160, 50)),
        ("q05", "docs", (80, 24)),
        ("q05", "docs", (160, 50)),
        ("q05", "dark", (60, 20)),
    ],
)
def test_panels(snap_compare, lab, theme, size):
    assert snap_compare(frozen_app(lab, theme), terminal_size=size, run_before=settle)


def test_detail_of_a_write_decision(snap_compare):
    async def open_decision(pilot) -> None:
        await settle(pilot)
        decisions = pilot.app.board.views["decisions"]
        decisions.table.focus()
        decisions.table.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(
        frozen_app("q05", "docs"), terminal_size=(100, 40), run_before=open_decision
    )
