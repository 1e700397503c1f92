"""`awsview docs`: a lab played on an emulator and one screenshot of the viewer after each step.

The viewer's pollers follow the lab. After a step, what the emulator's change feed names is
read, round after round, and once a round has moved nothing for a while the model is copied (on
an endpoint without a feed: once every resource kind answered since the step ended and nothing
changed for a while). When the lab is over, each copy is shown in a fresh headless viewer and
saved. A shot therefore depends only on what existed after its step, not on which intermediate
states the polls happened to catch (those would leave highlights, marks and column widths
behind), nor on how busy the process was while drawing; its volatile values go through one
`Deterministic` for the whole lab.

Beside the step pages: the graph of each state machine execution the lab ran (Enter on its row
in a viewer showing the last step it was seen in, scrolled to the graph), and the replay screen
of a recording made while the lab played (the same `Recorder` as `watch --record`, following the
same model), at the moment the step before the last one settled. A live recording's frames and
times are the one thing that differs between runs: the replay page's time line shows them.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from awsview import labspec
from awsview.aws.session import Target
from awsview.capture.screenshot import save, still
from awsview.capture.shot import answered, derived_after
from awsview.core.determinism import Deterministic
from awsview.model.errors import FailedError
from awsview.model.state import LabState
from awsview.polling.live import LivePolling
from awsview.polling.scheduler import Scheduler

SETUP_TITLE = "What the lab provides"
STABLE_S = 0.5  # nothing changed for this long (and over two full poll rounds): the step is done
SETTLE_TIMEOUT_S = 30.0
POLL_SPEED = 0.5  # poll twice as often as the viewer: the emulator is local and answers fast
CHECK_S = 0.05


class DocsError(FailedError):
    """Why the lab's pages could not be made, in one line for the person running it."""


@dataclass(frozen=True)
class Page:
    """One step's screenshot: 0 is what the lab provides, then the learner's steps."""

    number: int
    key: str
    title: str
    path: Path


@dataclass(frozen=True)
class Drawing:
    """Where and how every page of a lab is drawn."""

    output: Path
    size: tuple[int, int]
    theme: str
    fmt: str
    deterministic: Deterministic


class _Follower:
    """What LivePolling hands over: the lab's profile and model, and the status line; passed on
    to a recorder as the viewer passes them when it records."""

    def __init__(self, recorder: Any = None) -> None:
        self.profile: labspec.LabSpec | None = None
        self.model: LabState | None = None
        self.status = ("ok", "")
        self.recorder = recorder  # awsview.recorder.Recorder, or None
        self.live: LivePolling | None = None

    def attach(self, profile: labspec.LabSpec, model: LabState) -> None:
        self.profile, self.model = profile, model
        if self.recorder is not None:
            self.recorder.attach(profile, model)

    def set_status(self, level: str, text: str) -> None:
        self.status = (level, text)
        if self.recorder is not None:
            if self.live is not None:
                self.recorder.meta(account=self.live.account, region=self.live.region)
            self.recorder.status(level, text)


@dataclass(frozen=True)
class Capture:
    """What the viewer's pollers saw once a step had settled."""

    number: int
    key: str
    title: str
    model: LabState
    status: tuple[str, str]
    at: float = 0.0  # when it had settled (wall clock): where the recording shows the same


# (step key, title, what plays it: raises DocsError when the step's commands fail)
Act = tuple[str, str, Callable[[], None]]


