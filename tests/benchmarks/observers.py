"""What bench_all watches with: the `aws logs tail --follow` baseline, a record of when each
observer first showed each change, and instruments for AWS View's polls, the event loop and the
collector."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from awsview.aws.session import Connection
from awsview.polling.scheduler import Scheduler
from tests.benchmarks.bench_core import BENCH_QUEUE, ITEM, LOG_MARK, ORDERS, RUN, WORKER_LOG

TAIL_EVERY_S = 5.0  # the AWS CLI's FollowLogEventsGenerator sleeps this long after the last page
TAIL_SINCE_MS = 10 * 60 * 1000  # `aws logs tail` starts 10 minutes back by default
AWSVIEW, MODEL, TAIL, NAIVE = "AWS View", "AWS View model", "tail", "naive"


class LogTail:
    """`aws logs tail --follow GROUP`: FilterLogEvents from ten minutes back; after the last
    page, every 5 s from the newest timestamp seen, skipping ids already seen at that timestamp.
    ``on_event`` gets each new event (what the CLI would print)."""

    def __init__(self, conn: Connection, group: str, on_event: Callable[[dict[str, Any]], None]):
        self.conn, self.group, self.on_event = conn, group, on_event
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        params: dict[str, Any] = {
            "logGroupName": self.group,
            "interleaved": True,
            "startTime": int(time.time() * 1000) - TAIL_SINCE_MS,
        }
        seen: defaultdict[int, set[str]] = defaultdict(set)
        while True:
            try:
                page = await self.conn.call("logs", "filter_log_events", **params)
            except Exception:  # the CLI would stop (or wait out a throttle); a learner restarts it
                await asyncio.sleep(TAIL_EVERY_S)
                continue
            for event in page.get("events") or []:
                if event["eventId"] not in seen[event["timestamp"]]:
                    seen[event["timestamp"]].add(event["eventId"])
                    self.on_event(event)
            if seen:
                newest = max(seen)
                seen = defaultdict(set, {newest: seen[newest]})
            if page.get("nextToken"):
                params["nextToken"] = page["nextToken"]
                continue
            params.pop("nextToken", None)
            if seen:
                params["startTime"] = max(seen)
            await asyncio.sleep(TAIL_EVERY_S)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


class FirstSeen:
    """When each observer first showed change n of each kind (time.time())."""

    def __init__(self) -> None:
        self.at: defaultdict[str, dict[tuple[str, int], float]] = defaultdict(dict)
        self.count: Counter[tuple[str, str]] = Counter()  # (observer, kind) -> changes shown

    def saw(self, observer: str, kind: str, numbers: set[int]) -> None:
        now, known = time.time(), self.at[observer]
        for n in numbers:
            if (kind, n) not in known:
                known[(kind, n)] = now
                self.count[(observer, kind)] += 1

    def to_json(self) -> dict[str, dict[str, float]]:
        return {o: {f"{k}#{n}": t for (k, n), t in seen.items()} for o, seen in self.at.items()}

    def merge(self, data: dict[str, dict[str, float]]) -> None:
        for observer, seen in data.items():
            for key, t in seen.items():
                kind, n = key.rsplit("#", 1)
                self.at[observer].setdefault((kind, int(n)), t)


def shown_on_screen(kind: str, views: dict[str, Any]) -> set[int]:
    """The numbers of the changes of this kind that their panel holds (what a frame paints)."""

    def rows(ident: str) -> tuple:
        view = views.get(ident)
        return view.shown.rows if view is not None and view.shown is not None else ()

    if kind == "item write":
        return {int(m[1]) for r in rows(f"tables:{ORDERS}") if (m := ITEM.fullmatch(r.key))}
    if kind == "log line":
        return {int(n) for r in rows(f"logs:{WORKER_LOG}") for n in LOG_MARK.findall(r.cells[-1])}
    if kind == "execution status":
        return {
            int(m[1])
            for r in rows("executions")
            if r.cells[1] != "RUNNING" and (m := RUN.fullmatch(r.cells[0]))
        }
    if kind == "execution start":
        return {int(m[1]) for r in rows("executions") if (m := RUN.fullmatch(r.cells[0]))}
    if kind == "queue count":
        return set(
            range(
                max(
                    (int(r.cells[1]) for r in rows("queues") if r.cells[0] == BENCH_QUEUE),
                    default=0,
                )
            )
        )
    raise ValueError(kind)


def hook_frames(app: Any, on_frame: Callable[[], None]) -> None:
    """Call on_frame after every frame the app paints (bench_ui's hook on App._display)."""
    original = app._display

    def display(screen, renderable):
        result = original(screen, renderable)
        if renderable is not None:
            on_frame()
        return result

    app._display = display


def time_polls(
    viewer: Scheduler,
) -> tuple[defaultdict[str, list[tuple[float, float]]], Counter[str]]:
    """(start as time.time(), duration) of every poll the scheduler makes, and failed polls, by
    poller kind."""
    polls: defaultdict[str, list[tuple[float, float]]] = defaultdict(list)
    failures: Counter[str] = Counter()
    original = viewer.poll

    async def poll(poller: Any) -> Any:
        started = time.time()
        try:
            return await original(poller)
        finally:
            polls[poller.kind].append((started, time.time() - started))
            if poller.last_failure is not None:
                failures[poller.kind] += 1

    viewer.poll = poll  # the loops call self.poll
    return polls, failures


class Stalls:
    """How late a 50 ms sleep wakes up on this event loop (what everything sharing the loop costs
    the rest), and how long each full (generation 2) collection took. Times are time.time()."""

    def __init__(self) -> None:
        self.late: list[tuple[float, float]] = []  # (stall began, seconds)
        self.collections: list[tuple[float, float]] = []  # (began, seconds)
        self._started = 0.0
        self._task: asyncio.Task | None = None

    def _collector(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.time()
        else:
            self.collections.append((self._started, time.time() - self._started))

    async def _run(self) -> None:
        while True:
            started = time.time()
            await asyncio.sleep(0.05)
            self.late.append((started + 0.05, time.time() - started - 0.05))

    def start(self) -> None:
        gc.callbacks.append(self._collector)
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        gc.callbacks.remove(self._collector)
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    def to_json(self) -> dict[str, list]:
        return {"late": self.late, "collections": self.collections}


def stalled(stalls: dict[str, list], start: float, end: float, at_least: float = 0.1) -> float:
    """The longest stall (late wake-up or full collection) of at least ``at_least`` seconds that
    overlaps [start, end]; 0 if none."""
    return max(
        (
            d
            for t, d in stalls["late"] + stalls["collections"]
            if t < end and t + d > start and d >= at_least
        ),
        default=0.0,
    )
