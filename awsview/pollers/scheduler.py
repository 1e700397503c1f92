"""Runs the pollers: one loop per kind, so polls of a kind never overlap.

Two ways to know when to poll:
- **Pushed** (the embedded emulator's change feed answers): a poller reads only what the feed
  says changed, at once — a table written, a log group with a new line, an execution with a new
  history event — plus, slowly, everything (``SAFETY_S``) in case a change went unheard: idle,
  that is a few dozen calls every two minutes.
  Pollers that derive from others (histories from executions, streams from tables, the timeline
  and checkpoints from everything) run when their inputs changed in the model.
- **Polled** (stock moto, LocalStack, AWS, or the feed is down): fast while something moves,
  slow when idle, as before the feed existed.
Failures back off exponentially either way; after a network or credentials outage the first poll
that gets through (or the feed answering again) wakes the others.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from awsview.aws.session import Connection
from awsview.model.snapshot import Health, Snapshot
from awsview.pollers.base import LabModel, Poller
from awsview.pollers.changefeed import ChangeFeedFollower, FeedChange, NoFeed
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

MAX_BACKOFF_S = 60.0
SAFETY_S = 120.0  # pushed: everything is read this often even when the feed says nothing changed
PUSHED_GAP_S = 0.1  # pushed: at most one poll per kind this often, so a burst of writes is one read

# Order matters for a single round: executions need machines, histories need executions.
POLLERS: tuple[type[Poller], ...] = (
    StateMachinePoller, ExecutionPoller, HistoryPoller, TablePoller, QueuePoller,
    FunctionPoller, LogPoller, RolePoller, JournalPoller, StreamPoller, TimelinePoller, CheckpointPoller,
)


def make_pollers(profile: LabProfile) -> list[Poller]:
    return [cls(profile) for cls in POLLERS]


class _Pending:
    """What one poller has been asked to read next: some names, or everything."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.names: set[str] = set()
        self.everything = False

    def mark(self, names: frozenset[str] | None) -> None:
        if names is None or "" in names:
            self.everything = True
        else:
            self.names |= names
        self.event.set()

    def take(self) -> frozenset[str] | None:
        """None: read everything."""
        names = None if self.everything else frozenset(self.names)
        self.names, self.everything = set(), False
        self.event.clear()
        return names