async def capture(
    lab: str,
    acts: list[Act],
    endpoint_url: str,
    deterministic: Deterministic,
    warn: Callable[[str], None],
    record: Path | None = None,
    region: str = "us-east-1",
) -> tuple[labspec.LabSpec, list[Capture]]:
    """Play ``acts`` (what the lab provides, then each step) on ``endpoint_url`` with the
    viewer's pollers following lab ``lab`` (a name or a folder's path); after each act keep a
    copy of the settled model. With ``record``, everything the pollers saw is recorded there
    too, as `watch --record` would."""
    from awsview.recording.follow import Recorder, open_recording, target_info

    target = Target(endpoint_url=endpoint_url, region=region)
    writer = open_recording(record, "docs") if record is not None else None
    recorder = Recorder(writer.channel("", target_info(target), time.time())) if writer else None
    follower = _Follower(recorder)
    if acts and acts[0][0] == "setup":
        # What the lab provides is there before the viewer opens, as on the learner's VM: a
        # viewer polling while setup.sh runs could take a reference table's first look at it
        # half filled (and the shot would differ from run to run).
        key, title, provide = acts[0]
        await asyncio.to_thread(provide)
        acts = [(key, title, lambda: None), *acts[1:]]
    # Driven: after each act, what the emulator's change feed names is read, round after round,
    # until a round moves nothing (Scheduler.catch_up, as the class view reads a learner). An
    # endpoint without a feed (stock moto, LocalStack) is polled instead, unpaced: a quiet
    # resource read only every 24 s (a screen's pacing) would hold every step's settling that
    # long.
    live = follower.live = LivePolling(
        target,
        lab,
        "",
        follower.attach,
        follower.set_status,
        speed=POLL_SPEED,
        paced=False,
        driven=True,
    )
    polling = asyncio.create_task(live.run(), name="docs-polling")
    captures = []
    try:
        pushed = True
        for number, (key, title, act) in enumerate(acts):
            if number:
                await _next_second()
            deterministic.begin_phase()
            await asyncio.to_thread(act)
            since = time.time()

            def timed_out(key: str = key) -> None:
                warn(
                    f"{key}: the panels still changed after {SETTLE_TIMEOUT_S:.0f} s; "
                    "this shot may differ between runs"
                )

            if pushed:
                scheduler = await _scheduler(live, polling)
                try:
                    model = await _settled(follower, _fed_rounds(scheduler), timed_out)
                except _NoFeed:  # no change feed (or it stopped answering): poll from here on
                    pushed = False
                    scheduler.start()
            if not pushed:
                model = await _settled(
                    follower, _polled_rounds(follower, polling, since), timed_out
                )
            captures.append(Capture(number, key, title, model, follower.status, time.time()))
    finally:
        polling.cancel()
        await asyncio.gather(polling, return_exceptions=True)
        if recorder is not None:
            recorder.close()
        if writer is not None:
            writer.close()
    if follower.profile is None:
        raise DocsError("the lab's panels never loaded")
    return follower.profile, captures


async def render(
    name: str, profile: labspec.LabSpec, captures: list[Capture], drawing: Drawing
) -> tuple[list[Page], list[Page]]:
    """Each capture in a fresh headless viewer, saved as ``awsview-stepN.<fmt>`` in ``output``
    (step 0: what the lab provides); then one ``awsview-graph-<execution>.<fmt>`` per
    execution: Enter on its row, the detail scrolled to the graph of this execution. Returns
    the step pages and the graph pages (a graph page's number: the step it was shot after).

    Run after the lab, with nothing else busy: the viewer is idle once it has drawn everything.
    """
    output, fmt = drawing.output, drawing.fmt
    # (capture shown, its page, what makes its SVG ids unique, the execution to open first)
    steps: list[tuple[Capture, Page, str, str | None]] = [
        (
            shot,
            Page(shot.number, shot.key, shot.title, output / f"awsview-step{shot.number}.{fmt}"),
            f"{shot.number:02d}",
            None,
        )
        for shot in captures
    ]
    graphs: list[tuple[Capture, Page, str, str | None]] = []
    for number, (shot, execution) in enumerate(executions(captures), start=1):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", execution.name)[:80]
        title = f"Execution {execution.name} on its state machine"
        page = Page(shot.number, f"graph-{safe}", title, output / f"awsview-graph-{safe}.{fmt}")
        graphs.append((shot, page, f"graph-{number:02d}", execution.arn))
    for shot, page, unique, opening in (*steps, *graphs):
        await _shoot(
            shot.model,
            profile,
            shot.status,
            drawing,
            page.path,
            unique_id=f"awsview-{name}-{unique}",
            opening=opening,
        )
    return [page for _, page, _, _ in steps], [page for _, page, _, _ in graphs]


