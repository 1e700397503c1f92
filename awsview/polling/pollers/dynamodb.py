"""DynamoDB tables as plain values; reference tables compared against the first sighting (their
baseline). Each table is described again every half minute (and after a failed scan), so a table
created again shows its new CreationDateTime: a new lab run.

Scans are billed, so they have a budget:

- every Scan asks ``ReturnConsumedCapacity=TOTAL`` and the read units AWS reports are counted
  (per table, on the connection's limiter: the status line can show them);
- a poll reads at most ``POLL_ITEMS`` items of a table. A smaller table is read whole every
  poll; a bigger one is read in pages, each poll continuing where the last one stopped, and a
  pass over it shows what the previous pass read until its own pages arrive (an item is known to
  be gone only when a whole pass has not seen it). At most ``max_items`` items are read per pass;
- after a poll, a table waits until its read units are paid back at ``READ_UNITS_PER_S`` (ten
  times more against a local emulator), so the rate follows the table's size: a lab table of a
  few items (0.5 unit a scan) is read every 0.3 s while the lab moves, a 2,000-item table of
  200-byte items (~50 units) every 10 s, a 50,000-item one page by page;
- a table the emulator's change feed names is read once its read units are paid back, never
  skipped and never holding back the others named with it: a read leaves the tables not due yet
  in ``deferred`` (with when they are due), and the scheduler asks for them then. The feed names
  a table once per change, and a full read skips a table not due too: without that, nothing
  would read it before the safety read, minutes later.

Polled (no change feed, as on AWS), a table whose stream the viewer follows (a business table
the lab gave a stream: `streams.StreamPoller`) is scanned when its stream shows a record the last
scan did not see, and otherwise only as a quiet table idle (a safety read). A table without a
stream waits longer after each read that found it as it was (`quiet.Quiet`: about the poller's
pace while the lab moves, up to 24 s idle, with jitter), one not found up to the listings' 8 s;
the first read that sees a change brings it back to the poller's pace.

An item equal to the one shown last time is kept as that very object, so the panels recognise
its row as unchanged without comparing it again.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from awsview.aws.answers import Pages
from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.items import diff_items, item_to_plain
from awsview.model.resources import Table
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller, failing, listed
from awsview.polling.quiet import IDLE_CEILING_S, LISTING_CEILING_S, Quiet

TABLE = keys.TABLE  # key: table:<name>
TABLES = keys.TABLES  # the list of table names, for generic profiles
POLL_ITEMS = 2_000  # items read per table per poll at most (a smaller table: all of it)
READ_UNITS_PER_S = 5.0  # per table on AWS: 18,000 read units an hour at most, ≈ $0.0023 on demand
MAX_ITEMS = 20_000  # items per pass (the panels show 200; the filter searches all read)
REDESCRIBE_S = 30.0  # one DescribeTable per table per half minute, beside scans every 0.3-8 s


def _timestamp(value: Any) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _sort_key(item: dict[str, Any], names: tuple[str, ...]) -> tuple:
    return tuple(str(item.get(n, "")) for n in names)


@dataclass
class _Pass:
    """Where a table's reading stands: the last whole pass, and the pass under way."""

    done: dict[tuple, dict[str, Any]] | None = None  # the last complete pass, by key
    current: dict[tuple, dict[str, Any]] = field(default_factory=dict)
    start_key: dict[str, Any] | None = None  # where the next page begins (None: a new pass)
    read_at: float = 0.0  # monotonic time of the last read
    units: float = 0.0  # the read units it consumed
    count: int | None = None  # DescribeTable's ItemCount (AWS updates it every ~6 hours)
    truncated: bool = False  # the last pass stopped at MAX_ITEMS
    polls: int = 0  # polls into the pass under way
    pass_polls: int = 0  # polls the last complete pass took


