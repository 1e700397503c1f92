"""`awsview docs`: a lab played on an emulator and one screenshot of the viewer after each step.

The pollers follow the lab live, as the viewer would. After a step, once every resource kind
answered since the step ended and nothing changed for a while, the model is copied. When the
lab is over, each copy is shown in a fresh headless viewer and saved. A shot therefore depends
only on what existed after its step, not on which intermediate states the polls happened to
catch (those would leave highlights, marks and column widths behind), nor on how busy the
process was while drawing; its volatile values go through one `Freezer` for the whole lab.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from awsview import profiles
from awsview.aws.session import Target
from awsview.core.freeze import Freezer
from awsview.labs.model import Lab, LabError
from awsview.labs.player import LabPlayer
from awsview.model.state import LabModel
from awsview.capture.screenshot import save
from awsview.polling.live import LivePolling
from awsview.capture.shot import answered, derived_after

SETUP_TITLE = "What the lab provides"
STABLE_S = 0.5  # nothing changed for this long (and over two full poll rounds): the step is done
SETTLE_TIMEOUT_S = 30.0
POLL_SPEED = 0.5  # poll twice as often as the viewer: the emulator is local and answers fast
CHECK_S = 0.05
MAX_FRAMES = 50
SAME_FRAMES = 2  # after the first: three equal frames in a row


class DocsError(Exception):
    """Why the lab's pages could not be made, in one line for the person running it."""


@dataclass(frozen=True)
class Page:
    """One step's screenshot: 0 is what the lab provides, then the learner's steps."""

    number: int
    key: str
    title: str
    path: Path


class _Follower:
    """What LivePolling hands over: the lab's profile and model, and the status line."""

    def __init__(self) -> None:
        self.profile: profiles.LabProfile | None = None
        self.model: LabModel | None = None
        self.status = ("ok", "")

    def attach(self, profile: profiles.LabProfile, model: LabModel) -> None:
        self.profile, self.model = profile, model

    def set_status(self, level: str, text: str) -> None:
        self.status = (level, text)


@dataclass(frozen=True)
class Capture:
    """What the viewer's pollers saw once a step had settled."""

    number: int
    key: str
    title: str
    model: LabModel
    status: tuple[str, str]


async def capture(lab: Lab, endpoint_url: str, freezer: Freezer,
                  warn: Callable[[str], None]) -> tuple[profiles.LabProfile, list[Capture]]:
    """Play ``lab`` on ``endpoint_url`` with the viewer's pollers following it; after each step
    (the provided resources first) keep a copy of the settled model."""
    follower = _Follower()
    # Polled, not pushed: a step is settled once every kind answered after it, which a kind the
    # change feed says nothing about would never do.
    live = LivePolling(Target(endpoint_url=endpoint_url, region="us-east-1"), lab.name, "",
                       follower.attach, follower.set_status, speed=POLL_SPEED, feed=False)
    polling = asyncio.create_task(live.run(), name="docs-polling")
    player = LabPlayer(lab, endpoint_url=endpoint_url, log=lambda line: None)
    acts: list[tuple[str, str, Callable[[], Any]]] = [("setup", SETUP_TITLE, player.setup)]
    acts += [(step.key, step.title, lambda key=step.key: player.play(only=key)) for step in lab.steps]
    captures = []
    try:
        for number, (key, title, act) in enumerate(acts):
            if number:
                await _next_second()
            freezer.begin_phase()
            try:
                await asyncio.to_thread(act)
            except LabError as exc:
                raise DocsError(str(exc)) from None
            model = await _settled(follower, polling, time.time(), lambda: warn(
                f"{lab.name} {key}: the panels still changed after {SETTLE_TIMEOUT_S:.0f} s; "
                "this shot may differ between runs"))
            captures.append(Capture(number, key, title, model, follower.status))
    finally:
        polling.cancel()
        await asyncio.gather(polling, return_exceptions=True)
    if follower.profile is None:
        raise DocsError("the lab's panels never loaded")
    return follower.profile, captures