def executions(captures: list[Capture]) -> list[tuple[Capture, Any]]:
    """Each execution the lab ran, with the last capture it was seen in with its history (the
    lab's cleanup deletes it), in the order they started."""
    from awsview.model.resources import Execution

    found: dict[str, tuple[Capture, Any]] = {}
    for shot in captures:
        for snapshot in shot.model.with_prefix("executions:"):
            for execution in snapshot.data or ():
                if (
                    isinstance(execution, Execution)
                    and shot.model.data(f"history:{execution.arn}") is not None
                ):
                    found[execution.arn] = (shot, execution)
    return sorted(
        found.values(),
        key=lambda pair: (pair[1].started is None, pair[1].started or 0, pair[1].name),
    )


async def render_replay(
    name: str, recording: Path, captures: list[Capture], drawing: Drawing
) -> Page:
    """The replay screen of ``recording`` (made while the lab played) when the step before the
    last one had settled: the time line has what led there behind it and the last step ahead."""
    from awsview.ui.viewer.replay import open_player

    shot = captures[-2] if len(captures) > 1 else captures[-1]
    player = open_player(recording)
    path = drawing.output / f"awsview-replay.{drawing.fmt}"
    await _shoot_replay(
        player, player.index_at(shot.at), drawing, path, unique_id=f"awsview-{name}-replay"
    )
    return Page(
        shot.number,
        "replay",
        f"The replay of this run after step {shot.number}, {shot.title}",
        path,
    )


async def _next_second() -> None:
    """Wait for the wall clock's next whole second. Clock times show whole seconds, so a step
    must not start in the second the previous one's last change happened in: its times would be
    taken for the new step's."""
    now = time.time()
    await asyncio.sleep(math.ceil(now) - now + 0.01)


def _state(model: LabState) -> dict[str, tuple[Any, Any]]:
    return {key: (s.health, s.data) for key, s in model.snapshots.items()}


async def _scheduler(live: LivePolling, polling: asyncio.Task) -> Scheduler:
    """The lab's scheduler, once the connection is made and the lab's spec is read."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while live.scheduler is None:
        _check(polling)
        if time.monotonic() > deadline:
            raise DocsError(f"the lab's panels did not load in {SETTLE_TIMEOUT_S:.0f} s")
        await asyncio.sleep(CHECK_S)
    return live.scheduler


def _check(polling: asyncio.Task) -> None:
    if polling.done():
        error = polling.exception() if not polling.cancelled() else None
        raise DocsError(f"polling stopped: {type(error).__name__}: {error}")


class _NoFeed(Exception):
    """The endpoint has no change feed, or it stopped answering."""


# Waits for the next round of reads (its argument: the deadline); False once that has passed.
Rounds = Callable[[float], Awaitable[bool]]


async def _settled(follower: _Follower, rounds: Rounds, on_timeout: Callable[[], None]) -> LabState:
    """A copy of the model once nothing changed for STABLE_S over at least two rounds of reads
    (a queue draining, a mapping being deleted: the reads see it move)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    last: dict[str, tuple[Any, Any]] | None = None
    unchanged_since = 0.0
    while await rounds(deadline):
        model, now = follower.model, time.monotonic()
        state = _state(model)
        if state != last:
            last, unchanged_since = state, now
        elif now - unchanged_since >= STABLE_S:
            return LabState(snapshots=dict(model.snapshots))
    on_timeout()
    return LabState(snapshots=dict(follower.model.snapshots)) if follower.model else LabState()


