"""Log groups followed the way `aws logs tail --follow` does: FilterLogEvents from the last
timestamp seen (minus a small overlap), skipping event ids already seen, so each event is
transferred about once. Multi-line events are split; lines are classified and redacted."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from typing import Any

from awsview.aws.answers import Pages
from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.loglines import classify, split_event
from awsview.model.resources import LogEntry, LogFeed
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Absent, Poller, failing, listed
from awsview.polling.quiet import LISTING_CEILING_S, Quiet

LOGS = keys.LOGS  # key: logs:<group>
GROUPS = "log_groups"  # the group names under a generic profile's prefix
OVERLAP_MS = 0  # like `aws logs tail --follow`: from the last timestamp, deduplicated by event id
MAX_LINES = 100_000
SEEN_IDS = 20_000


class _Follow:
    """Where one group's tail stands."""

    def __init__(self) -> None:
        self.start_ms = 0
        self.seen: OrderedDict[str, None] = OrderedDict()
        self.lines: deque[LogEntry] = deque(maxlen=MAX_LINES)
        self.events = 0
        self.dropped = 0

    def add(self, event: dict[str, Any]) -> bool:
        event_id = (
            event.get("eventId")
            or f"{event.get('logStreamName')}:{event.get('timestamp')}:{event.get('message')}"
        )
        if event_id in self.seen:
            return False
        self.seen[event_id] = None
        if len(self.seen) > SEEN_IDS:
            self.seen.popitem(last=False)
        self.events += 1
        stamp = int(event.get("timestamp") or 0)
        self.start_ms = max(self.start_ms, stamp)
        for text in split_event(event.get("message") or ""):
            if len(self.lines) == MAX_LINES:
                self.dropped += 1
            self.lines.append(
                LogEntry(stamp, event.get("logStreamName", ""), event_id, classify(text))
            )
        return True


class LogPoller(Poller):
    kind = LOGS
    makes = (GROUPS,)
    fast_interval = 0.3  # the token bucket still holds FilterLogEvents to 1 TPS on AWS
    slow_interval = 6.0
    follows = ("log_group",)

    def __init__(self, profile):
        super().__init__(profile)
        self._follows: dict[str, _Follow] = {}
        self._quiet = Quiet()  # per group: FilterLogEvents from the last event seen is the probe
        self._listing = Quiet(LISTING_CEILING_S)

    async def _poll(
        self, conn: Connection, model: LabState, only: frozenset[str] | None
    ) -> list[Snapshot[Any]]:
        """Follows the groups (``only``: those the change feed named)."""
        groups = list(self.profile.log_groups)
        snapshots = []
        if self.profile.generic:
            before = model.get(GROUPS)
            if before is None or only is not None or self._listing.due(GROUPS, model):
                listing = await self.fetch(model, GROUPS, lambda: self._groups(conn))
                self._listing.read(
                    GROUPS,
                    before is None or listing.data != before.data,
                    failed=failing(listing),
                )
                snapshots.append(listing)
                groups, gone = listed(model, LOGS, listing)
                for group in gone:
                    self._follows.pop(group, None)
            else:
                groups = [s.key.split(":", 1)[1] for s in model.with_prefix(f"{LOGS}:")]
        if only is not None:
            groups = [g for g in groups if g in only]
        else:  # polled: a group whose last reads brought nothing waits longer
            groups = [
                g for g in groups if model.get(f"{LOGS}:{g}") is None or self._quiet.due(g, model)
            ]
        self._quiet.keep(set(self._follows) | set(groups))
        # Side by side: one after another, a line of the first group waited for the reads of
        # the others (a Lambda and the function it calls write to two groups at once).
        previous = {g: model.get(f"{LOGS}:{g}") for g in groups}
        read = await asyncio.gather(
            *(
                self.fetch(model, f"{LOGS}:{group}", lambda g=group: self._tail(conn, g))
                for group in groups
            )
        )
        for group, snapshot in zip(groups, read):
            before = previous[group]
            self._quiet.read(
                group,
                before is None
                or snapshot.health is not before.health
                or getattr(snapshot.data, "events_seen", None)
                != getattr(before.data, "events_seen", None),
                failed=failing(snapshot),
            )
        return snapshots + list(read)

    async def _groups(self, conn: Connection) -> tuple[str, ...]:
        described = await conn.pages(
            "logs",
            "describe_log_groups",
            "logGroups",
            limit=50,
            logGroupNamePrefix=f"/aws/lambda/{self.profile.prefix}",
        )
        return tuple(g["logGroupName"] for g in described)

    async def _tail(self, conn: Connection, group: str) -> LogFeed:
        follow = self._follows.setdefault(group, _Follow())
        params: dict[str, Any] = {"logGroupName": group}
        if follow.start_ms:
            params["startTime"] = max(0, follow.start_ms - OVERLAP_MS)
        try:
            pages = Pages("filter_log_events")
            while True:
                page = await conn.call("logs", "filter_log_events", **params)
                for event in sorted(
                    page.get("events") or [],
                    key=lambda e: (e.get("timestamp", 0), e.get("ingestionTime", 0)),
                ):
                    follow.add(event)
                token = pages.next(params.get("nextToken"), page.get("nextToken"))
                if token is None:
                    break
                params["nextToken"] = token
        except Exception as exc:  # calls raise many types; classify() finds not-found
            from awsview.aws.errors import classify as classify_error

            if classify_error(exc).is_not_found:
                self._follows.pop(group, None)  # a new group of that name starts from scratch
                raise Absent(f"log group {group} does not exist") from None
            raise
        return LogFeed(
            group=group,
            lines=tuple(follow.lines),
            events_seen=follow.events,
            truncated=follow.dropped,
        )
