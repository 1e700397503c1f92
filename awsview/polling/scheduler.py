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
Failures back off exponentially either way; the first poll that gets through (or the feed
answering again) wakes every poller backing off, to read once at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from awsview import kinds
from awsview.aws.log import polls  # to the log file, if one is configured; off otherwise
from awsview.aws.session import Connection
from awsview.labspec import LabSpec
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller
from awsview.polling.changefeed import ChangeFeedFollower, FeedChange, NoFeed
from awsview.polling.quiet import PACED, paced_context
from awsview.polling.store import DecisionStore

MAX_BACKOFF_S = 60.0
# On a local endpoint (the emulator, moto, LocalStack) no account's quota is shared and a call
# costs next to nothing: failing pollers keep asking this often, so that when every poller backs
# off (all throttled, or the credentials all refused) one of them finds the endpoint answering
# again within seconds, and wakes the others.
LOCAL_MAX_BACKOFF_S = 2.0
SAFETY_S = 120.0  # pushed: everything is read this often even when the feed says nothing changed
PUSHED_GAP_S = 0.1  # pushed: at most one poll per kind this often, so a burst of writes is one read
# A failing poller woken by an answer elsewhere reads again at most this often: one that fails
# alone (an API the credentials may not call) costs no more than a healthy poller, not a retry
# per success of the others.
WOKEN_EVERY_S = 2.0


# Every kind's pollers, in the registry's order. Order matters for a single round: executions need
# machines, histories need executions; the timeline (and the lab's runs) every resource's creation
# time and every decision, the checkpoints the timeline.
def make_pollers(profile: LabSpec, store: DecisionStore | None = None) -> list[Poller]:
    """One poller per kind; ``store`` (default: the user's state directory) for those that
    remember."""
    return [
        cls(profile, store) if cls.remembers else cls(profile) for cls in kinds.poller_classes()
    ]


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


def _feed_endpoint(conn: Connection | None) -> str | None:
    """The local emulator's address, whose change feed the scheduler follows; None for AWS, or
    when the services answer on different endpoints (no one emulator holds all the changes)."""
    if conn is None or not conn.is_local:
        return None
    if conn.target.endpoint_url:
        return conn.target.endpoint_url
    urls = {url for _, url in conn.resolved.endpoints}
    return urls.pop() if len(urls) == 1 else None