def _fed_rounds(scheduler: Scheduler) -> Rounds:
    """Each round reads what the change feed named since the last one (the first reads
    everything); raises _NoFeed when the endpoint has none, or it stopped answering."""
    first = True

    async def next_round(deadline: float) -> bool:
        nonlocal first
        if not first:
            await asyncio.sleep(CHECK_S)
        first = False
        if time.monotonic() >= deadline:
            return False
        if not await scheduler.catch_up():
            raise _NoFeed
        return True

    return next_round


def _polled_rounds(follower: _Follower, polling: asyncio.Task, since: float) -> Rounds:
    """Each round ends once every resource kind answered after the last one ended (the first:
    after ``since``) and the derived kinds were computed after that."""

    async def next_round(deadline: float) -> bool:
        nonlocal since
        done = await _full_round(follower, polling, since, deadline)
        since = time.time()
        return done

    return next_round


async def _full_round(
    follower: _Follower, polling: asyncio.Task, since: float, deadline: float
) -> bool:
    """Wait until every resource kind answered after ``since`` and the timeline and checkpoints
    were computed after that; False at the deadline."""
    answered_at = None
    while time.monotonic() < deadline:
        _check(polling)
        if answered_at is None and answered(follower.model, follower.profile, since) is not None:
            answered_at = time.time()
        if answered_at is not None and derived_after(follower.model, answered_at):
            return True
        await asyncio.sleep(CHECK_S)
    return False


async def _shoot(
    model: LabState,
    profile: labspec.LabSpec,
    status: tuple[str, str],
    drawing: Drawing,
    path: Path,
    unique_id: str,
    opening: str | None = None,
) -> Path:
    """``model`` in a fresh headless viewer, saved once the screen stops changing; with
    ``opening``, the row of that execution chosen first (Enter) and its graph scrolled into view."""
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions

    now = max((s.attempted_at for s in model.snapshots.values()), default=0.0)
    app = AWSViewApp(
        model=model,
        profile=profile,
        deterministic=drawing.deterministic,
        options=ViewerOptions(
            theme=drawing.theme, clock=lambda: now, highlight_seconds=0.01, tick_seconds=3600.0
        ),
    )
    app.status = status
    async with app.run_test(size=drawing.size) as pilot:
        await still(app, pilot)
        if opening is not None:
            await _open_graph(app, pilot, opening)
            await still(app, pilot)
        return save(app, path, unique_id=unique_id)


async def _shoot_replay(
    player: Any, index: int, drawing: Drawing, path: Path, unique_id: str
) -> Path:
    from awsview.ui.viewer.app import ViewerOptions
    from awsview.ui.viewer.replay import ReplayApp

    app = ReplayApp(
        player,
        start=index,
        deterministic=drawing.deterministic,
        options=ViewerOptions(theme=drawing.theme, highlight_seconds=0.01, tick_seconds=3600.0),
    )
    async with app.run_test(size=drawing.size) as pilot:
        await still(app, pilot)
        return save(app, path, unique_id=unique_id)


async def _open_graph(app: Any, pilot: Any, arn: str) -> None:
    """Enter on the execution's row, as a user would; the detail scrolled to its graph."""
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    from awsview.ui.viewer.graphview import GraphView
    from awsview.ui.viewer.screens import DetailScreen

    executions = next(
        (v for ident, v in app.board.views.items() if ident.startswith("executions")), None
    )
    if executions is None or arn not in executions.keys:
        raise DocsError(f"execution {arn} is not in the executions panel")
    executions.table.focus()
    executions.table.move_cursor(row=executions.keys.index(arn), animate=False)
    await pilot.press("enter")
    await still(app, pilot)
    screen = app.screen
    if not isinstance(screen, DetailScreen) or not screen.query(GraphView):
        raise DocsError(f"Enter on execution {arn} did not show its graph")
    graph = screen.query_one(GraphView)
    body = screen.query_one(VerticalScroll)
    title = body.children[body.children.index(graph) - 1]  # "Graph of this execution"
    body.scroll_to_widget(title if isinstance(title, Static) else graph, top=True, animate=False)