class Scheduler:
    def __init__(self, conn: Connection, profile: LabProfile, model: LabModel | None = None,
                 pollers: list[Poller] | None = None, speed: float = 1.0, feed: bool = True,
                 safety: float = SAFETY_S):
        self.conn = conn
        self.profile = profile
        self.model = model or LabModel()
        self.pollers = pollers or make_pollers(profile)
        self.speed = speed  # < 1 polls faster (tests), > 1 slower
        self.safety = safety  # pushed: seconds between full reads of a kind
        self._backoff: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = {p.kind: _Pending() for p in self.pollers}
        self._asked: dict[str, frozenset[str] | None] = {}  # what the next poll of a kind reads
        self._reachable = asyncio.Event()  # set when a poll succeeds while others back off
        self._read_all_at = 0.0  # catch_up: when everything was last read
        self._no_feed = False
        local = feed and conn is not None and conn.target.is_local and conn.target.endpoint_url
        self.follower = ChangeFeedFollower(conn.target.endpoint_url, self._on_feed, self._on_feed_state) \
            if local else None
        self.model.listeners.append(self._on_change)

    @property
    def pushed(self) -> bool:
        """True while the change feed is followed: polls happen when something changed."""
        return self.follower is not None and self.follower.up

    # -- what to read next -----------------------------------------------------------------

    def _on_change(self, changed: list[Snapshot[Any]]) -> None:
        if self.pushed:
            # Derived kinds read their inputs from the model: wake those whose inputs changed.
            for poller in self.pollers:
                if poller.after and any(s.kind != poller.kind and s.key.startswith(poller.after)
                                        for s in changed):
                    self._pending[poller.kind].mark(None)
        elif self.model.recently_changed(window=1.0):
            # A change anywhere (say the journal saw a write) wakes the idle loops at once.
            for pending in self._pending.values():
                pending.mark(None)

    def _on_feed(self, changes: list[FeedChange], reset: bool) -> None:
        if reset:
            for pending in self._pending.values():
                pending.mark(None)
            return
        for poller in self.pollers:
            names = frozenset(c.name for c in changes if c.kind in poller.follows)
            if names:
                self._pending[poller.kind].mark(names)

    def _on_feed_state(self, up: bool) -> None:
        if up:
            self._reachable.set()  # the endpoint answers: pollers backing off may try again
            return
        # Not live any more: say so on every panel, and let the loops fall back to polling.
        self.model.apply([replace(s, live=False) for s in self.model.snapshots.values() if s.live])
        for pending in self._pending.values():
            pending.mark(None)

    # -- polling ---------------------------------------------------------------------------

    async def poll(self, poller: Poller) -> list[Snapshot[Any]]:
        poller.last_failure = None
        names = self._asked.pop(poller.kind, None)
        pushed = self.pushed
        if names is None:
            snapshots = await poller.poll(self.conn, self.model)
        else:
            snapshots = await poller.refresh(self.conn, self.model, names)
        if pushed and self.pushed:
            snapshots = [replace(s, live=True) if s.health is Health.OK else s for s in snapshots]
        self.model.apply(snapshots)
        return snapshots

    async def run_once(self) -> LabModel:
        """One round of every poller, in dependency order."""
        for poller in self.pollers:
            self._pending[poller.kind].take()
            await self.poll(poller)
        self._read_all_at = time.monotonic()
        return self.model

    async def catch_up(self) -> bool:
        """One round on the caller's own clock (the class view asks each learner once a second):
        ask the change feed, without waiting, what changed since the last round, and read just
        that — everything the first time, after a reset, and every ``safety`` seconds. False when
        the endpoint has no feed (or it did not answer): the caller polls as before."""
        follower = self.follower
        if follower is None or self._no_feed:
            return False
        try:
            page = await follower.ask(0.0)
        except NoFeed:
            self._no_feed = True
            return False
        except Exception:
            follower.up = False
            return False
        changes, reset = follower.take(page)
        was_up, follower.up = follower.up, True
        if reset or not was_up or time.monotonic() - self._read_all_at > self.safety * self.speed:
            await self.run_once()
            return True
        self._on_feed(changes, False)
        for poller in self.pollers:  # in dependency order: derived kinds are marked by the reads before them
            if self._pending[poller.kind].event.is_set():
                self._asked[poller.kind] = self._pending[poller.kind].take()
                await self.poll(poller)
        return True

    def active(self) -> bool:
        return self.model.recently_changed() or any(p.is_busy(self.model) for p in self.pollers)

    def interval(self, poller: Poller, snapshots: list[Snapshot[Any]]) -> float:
        failing = any(s.health in (Health.STALE, Health.ERROR) for s in snapshots)
        if failing:
            throttled = poller.last_failure is not None and poller.last_failure.kind == "throttled"
            base = poller.slow_interval if throttled else poller.fast_interval * 2
            previous = self._backoff.get(poller.kind, base / 2)
            self._backoff[poller.kind] = min(MAX_BACKOFF_S, max(base, previous * 2))
            return self._backoff[poller.kind] * self.speed
        if self._backoff.pop(poller.kind, None) is not None and self._backoff:
            self._reachable.set()  # this one recovered: the others need not wait out their backoff
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
                await self._back_off(poller, wait)
                self._pending[poller.kind].take()  # everything is read next
                continue
            self._asked[poller.kind] = await self._next(poller, started, wait)

    async def _next(self, poller: Poller, started: float, wait: float) -> frozenset[str] | None:
        """Waits until this poller should poll again; returns what to read (None: everything)."""
        pending = self._pending[poller.kind]
        timeout = self.safety * self.speed if self.pushed else wait
        try:
            await asyncio.wait_for(pending.event.wait(), timeout=max(0.05, timeout - (time.monotonic() - started)))
        except asyncio.TimeoutError:
            pending.take()
            return None
        # Woken: a burst of changes (or of wake-ups) becomes one poll. The feed may have come up
        # or gone down meanwhile: its state now decides.
        if self.pushed:
            await asyncio.sleep(max(0.0, PUSHED_GAP_S - (time.monotonic() - started)))
        else:
            await asyncio.sleep(max(0.05, poller.fast_interval * self.speed - (time.monotonic() - started)))
        names = pending.take()
        return names if self.pushed else None

    async def _back_off(self, poller: Poller, wait: float) -> None:
        """Failing: wait out the backoff. A network or credentials failure is the connection's, not
        this API's: when another poll gets through, try again at once rather than up to a minute
        later. Throttling is per API, so a throttled poller always waits its full backoff."""
        failure = poller.last_failure
        if failure is None or failure.kind not in ("network", "auth"):
            await asyncio.sleep(wait)
            return
        self._reachable.clear()
        try:
            await asyncio.wait_for(self._reachable.wait(), timeout=wait)
        except asyncio.TimeoutError:
            return
        # Not all at the same instant; with the feed answering again, its reset says what to read.
        await asyncio.sleep(PUSHED_GAP_S if self.pushed else poller.fast_interval * self.speed)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._loop(p), name=f"poll-{p.kind}") for p in self.pollers]
        if self.follower is not None:
            self._tasks.append(asyncio.create_task(self.follower.run(), name="change-feed"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.follower is not None:
            await self.follower.close()
        for poller in self.pollers:
            close = getattr(poller, "close", None)
            if close is not None:
                await close()