class Scheduler:
    def __init__(
        self,
        conn: Connection,
        profile: LabSpec,
        model: LabState | None = None,
        pollers: list[Poller] | None = None,
        speed: float = 1.0,
        store: DecisionStore | None = None,
        feed: bool = True,
        safety: float = SAFETY_S,
        paced: bool = True,
    ):
        self.conn = conn
        self.profile = profile
        self.model = model or LabState()
        self.pollers = pollers or make_pollers(profile, store)
        self.speed = speed  # < 1 polls faster (tests), > 1 slower
        self.safety = safety  # pushed: seconds between full reads of a kind
        # False: every loop reads every resource each round (quiet.py), for a reader that waits
        # for every kind to answer after a change (the docs' shots), not a screen.
        self.paced = paced
        self._backoff: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = {p.kind: _Pending() for p in self.pollers}
        self._asked: dict[str, frozenset[str] | None] = {}  # what the next poll of a kind reads
        self._reachable = asyncio.Event()  # set when a poll succeeds while others back off
        self._reachable_at = 0.0  # when that last happened (monotonic)
        self._woken_at: dict[str, float] = {}  # kind → when it last read early, woken (monotonic)
        self._read_all_at = 0.0  # catch_up: when everything was last read
        self._no_feed = False
        # What derived kinds last saw of their inputs (data object, health), by key: a snapshot
        # that changed only its live flag moved nothing they read.
        self._inputs: dict[str, tuple[Any, Health]] = {}
        endpoint = _feed_endpoint(conn) if feed else None
        self.follower = (
            ChangeFeedFollower(
                endpoint, self._on_feed, self._on_feed_state, access_key_id=conn.access_key_id
            )
            if endpoint and conn is not None
            else None
        )
        self.model.listeners.append(self._on_change)
        if conn is not None:
            conn.on_answer.append(self._on_answer)

    @property
    def pushed(self) -> bool:
        """True while the change feed is followed: polls happen when something changed."""
        return self.follower is not None and self.follower.up

    # -- what to read next -----------------------------------------------------------------

    def _on_change(self, changed: list[Snapshot[Any]]) -> None:
        moved = [s for s in changed if self._moved(s)]
        if self.pushed:
            # Derived kinds read their inputs from the model: wake those whose inputs changed.
            # Not for a snapshot that only became live (the first read once the feed is up):
            # that woke every machine's listing of executions again after the viewer's start.
            for poller in self.pollers:
                if poller.after and any(
                    s.kind != poller.kind and s.key.startswith(poller.after) for s in moved
                ):
                    names = poller.after_change(self.model)
                    if names is None or names:
                        self._pending[poller.kind].mark(names)
        elif self.model.recently_changed(window=1.0):
            # A change anywhere (say the journal saw a write) wakes the idle loops at once.
            for pending in self._pending.values():
                pending.mark(None)

    def _moved(self, snapshot: Snapshot[Any]) -> bool:
        """True when the snapshot's data or health differ from what was last seen of it (the
        model keeps the stored data object when equal data is read again)."""
        seen = self._inputs.get(snapshot.key)
        self._inputs[snapshot.key] = (snapshot.data, snapshot.health)
        if len(self._inputs) > 2 * len(self.model.snapshots) + 64:  # keys the model dropped
            self._inputs = {k: v for k, v in self._inputs.items() if k in self.model.snapshots}
        return seen is None or seen[0] is not snapshot.data or seen[1] is not snapshot.health

    def _on_feed(self, changes: list[FeedChange], reset: bool) -> None:
        if reset:
            for pending in self._pending.values():
                pending.mark(None)
            return
        for poller in self.pollers:
            names = frozenset(c.name for c in changes if c.kind in poller.follows)
            if names:
                self._pending[poller.kind].mark(names)

    def _on_answer(self) -> None:
        """A call got an answer: pollers backing off (the endpoint was down, the credentials
        refused, an API throttled) read again now instead of when their backoff ends."""
        if self._backoff:
            self._reachable_at = time.monotonic()
            self._reachable.set()

    def _on_feed_state(self, up: bool) -> None:
        if up:
            # The endpoint answers: pollers backing off try again now, and so does one whose
            # poll was in flight as the feed came back. Everything is read once more: a read
            # that succeeded before the feed was up again is not live, and the feed will not
            # name a resource that did not change.
            self._reachable_at = time.monotonic()
            self._reachable.set()
            for pending in self._pending.values():
                pending.mark(None)
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
        # Pushed, a read happens because the feed (or its coming back) asked for it: nothing
        # waits out a quiet resource's pacing, which is for polled backends.
        unpaced = PACED.set(False) if pushed else None
        try:
            if names is None:
                snapshots = await poller.poll(self.conn, self.model)
            else:
                snapshots = await poller.refresh(self.conn, self.model, names)
        finally:
            if unpaced is not None:
                PACED.reset(unpaced)
        if pushed and self.pushed:
            snapshots = [replace(s, live=True) if s.health is Health.OK else s for s in snapshots]
            if poller.deferred:
                self._read_when_due(poller)
        self.model.apply(snapshots)
        return snapshots

    def _read_when_due(self, poller: Poller) -> None:
        """Pushed, nothing else would ask again for what a poll left for later (the feed names a
        change once): ask for it when the first of it is due. Whatever is not due yet then is
        left for later again."""
        due, poller.deferred = poller.deferred, {}
        delay = max(0.0, min(due.values()) - time.monotonic())
        asyncio.get_running_loop().call_later(
            delay, self._pending[poller.kind].mark, frozenset(due)
        )

    async def run_once(self) -> LabState:
        """One round of every poller, in dependency order."""
        await self.run_these(self.pollers)
        self._read_all_at = time.monotonic()
        return self.model

    def writers(self, keys: Iterable[str]) -> list[Poller]:
        """The pollers that write these model keys (or key prefixes), with every poller those
        derive from (``after``), in dependency order."""
        wanted = {p.kind for p in self.pollers if any(p.writes(key) for key in keys)}
        grown = True
        while grown:
            inputs = [prefix for p in self.pollers if p.kind in wanted for prefix in p.after]
            more = {p.kind for p in self.pollers if any(p.writes(prefix) for prefix in inputs)}
            grown = not more <= wanted
            wanted |= more
        return [p for p in self.pollers if p.kind in wanted]

    async def run_these(self, pollers: Iterable[Poller]) -> LabState:
        """One round of only these pollers (a reader that needs a few kinds, not a screen)."""
        for poller in pollers:
            self._pending[poller.kind].take()
            await self.poll(poller)
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
        except Exception:  # any failure of the feed: poll until it answers again
            follower.up = False
            return False
        changes, reset = follower.take(page)
        was_up, follower.up = follower.up, True
        if reset or not was_up or time.monotonic() - self._read_all_at > self.safety * self.speed:
            await self.run_once()
            return True
        self._on_feed(changes, False)
        for (
            poller
        ) in self.pollers:  # in dependency order: derived kinds are marked by the reads before them
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
            local = self.conn is not None and self.conn.is_local
            base = poller.slow_interval if throttled and not local else poller.fast_interval * 2
            ceiling = LOCAL_MAX_BACKOFF_S if local else MAX_BACKOFF_S
            previous = self._backoff.get(poller.kind, base / 2)
            self._backoff[poller.kind] = min(ceiling, max(base, previous * 2))
            reason = poller.last_failure.text if poller.last_failure is not None else "failed"
            polls.info(
                "poll %s: retry in %.1f s after %s",
                poller.kind,
                self._backoff[poller.kind] * self.speed,
                reason,
            )
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
                self._pending[poller.kind].take()  # everything is read next
                continue
            self._asked[poller.kind] = await self._next(poller, started, wait)

    async def _next(self, poller: Poller, started: float, wait: float) -> frozenset[str] | None:
        """Waits until this poller should poll again; returns what to read (None: everything)."""
        pending = self._pending[poller.kind]
        timeout = self.safety * self.speed if self.pushed else wait
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs the wait as a task of its
        # own, and a wake took three turns of the event loop instead of one; on a busy machine
        # each turn can wait behind a screen update.
        try:
            async with asyncio.timeout(max(0.05, timeout - (time.monotonic() - started))):
                await pending.event.wait()
        except TimeoutError:
            pending.take()
            return None
        # Woken: a burst of changes (or of wake-ups) becomes one poll. The feed may have come up
        # or gone down meanwhile: its state now decides. Polled, the wake waits out the poller's
        # pace, unless the feed comes back meanwhile (an emulator started again): then its reset
        # is read at once, not a fast interval later (30 s for a slowed scheduler).
        if not self.pushed:
            await self._paced(pending, started + poller.fast_interval * self.speed)
        if self.pushed:
            gap = PUSHED_GAP_S - (time.monotonic() - started)
            if gap > 0:  # past the gap, read now: no extra turn of the loop
                await asyncio.sleep(gap)
        names = pending.take()
        return names if self.pushed else None

    async def _paced(self, pending: _Pending, due: float) -> None:
        """Wait until ``due`` (at least 0.05 s), or until the change feed is followed again."""
        try:
            async with asyncio.timeout(max(0.05, due - time.monotonic())):
                while not self.pushed:
                    pending.event.clear()  # what was asked stays in pending; a new ask wakes it
                    await pending.event.wait()
        except TimeoutError:
            pass

    async def _back_off(self, poller: Poller, wait: float, polled_at: float) -> None:
        """Failing: wait out the backoff, unless the endpoint answers meanwhile (a call got
        through, or the change feed came back): then read again at once rather than up to a
        minute later, with its panel stale all that time — whatever the failure was, a
        throttled API's too. One read per wake, at most every ``WOKEN_EVERY_S``, and every call
        still goes through the connection's rate limiter (a share of the account's quotas)."""
        began = time.monotonic()
        # A poll that failed while a call got through (it was in flight as the endpoint came
        # back) retries too: it would otherwise wait for a wake that came already.
        if self._reachable_at < polled_at:
            self._reachable.clear()
            try:
                async with asyncio.timeout(wait):
                    await self._reachable.wait()
            except TimeoutError:
                return
        # Not all at the same instant, yet never later than the backoff itself: a poller with a
        # 2 s fast interval woken near the end of a 4 s backoff would retry at 6 s.
        # With the feed answering again, its reset says what to read.
        now = time.monotonic()
        left = wait - (now - began)
        gap = PUSHED_GAP_S if self.pushed else poller.fast_interval * self.speed
        gap = max(gap, self._woken_at.get(poller.kind, -WOKEN_EVERY_S) + WOKEN_EVERY_S - now)
        # Whether the wake or the backoff's end comes first, this is a read after a wake: the
        # next wake waits WOKEN_EVERY_S from it.
        self._woken_at[poller.kind] = now + max(0.0, min(gap, left))
        await asyncio.sleep(max(0.0, min(gap, left)))

    def start(self) -> None:
        # Paced: inside these loops a quiet resource of a polled backend may wait (quiet.py).
        self._tasks = [
            asyncio.create_task(
                self._loop(p),
                name=f"poll-{p.kind}",
                context=paced_context() if self.paced else None,
            )
            for p in self.pollers
        ]
        if self.follower is not None:
            self._tasks.append(asyncio.create_task(self.follower.run(), name="change-feed"))

    async def stop(self) -> None:
        """Ends the loops, then closes the HTTP sessions of the change feed and the pollers of
        their own (the journal's, the queue age's). Those close even when stop() itself is cut
        short: an app's polling worker is cancelled as the app ends, then again as its event loop
        does, which can land while stop() waits for the loops; an unclosed session is reported
        on stderr when it is collected."""
        try:
            # Cancel until every loop has ended: on Python 3.11 asyncio.wait_for swallows a
            # cancellation that lands as the event it waits for is set (the wake often is, while
            # data moves), and that loop polled on while stop() waited for it forever.
            pending = set(self._tasks)
            while pending:
                for task in pending:
                    task.cancel()
                _, pending = await asyncio.wait(pending, timeout=0.1)
            await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            if self.conn is not None and self._on_answer in self.conn.on_answer:
                self.conn.on_answer.remove(self._on_answer)
            owners = [self.follower, *self.pollers]
            for close in [getattr(owner, "close", None) for owner in owners]:
                if close is not None:
                    await close()
