"""DynamoDB Streams of the lab's business tables: accepted writes with their old and new images,
the evidence available on real AWS where the emulator's journal is not."""

from __future__ import annotations

import time
from typing import Any

from awsview.aws.errors import error_code
from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.items import item_to_plain
from awsview.model.resources import StreamRecord
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller

STREAM = keys.STREAM  # key: stream:<table>
MAX_RECORDS = 20_000
PAGES_PER_SHARD = 5
# A stream's shards change every few hours (one closes, its children open): described this
# often, the reads between are GetRecords alone, the table's probe (dynamodb.py).
REDESCRIBE_S = 30.0


class StreamPoller(Poller):
    kind = STREAM
    fast_interval = 0.5
    slow_interval = 5.0
    follows = ("table",)  # a write adds a stream record
    after = (keys.TABLE_PREFIX,)  # a table's stream may just have been enabled

    def __init__(self, profile):
        super().__init__(profile)
        self._iterators: dict[tuple[str, str], str | None] = {}  # (stream, shard) -> next iterator
        self._last_seq: dict[tuple[str, str], str] = {}
        self._records: dict[str, list[StreamRecord]] = {}
        self._shards: dict[str, tuple[float, list[dict[str, Any]]]] = {}  # stream -> (at, shards)

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        snapshots = []
        for name in self.profile.tables("business") or ():
            table = model.data(keys.table(name))
            if table is None or not table.stream_arn:
                continue
            snapshots.append(
                await self.fetch(
                    model,
                    f"{STREAM}:{name}",
                    lambda t=table: self._read(conn, t.name, t.stream_arn),
                )
            )
        return snapshots

    async def _read(
        self, conn: Connection, table: str, stream_arn: str
    ) -> tuple[StreamRecord, ...]:
        records = self._records.setdefault(stream_arn, [])
        described = self._shards.get(stream_arn)
        if described is None or time.monotonic() - described[0] > REDESCRIBE_S:
            description = (
                await conn.call("dynamodbstreams", "describe_stream", StreamArn=stream_arn)
            )["StreamDescription"]
            described = (time.monotonic(), list(description.get("Shards", [])))
            self._shards[stream_arn] = described
        for shard in described[1]:
            key = (stream_arn, shard["ShardId"])
            iterator = self._iterators.get(key)
            if key not in self._iterators:
                params: dict[str, Any] = {"StreamArn": stream_arn, "ShardId": shard["ShardId"]}
                if key in self._last_seq:
                    params.update(
                        ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                        SequenceNumber=self._last_seq[key],
                    )
                else:
                    params["ShardIteratorType"] = "TRIM_HORIZON"
                iterator = (await conn.call("dynamodbstreams", "get_shard_iterator", **params))[
                    "ShardIterator"
                ]
            for _ in range(PAGES_PER_SHARD):
                if not iterator:
                    break
                try:
                    page = await conn.call("dynamodbstreams", "get_records", ShardIterator=iterator)
                except Exception as exc:  # calls raise many types; error_code() finds expiry
                    if error_code(exc) in (
                        "ExpiredIteratorException",
                        "TrimmedDataAccessException",
                    ):
                        iterator = None  # asked again next poll, after the last sequence seen
                        self._iterators.pop(key, None)
                        break
                    raise
                for raw in page.get("Records", []):
                    records.append(_record(raw))
                    self._last_seq[key] = raw["dynamodb"].get("SequenceNumber", "")
                iterator = page.get("NextShardIterator")
                if not page.get("Records"):
                    break
            if iterator is not None or key in self._iterators:
                self._iterators[key] = iterator
        del records[:-MAX_RECORDS]
        return tuple(records)


def _record(raw: dict[str, Any]) -> StreamRecord:
    body = raw.get("dynamodb", {})
    stamp = body.get("ApproximateCreationDateTime")
    return StreamRecord(
        event_id=raw.get("eventID", ""),
        event_name=raw.get("eventName", ""),
        time=stamp if hasattr(stamp, "isoformat") else None,
        sequence=body.get("SequenceNumber", ""),
        keys=item_to_plain(body.get("Keys") or {}) or {},
        old_image=item_to_plain(body["OldImage"]) if "OldImage" in body else None,
        new_image=item_to_plain(body["NewImage"]) if "NewImage" in body else None,
    )