class TablePoller(Poller):
    kind = TABLE
    makes = (TABLES,)
    slow_interval = 8.0
    follows = ("table",)

    def __init__(self, profile):
        super().__init__(profile)
        self._baselines: dict[str, tuple[dict[str, Any], ...]] = {}
        self._keys: dict[str, tuple[str, ...]] = {}
        self._streams: dict[str, tuple[str | None, str | None]] = {}
        self._passes: dict[str, _Pass] = {}
        self._created: dict[
            str, tuple[float, float | None]
        ] = {}  # name -> (described at, CreationDateTime)
        self.max_items = MAX_ITEMS
        self.poll_items = POLL_ITEMS
        self._items: dict[
            str, dict[tuple, dict[str, Any]]
        ] = {}  # table → key → the item last shown
        self._quiet = Quiet()
        self._listing = Quiet(LISTING_CEILING_S)
        self._stream_seen: dict[str, str] = {}  # table → its stream's newest record at its scan

    async def _poll(
        self, conn: Connection, model: LabState, only: frozenset[str] | None
    ) -> list[Snapshot[Any]]:
        """The tables (``only``: those the change feed named), listed first in a generic view."""
        names = list(self.profile.tables())
        snapshots = []
        before = model.get(TABLES)
        if self.profile.generic and (
            before is None or only is not None or self._listing.due(TABLES, model)
        ):
            listing = await self.fetch(model, TABLES, lambda: self._list(conn))
            self._listing.read(
                TABLES, before is None or listing.data != before.data, failed=failing(listing)
            )
            snapshots.append(listing)
            names, gone = listed(model, TABLE, listing)
            for name in gone:
                self._forget(name)
        elif self.profile.generic:  # listed lately and unchanged since
            names = [s.key.split(":", 1)[1] for s in model.with_prefix(f"{TABLE}:")]
        if only is not None:
            names = [n for n in names if n in only]
        reference = set(self.profile.tables("reference"))
        now = time.monotonic()
        due, self.deferred = [], {}
        for name in names:
            shown = model.get(f"{TABLE}:{name}")
            if only is None and shown is not None and not self._due(name, model):
                continue  # polled: its stream (or its quiet pace) says it is not worth a scan
            # A table the feed named is read as soon as its read units are paid back.
            at = self._passes[name].read_at + self.wait(name, conn) if name in self._passes else 0
            if at <= now or shown is None:
                due.append(name)
            else:  # its read units are not paid back yet: read when they are, the others now
                self.deferred[name] = at
        # The tables are read at the same time: an item write shows after one scan, not after
        # every table's scan in turn.
        for name in due:
            newest = self._stream_newest(name, model)
            if newest is not None:
                self._stream_seen[name] = newest
        read = await asyncio.gather(
            *(
                self.fetch(
                    model, f"{TABLE}:{name}", lambda n=name: self._table(conn, n, n in reference)
                )
                for name in due
            )
        )
        for name, snapshot in zip(due, read):
            if snapshot.health is not Health.OK:  # not found (or failing): as it was, or not
                previous = model.get(f"{TABLE}:{name}")
                self._quiet.read(
                    name,
                    previous is None or previous.health is not snapshot.health,
                    failed=failing(snapshot),
                )
        return snapshots + list(read)

    def quiet_wait(self, name: str, model: LabState) -> float:
        """Seconds a polled ``name`` without a followed stream waits after its last read."""
        return self._quiet.wait(name, model)

    @staticmethod
    def _stream_newest(name: str, model: LabState) -> str | None:
        """The sequence of the newest record of ``name``'s followed stream ("" before the
        first); None when no stream of it is followed (or its last read failed)."""
        stream = model.get(f"{keys.STREAM}:{name}")
        if stream is None or stream.health is not Health.OK or stream.data is None:
            return None
        return stream.data[-1].sequence if stream.data else ""

    def _due(self, name: str, model: LabState) -> bool:
        """Polled: whether ``name`` is scanned now. A followed stream is the probe: a record the
        last scan did not see makes it due at once; without one the table waits as a quiet
        table idle would (a safety read, in case the stream missed something)."""
        newest = self._stream_newest(name, model)
        shown = model.get(f"{TABLE}:{name}")
        if shown is not None and shown.health is Health.ABSENT:
            return self._quiet.due(name, model, LISTING_CEILING_S)  # a lab creates tables seldom
        if newest is None:
            return self._quiet.due(name, model)
        if newest != self._stream_seen.get(name):
            return True
        return self._quiet.due(name, model, IDLE_CEILING_S)

    def wait(self, name: str, conn: Connection) -> float:
        """Seconds ``name`` waits after its last read before it is read again: its read units
        paid back at READ_UNITS_PER_S (times the connection's scale: ten on a local emulator)."""
        state = self._passes.get(name)
        return state.units / (READ_UNITS_PER_S * conn.limiter.scale) if state is not None else 0.0

    def _forget(self, name: str) -> None:
        for known in (
            self._baselines,
            self._keys,
            self._streams,
            self._passes,
            self._created,
            self._items,
            self._stream_seen,
        ):
            known.pop(name, None)
        self._quiet.forget(name)

    async def _list(self, conn: Connection) -> tuple[str, ...]:
        names = await conn.pages(
            "dynamodb",
            "list_tables",
            "TableNames",
            token_in="ExclusiveStartTableName",
            token_out="LastEvaluatedTableName",
        )
        return tuple(n for n in names if self.prefix_match(n))

    async def _table(self, conn: Connection, name: str, is_reference: bool) -> Table:
        state = self._passes.setdefault(name, _Pass())
        if (
            name not in self._keys
            or time.monotonic() - self._created.get(name, (0.0, None))[0] > REDESCRIBE_S
        ):
            described = (await conn.call("dynamodb", "describe_table", TableName=name))["Table"]
            self._created[name] = (time.monotonic(), _timestamp(described.get("CreationDateTime")))
            schema = sorted(described.get("KeySchema", []), key=lambda k: k["KeyType"] != "HASH")
            self._keys[name] = tuple(k["AttributeName"] for k in schema)
            stream = described.get("StreamSpecification") or {}
            enabled = stream.get("StreamEnabled")
            self._streams[name] = (
                stream.get("StreamViewType") if enabled else None,
                described.get("LatestStreamArn") if enabled else None,
            )
            state.count = described.get("ItemCount")
        keys = self._keys[name]
        try:
            units = await self._read(conn, name, keys, state)
        except Exception:  # whatever failed, forget the keys, then raise it
            self._keys.pop(
                name, None
            )  # describe again next time: the table may have been recreated
            self._passes.pop(name, None)
            raise
        state.read_at, state.units = time.monotonic(), units  # paid back before the next read
        shown = dict(state.done or {})
        shown.update(state.current)
        # An item equal to the one shown last time is that very object: whatever was drawn from
        # it (its row, its marks) is recognised as unchanged without being compared again.
        seen, before = name in self._items, self._items.get(name, {})
        items = tuple(
            previous if (previous := before.get(k)) == shown[k] else shown[k] for k in sorted(shown)
        )
        self._items[name] = dict(zip(sorted(shown), items))
        self._quiet.read(name, not seen or self._items[name] != before)
        baseline = (
            self._compare(name, items, keys) if is_reference and state.done is not None else None
        )
        view, arn = self._streams.get(name, (None, None))
        return Table(
            name=name,
            status="ACTIVE",
            key_names=keys,
            items=items,
            stream=view,
            stream_arn=arn,
            baseline=baseline,
            item_count=state.count,
            paged=state.pass_polls > 1 or state.start_key is not None,
            truncated=state.truncated,
            created=self._created.get(name, (0, None))[1],
        )

    async def _read(
        self, conn: Connection, name: str, keys: tuple[str, ...], state: _Pass
    ) -> float:
        """One poll's pages of the table (up to ``poll_items`` items); returns the read units."""
        read, units, pages = 0, 0.0, Pages("scan")
        state.polls += 1
        while True:
            params: dict[str, Any] = {
                "TableName": name,
                "ReturnConsumedCapacity": "TOTAL",
                "Limit": min(self.poll_items, self.max_items - len(state.current)),
            }
            if state.start_key is not None:
                params["ExclusiveStartKey"] = state.start_key
            page = await conn.call("dynamodb", "scan", **params)
            spent = float((page.get("ConsumedCapacity") or {}).get("CapacityUnits") or 0.5)
            units += spent
            conn.limiter.consumed(name, spent)
            for raw in page.get("Items") or ():
                item = item_to_plain(raw)
                state.current[_sort_key(item, keys)] = item
                read += 1
            # An endpoint that loops, or never ends, raises.
            state.start_key = pages.next(
                params.get("ExclusiveStartKey"), page.get("LastEvaluatedKey")
            )
            full = len(state.current) >= self.max_items
            if state.start_key is None or full:  # a pass ends: what it did not see is gone
                state.done, state.current, state.start_key = state.current, {}, None
                state.truncated, state.pass_polls, state.polls = full, state.polls, 0
                return units
            if read >= self.poll_items:
                return units  # the next poll continues from start_key

    def _compare(self, name: str, items: tuple[dict[str, Any], ...], keys: tuple[str, ...]) -> str:
        if name not in self._baselines:
            self._baselines[name] = (
                items  # the first sighting is the baseline: unchanged by definition
            )
            return "unchanged"
        before = {_sort_key(i, keys): i for i in self._baselines[name]}
        after = {_sort_key(i, keys): i for i in items}
        changes = []
        for key in sorted(set(before) | set(after)):
            if key not in after:
                changes.append(f"{'/'.join(key)} deleted")
            elif key not in before:
                changes.append(f"{'/'.join(key)} added")
            elif before[key] != after[key]:
                diff = diff_items(before[key], after[key])
                names = [*diff.added, *diff.removed, *(c[0] for c in diff.changed)]
                changes.append(f"{'/'.join(key)}.{','.join(names)} changed")
        return "unchanged" if not changes else "changed: " + "; ".join(changes)
