"""`awsview screenshot`: the viewer on an endpoint, headless, saved once every panel has data."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from awsview.aws.session import Target
from awsview.capture.screenshot import save
from awsview.model import keys
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.pollers.checkpoints import CheckpointPoller
from awsview.polling.pollers.timeline import TimelinePoller

SETTLE_S = 0.5  # after every poller answered once, let the highlights and layout settle


async def take(
    target: Target,
    lab: str | None,
    prefix: str,
    size: tuple[int, int],
    theme: str,
    output: Path,
    timeout: float = 30.0,
) -> tuple[Path, list[str]]:
    """The file written, and what had still not answered (or been derived) when ``timeout``
    ran out: the screenshot then shows what there was, freshness lines saying what is missing."""
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions

    app = AWSViewApp(
        target=target,
        lab=lab,
        prefix=prefix,
        options=ViewerOptions(theme=theme, highlight_seconds=0.05),
    )
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + timeout
        moves: Moves | None = None
        while True:
            if app.model is not None and (moves is None or moves.model is not app.model):
                moves = Moves(app.model)
            missing = waiting(app.model, app.profile, moves)
            if not missing or time.monotonic() > deadline:
                break
            await pilot.pause(0.1)
        await asyncio.sleep(SETTLE_S)
        await pilot.pause()
        return save(app, output), missing


def waiting(model: LabState | None, profile: Any, moves: Moves | None) -> list[str]:
    """What a complete screen still waits for: the resource kinds that have not answered once,
    then the derived kinds not computed since their inputs last moved."""
    if model is None or profile is None or moves is None:
        return ["the lab"]
    unanswered = [key for key in needed(model, profile) if model.get(key) is None]
    return unanswered or moves.stale_derived()


# The kinds computed from the others' snapshots, and the keys they are computed from (their
# pollers' ``after``): the scheduler wakes them only when one of those moves.
DERIVED = {keys.TIMELINE: TimelinePoller.after, keys.CHECKPOINTS: CheckpointPoller.after}


class Moves:
    """When each key of ``model`` last moved (new data or a new health: what wakes a derived
    kind; a re-read of the same data, or one that only turns live, wakes none), from the model's
    listener. A derived kind is current once it was computed after every move of its inputs: a
    resource read last whose read changes nothing it is derived from (the roles, for the
    timeline) does not make it wait for a computation that never comes."""

    def __init__(self, model: LabState):
        self.model = model
        self._seen = {k: (s.data, s.health) for k, s in model.snapshots.items()}
        self._moved_at = {k: s.attempted_at for k, s in model.snapshots.items()}
        model.listeners.append(self._on_change)

    def _on_change(self, changed: list[Snapshot[Any]]) -> None:
        now = time.time()
        for snapshot in changed:
            seen = self._seen.get(snapshot.key)
            if seen is None or seen[0] is not snapshot.data or seen[1] is not snapshot.health:
                self._seen[snapshot.key] = (snapshot.data, snapshot.health)
                self._moved_at[snapshot.key] = now

    def stale_derived(self) -> list[str]:
        """The derived kinds not computed since one of their inputs last moved."""
        stale = []
        for key, inputs in DERIVED.items():
            derived = self.model.get(key)
            newest = max(
                (at for k, at in self._moved_at.items() if k != key and k.startswith(inputs)),
                default=0.0,
            )
            if derived is None or derived.attempted_at < newest:
                stale.append(key)
        return stale


def needed(model: LabState, profile: Any) -> list[str]:
    """The resource kinds a full screen of the lab shows."""
    kinds = ["state_machines", "queues", "functions", "roles", "journal"]
    kinds += [keys.table(name) for name in profile.tables()]
    kinds += [keys.logs(group) for group in profile.log_groups]
    return kinds + [keys.executions(m.name) for m in model.data(keys.STATE_MACHINES, ())]


def answered(model, profile, since: float = 0.0) -> float | None:
    """When the last of the resource kinds answered, once each has answered after ``since``."""
    if model is None or profile is None:
        return None
    snapshots = [model.get(key) for key in needed(model, profile)]
    if any(s is None or s.attempted_at <= since for s in snapshots):
        return None
    return max(s.attempted_at for s in snapshots)


def derived_after(model, moment: float) -> bool:
    """The timeline and the checkpoints were computed after ``moment``."""
    derived = [model.get(keys.TIMELINE), model.get(keys.CHECKPOINTS)]
    return all(d is not None and d.attempted_at > moment for d in derived)
