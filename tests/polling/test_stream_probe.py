"""Polled (stock moto, as on AWS), a business table whose stream the viewer follows is scanned
when the stream shows a record the last scan did not see; while the stream shows nothing new,
only the rare safety scan of a quiet table."""

from __future__ import annotations

import asyncio
import time

from awsview.aws.session import Connection, Target
from awsview.labspec import LabSpec, Resource
from awsview.model.state import LabState
from awsview.polling.pollers.dynamodb import TablePoller
from awsview.polling.pollers.streams import StreamPoller
from awsview.polling.quiet import PACED
from tests.support.helpers import create_table
from tests.support.stock_moto import client

TABLE = "cost-s-orders"
WINDOW_S = 8.0


async def test_a_table_with_a_followed_stream_is_scanned_when_its_stream_moves(stock_moto_url):
    ddb = client(stock_moto_url, "dynamodb")
    create_table(
        ddb,
        TABLE,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    ddb.put_item(TableName=TABLE, Item={"id": {"S": "a"}})
    profile = LabSpec(
        name="cost-s",
        title="cost-s",
        prefix="cost-s-",
        resources=(Resource("table", TABLE, True, "business"),),
    )
    PACED.set(True)  # polled as in a scheduler's loops (a one-off read reads everything)
    model = LabState()
    tables, streams = TablePoller(profile), StreamPoller(profile)
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        conn.limiter.scale = 1.0  # the read units' wait as on AWS

        def scans() -> int:
            return conn.limiter.calls[("dynamodb", "Scan")]

        def ids() -> set[str]:
            table = model.data(f"table:{TABLE}")
            return {i["id"] for i in table.items} if table is not None else set()

        async def poll_until(done, limit: float) -> None:  # as often as a busy lab makes it poll
            deadline = time.monotonic() + limit
            while not done():
                assert time.monotonic() < deadline, "not within the time given"
                model.apply(await tables.poll(conn, model))
                model.apply(await streams.poll(conn, model))
                await asyncio.sleep(0.05)

        def followed() -> bool:
            return ids() == {"a"} and bool(model.data(f"stream:{TABLE}"))

        await poll_until(followed, 30)
        await poll_until(lambda: scans() >= 2, 10)  # one more once the stream was first read
        before = scans()
        end = time.monotonic() + WINDOW_S
        await poll_until(lambda: time.monotonic() > end, WINDOW_S + 5)
        # Polled 0.05 s apart: a table without a stream would be scanned every ~0.35 s here;
        # with one, the first safety scan comes after ~3 s, the next ~6 s later.
        assert scans() - before <= 2, f"{scans() - before} scans while the stream showed nothing"

        await asyncio.to_thread(ddb.put_item, TableName=TABLE, Item={"id": {"S": "b"}})
        before = scans()
        await poll_until(lambda: "b" in ids(), 10)
        assert scans() - before <= 2, "the stream's new record made the table due at once"