async def render(lab: Lab, profile: profiles.LabProfile, captures: list[Capture], output: Path,
                 size: tuple[int, int], theme: str, fmt: str, freezer: Freezer) -> list[Page]:
    """Each capture in a fresh headless viewer, saved as ``NN-<step>.<fmt>`` in ``output``.

    Run after the lab, with nothing else busy: the viewer is idle once it has drawn everything.
    """
    pages = []
    for shot in captures:
        path = output / f"{shot.number:02d}-{shot.key}.{fmt}"
        await _shoot(shot.model, profile, shot.status, freezer, size, theme, path,
                     unique_id=f"awsview-{lab.name}-{shot.number:02d}")
        pages.append(Page(shot.number, shot.key, shot.title, path))
    return pages


async def _next_second() -> None:
    """Wait for the wall clock's next whole second. Clock times show whole seconds, so a step
    must not start in the second the previous one's last change happened in: its times would be
    taken for the new step's."""
    now = time.time()
    await asyncio.sleep(math.ceil(now) - now + 0.01)


def _state(model: LabModel) -> dict[str, tuple[Any, Any]]:
    return {key: (s.health, s.data) for key, s in model.snapshots.items()}


async def _settled(follower: _Follower, polling: asyncio.Task, since: float,
                   on_timeout: Callable[[], None]) -> LabModel:
    """A copy of the model once nothing changed for STABLE_S over at least two full poll rounds
    after ``since`` (a queue draining, a mapping being deleted: the pollers see it move)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    last: dict[str, tuple[Any, Any]] | None = None
    unchanged_since = 0.0
    while await _full_round(follower, polling, since, deadline):
        model, now = follower.model, time.monotonic()
        since = time.time()
        state = _state(model)
        if state != last:
            last, unchanged_since = state, now
        elif now - unchanged_since >= STABLE_S:
            return LabModel(snapshots=dict(model.snapshots))
    on_timeout()
    return LabModel(snapshots=dict(follower.model.snapshots)) if follower.model else LabModel()


async def _full_round(follower: _Follower, polling: asyncio.Task, since: float, deadline: float) -> bool:
    """Wait until every resource kind answered after ``since`` and the timeline and checkpoints
    were computed after that; False at the deadline."""
    answered_at = None
    while time.monotonic() < deadline:
        if polling.done():
            error = polling.exception() if not polling.cancelled() else None
            raise DocsError(f"polling stopped: {type(error).__name__}: {error}")
        if answered_at is None and answered(follower.model, follower.profile, since) is not None:
            answered_at = time.time()
        if answered_at is not None and derived_after(follower.model, answered_at):
            return True
        await asyncio.sleep(CHECK_S)
    return False


async def _shoot(model: LabModel, profile: profiles.LabProfile, status: tuple[str, str],
                 freezer: Freezer, size: tuple[int, int], theme: str, path: Path,
                 unique_id: str) -> Path:
    """``model`` in a fresh headless viewer, saved once the screen stops changing."""
    from awsview.ui.viewer.app import AWSViewApp

    now = max((s.attempted_at for s in model.snapshots.values()), default=0.0)
    app = AWSViewApp(model=model, profile=profile, theme=theme, freezer=freezer, clock=lambda: now,
                     highlight_seconds=0.01, tick_seconds=3600.0)
    app.status = status
    async with app.run_test(size=size) as pilot:
        previous, same = None, 0
        for _ in range(MAX_FRAMES):
            # Every message handled and the process idle; on a busy machine "idle" can come
            # early, so the screen must also stay the same over SAME_FRAMES such rounds.
            await pilot.pause()
            frame = app.export_screenshot()
            same = same + 1 if frame == previous else 0
            if same >= SAME_FRAMES:
                break
            previous = frame
        return save(app, path, unique_id=unique_id)
