"""`awsview screenshot`: the viewer on an endpoint, headless, saved once every panel has data."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from awsview.aws.session import Target
from awsview.capture.screenshot import save
from awsview.model import keys

SETTLE_S = 0.5  # after every poller answered once, let the highlights and layout settle


async def take(
    target: Target,
    lab: str | None,
    prefix: str,
    size: tuple[int, int],
    theme: str,
    output: Path,
    timeout: float = 30.0,
) -> Path:
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions

    app = AWSViewApp(
        target=target,
        lab=lab,
        prefix=prefix,
        options=ViewerOptions(theme=theme, highlight_seconds=0.05),
    )
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + timeout
        while not _complete(app):
            if time.monotonic() > deadline:
                break  # a screenshot of what there is, freshness lines saying what is missing
            await pilot.pause(0.1)
        await asyncio.sleep(SETTLE_S)
        await pilot.pause()
        return save(app, output)


def _complete(app) -> bool:
    """Every resource kind answered once, and the derived panels were computed after that."""
    newest = answered(app.model, app.profile)
    return newest is not None and derived_after(app.model, newest)


def answered(model, profile, since: float = 0.0) -> float | None:
    """When the last of the resource kinds answered, once each has answered after ``since``."""
    if model is None or profile is None:
        return None
    needed = ["state_machines", "queues", "functions", "roles", "journal"]
    needed += [keys.table(name) for name in profile.tables()] + [
        keys.logs(g) for g in profile.log_groups
    ]
    needed += [keys.executions(m.name) for m in model.data(keys.STATE_MACHINES, ())]
    snapshots = [model.get(key) for key in needed]
    if any(s is None or s.attempted_at <= since for s in snapshots):
        return None
    return max(s.attempted_at for s in snapshots)


def derived_after(model, moment: float) -> bool:
    """The timeline and the checkpoints were computed after ``moment``."""
    derived = [model.get(keys.TIMELINE), model.get(keys.CHECKPOINTS)]
    return all(d is not None and d.attempted_at > moment for d in derived)
