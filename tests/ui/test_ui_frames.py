"""What the viewer draws per frame while a lab plays: highlights that fade on a shared beat, so
panels lit at different moments fade in one frame."""

from __future__ import annotations

import dataclasses
import time

import pytest

from awsview.ui.viewer import panel
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support import sample
from tests.support.probe import settle, view

pytestmark = pytest.mark.usefixtures("utc")


@pytest.mark.parametrize("now", [1000.0, 1000.2, 1000.49, 1000.5])
@pytest.mark.parametrize("wait", [0.01, 0.3, 3.0, 2.75])
def test_a_fade_waits_for_the_next_beat(monkeypatch, now, wait):
    monkeypatch.setattr(panel.time, "monotonic", lambda: now)
    stretched = panel._on_beat(wait)
    assert wait <= stretched < wait + panel.FADE_BEAT_S
    beats = (now + stretched) / panel.FADE_BEAT_S
    assert abs(beats - round(beats)) < 1e-6  # due on the beat


async def test_highlights_lit_at_different_moments_fade_on_the_same_beat():
    profile, model = sample.sample("q05")
    options = ViewerOptions(clock=lambda: sample.NOW, highlight_seconds=0.2)
    app = AWSViewApp(model=model, profile=profile, options=options)
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        orders = view(app, "tables:labex-q05-orders")
        faded: list[tuple[str, float]] = []
        for ident in ("tables:labex-q05-orders", "queues"):
            shown = view(app, ident)
            original = shown._fade

            def fade(shown=shown, original=original) -> None:
                before = bool(shown._lit)
                original()
                if before and not shown._lit:
                    faded.append((shown.ident, time.monotonic()))

            shown._fade = fade
        table = model.data("table:labex-q05-orders")
        changed = ({**table.items[0], "quantity": 7}, *table.items[1:])
        model.apply(
            [sample.ok("table:labex-q05-orders", dataclasses.replace(table, items=changed))]
        )
        await settle(pilot)
        assert orders._lit  # lit now
        await pilot.pause(0.1)
        queues = model.data("queues")
        more = tuple(dataclasses.replace(q, visible=q.visible + 3) for q in queues)
        model.apply([sample.ok("queues", more)])
        await settle(pilot)
        deadline = time.monotonic() + 30
        while len(faded) < 2 and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert {ident for ident, _ in faded} == {"tables:labex-q05-orders", "queues"}
        beats = {round(at / panel.FADE_BEAT_S - 0.5) for _, at in faded}
        assert len(beats) == 1  # one beat, so one frame
