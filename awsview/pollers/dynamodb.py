"""DynamoDB tables as plain values: full paginated scans; reference tables compared against the
first sighting (their baseline)."""

from __future__ import annotations

import asyncio
from typing import Any

from awsview.aws.session import Connection
from awsview.model.items import diff_items, item_to_plain
from awsview.model.resources import Table
from awsview.model.snapshot import Snapshot
from awsview.pollers.base import LabModel, Poller, listed

TABLE = "table"  # key: table:<name>
TABLES = "tables"  # the list of table names, for generic profiles


def _sort_key(item: dict[str, Any], names: tuple[str, ...]) -> tuple:
    return tuple(str(item.get(n, "")) for n in names)


class TablePoller(Poller):
    kind = TABLE
    slow_interval = 8.0
    follows = ("table",)

    def __init__(self, profile):
        super().__init__(profile)
        self._baselines: dict[str, tuple[dict[str, Any], ...]] = {}
        self._keys: dict[str, tuple[str, ...]] = {}
        self._streams: dict[str, tuple[str | None, str | None]] = {}
        self._items: dict[str, dict[tuple, dict[str, Any]]] = {}  # table → key → the item last read
        self.max_items = 20000

    async def poll(self, conn: Connection, model: LabModel) -> list[Snapshot[Any]]:
        return await self._poll(conn, model, None)

    async def refresh(self, conn: Connection, model: LabModel, names: frozenset[str]) -> list[Snapshot[Any]]:
        """Scans only the tables the change feed named (a generic view lists them first)."""
        return await self._poll(conn, model, names)

    async def _poll(self, conn: Connection, model: LabModel, only: frozenset[str] | None) -> list[Snapshot[Any]]:
        names = list(self.profile.tables())
        snapshots = []
        if self.profile.generic:
            listing = await self.fetch(model, TABLES, lambda: self._list(conn))
            snapshots.append(listing)
            names, gone = listed(model, TABLE, listing)
            for name in gone:
                self._forget(name)
        if only is not None:
            names = [n for n in names if n in only]
        reference = set(self.profile.tables("reference"))
        # The tables are read at the same time: an item write shows after one scan, not after
        # every table's scan in turn.
        snapshots += await asyncio.gather(*(
            self.fetch(model, f"{TABLE}:{name}", lambda n=name: self._table(conn, n, n in reference))
            for name in names))
        return snapshots

    def _forget(self, name: str) -> None:
        for known in (self._baselines, self._keys, self._streams, self._items):
            known.pop(name, None)

    async def _list(self, conn: Connection) -> tuple[str, ...]:
        names = await conn.pages("dynamodb", "list_tables", "TableNames",
                                 token_in="ExclusiveStartTableName", token_out="LastEvaluatedTableName")
        return tuple(n for n in names if self.prefix_match(n))

    async def _table(self, conn: Connection, name: str, is_reference: bool) -> Table:
        if name not in self._keys:
            described = (await conn.call("dynamodb", "describe_table", TableName=name))["Table"]
            schema = sorted(described.get("KeySchema", []), key=lambda k: k["KeyType"] != "HASH")
            self._keys[name] = tuple(k["AttributeName"] for k in schema)
            stream = described.get("StreamSpecification") or {}
            enabled = stream.get("StreamEnabled")
            self._streams[name] = (stream.get("StreamViewType") if enabled else None,
                                   described.get("LatestStreamArn") if enabled else None)
        keys = self._keys[name]
        try:
            raw = await conn.pages("dynamodb", "scan", "Items", token_in="ExclusiveStartKey",
                                   token_out="LastEvaluatedKey", limit=self.max_items, TableName=name)
        except Exception:
            self._keys.pop(name, None)  # describe again next time: the table may have been recreated
            raise
        items = tuple(sorted((item_to_plain(i) for i in raw), key=lambda i: _sort_key(i, keys)))
        # An item equal to the one read last time is that very object: whatever was drawn from
        # it (its row, its marks) is recognised as unchanged without being compared again.
        before = self._items.get(name, {})
        items = tuple(previous if (previous := before.get(_sort_key(i, keys))) == i else i for i in items)
        self._items[name] = {_sort_key(i, keys): i for i in items}
        baseline = self._compare(name, items, keys) if is_reference else None
        view, arn = self._streams.get(name, (None, None))
        return Table(name=name, status="ACTIVE", key_names=keys, items=items,
                     stream=view, stream_arn=arn, baseline=baseline)

    def _compare(self, name: str, items: tuple[dict[str, Any], ...], keys: tuple[str, ...]) -> str:
        if name not in self._baselines:
            self._baselines[name] = items  # the first sighting is the baseline: unchanged by definition
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
