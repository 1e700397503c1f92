"""Runs the pollers: one loop per kind so polls of a kind never overlap; fast while something
moves, slow when idle, exponential backoff when throttled or unreachable."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from awsview.aws.session import Connection
from awsview.log import polls  # to the log file, if one is configured; off otherwise
from awsview.model.snapshot import Health, Snapshot
from awsview.pollers.base import LabModel, Poller
from awsview.pollers.dynamodb import TablePoller
from awsview.pollers.functions import FunctionPoller
from awsview.pollers.iam import RolePoller
from awsview.pollers.journal import JournalPoller
from awsview.pollers.logs import LogPoller
from awsview.pollers.queues import QueuePoller
from awsview.pollers.stepfunctions import ExecutionPoller, HistoryPoller, StateMachinePoller
from awsview.pollers.streams import StreamPoller
from awsview.pollers.timeline import CheckpointPoller, TimelinePoller
from awsview.profiles import LabProfile
from awsview.store import DecisionStore

MAX_BACKOFF_S = 60.0

# Order matters for a single round: executions need machines, histories need executions; the
# timeline (and the lab's runs) every resource's creation time and every decision, the
# checkpoints the timeline.
POLLERS: tuple[type[Poller], ...] = (
    StateMachinePoller, ExecutionPoller, HistoryPoller, TablePoller, QueuePoller,
    FunctionPoller, LogPoller, RolePoller, JournalPoller, StreamPoller, TimelinePoller, CheckpointPoller,
)


REMEMBERING = (TimelinePoller, CheckpointPoller)  # they keep what they learn in a store


def make_pollers(profile: LabProfile, store: DecisionStore | None = None) -> list[Poller]:
    """One poller per kind; ``store`` (default: the user's state directory) for those that remember."""
    return [cls(profile, store) if cls in REMEMBERING else cls(profile) for cls in POLLERS]


class Scheduler:
    def __init__(self, conn: Connection, profile: LabProfile, model: LabModel | None = None,
                 pollers: list[Poller] | None = None, speed: float = 1.0, store: DecisionStore | None = None):
        self.conn = conn
        self.profile = profile
        self.model = model or LabModel()
        self.pollers = pollers or make_pollers(profile, store)
        self.speed = speed  # < 1 polls faster (tests), > 1 slower
        self._backoff: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self._reachable = asyncio.Event()  # set when a poll succeeds while others back off
        self._reachable_at = 0.0  # when that last happened (monotonic)
        self.model.listeners.append(self._on_change)

    def _on_change(self, changed: list[Snapshot[Any]]) -> None:
        # A change anywhere (say the journal saw a write) wakes the idle loops at once.
        if self.model.recently_changed(window=1.0):
            self._wake.set()

    async def poll(self, poller: Poller) -> list[Snapshot[Any]]:
        poller.last_failure = None
        snapshots = await poller.poll(self.conn, self.model)
        self.model.apply(snapshots)
        return snapshots

    async def run_once(self) -> LabModel:
        """One round of every poller, in dependency order."""
        for poller in self.pollers:
            await self.poll(poller)
        return self.model

    def active(self) -> bool:
        return self.model.recently_changed() or any(p.is_busy(self.model) for p in self.pollers)

    def interval(self, poller: Poller, snapshots: list[Snapshot[Any]]) -> float:
        failing = any(s.health in (Health.STALE, Health.ERROR) for s in snapshots)
        if failing:
            throttled = poller.last_failure is not None and poller.last_failure.kind == "throttled"
            base = poller.slow_interval if throttled else poller.fast_interval * 2
            previous = self._backoff.get(poller.kind, base / 2)
            self._backoff[poller.kind] = min(MAX_BACKOFF_S, max(base, previous * 2))
            reason = poller.last_failure.text if poller.last_failure is not None else "failed"
            polls.info("poll %s: retry in %.1f s after %s", poller.kind, self._backoff[poller.kind] * self.speed,
                       reason)
            return self._backoff[poller.kind] * self.speed
        if self._backoff.pop(poller.kind, None) is not None:
            polls.info("poll %s: recovered", poller.kind)
            if self._backoff:
                self._reachable_at = time.monotonic()  # this one recovered: the others need not
                self._reachable.set()  # wait out their backoff
        return (poller.fast_interval if self.active() else poller.slow_interval) * self.speed

    async def _loop(self, poller: Poller) -> None:
        while True:
            started = time.monotonic()
            try:
                snapshots = await self.poll(poller)
            except asyncio.CancelledError:
                raise
            except Exception:  # a poller bug must not stop the others; fetch() already
                snapshots = []  # turned every AWS failure into a snapshot
            wait = self.interval(poller, snapshots)
            if self._backoff.get(poller.kind):
                await self._back_off(poller, wait, started)
                continue
            wake = self._wake
            try:
                await asyncio.wait_for(wake.wait(), timeout=max(0.05, wait - (time.monotonic() - started)))
            except asyncio.TimeoutError:
                continue
            if wake.is_set():
                self._wake = asyncio.Event()  # later changes need a new event
            floor = poller.fast_interval * self.speed - (time.monotonic() - started)
            await asyncio.sleep(max(0.05, floor))

    async def _back_off(self, poller: Poller, wait: float, polled_at: float) -> None:
        """Failing: wait out the backoff. A network or credentials failure is the connection's, not
        this API's: when another poll gets through, try again at once rather than up to a minute
        later. Throttling is per API, so a throttled poller always waits its full backoff."""
        failure = poller.last_failure
        if failure is None or failure.kind not in ("network", "auth"):
            await asyncio.sleep(wait)
            return
        began = time.monotonic()
        # A poll that failed while another one got through (its call was in flight as the
        # endpoint came back) retries too: it would otherwise wait for a wake that came already.
        if self._reachable_at < polled_at:
            self._reachable.clear()
            try:
                await asyncio.wait_for(self._reachable.wait(), timeout=wait)
            except asyncio.TimeoutError:
                return
        # Not all at the same instant, yet never later than the backoff itself: a poller with a
        # 2 s fast interval woken near the end of a 4 s backoff retried at 6 s (found by the soak).
        left = wait - (time.monotonic() - began)
        await asyncio.sleep(max(0.0, min(poller.fast_interval * self.speed, left)))

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._loop(p), name=f"poll-{p.kind}") for p in self.pollers]

    async def stop(self) -> None:
        # Cancel until every loop has ended: on Python 3.11 asyncio.wait_for swallows a
        # cancellation that lands as the event it waits for is set (the wake often is, while data
        # moves), and that loop polled on while stop() waited for it forever.
        pending = set(self._tasks)
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.1)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for poller in self.pollers:
            close = getattr(poller, "close", None)
            if close is not None:
                await close()
