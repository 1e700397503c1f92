"""SQS queues: visible / in-flight / delayed counts, redrive, and the age of the oldest message
(`awsview.polling.pollers.queueage`). Never ReceiveMessage: that would hide messages from the lab's
consumer."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.resources import Queue
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller, healthy, unless_deleted
from awsview.polling.pollers.queueage import OldestAges
from awsview.polling.quiet import LISTING_CEILING_S, Quiet

QUEUES = keys.QUEUES
DEPTH_S = 300.0  # how far back each queue's depth is kept (the panel's sparkline spans it)
ATTRIBUTES = [
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "VisibilityTimeout",
    "RedrivePolicy",
    "CreatedTimestamp",
]


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class QueuePoller(Poller):
    kind = QUEUES
    slow_interval = 8.0
    follows = ("queue",)

    def __init__(self, profile):
        super().__init__(profile)
        self._depth: dict[str, list[tuple[float, int, int]]] = {}  # queue URL -> change points
        # Polled: the listing (a lab creates queues now and then) and each queue's counts wait
        # longer while they stay as they were.
        self._listing = Quiet(LISTING_CEILING_S)
        self._counts = Quiet()
        self._ages = OldestAges()

    async def close(self) -> None:
        await self._ages.close()

    def is_busy(self, model: LabState) -> bool:
        return any(not q.empty for q in model.data(QUEUES, ()))

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        known = model.get(QUEUES)
        if not healthy(known) or known.data is None or self._listing.due(QUEUES, model):
            snapshot = await self.fetch(model, QUEUES, lambda: self._queues(conn))
            self._listing.read(
                QUEUES,
                known is None
                or [q.url for q in snapshot.data or ()] != [q.url for q in known.data or ()],
            )
            return [snapshot]
        shown = known.data
        due = [q for q in shown if self._counts.due(q.url, model)]
        if not due:
            return []

        async def read() -> tuple[Queue, ...]:
            fresh = {q.url: q for q in await self._read(conn, [q.url for q in due])}
            if len(fresh) != len(due):
                return await self._queues(conn)  # one was deleted meanwhile: list them again
            return tuple(fresh.get(q.url, q) for q in shown)

        return [await self.fetch(model, QUEUES, read)]

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """Reads the counts of the queues the change feed named; a queue not known yet (or one
        gone) means listing them all again."""
        shown, names = self.named(model, QUEUES, names)
        if not names:
            return []  # another lab's queue
        if shown is None or not names <= set(shown):
            self._listing.forget(QUEUES)  # listed again now, however lately it was
            return await self.poll(conn, model)

        async def read() -> tuple[Queue, ...]:
            fresh = await self._read(conn, [shown[n].url for n in names])
            if len(fresh) != len(names):
                return await self._queues(conn)  # one was deleted meanwhile: list them again
            return tuple(
                sorted({**shown, **{q.name: q for q in fresh}}.values(), key=lambda q: q.name)
            )

        return [await self.fetch(model, QUEUES, read)]

    async def _queues(self, conn: Connection) -> tuple[Queue, ...]:
        params = {"QueueNamePrefix": self.profile.prefix} if self.profile.prefix else {}
        urls = await conn.pages(
            "sqs", "list_queues", "QueueUrls", token_in="NextToken", token_out="NextToken", **params
        )
        # Only a full listing forgets a queue's depth: the feed's reads name just a few.
        self._depth = {url: points for url, points in self._depth.items() if url in urls}
        self._counts.keep(set(urls))
        return tuple(sorted(await self._read(conn, urls), key=lambda q: q.name))

    async def _read(self, conn: Connection, urls: list[str]) -> list[Queue]:
        queues = []
        now = time.time()
        for url in urls:
            got = await unless_deleted(
                conn.call("sqs", "get_queue_attributes", QueueUrl=url, AttributeNames=ATTRIBUTES)
            )
            if got is None:
                continue  # deleted between the listing and this call
            attributes = got["Attributes"]
            redrive = {}
            if attributes.get("RedrivePolicy"):
                try:
                    redrive = json.loads(attributes["RedrivePolicy"])
                except ValueError:
                    redrive = {}
            visible = _int(attributes.get("ApproximateNumberOfMessages"))
            in_flight = _int(attributes.get("ApproximateNumberOfMessagesNotVisible"))
            queues.append(
                Queue(
                    name=url.rstrip("/").rsplit("/", 1)[-1],
                    url=url,
                    arn=attributes.get("QueueArn", ""),
                    visible=visible,
                    in_flight=in_flight,
                    delayed=_int(attributes.get("ApproximateNumberOfMessagesDelayed")),
                    visibility_timeout=_int(attributes.get("VisibilityTimeout"))
                    if "VisibilityTimeout" in attributes
                    else None,
                    dlq_arn=redrive.get("deadLetterTargetArn"),
                    max_receive_count=_int(redrive["maxReceiveCount"])
                    if "maxReceiveCount" in redrive
                    else None,
                    depth=self._follow_depth(url, now, visible, in_flight),
                    created=_float(attributes.get("CreatedTimestamp")),
                )
            )
        # An empty queue has no oldest message: only the others are asked about.
        ages = await self._ages.ages(conn, [(q.name, q.arn) for q in queues if not q.empty])
        return [replace(q, oldest_age_s=ages.get(q.arn)) if not q.empty else q for q in queues]

    def _follow_depth(
        self, url: str, now: float, visible: int, in_flight: int
    ) -> tuple[tuple[float, int, int], ...]:
        """The queue's change points, a new one only when a count changed: an idle queue's data
        stays the same object's equal, so it is not a change for the model (or a recording)."""
        points = self._depth.setdefault(url, [])
        self._counts.read(url, not points or points[-1][1:] != (visible, in_flight))
        if points and points[-1][1:] == (visible, in_flight):
            return tuple(points)
        points.append((now, visible, in_flight))
        while len(points) > 1 and points[1][0] <= now - DEPTH_S:
            del points[0]  # the level before the window's start is still needed: keep one
        return tuple(points)
